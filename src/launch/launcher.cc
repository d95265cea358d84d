#include "launch/launcher.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <poll.h>
#include <system_error>
#include <unistd.h>

#include "process/console_report.h"
#include "launch/coordinator_choice.h"
#include "launch/escaped_processes.h"
#include "launch/failure_report.h"
#include "launch/health_check.h"
#include "launch/log_root.h"
#include "launch/run_record.h"
#include "launch/report_duty.h"
#include "launch/requeue_exclusion.h"
#include "launch/verdict_line.h"
#include "process/link_wait.h"
#include "process/signal_channel.h"
#include "process/stdin_watch.h"
#include "launch/supervisor.h"
#include "process/watchdog.h"
#include "launch/worker_plan.h"
#include "net/interfaces.h"
#include "process/worker_process.h"
#include "util/error.h"
#include "util/exit_codes.h"
#include "util/local_time.h"
#include "slurm/job_id.h"
#include "util/atomic_file.h"
#include "util/console.h"
#include "util/ports.h"
#include "util/signal_names.h"
#include "util/socket.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace dlaunch::launch {
namespace {

// Everything the launcher says goes through the non-blocking console, so a
// stalled stderr never stops it (util/console.h).
void say(const std::string& text) { util::console_err().write_message(text); }

// The script Python is to run (not a module), when it is not there: Python
// would fail in every worker with "can't open file".
std::optional<std::string> script_problem(const LaunchConfig& config) {
  const auto& command = config.command;
  if (!config.python || command.size() < 3 || command[1] != "-u" || command[2] == "-m") return std::nullopt;
  const std::string& script = command[2];
  std::error_code ignored;
  if (std::filesystem::exists(script, ignored)) return std::nullopt;
  return fmt::format("cannot run '{}': no such file (looked in {}). Give the path of the Python script, or -m "
                     "MODULE for a module",
                     script, std::filesystem::current_path(ignored).string());
}

// Every node checks its program before joining, so a typo fails in
// seconds on the node that has it instead of after the rendezvous.
std::optional<std::string> program_problem(const LaunchConfig& config, const util::Environment& environment) {
  const std::string& program = config.command.front();
  if (process::find_executable(program, environment)) return script_problem(config);
  std::error_code ignored;
  if (program.find('/') == std::string::npos && std::filesystem::is_regular_file(program, ignored)) {
    // A file of this folder, named as a command of PATH would be.
    if (::access(program.c_str(), X_OK) == 0)
      return fmt::format("cannot run '{}': no executable of that name in PATH, but there is one in this folder: "
                         "write ./{} to run it",
                         program, program);
    return fmt::format("cannot run '{}': the file here is not executable, and it runs directly, not under Python. "
                       "Make it executable (chmod +x {}) and write ./{}, or let Python run it (leave --no-python "
                       "out; --run-path for a script not named .py)",
                       program, program, program);
  }
  return fmt::format(
      "cannot run '{}': {}. Give a path to an executable file, or a program name found in PATH",
      program,
      program.find('/') == std::string::npos ? "no executable of that name in PATH"
                                             : "no executable file at that path");
}

// A user-set NCCL_SOCKET_IFNAME or GLOO_SOCKET_IFNAME that names no
// usable interface of this host: the workers would hang at their first
// collective, so the job stops before it starts, naming what the host has.
std::optional<std::string> network_problem(const LaunchConfig& config, const util::Environment& environment) {
  if (config.topology.launchers() == 1) return std::nullopt;
  std::optional<std::vector<net::Interface>> interfaces;
  for (const char* variable : {"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"}) {
    auto value = environment.get(variable);
    if (!value) continue;
    if (!interfaces) interfaces = net::list_interfaces();
    if (auto problem = net::socket_ifname_problem(variable, *value, util::local_host_name(), *interfaces))
      return problem;
  }
  return std::nullopt;
}

// A node that cannot run its part says so to the others first, so the
// whole job stops in seconds with this node's reason, not at the join
// timeout with "node K is missing".
[[noreturn]] void fail_preflight(const std::string& problem, const LaunchConfig& config,
                                 rendezvous::Coordinator& coordinator) {
  if (config.topology.launchers() > 1) {
    const int slot = coordinator.slot();
    say(fmt::format("dlaunch: {} cannot start: {}\ndlaunch: telling the other nodes",
                    slot < 0 ? std::string("this launcher") : fmt::format("node {}", slot), problem));
    coordinator.report_preflight_failure(problem);
  }
  throw util::InputError(problem);
}

// Node 0 puts the job back in the queue once its workers have exited after
// the preemption signal (they had the chance to checkpoint). Slurm then
// stops the other nodes' launchers and runs the batch script again. With
// --bench-record, the requeued job leaves out the hosts dlaunch benched
// (launch/requeue_exclusion.h): Slurm sees nothing wrong with them.
int requeue(const LaunchConfig& config, const util::Environment& environment, const rendezvous::World& world,
            const rendezvous::Verdict& verdict) {
  RequeueRequest request;
  request.job_id = environment.get("SLURM_JOB_ID").value_or("");
  request.record_path = config.bench_record;
  request.cooldown_s = config.bench_cooldown_s;
  request.benched = benched_hosts(world, verdict.timeline, config.topology.expected_hosts);
  request.now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch()).count();
  requeue_excluding_benched(request, say);
  return 0;
}

