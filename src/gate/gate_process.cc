#include "gate/gate_process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "process/worker_process.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/exit_codes.h"
#include "util/fd.h"
#include "util/own_executable.h"
#include "util/signal_names.h"
#include "util/strings.h"

namespace dlaunch::rendezvous {
namespace {

constexpr std::size_t kKeptOutput = 64 * 1024;
// What one read_some() takes from each pipe at the most: a check writing
// without pause still lets the launcher's loop go round.
constexpr std::size_t kMostPerRead = 256 * 1024;
// What finish() reads of what a check left in its pipes: more than a pipe
// holds (process::start_worker makes them 1 MiB), so all a dead check
// wrote, yet bounded if something that escaped its group writes on.
constexpr std::size_t kMostAtFinish = 4 * 1024 * 1024;
// Its stderr's last lines in a failure's error: at most this many, and
// about this many characters, so that node 0 shows them whole (it cuts a
// launcher's error at 300).
constexpr std::size_t kErrorLines = 3;
constexpr std::size_t kErrorChars = 200;

// The launcher's environment with the gate rank's variables in place of
// any it had (a launcher inside a Slurm step has RANK-like variables of its
// own); the user's GLOO_SOCKET_IFNAME wins over the chosen interface. The
// check finds the store's secret on descriptor SECRET_FD.
util::Environment gate_environment(const GateMessage& message, int secret_fd) {
  util::Environment environment = util::Environment::from_process();
  environment.set("RANK", std::to_string(message.gate_rank));
  environment.set("WORLD_SIZE", std::to_string(message.gate_size));
  environment.set("LOCAL_RANK", "0");
  environment.set("LOCAL_WORLD_SIZE", "1");
  environment.set("MASTER_ADDR", message.master_addr);
  environment.set("MASTER_PORT", std::to_string(message.master_port));
  // Set at all, even empty, counts as the user's choice.
  bool user_ifname = environment.variables().count("GLOO_SOCKET_IFNAME") > 0;
  if (!user_ifname && !message.ifname.empty()) environment.set("GLOO_SOCKET_IFNAME", message.ifname);
  environment.set("DLAUNCH_STORE_SECRET_FD", std::to_string(secret_fd));
  return environment;
}

// A pipe holding SECRET (32 bytes: far below a pipe's buffer), its read
// end returned, close-on-exec and above 2 (start_worker puts the child's
// stdin, stdout and stderr on 0-2, so a launcher started with one of them
// closed would otherwise lose the secret there).
util::Fd secret_pipe(const std::string& secret) {
  util::Pipe pipe = util::make_pipe();
  if (!util::write_all(pipe.write_end.get(), secret))
    throw util::system_error("cannot pass the gate's secret to its check", errno);
  if (pipe.read_end.get() > STDERR_FILENO) return std::move(pipe.read_end);
  int moved = ::fcntl(pipe.read_end.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  if (moved < 0) throw util::system_error("cannot pass the gate's secret to its check", errno);
  return util::Fd(moved);
}

// The last non-empty line of TEXT.
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
}

// The last lines of TAIL as one line, escaped ("" when there are none):
// the latest first kept, earlier ones while they fit in kErrorChars.
std::string last_lines_said(const process::OutputTail& tail) {
  std::string said;
  auto lines = tail.last_lines(kErrorLines);
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    std::string text = util::escaped(*line);
    if (text.find_first_not_of(' ') == std::string::npos) continue;
    if (said.empty() && text.size() > kErrorChars) text = text.substr(0, kErrorChars) + "...";
    else if (!said.empty() && said.size() + text.size() + 3 > kErrorChars) break;
    said = said.empty() ? text : text + " | " + said;
  }
  return said;
}

}  // namespace

