#include "forensics/stack_capture.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <map>
#include <unistd.h>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <stdlib.h>

#include "forensics/python_dump.h"
#include "forensics/stack_text.h"
#include "forensics/tool_runs.h"
#include "process/worker_process.h"
#include "util/error.h"
#include "util/fd.h"
#include "util/outside_file.h"
#include "util/strings.h"
#include "util/temporary_folder.h"

namespace dlaunch::forensics {
namespace {

// A private folder for the Python dumps, removed with the capture. The
// worker (the same user) writes its dump there through gdb. Best effort:
// nullopt when TMPDIR has no room for it, and the Python frames are then
// left out, saying why.
std::optional<util::TemporaryFolder> make_scratch_folder(const util::Environment& environment) {
  try {
    return util::TemporaryFolder(util::temporary_base(environment), "dlaunch-stacks");
  } catch (const util::SystemError&) {
    return std::nullopt;
  }
}

// gdb reads the path inside a C string literal of its own expression language.
bool safe_in_gdb_string(const std::string& path) {
  for (char c : path) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) return false;
  }
  return !path.empty();
}

// The Python dump gdb had the worker write at PATH (its only caller), at
// most about kOutputCap of it: a cut dump still gives its first threads,
// so a longer one is cut, not refused. "" when there is none. Links::kRefuse:
// dlaunch names the file in its own private scratch folder, so a link there
// was planted (by the worker, or by whatever it runs). Read through
// util::read_outside_file_start, which never blocks: a FIFO put there made
// the capture, and the launcher with it, wait in fopen() forever. Throws
// InputError when PATH holds no regular file, SystemError when it cannot
// be read.
std::string read_file(const std::string& path) {
  return util::read_outside_file_start(path, {"the Python stack dump gdb writes", ToolRuns::kOutputCap,
                                              util::Links::kRefuse});
}

// The last line a tool printed, for a problem that names why it failed.
std::string last_line(const std::string& output) {
  auto lines = util::split(output, '\n');
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    if (!util::trim(*line).empty()) return std::string(util::trim(*line)).substr(0, 200);
  }
  return "no output";
}

std::string tool_problem(const char* what, const ToolResult& result, std::chrono::milliseconds timeout) {
  if (result.timed_out)
    return fmt::format("{}: did not finish within {:.1f} s and was stopped", what, static_cast<double>(timeout.count()) / 1000.0);
  return fmt::format("{}: exited with code {}: {}", what, result.exit_code, last_line(result.output));
}

// What one worker's capture needs while its tools run.
struct WorkerCapture {
  WorkerStacks stacks;
  bool python = false;
  std::string dump_path;
  int dump_fd_in_worker = -1;
  int dump_read_fd = -1;
};

// Everything the pipe holds now (bounded); what an earlier capture left is drained first.
std::string read_available(int fd) {
  std::string text;
  char buffer[16384];
  ssize_t got;
  while ((got = ::read(fd, buffer, sizeof(buffer))) > 0 && text.size() < ToolRuns::kOutputCap)
    text.append(buffer, static_cast<std::size_t>(got));
  return text;
}

class Capture {
 public:
  Capture(const std::vector<CaptureTarget>& targets, const CaptureSettings& settings)
      : settings_(settings), scratch_(make_scratch_folder(settings.environment)) {
    auto environment = settings.environment;
    // Neither tool may reach out for symbols over the network.
    environment.erase("DEBUGINFOD_URLS");
    tool_environment_ = environment.to_entries();
    eu_stack_ = process::find_executable("eu-stack", settings.environment);
    gdb_ = process::find_executable("gdb", settings.environment);
    for (const auto& target : targets) {
      auto capture = std::make_unique<WorkerCapture>();
      capture->stacks.rank = target.rank;
      capture->stacks.local_rank = target.local_rank;
      capture->stacks.node_rank = target.node_rank;
      capture->stacks.host = target.host;
      capture->stacks.pid = target.pid;
      capture->python = runs_python(target.pid);
      capture->dump_fd_in_worker = target.dump_fd_in_worker;
      capture->dump_read_fd = target.dump_read_fd;
      captures_.push_back(std::move(capture));
    }
  }

  std::vector<WorkerStacks> run() {
    for (auto& capture : captures_) start_injection(*capture);
    runs_.run();
    std::vector<WorkerStacks> result;
    for (auto& capture : captures_) result.push_back(std::move(capture->stacks));
    return result;
  }

 private:
  void problem(WorkerCapture& capture, std::string text) {
    if (capture.stacks.problems.size() < kMaxProblems) capture.stacks.problems.push_back(std::move(text));
  }

  void start_native(WorkerCapture& capture) {
    if (::kill(capture.stacks.pid, 0) != 0 && errno == ESRCH) {
      problem(capture, "the worker had exited before its stack was captured");
      return;
    }
    if (!eu_stack_) {
      problem(capture, "native frames: eu-stack not found in PATH (Debian: apt-get install elfutils)");
      return start_python(capture);
    }
    ToolRequest request;
    request.argv = {*eu_stack_, "-m", "-n", std::to_string(kMaxFramesPerThread), "-p",
                    std::to_string(capture.stacks.pid)};
    request.environment = tool_environment_;
    request.timeout = settings_.timeout;
    request.on_done = [this, &capture](const ToolResult& result) {
      capture.stacks.native_threads = parse_eu_stack(result.output, capture.stacks.pid);
      // eu-stack exits 1 when some frames had errors (an unwind that ran
      // out): the frames it printed are still good.
      if (result.timed_out) resume(capture);
      if (capture.stacks.native_threads.empty() || result.timed_out)
        problem(capture, tool_problem("native frames (eu-stack)", result, settings_.timeout));
      start_python(capture);
    };
    runs_.start(std::move(request));
  }