void print_notices(const std::vector<std::string>& notices) {
  for (const auto& notice : notices) say("dlaunch: " + notice);
}

bool is_benched(const rendezvous::World& world, int slot) {
  return std::find(world.benched_slots.begin(), world.benched_slots.end(), slot) != world.benched_slots.end();
}

// "standing by as a spare" / "benched": what a launcher without workers is.
// UNHEALTHY: the health check this launcher failed before this round.
std::string standby_role(const rendezvous::World& world, int slot, const std::optional<std::string>& unhealthy) {
  if (!is_benched(world, slot)) return "stands by as a spare";
  if (unhealthy) return fmt::format("is benched because its health check failed ({})", *unhealthy);
  // Only the gate benches before the first attempt; later, either may have
  // (a node the gate benched stays benched), and node 0's timeline says which.
  if (world.round == 0) return "is benched by the pre-start gate (node 0's gate report says why)";
  return "is benched (by the pre-start gate, or for failing --node-fail-limit rounds in a row; node 0's "
         "timeline says which)";
}

// The job's events (nodes lost, spares that took their place, benched
// nodes, time down), said at the end by the launcher that speaks for the job.
void print_timeline(const rendezvous::Verdict& verdict) {
  if (verdict.timeline.empty()) return;
  std::string text = "dlaunch: timeline:";
  for (const auto& event : verdict.timeline) text += "\ndlaunch:   " + event;
  say(text);
}

// The launcher that speaks for the job leaves the job's exit code where
// the Slurm job script's step guard reads it (submit/step_guard.h): srun's
// own code may be a lost node's, and srun may never end when that node
// froze. A verdict made alone (node 0 lost) replaces none already there.
void write_exit_code(const LaunchConfig& config, const rendezvous::Verdict& verdict) {
  if (!config.exit_code_file) return;
  try {
    std::string text = fmt::format("{}\n", verdict.exit_code);
    if (verdict.decided_here) util::write_file_if_absent(*config.exit_code_file, text);
    else util::write_file_atomically(*config.exit_code_file, text);
  } catch (const util::SystemError& error) {
    say(fmt::format("dlaunch: cannot write the exit code to {} (--exit-code-file): {}",
                    *config.exit_code_file, error.what()));
  }
}

// How often this launcher looks for the step guard's answer.
constexpr std::chrono::milliseconds kGuardPoll(100);

