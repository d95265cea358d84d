#include "launch/supervisor.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <set>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch/error_file.h"
#include "process/stream_relay.h"
#include "process/worker_process.h"
#include "util/console_watch.h"
#include "util/error.h"
#include "util/event_fds.h"
#include "util/socket.h"

namespace dlaunch {
namespace {

enum class Source : std::uint32_t { kSignal = 1, kTimer, kCoordinator, kStdout, kStderr, kConsole };

// After every worker exited: how long their pipes may still deliver output,
// and the escaped processes killed then may take to be reaped.
constexpr std::chrono::seconds kDrain(2);
// Passes of --kill-escaped subreaper per round: each kill may orphan more.
constexpr int kMaxEscapeSweeps = 16;
constexpr const char* kStreamNames[2] = {"stdout", "stderr"};

std::uint64_t tag(Source source, std::size_t index = 0) {
  return (static_cast<std::uint64_t>(source) << 32) | index;
}

std::string now_iso8601() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}", fmt::localtime(std::time(nullptr)));
}

// O_NONBLOCK: a FIFO planted where a log file belongs must not stop the
// launcher, neither at the open (no reader) nor at a write (a stalled one);
// regular files ignore it.
Fd open_log_file(const std::string& path) {
  return Fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0644));
}

struct WorkerState {
  const WorkerSpec* spec = nullptr;
  pid_t pid = 0;
  bool running = false;
  int exit_code = 0;
  int signal = 0;
  std::string exit_time;
  OutputTail tail;
  std::unique_ptr<StreamRelay> relays[2];  // stdout, stderr
  Fd pipes[2];
  Fd exec_status;
  std::string program;
};

class RoundSupervisor {
 public:
  RoundSupervisor(const WorkerPlan& plan, const SupervisorSettings& settings,
                  Coordinator& coordinator, SignalChannel& signals, Watchdog& watchdog)
      : plan_(plan), settings_(settings), coordinator_(coordinator), signals_(signals),
        watchdog_(watchdog),
        console_out_(settings.console_stdout ? settings.console_stdout : &console_out()),
        console_err_(settings.console_stderr ? settings.console_stderr : &console_err()) {}

  NodeOutcome run() {
    open_event_sources();
    start_all_workers();
    run_until_drained();
    record_incomplete_logs();
    return outcome();
  }

 private:
  void open_event_sources() {
    epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
    timer_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    if (!epoll_ || !timer_) throw system_error("cannot create the supervisor's event loop", errno);
    add(signals_.fd(), tag(Source::kSignal));
    add(timer_.get(), tag(Source::kTimer));
    if (coordinator_.event_fd() >= 0) add(coordinator_.event_fd(), tag(Source::kCoordinator));
    console_watch_.emplace(epoll_.get(), std::vector<ConsoleSink*>{console_out_, console_err_},
                           tag(Source::kConsole));
  }

  // Until every worker has exited, its output is relayed and what it left
  // behind is reaped, or the drain deadline passes.
  void run_until_drained() {
    for (;;) {
      // Before the end is judged: the clean-up may find escaped processes to reap.
      if (running_ == 0 && !drain_deadline_) clean_up_groups();
      if (running_ == 0 && open_pipes_ == 0 && escaped_.empty()) break;
      if (!wait_and_dispatch()) break;  // the drain deadline passed
    }
    clean_up_groups();
  }

  void add(int fd, std::uint64_t data) { watch_fd(epoll_.get(), fd, EPOLLIN, {.u64 = data}); }

  void start_all_workers() {
    workers_.reserve(plan_.workers.size());
    try {
      for (const auto& spec : plan_.workers) start_worker_for(spec);
      // Only now wait for the execs, so the workers' start-ups overlap.
      for (auto& worker : workers_) confirm_started(*worker);
    } catch (...) {
      // Leave nothing behind: stop what did start, then report why.
      begin_stop(SIGKILL);
      run_until_drained();
      throw;
    }
  }