GateProcess::GateProcess(const GateMessage& message) : timeout_ms_(message.timeout_ms) {
  std::string program = (std::filesystem::path(util::own_executable()).parent_path() / "dlaunch-check").string();
  if (::access(program.c_str(), X_OK) != 0)
    throw util::SystemError(fmt::format("the gate needs {}, which is missing: it is installed beside dlaunch", program));
  std::vector<std::string> args = {program, "--gate", "--pair-bytes", std::to_string(message.pair_bytes),
                                   "--timeout", std::to_string(std::max<std::uint32_t>(1, message.timeout_ms / 1000))};
  util::Fd secret = secret_pipe(message.store_secret);
  process::StartedWorker check =
      process::start_worker(args, gate_environment(message, secret.get()), -1, -1, {secret.get()});
  pid_ = check.pid;
  try {
    process::ExecResult exec = process::confirm_exec(check);
    if (exec.error != 0) throw util::system_error(fmt::format("the gate cannot execute {}", program), exec.error);
    pipes_[0] = std::move(check.stdout_pipe);
    pipes_[1] = std::move(check.stderr_pipe);
    for (int stream : {0, 1}) {
      util::set_nonblocking(pipes_[stream].get());
      polled_[stream] = pipes_[stream].get();
    }
  } catch (...) {
    stop();  // the destructor does not run for an object never made
    throw;
  }
}

GateProcess::~GateProcess() {
  if (pid_ > 0) stop();
}

void GateProcess::stop() {
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

bool GateProcess::read_some() {
  for (int stream : {0, 1}) read_pipe(stream, kMostPerRead);
  return !pipes_[0] && !pipes_[1];
}

void GateProcess::read_pipe(int stream, std::size_t budget) {
  char buffer[8192];
  for (std::size_t taken = 0; pipes_[stream] && taken < budget;) {
    ssize_t got = ::read(pipes_[stream].get(), buffer, std::min(sizeof buffer, budget - taken));
    if (got > 0) {
      taken += static_cast<std::size_t>(got);
      std::string_view bytes(buffer, static_cast<std::size_t>(got));
      if (stream == 1) {
        errors_.append(bytes);
        continue;
      }
      tail_.append(bytes);
      if (tail_.size() > kKeptOutput) tail_.erase(0, tail_.size() - kKeptOutput);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    pipes_[stream].reset();  // its end, or a read error: nothing more will come
    polled_[stream] = -1;
  }
}

namespace {

GateReportMessage finish_report(int status, bool timed_out, std::uint32_t timeout_ms, std::string line,
                                const process::OutputTail& errors) {
  GateReportMessage report;
  report.line = std::move(line);
  if (WIFEXITED(status) || WIFSIGNALED(status)) report.exit_code = util::exit_code_of_wait_status(status);
  if (timed_out)
    report.error = fmt::format("the gate's check did not end within --gate-timeout ({} s) and was killed",
                               timeout_ms / 1000);
  else if (report.exit_code == util::kExitCannotRun && report.line.empty())
    report.error = "dlaunch-check could not be started on this node";
  else if (WIFSIGNALED(status))
    report.error = fmt::format("the gate's check was killed by {}", util::signal_name(util::signal_of_wait_status(status)));
  // A check that failed may have said why on stderr only (an exception, a
  // library's complaint); one that passed keeps an empty error, which node
  // 0 would otherwise take for a failure.
  if (timed_out || report.exit_code != 0) {
    std::string said = last_lines_said(errors);
    if (!said.empty() && report.error.empty())
      report.error = fmt::format("the gate's check exited with code {}; its stderr ended: {}", report.exit_code, said);
    else if (!said.empty())
      report.error += fmt::format("; its stderr ended: {}", said);
  }
  return report;
}

}  // namespace

GateReportMessage GateProcess::finish(bool timed_out) {
  if (timed_out) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
  }
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  // What it wrote before it ended; then the pipes close, should something
  // that escaped its group still hold them.
  for (int stream : {0, 1}) {
    read_pipe(stream, kMostAtFinish);
    pipes_[stream].reset();
    polled_[stream] = -1;
  }
  return finish_report(status, timed_out, timeout_ms_, last_line(tail_), errors_);
}

}  // namespace dlaunch::rendezvous
