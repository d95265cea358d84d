#include "ssh/ssh_sessions.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "process/stream_relay.h"
#include "process/worker_process.h"
#include "util/console_watch.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/event_fds.h"
#include "util/fd.h"
#include "util/socket.h"

namespace dlaunch::ssh {
namespace {

constexpr int kSshFailed = 255;
// From SIGTERM to SIGKILL of an ssh that did not end.
constexpr std::chrono::seconds kKillGrace(5);
// After every ssh ended: how long their pipes may still deliver output.
constexpr std::chrono::seconds kDrain(2);

enum class Source : std::uint32_t { kSignal = 1, kTimer, kStdout, kStderr, kConsole };

std::uint64_t tag(Source source, std::size_t index = 0) {
  return (static_cast<std::uint64_t>(source) << 32) | index;
}

struct HostSession {
  const Session* spec = nullptr;
  pid_t pid = 0;
  bool running = false;
  int exit_code = 0;
  Fd input;  // the write end of its stdin
  Fd pipes[2];
  std::unique_ptr<StreamRelay> relays[2];
  OutputTail tail;
  std::string log_file;
};

class SessionLoop {
 public:
  SessionLoop(const std::vector<Session>& sessions, const SessionSettings& settings,
              SignalChannel& signals)
      : specs_(sessions), settings_(settings), signals_(signals),
        out_(settings.console_stdout ? settings.console_stdout : &console_out()),
        err_(settings.console_stderr ? settings.console_stderr : &console_err()) {}

  int run() {
    open_event_sources();
    for (const auto& spec : specs_) start(spec);
    while (running_ > 0 || open_pipes_ > 0) {
      if (running_ == 0 && !drain_deadline_) drain_deadline_ = Clock::now() + kDrain;
      if (!wait_and_dispatch()) break;
    }
    return exit_code();
  }

 private:
  void open_event_sources() {
    epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
    timer_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    if (!epoll_ || !timer_) throw system_error("cannot create dlaunch ssh's event loop", errno);
    add(signals_.fd(), tag(Source::kSignal));
    add(timer_.get(), tag(Source::kTimer));
    console_watch_.emplace(epoll_.get(), std::vector<ConsoleSink*>{out_, err_}, tag(Source::kConsole));
  }

  void add(int fd, std::uint64_t data) { watch_fd(epoll_.get(), fd, EPOLLIN, {.u64 = data}); }

  void start(const Session& spec) {
    auto session = std::make_unique<HostSession>();
    session->spec = &spec;
    Pipe input = make_pipe();
    StartedWorker started = start_worker(spec.argv, Environment::from_process(), input.read_end.get());
    session->pid = started.pid;
    session->running = true;
    session->input = std::move(input.write_end);
    // The secret goes first; the pipe then stays open until the hang-up.
    write_all(session->input.get(), settings_.first_line);
    session->pipes[0] = std::move(started.stdout_pipe);
    session->pipes[1] = std::move(started.stderr_pipe);
    Fd file;
    if (settings_.host_log_dir) {
      std::filesystem::create_directories(*settings_.host_log_dir);
      session->log_file = fmt::format("{}/{}.log", *settings_.host_log_dir, spec.host);
      file.reset(::open(session->log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
      if (!file) throw system_error(fmt::format("cannot create {}", session->log_file), errno);
    }
    ConsoleSink* consoles[2] = {out_, err_};
    for (int stream = 0; stream < 2; ++stream) {
      StreamRelay::Outputs outputs;
      outputs.console = consoles[stream];
      // With --host-log-dir the console gets a host's output only when its file fails.
      outputs.shown = !settings_.host_log_dir;
      if (file) outputs.file.reset(::dup(file.get()));
      outputs.tail = &session->tail;
      outputs.on_file_fault = [this, path = session->log_file](const LogFileFault& fault) {
        err_->write_message(fmt::format(
            "dlaunch ssh: {} could not be written ({}); that host's output goes to the console "
            "instead",
            path, std::strerror(fault.error)));
      };
      // Worker lines arrive prefixed [host:rankN]: by that host's dlaunch run.
      session->relays[stream] = std::make_unique<StreamRelay>("", std::move(outputs));
    }
    std::size_t index = sessions_.size();
    add(session->pipes[0].get(), tag(Source::kStdout, index));
    add(session->pipes[1].get(), tag(Source::kStderr, index));
    open_pipes_ += 2;
    ++running_;
    sessions_.push_back(std::move(session));
  }

  bool wait_and_dispatch() {
    epoll_event events[64];
    int timeout = drain_deadline_ ? millis_until(*drain_deadline_) : -1;
    int count = ::epoll_wait(epoll_.get(), events, 64, timeout);
    if (count < 0) {
      if (errno == EINTR) return true;
      throw system_error("dlaunch ssh's event loop failed", errno);
    }
    if (count == 0 && drain_deadline_ && Clock::now() >= *drain_deadline_) return false;
    for (int i = 0; i < count; ++i) dispatch(events[i].data.u64);
    console_watch_->update();
    return true;
  }

  void dispatch(std::uint64_t data) {
    auto source = static_cast<Source>(data >> 32);
    auto index = static_cast<std::size_t>(data & 0xffffffffu);
    switch (source) {
      case Source::kSignal: on_signals(); break;
      case Source::kTimer: on_timer(); break;
      case Source::kStdout: on_output(index, 0); break;
      case Source::kStderr: on_output(index, 1); break;
      case Source::kConsole: console_watch_->on_writable(index); break;
    }
  }

  void on_output(std::size_t index, int stream) {
    HostSession& session = *sessions_[index];
    ssize_t got = read_retrying(session.pipes[stream].get(), buffer_, sizeof(buffer_));
    if (got > 0) {
      session.relays[stream]->feed(std::string_view(buffer_, static_cast<std::size_t>(got)));
      return;
    }
    if (got < 0 && errno == EAGAIN) return;
    session.relays[stream]->finish();
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, session.pipes[stream].get(), nullptr);
    session.pipes[stream].reset();
    --open_pipes_;
  }

  void on_signals() {
    while (auto signal = signals_.next()) {
      if (*signal == SIGCHLD) reap();
      else if (SignalChannel::stops_job(*signal)) on_stop_signal(*signal);
      else signal_all(*signal);  // USR1/USR2 reach the hosts' launchers as they would locally
    }
  }

  void on_stop_signal(int signal) {
    if (stop_signal_ != 0 && signal == SIGINT) {
      signal_all(SIGKILL);  // a second Ctrl-C: the user does not want to wait
      return;
    }
    if (stop_signal_ == 0) stop_signal_ = signal;
    hang_up_all(fmt::format("received {}", signal_name(signal)));
  }

  void reap() {
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      for (auto& session : sessions_) {
        if (session->pid != pid || !session->running) continue;
        session->running = false;
        --running_;
        session->exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        session->input.reset();
        if (session->exit_code != 0)
          hang_up_all(fmt::format("{} (node {}) ended with exit code {}", session->spec->host,
                                  session->spec->node_rank, session->exit_code));
      }
    }
  }