  void start_worker_for(const WorkerSpec& spec) {
    const std::size_t index = workers_.size();
    auto state = std::make_unique<WorkerState>();
    state->spec = &spec;
    make_relays(*state, index);
    int cgroup_procs = settings_.escapes ? settings_.escapes->cgroup_procs_fd() : -1;
    StartedWorker started = start_worker(spec.argv, spec.environment, -1, cgroup_procs);
    state->pid = started.pid;
    state->running = true;
    watchdog_.watch(started.pid);
    // A stop decided while the workers start (--log-dir-required and a log
    // file that cannot be created) reaches the later ones too.
    if (stopping_) ::kill(-started.pid, SIGTERM);
    state->pipes[0] = std::move(started.stdout_pipe);
    state->pipes[1] = std::move(started.stderr_pipe);
    state->exec_status = std::move(started.exec_status);
    state->program = std::move(started.path);
    add(state->pipes[0].get(), tag(Source::kStdout, index));
    add(state->pipes[1].get(), tag(Source::kStderr, index));
    open_pipes_ += 2;
    ++running_;
    workers_.push_back(std::move(state));
  }

  // The worker's two relays, with their log files. A file (or folder) that
  // cannot be created is the relay's fault from the start, not an error:
  // logs must not stop the training (the worker's error file is then
  // missing too, which only costs its message in the summary).
  void make_relays(WorkerState& state, std::size_t index) {
    const WorkerSpec& spec = *state.spec;
    std::error_code folder_error;
    std::filesystem::create_directories(spec.log_folder, folder_error);
    const std::optional<std::string>* files[2] = {&spec.stdout_file, &spec.stderr_file};
    bool shown[2] = {spec.stdout_to_console, spec.stderr_to_console};
    ConsoleSink* consoles[2] = {console_out_, console_err_};
    for (int stream = 0; stream < 2; ++stream) {
      StreamRelay::Outputs outputs;
      outputs.console = consoles[stream];
      outputs.shown = shown[stream];
      outputs.tail = &state.tail;
      if (const auto& path = *files[stream]) {
        outputs.file = open_log_file(*path);
        // The folder's error says more than the file's ENOENT.
        if (!outputs.file) outputs.file_error = folder_error ? folder_error.value() : errno;
      }
      outputs.on_file_fault = [this, index, stream](const LogFileFault& fault) {
        on_log_fault(index, stream, fault);
      };
      state.relays[stream] = std::make_unique<StreamRelay>(spec.prefix, std::move(outputs));
    }
  }

  // Throws SystemError when WORKER's program could not be executed; that
  // child has exited with 127 and is reaped here, so it is not taken for a
  // worker failure.
  void confirm_started(WorkerState& worker) {
    StartedWorker started;
    started.exec_status = std::move(worker.exec_status);
    ExecResult result = confirm_exec(started);
    if (result.error == 0) return;
    int status = 0;
    while (::waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
    }
    worker.running = false;
    --running_;
    if (result.joining_cgroup)
      throw system_error(fmt::format("--kill-escaped cgroup: cannot move worker '{}' into {}",
                                     worker.program, settings_.escapes->cgroup_dir()),
                         result.error);
    throw system_error(fmt::format("cannot execute worker program '{}'", worker.program),
                       result.error);
  }

  // A worker's log file failed (or could not be created): said at once;
  // with --log-dir-required the round stops as a failure.
  void on_log_fault(std::size_t index, int stream, const LogFileFault& fault) {
    // plan_.workers[index] is that worker's spec, also while its relays are
    // being made (a file that cannot be created fails then).
    IncompleteLog log = incomplete_log(plan_.workers[index], stream, fault);
    console_err_->write_message(log_fault_notice(log, settings_.log_dir_required));
    if (!settings_.log_dir_required || stopping_) return;
    Failure failure;
    failure.node_rank = settings_.node_rank;
    failure.host = settings_.host;
    failure.time = now_iso8601();
    failure.description = log_fault_failure(log, settings_.host, settings_.node_rank);
    stop_failure_ = failure;
    log_failed_ = true;
    coordinator_.announce_failure(failure);
    begin_stop(SIGTERM);
  }