// In a Slurm batch job the batch script, on slot 0's host (the batch
// host), ends the job once the verdict is in. When this launcher speaks for
// the job from another host (it took the rendezvous over, or decided
// alone), that host may be lost: frozen, cut off or powered off, its batch
// script with it. Slurm then keeps the job RUNNING, holding every node,
// until that host comes back (and then fails it) or the time limit. The
// batch script's step guard says when it has read the verdict: when slot
// 0's launcher was lost by a connection that closed (BATCH_HOST_ANSWERED:
// that host's kernel and network work, only its launcher died), the guard's
// script ends the job, and this launcher exits at once, as srun waits for
// it. When slot 0's host fell silent, the word proves nothing: a cut-off
// host's guard still reads a shared folder, but its script's end cannot
// reach slurmctld. Then, or without the word, if this launcher is still
// alive --end-job-after after the verdict (the job's end would have stopped
// it), it cancels the job itself, the one way Slurm offers a job's owner
// to end it.
void end_job_if_batch_host_lost(const LaunchConfig& config, const util::Environment& environment,
                                process::SignalChannel& signals, const LogRoot& log_root, const std::string& host,
                                const std::string& incarnation, bool batch_host_answered) {
  auto job_id = environment.get("SLURM_JOB_ID");
  if (!config.end_job_after || !config.exit_code_file || !job_id || config.topology.node_rank.value <= 0) return;
  const std::string seen = *config.exit_code_file + std::string(kVerdictSeenSuffix);
  const auto deadline = util::Clock::now() + *config.end_job_after;
  while (util::Clock::now() < deadline) {
    if (batch_host_answered && ::access(seen.c_str(), F_OK) == 0) return;
    pollfd fd{signals.fd(), POLLIN, 0};
    auto wake = util::Clock::now() + kGuardPoll;
    ::poll(&fd, 1, util::millis_until(std::min(wake, deadline)));
    while (auto signal = signals.next()) {
      if (process::SignalChannel::stops_job(*signal)) return;  // the job ended: Slurm stops its steps
    }
  }
  const auto waited = std::chrono::duration_cast<std::chrono::seconds>(*config.end_job_after).count();
  // Anyone may set SLURM_JOB_ID: one that is no job id ("--user=root")
  // must not reach scancel, where it would be an option (slurm/job_id.h).
  std::vector<std::string> scancel;
  try {
    scancel = slurm::job_command({"scancel"}, slurm::checked_job_id(*job_id, "the environment's SLURM_JOB_ID"));
  } catch (const util::InputError& error) {
    say(fmt::format("dlaunch: the job did not end within {} s of its verdict and its batch host may be lost, but "
                    "it is not cancelled: {}. Cancel the job by hand (scancel JOBID) if it still runs",
                    waited, error.what()));
    return;
  }
  std::string why = fmt::format(
      "job {} did not end within {} s of its verdict: its batch script runs on slot 0's host, which the "
      "job lost, so it cannot end the job. The launcher on {} cancels the job (Slurm records CANCELLED; "
      "the job's own verdict is in its log folder's result.json)",
      *job_id, waited, host);
  say("dlaunch: " + why);
  if (!log_root.temporary()) {
    if (auto error = note_slurm_end(log_root.path(), incarnation, "cancelled by dlaunch: " + why); !error.empty())
      say("dlaunch: " + error);
  }
  try {
    auto cancel = util::run_captured(scancel);
    if (cancel.exit_code != 0)
      say(fmt::format("dlaunch: scancel {} failed: {}", *job_id, util::trim(cancel.err + cancel.out)));
  } catch (const util::SystemError& error) {
    say(fmt::format("dlaunch: cannot cancel job {}: {}", *job_id, error.what()));
  }
}

// What this node knows of a failure of its own worker: its interpreter,
// and which other one has the module it lacked (launch/worker_python.h).
LocalFailureFacts local_failure_facts(const rendezvous::Verdict& verdict, std::optional<int> node_rank,
                                      const LaunchConfig& config, const util::Environment& environment) {
  LocalFailureFacts facts;
  if (!config.python || !verdict.failure || !node_rank || verdict.failure->node_rank != *node_rank) return facts;
  facts.python = config.python->describe();
  facts.hint = import_hint(verdict.failure->last_lines, *config.python, environment);
  return facts;
}

// The job failed: the whole summary from the launcher that speaks for the
// job, at most one line from another that saw what the summary cannot say
// (and what only its node knows of its own worker's failure).
void report_failure(const rendezvous::Verdict& verdict, const rendezvous::NodeOutcome& outcome,
                    std::optional<int> node_rank, bool speaks, const LocalFailureFacts& facts) {
  if (speaks) return say(format_failure_summary(verdict, node_rank.value_or(-1), facts));
  if (!node_rank) return;  // stood by: no worker of its own failed
  if (auto line = own_failure_line(verdict, outcome, *node_rank)) say(*line);
  if (facts.hint) say(*facts.hint);
}