  // Python frames without gdb (forensics/python_dump.h), by a helper
  // process (`dlaunch __dump-python`, cli/dump_python_command.h). On
  // success the worker needs no gdb; eu-stack follows either way.
  void start_injection(WorkerCapture& capture) {
    bool possible = capture.python && capture.dump_read_fd >= 0 && can_inject_python_dump() &&
                    !settings_.dlaunch.empty();
    if (!possible) return start_native(capture);
    read_available(capture.dump_read_fd);  // what an earlier, cut-off dump left
    ToolRequest request;
    // Half the timeout for each of its two waits (the stop, the call), so
    // it says why before it would be killed.
    request.argv = {settings_.dlaunch, "__dump-python", std::to_string(capture.stacks.pid),
                    std::to_string(capture.dump_fd_in_worker),
                    std::to_string(std::max<long long>(1, settings_.timeout.count() / 2))};
    request.environment = tool_environment_;
    request.timeout = settings_.timeout;
    request.on_done = [this, &capture](const ToolResult& result) {
      if (result.exit_code == 0) {
        capture.stacks.python_threads = parse_faulthandler(read_available(capture.dump_read_fd));
        if (!capture.stacks.python_threads.empty()) capture.python = false;  // done: no gdb for it
        else injection_problems_[&capture] = "Python frames without gdb: the interpreter dumped no thread";
      } else {
        injection_problems_[&capture] =
            tool_problem("Python frames without gdb (dlaunch __dump-python)", result, settings_.timeout);
      }
      start_native(capture);
    };
    runs_.start(std::move(request));
  }

  void start_python(WorkerCapture& capture) {
    if (!capture.python) return;
    // Said only when gdb cannot make up for it.
    auto injected = injection_problems_.find(&capture);
    if (!gdb_) {
      if (injected != injection_problems_.end()) problem(capture, injected->second);
      problem(capture, "Python frames: gdb not found in PATH (Debian: apt-get install gdb)");
      return;
    }
    const std::string scratch = scratch_ ? scratch_->path() : "";
    capture.dump_path = fmt::format("{}/rank{}.{}.txt", scratch, capture.stacks.rank, capture.stacks.pid);
    if (scratch.empty()) {
      problem(capture, "Python frames: cannot make a scratch folder under TMPDIR");
      return;
    }
    if (!safe_in_gdb_string(capture.dump_path)) {
      problem(capture, fmt::format("Python frames: no usable scratch folder under TMPDIR ({})", scratch));
      return;
    }
    ToolRequest request;
    // Only libc's symbols are loaded: open() and close() live there, and
    // the interpreter's own symbols come with the executable. O_WRONLY |
    // O_CREAT | O_TRUNC, mode 0600.
    request.argv = {*gdb_, "-batch", "-nx", "-iex", "set auto-solib-add off", "-iex",
                    "set debuginfod enabled off", "-p", std::to_string(capture.stacks.pid),
                    "-ex", "sharedlibrary libc\\.so",
                    "-ex", fmt::format("call (int)open(\"{}\", 01101, 0600)", capture.dump_path),
                    "-ex", "call (char*)_Py_DumpTracebackThreads($1, 0, 0)",
                    "-ex", "call (int)close($1)"};
    request.environment = tool_environment_;
    request.timeout = settings_.timeout;
    request.on_done = [this, &capture](const ToolResult& result) {
      try {
        capture.stacks.python_threads = parse_faulthandler(read_file(capture.dump_path));
      } catch (const util::InputError& error) {  // a problem of this worker's capture, not of the others'
        problem(capture, fmt::format("Python frames (gdb): {}", error.what()));
      } catch (const util::SystemError& error) {
        problem(capture, fmt::format("Python frames (gdb): {}", error.what()));
      }
      if (result.timed_out) resume(capture);
      if (capture.stacks.python_threads.empty()) {
        if (auto first = injection_problems_.find(&capture); first != injection_problems_.end())
          problem(capture, first->second);
        problem(capture, tool_problem("Python frames (gdb)", result, settings_.timeout));
      }
    };
    runs_.start(std::move(request));
  }

  // A tracer killed mid-attach may leave its tracee stopped.
  static void resume(const WorkerCapture& capture) { ::kill(capture.stacks.pid, SIGCONT); }

  const CaptureSettings& settings_;
  std::optional<util::TemporaryFolder> scratch_;
  std::vector<std::string> tool_environment_;
  std::optional<std::string> eu_stack_;
  std::optional<std::string> gdb_;
  std::vector<std::unique_ptr<WorkerCapture>> captures_;
  std::map<const WorkerCapture*, std::string> injection_problems_;
  ToolRuns runs_;
};

}  // namespace

bool runs_python(pid_t pid) {
  std::error_code error;
  auto exe = std::filesystem::read_symlink(fmt::format("/proc/{}/exe", pid), error);
  if (error) return false;
  return exe.filename().string().rfind("python", 0) == 0;
}

std::vector<WorkerStacks> capture_stacks(const std::vector<CaptureTarget>& targets,
                                         const CaptureSettings& settings) {
  Capture capture(targets, settings);
  return capture.run();
}

}  // namespace dlaunch::forensics