  // Closes every host's stdin: their launchers stop their workers. SIGTERM
  // follows for ssh processes still there after the grace period.
  void hang_up_all(const std::string& why) {
    if (hung_up_) return;
    hung_up_ = true;
    reason_ = why;
    for (auto& session : sessions_) session->input.reset();
    arm_once(timer_.get(), settings_.grace);
  }

  void on_timer() {
    std::uint64_t expirations = 0;
    read_retrying(timer_.get(), &expirations, sizeof(expirations));
    if (!terminated_) {
      terminated_ = true;
      signal_all(SIGTERM);
      arm_once(timer_.get(), kKillGrace);
    } else {
      signal_all(SIGKILL);
    }
  }

  void signal_all(int signal) {
    for (auto& session : sessions_) {
      if (session->running) ::kill(-session->pid, signal);
    }
  }

  int exit_code() {
    report_failures();
    if (stop_signal_ != 0) return 128 + stop_signal_;
    const HostSession& node0 = *sessions_.front();
    if (node0.exit_code != kSshFailed) return node0.exit_code;
    for (const auto& session : sessions_) {
      if (session->exit_code != 0 && session->exit_code != kSshFailed) return session->exit_code;
    }
    return 1;
  }

  void report_failures() {
    for (const auto& session : sessions_) {
      if (session->exit_code == 0) continue;
      const std::string& host = session->spec->host;
      if (session->exit_code == kSshFailed)
        err_->write_message(fmt::format("dlaunch ssh: lost the ssh connection to {} (node {})",
                                        host, session->spec->node_rank));
      if (!settings_.host_log_dir) continue;
      err_->write_message(
          fmt::format("dlaunch ssh: {} (node {}) ended with exit code {}; its output is in {}", host,
                      session->spec->node_rank, session->exit_code, session->log_file));
      for (const auto& line : session->tail.last_lines(10)) err_->write_message("  | " + line);
    }
    if (hung_up_) err_->write_message(fmt::format("dlaunch ssh: stopped every host: {}", reason_));
  }

  const std::vector<Session>& specs_;
  const SessionSettings& settings_;
  SignalChannel& signals_;
  ConsoleSink* out_;
  ConsoleSink* err_;
  Fd epoll_;
  Fd timer_;
  std::optional<ConsoleWatch> console_watch_;
  std::vector<std::unique_ptr<HostSession>> sessions_;
  int running_ = 0;
  int open_pipes_ = 0;
  int stop_signal_ = 0;
  bool hung_up_ = false;
  bool terminated_ = false;
  std::string reason_;
  std::optional<Clock::time_point> drain_deadline_;
  char buffer_[64 * 1024];
};

}  // namespace

int run_sessions(const std::vector<Session>& sessions, const SessionSettings& settings,
                 SignalChannel& signals) {
  DLAUNCH_ASSERT(!sessions.empty());
  auto loop = std::make_unique<SessionLoop>(sessions, settings, signals);
  return loop->run();
}

}  // namespace dlaunch::ssh
