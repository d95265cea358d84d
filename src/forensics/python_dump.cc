#include "forensics/python_dump.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fmt/format.h>
#include <optional>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <thread>

namespace dlaunch::forensics {

#if defined(__x86_64__)

namespace {

using Clock = std::chrono::steady_clock;

// Waits (bounded) for PID's next stop; its status, or nullopt at the deadline.
std::optional<int> wait_for_stop(pid_t pid, Clock::time_point deadline) {
  for (;;) {
    int status = 0;
    pid_t got = ::waitpid(pid, &status, WNOHANG | __WALL);
    if (got == pid) return status;
    if (got < 0 && errno != EINTR) return std::nullopt;
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

std::string ptrace_error(const char* what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

// A ptrace session on PID's main thread: seized and interrupted at
// construction, detached (registers restored) at destruction.
class MainThreadStop {
 public:
  MainThreadStop(pid_t pid, std::chrono::milliseconds timeout) : pid_(pid), timeout_(timeout) {}
  ~MainThreadStop() {
    if (!stopped_) return;  // never stopped: this thread's exit detaches it
    if (restore_) ::ptrace(PTRACE_SETREGS, pid_, nullptr, &saved_);
    ::ptrace(PTRACE_DETACH, pid_, nullptr, reinterpret_cast<void*>(static_cast<long>(pending_signal_)));
  }
  MainThreadStop(const MainThreadStop&) = delete;
  MainThreadStop& operator=(const MainThreadStop&) = delete;

  std::string stop() {
    if (::ptrace(PTRACE_SEIZE, pid_, nullptr, nullptr) != 0)
      return ptrace_error(errno == EPERM ? "ptrace refused (see kernel.yama.ptrace_scope)" : "ptrace failed");
    if (::ptrace(PTRACE_INTERRUPT, pid_, nullptr, nullptr) != 0) return ptrace_error("ptrace interrupt failed");
    auto status = wait_for_stop(pid_, Clock::now() + timeout_);
    if (!status) return "the worker's main thread did not stop in time (an uninterruptible wait?)";
    if (WIFEXITED(*status) || WIFSIGNALED(*status)) return "the worker exited";
    stopped_ = true;
    // A signal arriving just then is a signal-delivery stop: handed back at the detach.
    if (WIFSTOPPED(*status) && (*status >> 16) == 0 && WSTOPSIG(*status) != SIGTRAP) pending_signal_ = WSTOPSIG(*status);
    if (::ptrace(PTRACE_GETREGS, pid_, nullptr, &saved_) != 0) return ptrace_error("cannot read the registers");
    restore_ = true;
    return "";
  }

  // Runs FUNCTION(ARG0, 0, 0) to its return.
  std::string call(std::uintptr_t function, long arg0) {
    user_regs_struct regs = saved_;
    // Below the red zone, 16-byte aligned, then a return address of 0: the
    // return faults, which is how the end of the call is seen.
    std::uint64_t sp = ((saved_.rsp - 512) & ~std::uint64_t{0xf}) - 8;
    if (::ptrace(PTRACE_POKEDATA, pid_, reinterpret_cast<void*>(sp), nullptr) != 0)
      return ptrace_error("cannot write the worker's stack");
    regs.rsp = sp;
    regs.rip = function;
    regs.rdi = static_cast<std::uint64_t>(arg0);
    regs.rsi = 0;
    regs.rdx = 0;
    regs.rax = 0;
    regs.orig_rax = static_cast<std::uint64_t>(-1);  // no system call restart for the call itself
    if (::ptrace(PTRACE_SETREGS, pid_, nullptr, &regs) != 0) return ptrace_error("cannot set the registers");
    auto deadline = Clock::now() + timeout_;
    int deliver = 0;
    for (;;) {
      if (::ptrace(PTRACE_CONT, pid_, nullptr, reinterpret_cast<void*>(static_cast<long>(deliver))) != 0)
        return ptrace_error("cannot resume the worker");
      auto status = wait_for_stop(pid_, deadline);
      if (!status) return "the dump did not return in time";
      if (WIFEXITED(*status) || WIFSIGNALED(*status)) {
        stopped_ = false;
        return "the worker exited during the dump";
      }
      int signal = WSTOPSIG(*status);
      user_regs_struct now{};
      ::ptrace(PTRACE_GETREGS, pid_, nullptr, &now);
      if (signal == SIGSEGV && now.rip == 0) return "";  // returned to our 0
      if (signal == SIGSEGV || signal == SIGBUS) return "the dump faulted (the worker was restored as it was)";
      // Another signal meanwhile (SIGCHLD, SIGTERM): delivered now, as it would have been.
      deliver = (*status >> 16) == 0 ? signal : 0;
    }
  }

 private:
  pid_t pid_;
  std::chrono::milliseconds timeout_;
  bool stopped_ = false;
  bool restore_ = false;
  int pending_signal_ = 0;
  user_regs_struct saved_{};
};

}  // namespace

bool can_inject_python_dump() { return true; }

std::string dump_python_stacks(pid_t pid, std::uintptr_t function, int fd_in_worker,
                               std::chrono::milliseconds timeout) {
  MainThreadStop stop(pid, timeout);
  std::string problem = stop.stop();
  if (!problem.empty()) return problem;
  return stop.call(function, fd_in_worker);
}

#else

bool can_inject_python_dump() { return false; }

std::string dump_python_stacks(pid_t, std::uintptr_t, int, std::chrono::milliseconds) {
  return "not supported on this architecture";
}

#endif

}  // namespace dlaunch::forensics
