#include "forensics/stack_capture.h"

#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <stdlib.h>

#include "forensics/stack_text.h"
#include "forensics/tool_runs.h"
#include "process/worker_process.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::forensics {
namespace {

// A private folder for the Python dumps, removed with this object. The
// worker (the same user) writes its dump there through gdb.
class ScratchFolder {
 public:
  explicit ScratchFolder(const util::Environment& environment) {
    std::string base = environment.get("TMPDIR").value_or("/tmp");
    std::string templ = base + "/dlaunch-stacks-XXXXXX";
    if (::mkdtemp(templ.data()) != nullptr) path_ = templ;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// gdb reads the path inside a C string literal of its own expression language.
bool safe_in_gdb_string(const std::string& path) {
  for (char c : path) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) return false;
  }
  return !path.empty();
}

std::string read_file(const std::string& path) {
  std::string text;
  if (FILE* file = std::fopen(path.c_str(), "r")) {
    char buffer[16384];
    std::size_t got;
    while ((got = std::fread(buffer, 1, sizeof(buffer), file)) > 0 &&
           text.size() < ToolRuns::kOutputCap)
      text.append(buffer, got);
    std::fclose(file);
  }
  return text;
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
};

class Capture {
 public:
  Capture(const std::vector<CaptureTarget>& targets, const CaptureSettings& settings)
      : settings_(settings), scratch_(settings.environment) {
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
      captures_.push_back(std::move(capture));
    }
  }

  std::vector<WorkerStacks> run() {
    for (auto& capture : captures_) start_native(*capture);
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

  void start_python(WorkerCapture& capture) {
    if (!capture.python) return;
    if (!gdb_) {
      problem(capture, "Python frames: gdb not found in PATH (Debian: apt-get install gdb)");
      return;
    }
    capture.dump_path = fmt::format("{}/rank{}.{}.txt", scratch_.path(), capture.stacks.rank, capture.stacks.pid);
    if (!safe_in_gdb_string(capture.dump_path)) {
      problem(capture, fmt::format("Python frames: no usable scratch folder under TMPDIR ({})", scratch_.path()));
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
      capture.stacks.python_threads = parse_faulthandler(read_file(capture.dump_path));
      if (result.timed_out) resume(capture);
      if (capture.stacks.python_threads.empty())
        problem(capture, tool_problem("Python frames (gdb)", result, settings_.timeout));
    };
    runs_.start(std::move(request));
  }

  // A tracer killed mid-attach may leave its tracee stopped.
  static void resume(const WorkerCapture& capture) { ::kill(capture.stacks.pid, SIGCONT); }

  const CaptureSettings& settings_;
  ScratchFolder scratch_;
  std::vector<std::string> tool_environment_;
  std::optional<std::string> eu_stack_;
  std::optional<std::string> gdb_;
  std::vector<std::unique_ptr<WorkerCapture>> captures_;
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
