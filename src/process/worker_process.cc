#include "process/worker_process.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/resource.h>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "process/signal_channel.h"
#include "util/error.h"
#include "util/exit_codes.h"
#include "util/open_file_limit.h"
#include "util/strings.h"

namespace dlaunch::process {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// Pointer arrays for execve, built before fork: the child of a process that
// may have other threads (node 0's rendezvous service) must not allocate.
struct ExecArrays {
  std::vector<std::string> storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
};

ExecArrays make_exec_arrays(const std::vector<std::string>& argv, const util::Environment& environment) {
  ExecArrays arrays;
  arrays.storage = argv;
  std::size_t argc = arrays.storage.size();
  for (auto& entry : environment.to_entries()) arrays.storage.push_back(std::move(entry));
  for (std::size_t i = 0; i < arrays.storage.size(); ++i)
    (i < argc ? arrays.argv : arrays.envp).push_back(arrays.storage[i].data());
  arrays.argv.push_back(nullptr);
  arrays.envp.push_back(nullptr);
  return arrays;
}

// Raises the pipe's capacity so a chatty worker blocks less often on a busy
// launcher; failure only costs speed, so it is ignored.
void enlarge_pipe(int fd) { ::fcntl(fd, F_SETPIPE_SZ, 1 << 20); }

// What the child writes on its status pipe when it cannot become the worker.
struct ChildFailure {
  int stage;  // kExecStage or kCgroupStage
  int error;
};
constexpr int kExecStage = 0;
constexpr int kCgroupStage = 1;

[[noreturn]] void fail_in_child(int error_fd, int stage, int error) {
  ChildFailure failure{stage, error};
  ssize_t ignored = ::write(error_fd, &failure, sizeof(failure));
  (void)ignored;
  ::_exit(util::kExitCannotRun);
}

// As torchrun's workers (subprocess.Popen closes them): the program holds
// descriptors 0-2 and nothing else the launcher opened or inherited (a
// shell's or a batch system's descriptors, a socket of node 0's service).
// Marked close-on-exec rather than closed, so the exec-status pipe still
// reports an exec that fails. Async-signal-safe; the loop is for kernels
// older than 5.11, which lack CLOSE_RANGE_CLOEXEC.
void close_inherited_on_exec() {
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  rlimit limit{};
  rlim_t most = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
  int last = static_cast<int>(std::min<rlim_t>(most, 1 << 20));
  for (int fd = 3; fd < last; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

// Async-signal-safe from here on: no allocation after the fork.
[[noreturn]] void exec_in_child(const std::string& path, ExecArrays& arrays, pid_t parent,
                                int stdin_fd, int stdout_fd, int stderr_fd, int error_fd,
                                int cgroup_procs_fd, const std::vector<int>& inherited_fds) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(util::kExitCannotRun);  // the launcher died before prctl took effect
  // Under Yama's ptrace_scope 1 only a process's ancestors may trace it;
  // a stack capture's tools (eu-stack, gdb, dlaunch __dump-python) are the
  // launcher's children, the worker's siblings. This lets the launcher and
  // its descendants, nobody else, trace the worker. Without Yama: EINVAL, ignored.
  ::prctl(PR_SET_PTRACER, parent, 0, 0, 0);
  // "0" moves the writer itself; before the exec, so its children are born inside.
  if (cgroup_procs_fd >= 0 && ::write(cgroup_procs_fd, "0", 1) != 1)
    fail_in_child(error_fd, kCgroupStage, errno);
  SignalChannel::reset_in_child();
  // Node 0's rendezvous raised the launcher's own open-file limit; the
  // worker gets the limit the launcher was started with, as under torchrun.
  util::restore_open_file_limit_in_child();
  // Close-on-exec, so only the copy on descriptor 0 reaches the program;
  // dup2 does not copy the flag, and a /dev/null that lands on 0 itself
  // (the launcher's stdin was closed) has it cleared instead.
  int input = stdin_fd >= 0 ? stdin_fd : ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (input == STDIN_FILENO) ::fcntl(input, F_SETFD, 0);
  else if (input >= 0) ::dup2(input, STDIN_FILENO);
  ::dup2(stdout_fd, STDOUT_FILENO);
  ::dup2(stderr_fd, STDERR_FILENO);
  close_inherited_on_exec();
  for (int fd : inherited_fds) {  // no allocation: the vector was filled before the fork
    if (fd > STDERR_FILENO) ::fcntl(fd, F_SETFD, 0);
  }
  ::execve(path.c_str(), arrays.argv.data(), arrays.envp.data());
  fail_in_child(error_fd, kExecStage, errno);
}

}  // namespace

std::optional<std::string> find_executable(const std::string& program,
                                           const util::Environment& environment) {
  if (program.find('/') != std::string::npos)
    return is_executable_file(program) ? std::optional(program) : std::nullopt;
  std::string path = environment.get("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  for (const auto& folder : util::split(path, ':')) {
    std::string candidate = (folder.empty() ? "." : folder) + "/" + program;
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

StartedWorker start_worker(const std::vector<std::string>& argv, const util::Environment& environment,
                           int stdin_fd, int cgroup_procs_fd, const std::vector<int>& inherited_fds) {
  DLAUNCH_ASSERT(!argv.empty());
  auto path = find_executable(argv[0], environment);
  if (!path)
    throw util::SystemError(fmt::format("cannot start worker: '{}' is not an executable file{}", argv[0],
                                  argv[0].find('/') == std::string::npos ? " in PATH" : ""));
  ExecArrays arrays = make_exec_arrays(argv, environment);
  util::Pipe out = util::make_pipe();
  util::Pipe err = util::make_pipe();
  util::Pipe exec_status = util::make_pipe();  // closes on exec; carries errno when exec fails
  enlarge_pipe(out.write_end.get());
  enlarge_pipe(err.write_end.get());

  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw util::system_error("cannot fork a worker", errno);
  if (pid == 0)
    exec_in_child(*path, arrays, parent, stdin_fd, out.write_end.get(), err.write_end.get(),
                  exec_status.write_end.get(), cgroup_procs_fd, inherited_fds);

  ::setpgid(pid, pid);  // also here, so the group exists before we may signal it
  exec_status.write_end.reset();
  return StartedWorker{pid, std::move(out.read_end), std::move(err.read_end),
                       std::move(exec_status.read_end), *path};
}

ExecResult confirm_exec(StartedWorker& worker) {
  ChildFailure failure{};
  bool failed = util::read_retrying(worker.exec_status.get(), &failure, sizeof(failure)) ==
                static_cast<ssize_t>(sizeof(failure));
  worker.exec_status.reset();
  if (!failed) return ExecResult{};
  return ExecResult{failure.error, failure.stage == kCgroupStage};
}

}  // namespace dlaunch::process