  static IncompleteLog incomplete_log(const WorkerSpec& spec, int stream, const LogFileFault& fault) {
    IncompleteLog log;
    log.path = (stream == 0 ? spec.stdout_file : spec.stderr_file).value_or("");
    log.global_rank = spec.global_rank;
    log.stream = kStreamNames[stream];
    log.fault = fault;
    return log;
  }

  void record_incomplete_logs() const {
    if (settings_.incomplete_logs == nullptr) return;
    for (const auto& worker : workers_) {
      for (int stream = 0; stream < 2; ++stream) {
        if (const auto& fault = worker->relays[stream]->file_fault())
          settings_.incomplete_logs->push_back(incomplete_log(*worker->spec, stream, *fault));
      }
    }
  }

  // Waits for events and handles them. False when the drain deadline passed.
  // The coordinator's deadlines (heartbeats) wake the loop too.
  bool wait_and_dispatch() {
    epoll_event events[64];
    std::optional<Clock::time_point> wake = drain_deadline_;
    auto coordinator_due = coordinator_.next_deadline();
    if (coordinator_due) wake = wake ? std::min(*wake, *coordinator_due) : *coordinator_due;
    int count = ::epoll_wait(epoll_.get(), events, 64, wake ? millis_until(*wake) : -1);
    if (count < 0) {
      if (errno == EINTR) return true;
      throw system_error("the supervisor's event loop failed", errno);
    }
    for (int i = 0; i < count; ++i) dispatch(events[i].data.u64);
    if (coordinator_due && Clock::now() >= *coordinator_due) on_coordinator();
    // Worker output (or node 0's rendezvous thread) may have left a backlog.
    console_watch_->update();
    // Checked even while events keep coming (an escaped writer that never
    // stops, a console that takes a little at a time): the drain is bounded.
    if (drain_deadline_ && Clock::now() >= *drain_deadline_) {
      close_remaining_pipes();
      return false;
    }
    return true;
  }

  void dispatch(std::uint64_t data) {
    auto source = static_cast<Source>(data >> 32);
    auto index = static_cast<std::size_t>(data & 0xffffffffu);
    switch (source) {
      case Source::kSignal: on_signals(); break;
      case Source::kTimer: on_grace_period_over(); break;
      case Source::kCoordinator: on_coordinator(); break;
      case Source::kStdout: on_output(index, 0); break;
      case Source::kStderr: on_output(index, 1); break;
      case Source::kConsole: console_watch_->on_writable(index); break;
    }
  }

  void on_output(std::size_t index, int stream) {
    WorkerState& worker = *workers_[index];
    ssize_t got = read_retrying(worker.pipes[stream].get(), buffer_, sizeof(buffer_));
    if (got > 0) {
      worker.relays[stream]->feed(std::string_view(buffer_, static_cast<std::size_t>(got)));
      return;
    }
    if (got < 0 && errno == EAGAIN) return;
    close_pipe(worker, stream);
  }

