#include "launch/supervisor.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <fmt/format.h>
#include <set>
#include <span>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "doctor/diagnosis.h"
#include "forensics/stack_capture.h"
#include "launch/error_file.h"
#include "launch/progress_tracker.h"
#include "process/child_output.h"
#include "process/console_report.h"
#include "process/console_watch.h"
#include "process/event_loop.h"
#include "process/process_groups.h"
#include "process/worker_process.h"
#include "util/error.h"
#include "util/exit_codes.h"
#include "util/local_time.h"
#include "util/oom_counter.h"
#include "util/own_executable.h"
#include "util/safe_file.h"
#include "util/signal_names.h"
#include "util/socket.h"
#include "util/trusted_folder.h"

namespace dlaunch::launch {
namespace {

// After every worker exited: how long their pipes may still deliver output,
// and the escaped processes killed then may take to be reaped.
constexpr std::chrono::seconds kDrain(2);
// Passes of --kill-escaped subreaper per round: each kill may orphan more.
constexpr int kMaxEscapeSweeps = 16;
constexpr const char* kStreamNames[2] = {"stdout", "stderr"};

// A new file, or an earlier run's log of ours emptied; never through a
// link or into a FIFO or device planted there (util/safe_file.h).
// O_NONBLOCK: a write to a stalled disk must not stop the launcher;
// regular files ignore it.
util::OpenedFile open_log_file(const std::string& path) {
  return util::open_file_to_rewrite(path, 0644, O_NONBLOCK);
}

struct WorkerState {
  const WorkerSpec* spec = nullptr;
  pid_t pid = 0;
  int exit_code = 0;
  int signal = 0;
  std::string exit_time;
  std::unique_ptr<process::ChildOutput> output;
  util::Fd exec_status;
  std::string program;
  util::Fd progress_pipe;  // the read end of its DLAUNCH_PROGRESS_FD
  util::Fd dump_pipe;      // the read end of the pipe its Python stacks are dumped into
  int dump_fd_in_worker = -1;  // the write end's number, in the worker
  // dlaunch's line on a stopping signal it did not send (exit_note
  // below); it ends the worker's last lines.
  std::string exit_note;
};

// dlaunch's own line on why a worker died of a SIGKILL that dlaunch did
// not send (SENT_BY_DLAUNCH false: the worker was the round's first to
// end): the kernel's OOM killer when the memory cgroup counted a kill
// during the round, else someone outside dlaunch. Without it the SIGKILL
// would read as dlaunch stopping the worker (a cascade), and the root
// would have no cause. Not for SIGTERM: Slurm sends it to every process of
// a step it stops, and that end is the launcher's own (kLauncher). "" for
// other ends.
std::string exit_note(int signal, bool sent_by_dlaunch, const util::OomCounter& counter) {
  if (sent_by_dlaunch || signal != SIGKILL) return "";
  auto kills = counter.kills_since_start();
  if (kills && *kills > 0)
    return fmt::format("dlaunch: this worker was killed by the kernel's OOM killer: the memory cgroup counted {} "
                       "OOM kill(s) during the round ({}); give the job more memory (--mem) or use less",
                       *kills, *counter.file());
  return fmt::format("dlaunch: this worker got {}, which dlaunch did not send (a person, a script, the batch "
                     "system, or an OOM killer dlaunch cannot see)",
                     util::signal_name(signal));
}

// Where a worker's interpreter writes its stacks when a capture asks
// (forensics/python_dump.h). Non-blocking on the worker's side too (the
// flag belongs to the pipe, shared across the fork): a full pipe cuts the
// dump short instead of stopping the worker. As large as allowed, so a
// dump of many threads fits while the capture reads.
util::Pipe make_dump_pipe() {
  util::Pipe pipe = util::make_pipe();
  util::set_nonblocking(pipe.write_end.get());
  util::set_nonblocking(pipe.read_end.get());
  ::fcntl(pipe.write_end.get(), F_SETPIPE_SZ, 1 << 20);  // best effort: the default 64 KiB also works
  return pipe;
}

std::string own_executable_or_empty() {
  try {
    return util::own_executable();
  } catch (const util::SystemError&) {
    return "";
  }
}

std::vector<int> ranks_of(const WorkerPlan& plan) {
  std::vector<int> ranks;
  for (const auto& spec : plan.workers) ranks.push_back(spec.global_rank);
  return ranks;
}

class RoundSupervisor {
 public:
  RoundSupervisor(const WorkerPlan& plan, const SupervisorSettings& settings,
                  rendezvous::Coordinator& coordinator, process::SignalChannel& signals,
                  process::Watchdog& watchdog)
      : plan_(plan),
        settings_(settings),
        coordinator_(coordinator),
        signals_(signals),
        watchdog_(watchdog),
        console_out_(settings.console_stdout ? settings.console_stdout : &util::console_out()),
        console_err_(settings.console_stderr ? settings.console_stderr : &util::console_err()),
        console_watch_(loop_, {console_out_, console_err_}),
        groups_(loop_),
        progress_(ranks_of(plan), util::Clock::now()) {}

