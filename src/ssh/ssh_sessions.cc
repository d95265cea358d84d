#include "ssh/ssh_sessions.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <sys/wait.h>

#include "process/child_output.h"
#include "process/console_watch.h"
#include "process/event_loop.h"
#include "process/process_groups.h"
#include "process/worker_process.h"
#include "ssh/remote_command.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/exit_codes.h"
#include "util/fd.h"
#include "util/safe_file.h"
#include "util/signal_names.h"

namespace dlaunch::ssh {
namespace {

// From SIGTERM to SIGKILL of an ssh that did not end.
constexpr std::chrono::seconds kKillGrace(5);
// After every ssh ended: how long their pipes may still deliver output.
constexpr std::chrono::seconds kDrain(2);

using Clock = process::EventLoop::Clock;

// Whole lines out of a stream's chunks, for a line a session's launcher
// says (its verdict). Bounded: a line longer than kLongest is dropped, not
// held.
class LineScanner {
 public:
  static constexpr std::size_t kLongest = 4096;
  template <typename OnLine>
  void feed(std::string_view chunk, OnLine on_line) {
    for (;;) {
      auto newline = chunk.find('\n');
      if (newline == std::string_view::npos) break;
      if (!overlong_) {
        partial_.append(chunk.substr(0, newline));
        on_line(std::string_view(partial_));
      }
      partial_.clear();
      overlong_ = false;
      chunk.remove_prefix(newline + 1);
    }
    if (overlong_) return;
    partial_.append(chunk);
    if (partial_.size() > kLongest) {
      partial_.clear();
      overlong_ = true;
    }
  }

 private:
  std::string partial_;
  bool overlong_ = false;
};

struct HostSession {
  const Session* spec = nullptr;
  pid_t pid = 0;
  int exit_code = 0;
  int ended = 0;   // 1 for the first session to end, 2 for the next...; 0 while it runs
  util::Fd input;  // the write end of its stdin
  std::unique_ptr<process::ChildOutput> output;
  std::string log_file;
  LineScanner launcher_lines;  // its stderr, where its launcher says the job's verdict
  bool left_behind = false;    // it had not ended when the verdict's grace ran out
};

class SessionLoop {
 public:
  SessionLoop(const std::vector<Session>& sessions, const SessionSettings& settings,
              process::SignalChannel& signals)
      : specs_(sessions), settings_(settings), signals_(signals),
        out_(settings.console_stdout ? settings.console_stdout : &util::console_out()),
        err_(settings.console_stderr ? settings.console_stderr : &util::console_err()),
        console_watch_(loop_, {out_, err_}),
        groups_(loop_) {}

  int run() {
    loop_.watch(signals_.fd(), EPOLLIN, [this](std::uint32_t) { on_signals(); });
    try {
      for (const auto& spec : specs_) start(spec);
    } catch (...) {
      abandon_started();  // a later host's ssh or log file failed: no ssh is left behind
      throw;
    }
    loop_.run_until([this] { return finished(); });
    return exit_code();
  }

 private:
  // Asked by the loop before each wait: every ssh ended and its output is
  // relayed, or the drain after the last one ended is over.
  bool finished() {
    console_watch_.update();
    for (auto& session : sessions_) session->output->resume_if_room();
    if (groups_.running() == 0 && !drain_timer_)
      drain_timer_ = loop_.at(Clock::now() + kDrain, [this] {
        // As the supervisor does: what the pipes already hold is relayed,
        // then a writer that outlived its ssh is cut off.
        for (auto& session : sessions_) session->output->drain_and_close();
        drained_ = true;
      });
    return drained_ || (groups_.running() == 0 && open_pipes_ == 0);
  }