// One round on this node: workers as NODE_RANK when the World gives it
// one, else it stands by for the round's verdict.
rendezvous::Verdict run_round(const LaunchConfig& config, const util::Environment& environment,
                              rendezvous::Coordinator& coordinator, SupervisorSettings settings,
                              process::SignalChannel& signals, process::Watchdog& watchdog,
                              const LogRoot& log_root, const std::string& host,
                              const rendezvous::World& world, std::optional<int> node_rank,
                              const std::optional<std::string>& unhealthy, rendezvous::NodeOutcome& outcome) {
  const int slot = coordinator.slot();
  if (!node_rank) {
    say(fmt::format("dlaunch: round {}: this launcher ({}) {}; {} node(s) train", world.round, host,
                    standby_role(world, slot, unhealthy), world.nnodes()));
    return coordinator.stand_by();
  }
  settings.node_rank = *node_rank;
  WorkerPlan plan = plan_workers(config, world, slot, environment, log_root.path(), host);
  // For `dlaunch logs --node`: which ranks this node runs this round.
  if (!log_root.temporary()) {
    if (auto error = write_node_record(log_root.path(), world, *node_rank, host); !error.empty())
      say("dlaunch: " + error);
  }
  if (world.round == 0 && says_notices(config.topology.launchers(), node_rank)) print_notices(plan.notices);
  outcome = supervise(plan, settings, coordinator, signals, watchdog);
  return coordinator.finish(outcome);
}

// A launcher the job left behind (rendezvous::Fenced) exits with this.
constexpr int kFencedExitCode = 1;

// What the health checks between rounds keep from one round to the next.
struct BetweenRounds {
  HealthChecks checks;
  std::vector<pid_t> worker_groups;  // the last round's workers (SupervisorSettings::worker_groups)
  std::string cgroup_dir;            // theirs, with --kill-escaped cgroup; "" without
  bool benched = false;              // the last World benched this launcher: nothing to check for
};

// Before round ROUND > 0, this node's health checks (launch/health_check.h).
// A single node stops the job on a failed check (health_stop below); on
// several, node 0 hears it with the Join and benches this node for a spare
// or stops the job.
std::optional<std::string> check_health(int round, BetweenRounds& between, const LaunchConfig& config,
                                        rendezvous::Coordinator& coordinator, process::SignalChannel& signals) {
  if (round == 0 || between.benched) return std::nullopt;
  // A check may hang as long as its timeout (a stuck mount is what sites
  // check for): a stop signal (scancel, Ctrl-C) ends it at once, instead
  // of after --health-check-timeout, past Slurm's KillWait.
  auto problem = between.checks.run(round, between.worker_groups, between.cgroup_dir, [&coordinator, &signals] {
    coordinator.keep_alive();
    process::throw_if_stopped(signals);
  });
  between.worker_groups.clear();
  if (problem && config.topology.launchers() > 1)
    say(fmt::format("dlaunch: {}; telling node 0, which benches this node for a spare or stops the job", *problem));
  coordinator.report_health(problem);
  return problem;
}

// A single node that failed its health check before round ROUND: the job
// fails there, with PROBLEM as its root failure, and ends as a failed
// round does (summary, exit code, result.json for `dlaunch status`).
rendezvous::Verdict health_stop(const std::string& problem, int round, const LaunchConfig& config,
                                const std::string& host) {
  rendezvous::Failure failure;
  failure.node_rank = 0;
  failure.host = host;
  failure.time = util::local_time_now();
  failure.description = fmt::format("{}. The job stops instead of starting restart {} of {} on this node", problem,
                                    round, config.job.max_restarts);
  rendezvous::Verdict verdict;
  verdict.kind = rendezvous::Verdict::Kind::kFailed;
  verdict.exit_code = 1;
  verdict.failure = failure;
  return verdict;
}

