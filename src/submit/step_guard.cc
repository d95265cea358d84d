#include "submit/step_guard.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch/run_record.h"
#include "util/atomic_file.h"
#include "util/console.h"
#include "util/exit_codes.h"
#include "util/ports.h"
#include "util/error.h"
#include "util/fd.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace dlaunch::submit {
namespace {

using Clock = std::chrono::steady_clock;

// A verdict file is a few bytes; anything longer is not one.
constexpr std::size_t kLongestVerdict = 64;

// The exit code the verdict file holds now, if any. A file that cannot be
// read (not there yet, a file system hiccup) holds none.
std::optional<int> read_verdict(const std::string& path) {
  util::Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!file) return std::nullopt;
  char buffer[kLongestVerdict + 1];
  ssize_t got = util::read_retrying(file.get(), buffer, sizeof(buffer));
  if (got <= 0 || static_cast<std::size_t>(got) > kLongestVerdict) return std::nullopt;
  return parse_verdict_code(std::string_view(buffer, static_cast<std::size_t>(got)));
}

int status_code(int wait_status) {
  return util::exit_code_of_wait_status(wait_status);
}

class StepGuard {
 public:
  StepGuard(const StepGuardSettings& settings, process::SignalChannel& signals)
      : settings_(settings), signals_(signals) {}

  int run(const std::vector<std::string>& step) {
    // A verdict left by an earlier run of the script (after a requeue) is not this run's.
    ::unlink(settings_.verdict_file.c_str());
    ::unlink(seen_file().c_str());
    pid_ = util::spawn_inheriting(step);
    while (!step_status_) {
      wait_for_signal(next_wake());
      take_signals();
      if (step_status_) break;
      look_for_verdict();
      end_step_when_due();
    }
    // srun may have ended right after the verdict was written, before the
    // guard looked: the verdict still decides.
    if (!verdict_) verdict_ = read_verdict(settings_.verdict_file);
    return verdict_ ? *verdict_ : *step_status_;
  }

 private:
  Clock::time_point next_wake() const {
    auto wake = Clock::now() + settings_.poll_interval;
    if (kill_at_) wake = std::min(wake, *kill_at_);
    return wake;
  }

  void wait_for_signal(Clock::time_point wake) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(wake - Clock::now()).count();
    pollfd fd{signals_.fd(), POLLIN, 0};
    ::poll(&fd, 1, static_cast<int>(std::max<long long>(0, left)));
  }

  // SIGCHLD: has srun ended? Any other signal is srun's to act on (a
  // scancel of the batch step, a Ctrl-C in --srun mode, USR1).
  void take_signals() {
    while (auto signal = signals_.next()) {
      if (*signal != SIGCHLD) ::kill(pid_, *signal);
    }
    int wait_status = 0;
    pid_t reaped = ::waitpid(pid_, &wait_status, WNOHANG);
    if (reaped == pid_) step_status_ = status_code(wait_status);
  }

  void look_for_verdict() {
    if (verdict_) return;
    verdict_ = read_verdict(settings_.verdict_file);
    if (!verdict_) return;
    verdict_at_ = Clock::now();
    // The launcher that wrote it may be on another host, and waits to know
    // that this batch script lives (launch/run_record.h).
    try {
      util::write_file_atomically(seen_file(), util::local_host_name() + "\n");
    } catch (const util::SystemError&) {
      // It then takes this host for lost and cancels the job: the job still ends.
    }
  }

  std::string seen_file() const { return settings_.verdict_file + std::string(launch::kVerdictSeenSuffix); }

  // GRACE after the verdict: the task srun still waits for can never end.
  void end_step_when_due() {
    auto now = Clock::now();
    if (kill_at_ && now >= *kill_at_) {
      ::kill(pid_, SIGKILL);
      kill_at_.reset();
      return;
    }
    if (!verdict_ || asked_to_end_ || now < verdict_at_ + settings_.grace) return;
    asked_to_end_ = true;
    say(fmt::format(
        "dlaunch: the job's verdict is in (exit code {}, in {}), but srun still waits {:.3g} s later for "
        "a task that cannot end (its node froze, lost its link or lost its power): ending the step, "
        "so that the job ends now",
        *verdict_, settings_.verdict_file, std::chrono::duration<double>(settings_.grace).count()));
    if (!settings_.foreground) {
      ::kill(pid_, SIGKILL);
      return;
    }
    ::kill(pid_, SIGINT);  // --quit-on-interrupt: srun releases the allocation and quits
    kill_at_ = now + settings_.quit_grace;
  }

  void say(const std::string& line) const {
    if (settings_.say) settings_.say(line);
    else util::console_err().write_message(line);
  }

  const StepGuardSettings& settings_;
  process::SignalChannel& signals_;
  pid_t pid_ = 0;
  std::optional<int> step_status_;
  std::optional<int> verdict_;
  Clock::time_point verdict_at_;
  bool asked_to_end_ = false;
  std::optional<Clock::time_point> kill_at_;  // --srun mode: SIGKILL if SIGINT did not end srun
};

}  // namespace

std::optional<int> parse_verdict_code(std::string_view text) {
  auto code = util::parse_int(util::trim(text));
  if (!code || *code < 0 || *code > 255) return std::nullopt;
  return static_cast<int>(*code);
}

int run_step_until_verdict(const std::vector<std::string>& step, const StepGuardSettings& settings,
                           process::SignalChannel& signals) {
  DLAUNCH_ASSERT(!step.empty());
  return StepGuard(settings, signals).run(step);
}

}  // namespace dlaunch::submit