  void close_pipe(WorkerState& worker, int stream) {
    if (!worker.pipes[stream]) return;
    worker.relays[stream]->finish();
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, worker.pipes[stream].get(), nullptr);
    worker.pipes[stream].reset();
    --open_pipes_;
  }

  void close_remaining_pipes() {
    for (auto& worker : workers_) {
      // Read what is already buffered, then give up on writers that escaped the group.
      for (int stream = 0; stream < 2; ++stream) {
        if (!worker->pipes[stream]) continue;
        set_nonblocking(worker->pipes[stream].get());
        ssize_t got;
        while ((got = read_retrying(worker->pipes[stream].get(), buffer_, sizeof(buffer_))) > 0)
          worker->relays[stream]->feed(std::string_view(buffer_, static_cast<std::size_t>(got)));
        close_pipe(*worker, stream);
      }
    }
  }

  void on_signals() {
    while (auto signal = signals_.next()) {
      if (*signal == SIGCHLD) reap_workers();
      else on_launcher_signal(*signal);
    }
  }

  // Reaps every child that exited: workers, and with --kill-escaped
  // subreaper the orphans that became ours. A reaped leftover may have
  // orphaned more processes onto the launcher, so they are looked for again.
  void reap_workers() {
    int status = 0;
    pid_t pid;
    bool leftover_reaped = false;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      for (auto& worker : workers_) {
        if (worker->pid == pid && worker->running) record_exit(*worker, status);
      }
      leftover_reaped |= escaped_.erase(pid) > 0;
    }
    if (leftover_reaped) kill_escaped();
  }

  void record_exit(WorkerState& worker, int status) {
    worker.running = false;
    --running_;
    worker.exit_time = now_iso8601();
    if (WIFSIGNALED(status)) {
      worker.signal = WTERMSIG(status);
      worker.exit_code = 128 + worker.signal;
    } else {
      worker.exit_code = WEXITSTATUS(status);
    }
    if (worker.exit_code != 0 && !stopping_) {
      first_failure_ = &worker;
      coordinator_.announce_failure(describe(worker));
      begin_stop(SIGTERM);
    }
  }

  void on_launcher_signal(int signal) {
    if (SignalChannel::stops_job(signal) && stop_signal_ != 0 && signal == SIGINT) {
      signal_running(SIGKILL);  // a second Ctrl-C: the user does not want to wait
      return;
    }
    signal_running(signal);
    if (signal == settings_.preempt_signal) preempted_ = true;
    if (!SignalChannel::stops_job(signal) || stopping_) return;
    stop_signal_ = signal;
    Failure failure;
    failure.node_rank = settings_.node_rank;
    failure.host = settings_.host;
    failure.exit_code = 128 + signal;
    failure.signal = signal;
    failure.time = now_iso8601();
    failure.description =
        fmt::format("the launcher on {} (node {}) received {}", settings_.host,
                    settings_.node_rank, signal_name(signal));
    stop_failure_ = failure;
    coordinator_.announce_failure(failure);
    stopping_ = true;
    arm_grace_period();
  }

  void on_coordinator() {
    auto reason = coordinator_.poll_stop_request();
    if (!reason) return;
    // One stop request is all the round needs; a closed socket would keep
    // firing. Deadlines still call in, so heartbeats go on while workers stop.
    if (!coordinator_unwatched_) {
      ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, coordinator_.event_fd(), nullptr);
      coordinator_unwatched_ = true;
    }
    if (stopping_) return;
    remote_stop_ = *reason;
    begin_stop(SIGTERM);
  }

  // SIGTERM (or SIGKILL) to every running worker's group, SIGKILL after the grace period.
  void begin_stop(int signal) {
    stopping_ = true;
    signal_running(signal);
    if (signal != SIGKILL) arm_grace_period();
  }

  void arm_grace_period() {
    if (settings_.shutdown_timeout.count() == 0) {
      signal_running(SIGKILL);
      return;
    }
    arm_once(timer_.get(), settings_.shutdown_timeout);
  }

  void on_grace_period_over() {
    std::uint64_t expirations = 0;
    read_retrying(timer_.get(), &expirations, sizeof(expirations));
    signal_running(SIGKILL);
  }

  void signal_running(int signal) {
    for (auto& worker : workers_) {
      if (worker->running) ::kill(-worker->pid, signal);
    }
  }

  // Every worker has exited: kill what is left in their groups (children
  // they started) and what escaped the groups, and give their pipes a short
  // while to drain.
  void clean_up_groups() {
    if (groups_cleaned_) return;
    groups_cleaned_ = true;
    for (auto& worker : workers_) {
      ::kill(-worker->pid, SIGKILL);
      watchdog_.release(worker->pid);
    }
    drain_deadline_ = Clock::now() + kDrain;
    kill_escaped();
  }

  // Bounded: at most kMaxEscapeSweeps passes, reaped until the drain deadline.
  void kill_escaped() {
    if (settings_.escapes == nullptr || escape_sweeps_ >= kMaxEscapeSweeps) return;
    ++escape_sweeps_;
    for (pid_t pid : settings_.escapes->kill_leftovers({watchdog_.pid()})) escaped_.insert(pid);
  }

  Failure describe(const WorkerState& worker) const {
    Failure failure;
    failure.global_rank = worker.spec->global_rank;
    failure.local_rank = worker.spec->local_rank;
    failure.node_rank = settings_.node_rank;
    failure.host = settings_.host;
    failure.pid = worker.pid;
    failure.exit_code = worker.exit_code;
    failure.signal = worker.signal;
    failure.time = worker.exit_time;
    failure.log_file = log_file_of(worker);
    return failure;
  }

  // The file the summary points at (stderr's, else stdout's), marked when
  // it is incomplete.
  static std::string log_file_of(const WorkerState& worker) {
    int stream = worker.spec->stderr_file ? 1 : 0;
    const auto& path = stream == 1 ? worker.spec->stderr_file : worker.spec->stdout_file;
    if (!path) return "";
    const auto& fault = worker.relays[stream]->file_fault();
    return fault ? mark_incomplete(*path, *fault) : *path;
  }

  NodeOutcome outcome() const {
    NodeOutcome result;
    result.stop_signal = stop_signal_;
    result.preempted = preempted_;
    if (first_failure_ != nullptr) {
      Failure failure = describe(*first_failure_);
      failure.last_lines = first_failure_->tail.last_lines(settings_.summary_lines);
      failure.error_message = read_error_file_message(first_failure_->spec->error_file);
      result.failure = failure;
    } else if (stop_failure_) {
      result.failure = stop_failure_;
    }
    result.succeeded = first_failure_ == nullptr && stop_signal_ == 0 && !remote_stop_ && !log_failed_;
    for (const auto& worker : workers_) result.succeeded &= worker->exit_code == 0;
    return result;
  }

  const WorkerPlan& plan_;
  const SupervisorSettings& settings_;
  Coordinator& coordinator_;
  SignalChannel& signals_;
  Watchdog& watchdog_;
  ConsoleSink* console_out_;
  ConsoleSink* console_err_;
  Fd epoll_;
  Fd timer_;
  std::optional<ConsoleWatch> console_watch_;  // after epoll_: unwatches before it closes
  std::vector<std::unique_ptr<WorkerState>> workers_;
  int running_ = 0;
  int open_pipes_ = 0;
  bool stopping_ = false;
  bool groups_cleaned_ = false;
  bool coordinator_unwatched_ = false;
  int stop_signal_ = 0;
  bool preempted_ = false;
  bool log_failed_ = false;  // --log-dir-required and a log file failed
  int escape_sweeps_ = 0;
  std::set<pid_t> escaped_;  // killed leftovers not reaped yet
  std::optional<Failure> stop_failure_;
  std::optional<std::string> remote_stop_;
  const WorkerState* first_failure_ = nullptr;
  std::optional<Clock::time_point> drain_deadline_;
  char buffer_[256 * 1024];
};

}  // namespace

NodeOutcome supervise(const WorkerPlan& plan, const SupervisorSettings& settings,
                      Coordinator& coordinator, SignalChannel& signals, Watchdog& watchdog) {
  auto supervisor =
      std::make_unique<RoundSupervisor>(plan, settings, coordinator, signals, watchdog);
  return supervisor->run();
}

}  // namespace dlaunch