// Rounds of workers until the job succeeds, fails or runs out of restarts;
// returns the job's exit code.
int run_rounds(const LaunchConfig& config, const util::Environment& environment,
               rendezvous::Coordinator& coordinator, const SupervisorSettings& settings,
               process::SignalChannel& signals, process::Watchdog& watchdog, const LogRoot& log_root,
               const std::string& host, BetweenRounds& between) {
  const std::string started = util::local_time_now();
  for (int round = 0;; ++round) {
    std::optional<std::string> unhealthy;
    try {
      unhealthy = check_health(round, between, config, coordinator, signals);
    } catch (const util::Interrupted& interrupted) {
      say(fmt::format("dlaunch: stopped by {} during the health check before round {}",
                      util::signal_name(interrupted.signal), round));
      return util::exit_code_of_signal(interrupted.signal);
    }
    rendezvous::World world;
    rendezvous::NodeOutcome outcome;
    rendezvous::Verdict verdict;
    std::optional<int> node_rank = 0;
    unsigned warnings_before = signals.received(config.preempt_signal);
    if (unhealthy && config.topology.launchers() == 1) {
      verdict = health_stop(*unhealthy, round, config, host);
    } else {
      try {
        world = coordinator.join(round);
      } catch (const util::Interrupted& interrupted) {
        say(fmt::format("dlaunch: stopped by {} while waiting for the other nodes",
                        util::signal_name(interrupted.signal)));
        return util::exit_code_of_signal(interrupted.signal);
      }
      round = world.round;  // a launcher that came late joins the round that runs
      warnings_before = signals.received(config.preempt_signal);
      node_rank = world.node_rank_of(coordinator.slot());
      between.benched = is_benched(world, coordinator.slot());
      try {
        verdict = run_round(config, environment, coordinator, settings, signals, watchdog, log_root, host, world,
                            node_rank, unhealthy, outcome);
      } catch (const rendezvous::Fenced& fenced) {
        // The job went on without this launcher: one line, and nothing of
        // the job's is done here any more (no records, no take-over).
        say(fmt::format("dlaunch: {}; exiting", fenced.what()));
        return kFencedExitCode;
      }
    }
    // Slurm signals the workers too, and they may exit on the warning
    // before this launcher reads it: a warning read while waiting for the
    // verdict, or still pending, counts as well.
    if (config.preempt_signal != 0 &&
        (signals.received(config.preempt_signal) > warnings_before ||
         process::SignalChannel::pending(config.preempt_signal)))
      outcome.preempted = true;
    const bool rank0 = node_rank == 0;
    // After a preemption warning the job goes back to the queue whatever its
    // workers' codes (they may exit non-zero on the signal); never restarted
    // here. Not a job that already failed the same way twice
    // (util::kExitDeterministic): a requeue would only repeat the bug.
    const bool deterministic =
        verdict.kind == rendezvous::Verdict::Kind::kFailed && verdict.exit_code == util::kExitDeterministic;
    if (outcome.preempted && config.requeue && rank0 && !deterministic)
      return requeue(config, environment, world, verdict);
    // Once per job, not once per node (launch/report_duty.h).
    const bool speaks = speaks_for_job(config.topology.launchers(), node_rank, verdict);
    if (verdict.kind == rendezvous::Verdict::Kind::kRestart) {
      if (speaks)
        say(fmt::format("dlaunch: {}; restarting every worker (restart {} of {})",
                        verdict.failure ? rendezvous::describe_failure(*verdict.failure) : "a node failed",
                        round + 1, config.job.max_restarts));
      continue;
    }
    if (verdict.kind == rendezvous::Verdict::Kind::kFailed)
      report_failure(verdict, outcome, node_rank, speaks, local_failure_facts(verdict, node_rank, config, environment));
    if (speaks) print_timeline(verdict);
    // The job's records, from the launcher that speaks for it; not from a
    // side of a split that stepped aside, where the job may go on.
    const bool records = speaks && !verdict.stepped_aside;
    if (records) write_exit_code(config, verdict);
    // For `dlaunch status` once the launchers are gone (launch/run_record.h).
    if (records && !log_root.temporary()) {
      std::string summary =
          verdict.kind == rendezvous::Verdict::Kind::kFailed ? format_failure_summary(verdict, node_rank.value_or(-1)) : "";
      RunResult result{verdict, round, summary, started, world.incarnation, host};
      if (auto error = write_run_result(log_root.path(), result); !error.empty()) say("dlaunch: " + error);
    }
    if (log_root.temporary() && log_root.kept())
      say(fmt::format("dlaunch: worker logs are in {}", log_root.path()));
    // Under dlaunch ssh: the job is over, whatever a frozen host does.
    if (records && config.stop_on_stdin_close && config.rdzv_token)
      say(verdict_line(verdict, config.topology.run_id.value, config.rdzv_token->value));
    if (records)
      end_job_if_batch_host_lost(config, environment, signals, log_root, host, world.incarnation,
                                 coordinator.first_node0_loss() == rendezvous::NodeZeroLoss::kClosed);
    return verdict.exit_code;
  }
}

}  // namespace