  ~RoundSupervisor() {
    coordinator_.watch_progress(nullptr);
    if (capture_thread_.joinable()) capture_thread_.join();  // bounded by the tools' timeouts
  }

  rendezvous::NodeOutcome run() {
    watch_event_sources();
    start_all_workers();
    coordinator_.workers_started();
    coordinator_.watch_progress(&progress_);
    run_until_drained();
    coordinator_.watch_progress(nullptr);
    finish_capture(false);
    record_incomplete_logs();
    return outcome();
  }

 private:
  void watch_event_sources() {
    loop_.watch(signals_.fd(), EPOLLIN, [this](std::uint32_t) { on_signals(); });
    if (coordinator_.event_fd() >= 0)
      loop_.watch(coordinator_.event_fd(), EPOLLIN, [this](std::uint32_t) { on_coordinator(); });
  }

  // Until every worker has exited, its output is relayed and what it left
  // behind is reaped, or the drain deadline passes.
  void run_until_drained() {
    loop_.run_until([this] { return finished(); });
    clean_up_groups();
  }

  // Asked by the loop before each wait.
  bool finished() {
    // Worker output (or node 0's rendezvous thread) may have left a backlog.
    console_watch_.update();
    say_if_a_console_broke();
    resume_held_back_output();
    follow_coordinator_deadline();
    // Before the end is judged: the clean-up may find escaped processes to reap.
    if (groups_.running() == 0 && !groups_cleaned_) clean_up_groups();
    return drained_ || (groups_.running() == 0 && open_pipes_ == 0 && escaped_.empty());
  }

  // A console gone for good (its reader closed it: EPIPE; a hung-up
  // terminal: EIO) never holds a worker back: its lines are dropped and
  // counted. That is said once, on the other stream while it works, and
  // the job goes on filing.
  void say_if_a_console_broke() {
    if (!said_broken_[0] && console_out_->error() != 0) {
      said_broken_[0] = true;
      if (console_err_ != console_out_)
        console_err_->write_message(process::broken_console_notice(*console_out_, "stdout"));
    }
    if (!said_broken_[1] && console_err_ != console_out_ && console_err_->error() != 0) {
      said_broken_[1] = true;
      console_out_->write_message(process::broken_console_notice(*console_err_, "stderr"));
    }
  }

  // Pipes held back while the console was full are read again once it has
  // room. A worker held back waits to write because of the console, not
  // because it is stuck: its output counts as progress (--hang-timeout).
  void resume_held_back_output() {
    const auto now = util::Clock::now();
    for (std::size_t index = 0; index < workers_.size(); ++index) {
      process::ChildOutput& output = *workers_[index]->output;
      if (!output.held_back()) continue;
      output.resume_if_room();
      progress_.on_output(index, now);
    }
  }

