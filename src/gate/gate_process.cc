#include "gate/gate_process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "process/signal_channel.h"
#include "util/error.h"
#include "util/exit_codes.h"
#include "util/fd.h"
#include "util/own_executable.h"
#include "util/signal_names.h"

extern char** environ;

namespace dlaunch::rendezvous {
namespace {

constexpr std::size_t kKeptOutput = 64 * 1024;
// Where the gate's check finds the store's secret: an inherited pipe, not
// the environment, which other processes of the user can read
// (/proc/PID/environ) while the check runs.
constexpr int kStoreSecretFd = 3;

// The launcher's environment with the gate rank's variables in place of
// any it had (a launcher inside a Slurm step has RANK-like variables of its
// own); the user's GLOO_SOCKET_IFNAME wins over the chosen interface.
std::vector<std::string> gate_environment(const GateMessage& message) {
  const std::vector<std::pair<std::string, std::string>> set = {
      {"RANK", std::to_string(message.gate_rank)},
      {"WORLD_SIZE", std::to_string(message.gate_size)},
      {"LOCAL_RANK", "0"},
      {"LOCAL_WORLD_SIZE", "1"},
      {"MASTER_ADDR", message.master_addr},
      {"MASTER_PORT", std::to_string(message.master_port)},
  };
  bool user_ifname = std::getenv("GLOO_SOCKET_IFNAME") != nullptr;
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    std::string_view name = text.substr(0, text.find('='));
    bool replaced = std::any_of(set.begin(), set.end(), [&](const auto& pair) { return pair.first == name; });
    if (!replaced) environment.emplace_back(text);
  }
  for (const auto& [name, value] : set) environment.push_back(name + "=" + value);
  if (!user_ifname && !message.ifname.empty()) environment.push_back("GLOO_SOCKET_IFNAME=" + message.ifname);
  environment.push_back("DLAUNCH_STORE_SECRET_FD=" + std::to_string(kStoreSecretFd));
  return environment;
}

// A pipe holding SECRET (32 bytes: far below a pipe's buffer), its read
// end returned.
util::Fd secret_pipe(const std::string& secret) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw util::SystemError(fmt::format("cannot create a pipe for the gate's secret: {}", std::strerror(errno)));
  util::Fd read_end(fds[0]);
  util::Fd write_end(fds[1]);
  if (!util::write_all(write_end.get(), secret))
    throw util::SystemError(fmt::format("cannot pass the gate's secret: {}", std::strerror(errno)));
  return read_end;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& text : strings) result.push_back(text.data());
  result.push_back(nullptr);
  return result;
}

// The last non-empty line of TEXT.
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
}

}  // namespace

GateProcess::GateProcess(const GateMessage& message) : timeout_ms_(message.timeout_ms) {
  std::string program = (std::filesystem::path(util::own_executable()).parent_path() / "dlaunch-check").string();
  if (::access(program.c_str(), X_OK) != 0)
    throw util::SystemError(fmt::format("the gate needs {}, which is missing: it is installed beside dlaunch", program));
  std::vector<std::string> args = {program, "--gate", "--pair-bytes", std::to_string(message.pair_bytes),
                                   "--timeout", std::to_string(std::max<std::uint32_t>(1, message.timeout_ms / 1000))};
  std::vector<std::string> environment = gate_environment(message);
  auto argv = pointers(args);
  auto envp = pointers(environment);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw util::SystemError(fmt::format("cannot create a pipe for the gate's check: {}", std::strerror(errno)));
  util::Fd read_end(pipe_fds[0]);
  util::Fd write_end(pipe_fds[1]);
  util::Fd secret = secret_pipe(message.store_secret);
  pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw util::SystemError(fmt::format("cannot start the gate's check: {}", std::strerror(errno)));
  if (pid_ == 0) {
    // Only async-signal-safe calls from here: the launcher has threads.
    ::setpgid(0, 0);
    // The launcher blocks its signals for its signalfd; the check must get
    // them as any program does.
    process::SignalChannel::reset_in_child();
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(write_end.get(), STDOUT_FILENO);
    if (secret.get() == kStoreSecretFd) ::fcntl(kStoreSecretFd, F_SETFD, 0);  // dup2 would keep close-on-exec
    else ::dup2(secret.get(), kStoreSecretFd);
    int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);  // either side may win the race; both ask the same
  write_end.reset();
  util::set_nonblocking(read_end.get());
  output_ = std::move(read_end);
}

GateProcess::~GateProcess() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool GateProcess::read_some() {
  char buffer[8192];
  for (;;) {
    ssize_t got = ::read(output_.get(), buffer, sizeof buffer);
    if (got > 0) {
      tail_.append(buffer, static_cast<std::size_t>(got));
      if (tail_.size() > kKeptOutput) tail_.erase(0, tail_.size() - kKeptOutput);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    return got == 0;
  }
}

namespace {

GateReportMessage finish_report(int status, bool timed_out, std::uint32_t timeout_ms, std::string line) {
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
  read_some();
  return finish_report(status, timed_out, timeout_ms_, last_line(tail_));
}

}  // namespace dlaunch::rendezvous