  // Kills and reaps the ssh processes started so far (each leads its group).
  void abandon_started() {
    groups_.signal(SIGKILL);
    for (const auto& session : sessions_) {
      int status = 0;
      while (::waitpid(session->pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }

  // The host's log file, made before its ssh starts, so a file that cannot
  // be made stops dlaunch ssh before anything runs there.
  util::Fd open_host_log(HostSession& session) {
    if (!settings_.host_log_dir) return util::Fd();
    std::error_code folder_error;
    std::filesystem::create_directories(*settings_.host_log_dir, folder_error);
    if (folder_error)
      throw util::SystemError(fmt::format("cannot create --host-log-dir {}: {}", *settings_.host_log_dir,
                                          folder_error.message()));
    session.log_file = fmt::format("{}/{}.log", *settings_.host_log_dir, session.spec->host);
    // Never through a link or into a FIFO planted there (util/safe_file.h).
    util::OpenedFile log = util::open_file_to_rewrite(session.log_file, 0644);
    if (!log.file) throw util::SystemError(fmt::format("cannot create {}: {}", session.log_file, log.reason()));
    return std::move(log.file);
  }

  void start(const Session& spec) {
    auto session = std::make_unique<HostSession>();
    session->spec = &spec;
    util::Fd file = open_host_log(*session);
    util::Pipe input = util::make_pipe();
    process::StartedWorker started =
        process::start_worker(spec.argv, util::Environment::from_process(), input.read_end.get());
    session->pid = started.pid;
    groups_.add(started.pid);
    session->input = std::move(input.write_end);
    sessions_.push_back(std::move(session));
    HostSession& host = *sessions_.back();
    // The secret goes first; the pipe then stays open until the hang-up.
    util::write_all(host.input.get(), settings_.first_line);
    auto stream_outputs = [&](util::ConsoleSink* console) {
      process::StreamRelay::Outputs outputs;
      outputs.console = console;
      // With --host-log-dir the console gets a host's output only when its file fails.
      outputs.shown = !settings_.host_log_dir;
      if (file) outputs.file.reset(::dup(file.get()));
      outputs.on_file_fault = [this, path = host.log_file](const process::LogFileFault& fault) {
        err_->write_message(fmt::format(
            "dlaunch ssh: {} could not be written ({}); that host's output goes to the console "
            "instead",
            path, std::strerror(fault.error)));
      };
      return outputs;
    };
    // Worker lines arrive prefixed [host:rankN]: by that host's dlaunch run.
    process::StreamRelay::Outputs errors = stream_outputs(err_);
    if (settings_.read_verdict)
      errors.on_bytes = [this, &host](std::string_view chunk) {
        host.launcher_lines.feed(chunk, [&](std::string_view line) { look_for_verdict(host, line); });
      };
    host.output = std::make_unique<process::ChildOutput>("", stream_outputs(out_), std::move(errors));
    host.output->relay(loop_, std::move(started.stdout_pipe), std::move(started.stderr_pipe), buffer_,
                       [this] { --open_pipes_; });
    open_pipes_ += 2;
  }

  void on_signals() {
    while (auto signal = signals_.next()) {
      if (*signal == SIGCHLD) reap();
      else if (process::SignalChannel::stops_job(*signal)) on_stop_signal(*signal);
      else groups_.signal(*signal);  // USR1/USR2 reach the hosts' launchers as they would locally
    }
  }

  void on_stop_signal(int signal) {
    if (stop_signal_ != 0 && signal == SIGINT) {
      groups_.signal(SIGKILL);  // a second Ctrl-C: the user does not want to wait
      return;
    }
    if (stop_signal_ == 0) stop_signal_ = signal;
    hang_up_all(fmt::format("received {}", util::signal_name(signal)));
  }

  void reap() {
    groups_.reap([&](const process::ChildExit& child) {
      for (auto& session : sessions_) {
        if (session->pid != child.pid || !child.leader) continue;
        session->exit_code = child.exit_code;
        session->ended = ++ended_count_;
        session->input.reset();
        if (session->exit_code == 0 || verdict_) continue;  // after the verdict: the job is over
        std::string ended = fmt::format("{} ({}) ended with exit code {}", session->spec->host,
                                        label(*session), session->exit_code);
        // With spares the rendezvous replaces a lost host, node 0's too.
        if (!settings_.hosts_replaceable) hang_up_all(ended);
        else err_->write_message(fmt::format("dlaunch ssh: {}; the job goes on without it", ended));
      }
    });
  }

  // The launcher that speaks for the job said its verdict: the job is over.
  // The other hosts' launchers end right after it; one that has not ended
  // verdict_grace later cannot (its host froze, or lost its link or power),
  // and is hung up.
  void look_for_verdict(HostSession& host, std::string_view line) {
    if (verdict_) return;
    auto verdict = settings_.read_verdict(line);
    if (!verdict) return;
    verdict_ = verdict;
    verdict_host_ = host.spec->host;
    loop_.at(Clock::now() + settings_.verdict_grace, [this] {
      if (groups_.running() == 0) return;
      std::vector<std::string> left;
      for (auto& session : sessions_) {
        if (session->ended != 0) continue;
        session->left_behind = true;
        left.push_back(fmt::format("{} ({})", session->spec->host, label(*session)));
      }
      // Their launchers cannot act for the job any more: no grace, their
      // ssh is ended now (SIGTERM, then SIGKILL).
      hang_up_all(fmt::format("the job's verdict is in ({} with exit code {}, from {}), and {} had not ended {} s "
                              "later: a launcher there takes no part in the job any more (its host froze, lost "
                              "its link or its power, or it never joined)",
                              verdict_->state, verdict_->exit_code, verdict_host_, fmt::join(left, ", "),
                              std::chrono::duration_cast<std::chrono::seconds>(settings_.verdict_grace).count()),
                  std::chrono::milliseconds(0));
    });
  }

  // Closes every host's stdin: their launchers stop their workers. SIGTERM
  // follows for ssh processes still there after the grace period, SIGKILL
  // for those still there kKillGrace later.
  void hang_up_all(const std::string& why) { hang_up_all(why, settings_.grace); }
  void hang_up_all(const std::string& why, std::chrono::milliseconds grace) {
    if (hung_up_) return;
    hung_up_ = true;
    reason_ = why;
    for (auto& session : sessions_) session->input.reset();
    loop_.at(Clock::now() + grace, [this] { groups_.stop(kKillGrace); });
  }

  // "node 2", or with spares "slot 2": node ranks are then the rendezvous's to give.
  std::string label(const HostSession& session) const {
    return fmt::format("{} {}", settings_.hosts_replaceable ? "slot" : "node", session.spec->node_rank);
  }

  // With spares every launcher that stays to the end exits with the job's
  // code, and lost hosts ended earlier with codes of their own: the code
  // most hosts ended with, the later one on a tie.
  int survivors_code() const {
    std::map<int, std::pair<int, int>> codes;  // code -> (hosts, latest end)
    for (const auto& session : sessions_) {
      if (session->exit_code == kSshFailed || session->ended == 0) continue;
      auto& [hosts, latest] = codes[session->exit_code];
      ++hosts;
      latest = std::max(latest, session->ended);
    }
    int best = 1;
    std::pair<int, int> best_rank{0, 0};
    for (const auto& [code, rank] : codes) {
      if (rank > best_rank) best = code, best_rank = rank;
    }
    return best;
  }

  int exit_code() {
    report_failures();
    if (stop_signal_ != 0) return util::exit_code_of_signal(stop_signal_);
    if (verdict_) return verdict_->exit_code;
    if (settings_.hosts_replaceable) return survivors_code();
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
      if (session->left_behind) continue;  // the line on stopping every host names it
      if (session->exit_code == kSshFailed)
        err_->write_message(fmt::format("dlaunch ssh: lost the ssh connection to {} ({})", host,
                                        label(*session)));
      if (!settings_.host_log_dir) continue;
      err_->write_message(
          fmt::format("dlaunch ssh: {} ({}) ended with exit code {}; its output is in {}", host,
                      label(*session), session->exit_code, session->log_file));
      for (const auto& line : session->output->tail().last_lines(10)) err_->write_message("  | " + line);
    }
    if (hung_up_) err_->write_message(fmt::format("dlaunch ssh: stopped every host: {}", reason_));
  }

  const std::vector<Session>& specs_;
  const SessionSettings& settings_;
  process::SignalChannel& signals_;
  util::ConsoleSink* out_;
  util::ConsoleSink* err_;
  process::EventLoop loop_;  // before what watches in it: they unwatch before it closes
  process::ConsoleWatch console_watch_;
  process::ProcessGroups groups_;  // the ssh processes' groups
  std::vector<std::unique_ptr<HostSession>> sessions_;
  int open_pipes_ = 0;
  int ended_count_ = 0;
  int stop_signal_ = 0;
  bool hung_up_ = false;
  std::string reason_;
  std::optional<launch::AnnouncedVerdict> verdict_;  // the job's, once a host's launcher said it
  std::string verdict_host_;
  process::EventLoop::Timer drain_timer_;  // armed when the last ssh ended
  bool drained_ = false;
  char buffer_[64 * 1024];  // every session's pipe is read through it
};

}  // namespace

int run_sessions(const std::vector<Session>& sessions, const SessionSettings& settings,
                 process::SignalChannel& signals) {
  DLAUNCH_ASSERT(!sessions.empty());
  auto loop = std::make_unique<SessionLoop>(sessions, settings, signals);
  return loop->run();
}

}  // namespace dlaunch::ssh