  // The coordinator's deadlines (heartbeats) wake the loop too; they move
  // as it sends and hears, so the timer follows before every wait.
  void follow_coordinator_deadline() {
    auto due = coordinator_.next_deadline();
    if (due == coordinator_due_) return;
    loop_.cancel(coordinator_timer_);
    coordinator_due_ = due;
    if (!due) return;
    coordinator_timer_ = loop_.at(*due, [this] {
      coordinator_due_.reset();
      on_coordinator();
    });
  }

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
    make_output(*state, index);
    int cgroup_procs = settings_.escapes ? settings_.escapes->cgroup_procs_fd() : -1;
    util::Pipe progress = util::make_pipe();
    util::Pipe dump = make_dump_pipe();
    util::Environment environment = spec.environment;
    environment.set(kProgressFdVariable, std::to_string(progress.write_end.get()));
    state->dump_fd_in_worker = dump.write_end.get();
    process::StartedWorker started = process::start_worker(spec.argv, environment, -1, cgroup_procs,
                                                           {progress.write_end.get(), dump.write_end.get()});
    progress.write_end.reset();
    state->dump_pipe = std::move(dump.read_end);
    watch_progress_pipe(*state, std::move(progress.read_end), index);
    state->output->on_output([this, index] { progress_.on_output(index, util::Clock::now()); });
    state->pid = started.pid;
    groups_.add(started.pid);
    if (settings_.worker_groups) settings_.worker_groups->push_back(started.pid);
    watchdog_.watch(started.pid);
    // A stop decided while the workers start (--log-dir-required and a log
    // file that cannot be created) reaches the later ones too.
    if (stopping_) ::kill(-started.pid, SIGTERM);
    state->exec_status = std::move(started.exec_status);
    state->program = std::move(started.path);
    state->output->relay(loop_, std::move(started.stdout_pipe), std::move(started.stderr_pipe),
                         buffer_, [this] { --open_pipes_; });
    open_pipes_ += 2;
    workers_.push_back(std::move(state));
  }

  // The worker's progress channel: step numbers, one per line.
  void watch_progress_pipe(WorkerState& state, util::Fd pipe, std::size_t index) {
    util::set_nonblocking(pipe.get());
    int fd = pipe.get();
    state.progress_pipe = std::move(pipe);
    loop_.watch(fd, EPOLLIN, [this, index](std::uint32_t) { on_progress(index); });
  }

  // One read per event, like the output pipes; a closed channel is dropped.
  void on_progress(std::size_t index) {
    WorkerState& worker = *workers_[index];
    ssize_t got = util::read_retrying(worker.progress_pipe.get(), buffer_, sizeof(buffer_));
    if (got > 0) {
      progress_.on_progress_bytes(index, std::string_view(buffer_, static_cast<std::size_t>(got)),
                                  util::Clock::now());
      return;
    }
    if (got < 0 && errno == EAGAIN) return;
    loop_.unwatch(worker.progress_pipe.get());
    worker.progress_pipe.reset();
  }

  // ---- stack captures the coordinator asks for (a hang, `dlaunch stacks`)
  //
  // On a thread of its own: the tools take up to their timeout per worker,
  // and the loop must keep relaying output and heartbeats meanwhile. The
  // thread touches nothing of the loop's; it hands its result over through
  // an eventfd.
  void start_capture(const rendezvous::CaptureRequest& request) {
    if (capture_thread_.joinable()) return;  // one capture at a time
    std::vector<forensics::CaptureTarget> targets;
    for (const auto& worker : workers_) {
      if (!worker->exit_time.empty()) continue;
      targets.push_back({worker->pid, worker->spec->global_rank, worker->spec->local_rank,
                         settings_.node_rank, settings_.host, worker->dump_fd_in_worker,
                         worker->dump_pipe.get()});
    }
    capture_request_ = request;
    capture_done_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!capture_done_) throw util::system_error("cannot make an eventfd for a stack capture", errno);
    loop_.watch(capture_done_.get(), EPOLLIN, [this](std::uint32_t) { finish_capture(true); });
    forensics::CaptureSettings capture;
    capture.timeout = settings_.capture_timeout;
    capture.environment = util::Environment::from_process();
    capture.dlaunch = own_executable_;
    capture_thread_ = std::thread([this, targets = std::move(targets), capture = std::move(capture)] {
      captured_ = forensics::capture_stacks(targets, capture);
      std::uint64_t one = 1;
      ssize_t ignored = ::write(capture_done_.get(), &one, sizeof(one));
      (void)ignored;
    });
  }

  // Hands a finished capture to the coordinator (also at the round's end,
  // waiting for the thread: its tools are bounded by their timeouts).
  void finish_capture(bool round_runs) {
    if (!capture_thread_.joinable()) return;
    capture_thread_.join();
    loop_.unwatch(capture_done_.get());
    capture_done_.reset();
    coordinator_.deliver_stacks(*capture_request_, captured_);
    capture_request_.reset();
    captured_.clear();
    // The coordinator may now want the workers stopped (a hang).
    if (round_runs) on_coordinator();
  }