int run_launcher(const LaunchConfig& config, const util::Environment& environment,
                 const CoordinatorFactory& make_coordinator) {
  auto preflight = program_problem(config, environment);
  if (!preflight) preflight = network_problem(config, environment);
  if (preflight && config.topology.launchers() == 1) throw util::InputError(*preflight);
  // A closed console must not kill the launcher while it still owns workers.
  ::signal(SIGPIPE, SIG_IGN);
  // Before the watchdog, which kills and removes the workers' cgroup if this
  // launcher is killed.
  EscapedProcesses escapes(config.kill_escaped.value);
  // The watchdog is forked first, while this process has one thread.
  process::Watchdog watchdog(escapes.cgroup_dir());
  // Signals are blocked before node 0's rendezvous thread exists, so that
  // thread inherits the mask and every signal arrives at the signalfd.
  process::SignalChannel signals;
  std::optional<process::StdinWatch> stdin_watch;
  if (config.stop_on_stdin_close) stdin_watch.emplace();
  const std::string host = util::local_host_name();
  LogRoot log_root(config);
  auto coordinator = make_coordinator(signals, host, log_root.path());
  // Before the World, slot 0 hosts node 0's service and holds node rank 0
  // (with node ranks by arrival, the launcher that came to serve it).
  if (says_notices(config.topology.launchers(), coordinator->slot())) {
    print_notices(config.topology.notices);
    if (config.python) say("dlaunch: python: " + config.python->describe());
  }
  if (config.topology.launchers() > 1 && coordinator->slot() == 0 && !config.rdzv_token)
    say("dlaunch: note: the rendezvous has no token, so any launcher that reaches node 0's port "
        "may join, and the rendezvous and every rank's stacks cross the network readable by anyone on "
        "the path; dlaunch submit sets one, or give every node $DLAUNCH_RDZV_TOKEN");
  if (preflight) fail_preflight(*preflight, config, *coordinator);
  process::describe_console_drops(log_root.path(), !log_root.temporary());
  util::console_out().set_overflow(config.console_overflow.value);
  util::console_err().set_overflow(config.console_overflow.value);

  std::vector<process::IncompleteLog> incomplete_logs;
  SupervisorSettings settings;
  settings.shutdown_timeout = config.shutdown_timeout;
  settings.node_rank = std::max(coordinator->slot(), 0);  // each round sets its own (run_round)
  settings.host = host;
  settings.preempt_signal = config.preempt_signal;
  settings.log_dir_required = config.log_dir_required;
  settings.escapes = &escapes;
  settings.incomplete_logs = &incomplete_logs;
  settings.capture_timeout = config.job.forensics.capture_timeout;
  HealthCheckSettings health;
  health.command = config.job.health_check;
  health.command_timeout = config.job.health_check_timeout;
  BetweenRounds between{HealthChecks(health, environment, host, log_root.path(), say), {}, escapes.cgroup_dir(),
                        false};
  settings.worker_groups = &between.worker_groups;

  int exit_code = run_rounds(config, environment, *coordinator, settings, signals, watchdog,
                             log_root, host, between);
  // Once more at the end, whatever the outcome: which logs miss what.
  if (!incomplete_logs.empty()) say(process::incomplete_logs_summary(incomplete_logs));
  return exit_code;
}

int run_launcher(const LaunchConfig& config, const util::Environment& environment) {
  return run_launcher(config, environment, [&](process::SignalChannel& signals, const std::string& host,
                                               const std::string& log_folder) {
    return make_coordinator(config, signals, host, log_folder);
  });
}

}  // namespace dlaunch::launch