  // The worker's output, with its log files. A file (or folder) that
  // cannot be created is the relay's fault from the start, not an error:
  // logs must not stop the training (the worker's error file is then
  // missing too, which only costs its message in the summary).
  void make_output(WorkerState& state, std::size_t index) {
    const WorkerSpec& spec = *state.spec;
    // attempt_K/rankN below the log root: new, or ours and no link.
    std::string folder_refusal;
    try {
      util::make_own_folders(spec.log_folder, 2);
    } catch (const util::SystemError& error) {
      folder_refusal = error.what();
    }
    auto stream_outputs = [&](int stream, const std::optional<std::string>& path,
                              util::ConsoleSink* console, bool shown) {
      process::StreamRelay::Outputs outputs;
      outputs.console = console;
      outputs.shown = shown;
      if (path && !folder_refusal.empty()) {
        // Nothing is opened through a folder that failed its check.
        outputs.file_error = ENOTDIR;
        outputs.file_refusal = folder_refusal;
      } else if (path) {
        util::OpenedFile log = open_log_file(*path);
        outputs.file = std::move(log.file);
        outputs.file_error = log.error;
        outputs.file_refusal = std::move(log.refusal);
        if (outputs.file) outputs.times = open_time_index(*path, spec);
      }
      outputs.on_file_fault = [this, index, stream](const process::LogFileFault& fault) {
        on_log_fault(index, stream, fault);
      };
      return outputs;
    };
    process::StreamRelay::Outputs out =
        stream_outputs(0, spec.stdout_file, console_out_, spec.stdout_to_console);
    process::StreamRelay::Outputs err =
        stream_outputs(1, spec.stderr_file, console_err_, spec.stderr_to_console);
    state.output = std::make_unique<process::ChildOutput>(spec.prefix, std::move(out), std::move(err));
  }

  // The time index beside the log at PATH; one that cannot be opened only
  // costs `dlaunch logs` its order, so it is said and the log goes on.
  process::TimeIndex open_time_index(const std::string& path, const WorkerSpec& spec) {
    const std::string index_path = process::time_index_path(path);
    util::OpenedFile index = open_log_file(index_path);
    if (!index.file && !index.refusal.empty())
      console_err_->write_message(fmt::format("dlaunch: rank {}'s time index {} is not written: {}",
                                              spec.global_rank, index_path, index.reason()));
    return process::TimeIndex(std::move(index.file));
  }

  // Throws SystemError when WORKER's program could not be executed; that
  // child has exited with 127 and is reaped here, so it is not taken for a
  // worker failure.
  void confirm_started(WorkerState& worker) {
    process::StartedWorker started;
    started.exec_status = std::move(worker.exec_status);
    process::ExecResult result = process::confirm_exec(started);
    if (result.error == 0) return;
    int status = 0;
    while (::waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
    }
    groups_.forget(worker.pid);
    if (result.joining_cgroup)
      throw util::system_error(fmt::format("--kill-escaped cgroup: cannot move worker '{}' into {}",
                                     worker.program, settings_.escapes->cgroup_dir()),
                         result.error);
    throw util::system_error(fmt::format("cannot execute worker program '{}'", worker.program),
                       result.error);
  }

  // A worker's log file failed (or could not be created): said at once;
  // with --log-dir-required the round stops as a failure.
  void on_log_fault(std::size_t index, int stream, const process::LogFileFault& fault) {
    // plan_.workers[index] is that worker's spec, also while its relays are
    // being made (a file that cannot be created fails then).
    process::IncompleteLog log = incomplete_log(plan_.workers[index], stream, fault);
    console_err_->write_message(process::log_fault_notice(log, settings_.log_dir_required));
    if (!settings_.log_dir_required || stopping_) return;
    rendezvous::Failure failure;
    failure.node_rank = settings_.node_rank;
    failure.host = settings_.host;
    failure.time = util::local_time_now();
    failure.description = process::log_fault_failure(log, settings_.host, settings_.node_rank);
    stop_failure_ = failure;
    log_failed_ = true;
    coordinator_.announce_failure(failure);
    begin_stop(SIGTERM);
  }

  static process::IncompleteLog incomplete_log(const WorkerSpec& spec, int stream,
                                               const process::LogFileFault& fault) {
    process::IncompleteLog log;
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
        if (const auto& fault = worker->output->stream(stream).file_fault())
          settings_.incomplete_logs->push_back(incomplete_log(*worker->spec, stream, *fault));
      }
    }
  }

  // Reads what is already buffered, then gives up on writers that escaped the group.
  void close_remaining_pipes() {
    for (auto& worker : workers_) worker->output->drain_and_close();
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
    bool leftover_reaped = false;
    groups_.reap([&](const process::ChildExit& child) {
      for (auto& worker : workers_) {
        if (worker->pid == child.pid && child.leader) record_exit(*worker, child);
      }
      leftover_reaped |= escaped_.erase(child.pid) > 0;
    });
    if (leftover_reaped) kill_escaped();
  }

  void record_exit(WorkerState& worker, const process::ChildExit& child) {
    worker.exit_time = util::local_time_now();
    worker.signal = child.signal;
    worker.exit_code = child.exit_code;
    worker.exit_note = exit_note(child.signal, stopping_, oom_counter_);
    if (worker.exit_code != 0) failed_.push_back(&worker);
    if (worker.exit_code != 0 && !stopping_) {
      first_failure_ = &worker;
      coordinator_.announce_failure(describe(worker));
      begin_stop(SIGTERM);
    }
  }

  void on_launcher_signal(int signal) {
    if (process::SignalChannel::stops_job(signal) && stop_signal_ != 0 && signal == SIGINT) {
      groups_.signal(SIGKILL);  // a second Ctrl-C: the user does not want to wait
      return;
    }
    groups_.signal(signal);
    if (signal == settings_.preempt_signal) preempted_ = true;
    if (!process::SignalChannel::stops_job(signal) || stopping_) return;
    stop_signal_ = signal;
    rendezvous::Failure failure;
    failure.node_rank = settings_.node_rank;
    failure.host = settings_.host;
    failure.exit_code = util::exit_code_of_signal(signal);
    failure.signal = signal;
    failure.time = util::local_time_now();
    failure.description =
        fmt::format("the launcher on {} (node {}) received {}", settings_.host,
                    settings_.node_rank, util::signal_name(signal));
    stop_failure_ = failure;
    coordinator_.announce_failure(failure);
    stopping_ = true;
    groups_.kill_after(settings_.shutdown_timeout);
  }

  void on_coordinator() {
    auto reason = coordinator_.poll_stop_request();
    if (auto request = coordinator_.poll_capture_request()) start_capture(*request);
    if (!reason) return;
    // One stop request is all the round needs; a closed socket would keep
    // firing. Deadlines still call in, so heartbeats go on while workers stop.
    loop_.unwatch(coordinator_.event_fd());
    // The job went on without this launcher: its workers are stale (their
    // writes would race the new round's), so they are killed at once.
    if (coordinator_.fenced()) {
      if (!stopping_) remote_stop_ = *reason;
      return begin_stop(SIGKILL);
    }
    if (stopping_) return;
    remote_stop_ = *reason;
    begin_stop(SIGTERM);
  }

  // SIGTERM (or SIGKILL) to every running worker's group, SIGKILL after the grace period.
  void begin_stop(int signal) {
    stopping_ = true;
    if (signal == SIGKILL) return groups_.signal(SIGKILL);
    groups_.stop(settings_.shutdown_timeout);
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
    loop_.at(util::Clock::now() + kDrain, [this] {
      // Checked even while events keep coming (an escaped writer that never
      // stops, a console that takes a little at a time): the drain is bounded.
      close_remaining_pipes();
      drained_ = true;
    });
    kill_escaped();
  }

  // Bounded: at most kMaxEscapeSweeps passes, reaped until the drain deadline.
  void kill_escaped() {
    if (settings_.escapes == nullptr || escape_sweeps_ >= kMaxEscapeSweeps) return;
    ++escape_sweeps_;
    for (pid_t pid : settings_.escapes->kill_leftovers({watchdog_.pid()})) escaped_.insert(pid);
  }

  rendezvous::Failure describe(const WorkerState& worker) const {
    rendezvous::Failure failure;
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

  // WORKER's failure with its last lines and its error file's message.
  rendezvous::Failure full_account(const WorkerState& worker) const {
    rendezvous::Failure failure = describe(worker);
    failure.last_lines = worker.output->tail().last_lines(settings_.summary_lines);
    if (!worker.exit_note.empty()) failure.last_lines.push_back(worker.exit_note);
    failure.error_message = read_error_file_message(worker.spec->error_file);
    return failure;
  }

  // The file the summary points at (stderr's, else stdout's), marked when
  // it is incomplete.
  static std::string log_file_of(const WorkerState& worker) {
    int stream = worker.spec->stderr_file ? 1 : 0;
    const auto& path = stream == 1 ? worker.spec->stderr_file : worker.spec->stdout_file;
    if (!path) return "";
    const auto& fault = worker.output->stream(stream).file_fault();
    return fault ? process::mark_incomplete(*path, *fault) : *path;
  }

  rendezvous::NodeOutcome outcome() const {
    rendezvous::NodeOutcome result;
    result.stop_signal = stop_signal_;
    result.preempted = preempted_;
    result.top_step = rendezvous::highest_step(progress_.steps());
    if (first_failure_ != nullptr) {
      // The first worker to fail may only have lost its peer: the root is
      // the first that failed of its own (doctor/diagnosis.h).
      std::vector<rendezvous::Failure> failures;
      for (const WorkerState* worker : failed_) failures.push_back(full_account(*worker));
      auto choice = doctor::choose_root(failures);
      result.failure = failures[choice.root];
      result.consequences = choice.consequences;
    } else {
      if (stop_failure_) result.failure = stop_failure_;
      result.consequences = static_cast<int>(failed_.size());  // stopped for another node's failure
    }
    result.succeeded = first_failure_ == nullptr && stop_signal_ == 0 && !remote_stop_ && !log_failed_;
    for (const auto& worker : workers_) result.succeeded &= worker->exit_code == 0;
    return result;
  }

  const WorkerPlan& plan_;
  const SupervisorSettings& settings_;
  rendezvous::Coordinator& coordinator_;
  process::SignalChannel& signals_;
  process::Watchdog& watchdog_;
  util::ConsoleSink* console_out_;
  util::ConsoleSink* console_err_;
  bool said_broken_[2] = {false, false};  // stdout's, stderr's console broke and that was said
  process::EventLoop loop_;  // before what watches in it: they unwatch before it closes
  process::ConsoleWatch console_watch_;
  process::ProcessGroups groups_;  // the workers' groups
  std::vector<std::unique_ptr<WorkerState>> workers_;
  int open_pipes_ = 0;
  bool stopping_ = false;
  bool groups_cleaned_ = false;
  bool drained_ = false;  // the drain deadline passed
  int stop_signal_ = 0;
  bool preempted_ = false;
  bool log_failed_ = false;  // --log-dir-required and a log file failed
  int escape_sweeps_ = 0;
  std::set<pid_t> escaped_;  // killed leftovers not reaped yet
  std::optional<rendezvous::Failure> stop_failure_;
  std::optional<std::string> remote_stop_;
  const WorkerState* first_failure_ = nullptr;
  std::vector<const WorkerState*> failed_;  // every worker that exited non-zero, in exit order
  std::optional<util::Clock::time_point> coordinator_due_;  // when coordinator_timer_ is armed for
  process::EventLoop::Timer coordinator_timer_;
  char buffer_[256 * 1024];  // every worker pipe is read through it
  ProgressTracker progress_;
  util::OomCounter oom_counter_;  // the round's OOM kills, counted from its start
  std::thread capture_thread_;
  util::Fd capture_done_;  // an eventfd the capture thread signals
  std::optional<rendezvous::CaptureRequest> capture_request_;
  std::vector<forensics::WorkerStacks> captured_;  // written by the thread, read after its join
  // Read while this process has one thread of its own making (for the
  // capture's helper, `dlaunch __dump-python`); "" if unreadable: gdb then.
  std::string own_executable_ = own_executable_or_empty();
};

}  // namespace

rendezvous::NodeOutcome supervise(const WorkerPlan& plan, const SupervisorSettings& settings,
                                  rendezvous::Coordinator& coordinator, process::SignalChannel& signals,
                                  process::Watchdog& watchdog) {
  auto supervisor =
      std::make_unique<RoundSupervisor>(plan, settings, coordinator, signals, watchdog);
  return supervisor->run();
}

}  // namespace dlaunch::launch
