// The supervisor with real processes: exit codes, teardown, output.
#include "launch/supervisor.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../test_support/temp_dir.h"
#include "rendezvous/local_coordinator.h"

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <thread>
#include <sstream>
#include <poll.h>
#include <atomic>

namespace dlaunch::launch {
namespace {

class SupervisorTest : public ::testing::Test {
 protected:
  using Adjust = std::function<void(LaunchConfig&, SupervisorSettings&)>;

  // Runs one round of workers, each running the shell SCRIPT.
  rendezvous::NodeOutcome run(int nproc, const std::string& script, std::chrono::milliseconds grace =
                                                            std::chrono::seconds(30)) {
    return run_with(nproc, script, [&](LaunchConfig&, SupervisorSettings& settings) {
      settings.shutdown_timeout = grace;
    });
  }

  // The same, with ADJUST changing the configuration and the settings.
  rendezvous::NodeOutcome run_with(int nproc, const std::string& script, const Adjust& adjust) {
    LaunchConfig config;
    config.topology.nnodes = {1, "test"};
    config.topology.node_rank = {0, "test"};
    config.topology.nproc_per_node = {nproc, "test"};
    config.command = {"/bin/sh", "-c", script};
    rendezvous::World world;
    world.nproc_per_node = {nproc};
    world.worker_master_addr = "127.0.0.1";
    world.worker_master_port = 1;
    world.run_id = std::string("t");  // GCC 12 -Wrestrict false positive on = "t"
    util::Environment environment(std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"}});
    SupervisorSettings settings;
    settings.host = "testhost";
    settings.console_stdout = &console_sink_;
    settings.console_stderr = &console_sink_;
    settings.incomplete_logs = &incomplete_logs_;
    adjust(config, settings);
    WorkerPlan plan = plan_workers(config, world, 0, environment, log_root_, "testhost");
    rendezvous::LocalCoordinator coordinator("127.0.0.1", std::nullopt, nproc, "t", 0);
    process::Watchdog watchdog;
    process::SignalChannel signals;
    return supervise(plan, settings, coordinator, signals, watchdog);
  }

  std::string console() {
    std::string all;
    ::lseek(console_.get(), 0, SEEK_SET);
    char buffer[4096];
    ssize_t got;
    while ((got = ::read(console_.get(), buffer, sizeof(buffer))) > 0)
      all.append(buffer, static_cast<std::size_t>(got));
    return all;
  }

  util::Fd console_{::memfd_create("console", MFD_CLOEXEC)};
  util::ConsoleSink console_sink_{console_.get()};
  std::vector<process::IncompleteLog> incomplete_logs_;
  test_support::TempDir temp_;
  std::string log_root_ = temp_.path();
};

TEST_F(SupervisorTest, AllWorkersSucceed) {
  rendezvous::NodeOutcome outcome = run(3, "echo hello $RANK");
  EXPECT_TRUE(outcome.succeeded);
  EXPECT_FALSE(outcome.failure);
  std::string text = console();
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(text.find("[rank" + std::to_string(rank) + "]:hello " + std::to_string(rank) + "\n"),
              std::string::npos)
        << text;
}

TEST_F(SupervisorTest, FirstFailureStopsTheOthersAndCarriesItsLastLines) {
  // Rank 1 fails once every worker has started; the others would run for minutes.
  rendezvous::NodeOutcome outcome = run(3,
                            "if [ $RANK = 1 ]; then echo about to fail; echo oops >&2; exit 3; fi; "
                            "exec sleep 300");
  EXPECT_FALSE(outcome.succeeded);
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->global_rank, 1);
  EXPECT_EQ(outcome.failure->exit_code, 3);
  EXPECT_EQ(outcome.failure->signal, 0);
  EXPECT_EQ(outcome.failure->host, "testhost");
  EXPECT_EQ(outcome.failure->last_lines.back(), "oops");
}

TEST_F(SupervisorTest, KilledWorkerReportsTheSignal) {
  rendezvous::NodeOutcome outcome = run(2, "if [ $RANK = 0 ]; then kill -9 $$; fi; exec sleep 300");
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->exit_code, 137);
  EXPECT_EQ(outcome.failure->signal, SIGKILL);
}

TEST_F(SupervisorTest, WorkerIgnoringSigtermIsKilledAfterTheGracePeriod) {
  // Rank 0 fails only once rank 1 has made itself deaf to SIGTERM.
  std::string ready = log_root_ + "/ready";
  rendezvous::NodeOutcome outcome = run(2,
                            "if [ $RANK = 0 ]; then until [ -e " + ready + " ]; do :; done; exit 5; fi; "
                            "trap '' TERM; touch " + ready + "; while :; do sleep 1; done",
                            std::chrono::milliseconds(200));
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->exit_code, 5);
  EXPECT_TRUE(std::filesystem::exists(ready));
}

TEST_F(SupervisorTest, ErrorFileMessageReachesTheFailure) {
  rendezvous::NodeOutcome outcome = run(
      1, R"(printf '{"message": {"message": "ValueError: bad lr", "extraInfo": {}}}' > "$TORCHELASTIC_ERROR_FILE"; exit 1)");
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->error_message, "ValueError: bad lr");
}

TEST_F(SupervisorTest, UnterminatedLastLineIsShown) {
  run(1, "printf 'no newline at the end'");
  EXPECT_NE(console().find("[rank0]:no newline at the end\n"), std::string::npos);
}

// The console is a pipe nobody reads: the round must still end, and the
// lines it could not take are counted, not waited for.
TEST_F(SupervisorTest, UnderDropAStalledConsoleDoesNotStopTheRound) {
  util::Pipe stalled = util::make_pipe();
  ::fcntl(stalled.write_end.get(), F_SETPIPE_SZ, 4096);
  util::ConsoleSink sink(stalled.write_end.get(), /*capacity=*/4096);
  sink.set_overflow(util::ConsoleOverflow::kDrop);
  rendezvous::NodeOutcome outcome =
      run_with(2, "i=0; while [ $i -lt 5000 ]; do echo line $i of $RANK; i=$((i+1)); done",
               [&](LaunchConfig&, SupervisorSettings& settings) {
                 settings.console_stdout = &sink;
                 settings.console_stderr = &sink;
               });
  EXPECT_TRUE(outcome.succeeded);
  EXPECT_GT(sink.dropped().unfiled, 0u);
  EXPECT_EQ(sink.dropped().filed, 0u);
}

// The default: a console that stalls holds the workers back (their
// writes wait) rather than losing their lines. The reader here starts only
// once the console is full; then every line of every rank arrives, whole
// and in order, and the backlog never grew past the console's capacity by
// more than the pipes the supervisor had read before it saw it full.
TEST_F(SupervisorTest, AStalledConsoleHoldsTheWorkersBackAndLosesNothing) {
  util::Pipe stalled = util::make_pipe();
  ::fcntl(stalled.write_end.get(), F_SETPIPE_SZ, 4096);
  util::ConsoleSink sink(stalled.write_end.get(), /*capacity=*/4096);
  constexpr int kLines = 5000;
  std::string received;
  std::size_t peak_backlog = 0;
  std::atomic<bool> done{false};
  // The reader thread takes no signals: SIGCHLD delivered to it would never
  // reach the supervisor's signalfd (a thread made before the supervisor
  // blocked them).
  sigset_t all, previous;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &previous);
  std::thread reader([&] {
    while (!sink.full() && !done) peak_backlog = std::max(peak_backlog, sink.backlog_bytes());
    char buffer[4096];
    for (;;) {
      peak_backlog = std::max(peak_backlog, sink.backlog_bytes());
      pollfd readable{stalled.read_end.get(), POLLIN, 0};
      if (::poll(&readable, 1, 200) <= 0) {
        if (done) break;
        continue;
      }
      ssize_t got = ::read(stalled.read_end.get(), buffer, sizeof(buffer));
      if (got <= 0) break;
      received.append(buffer, static_cast<std::size_t>(got));
    }
  });
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  rendezvous::NodeOutcome outcome =
      run_with(2, "i=0; while [ $i -lt " + std::to_string(kLines) + " ]; do echo line $i of $RANK; i=$((i+1)); done",
               [&](LaunchConfig&, SupervisorSettings& settings) {
                 settings.console_stdout = &sink;
                 settings.console_stderr = &sink;
               });
  // What the supervisor left in the backlog at the end is written by the
  // process's exit drain; here the test drains it.
  EXPECT_TRUE(sink.drain(std::chrono::steady_clock::now() + std::chrono::seconds(30)));
  done = true;
  reader.join();
  EXPECT_TRUE(outcome.succeeded);
  EXPECT_EQ(sink.dropped().total(), 0u);
  // Two workers, two streams each, one read (256 KiB at most) after the
  // console was full.
  EXPECT_LE(peak_backlog, 4096u + 4 * (256u << 10));
  int next[2] = {0, 0};
  std::istringstream lines(received);
  std::string line;
  while (std::getline(lines, line)) {
    int number = -1, rank = -1;
    ASSERT_EQ(std::sscanf(line.c_str(), "[rank%*d]:line %d of %d", &number, &rank), 2) << line;
    ASSERT_TRUE(rank == 0 || rank == 1) << line;
    EXPECT_EQ(number, next[rank]) << "rank " << rank << " out of order or lost";
    next[rank] = number + 1;
  }
  EXPECT_EQ(next[0], kLines);
  EXPECT_EQ(next[1], kLines);
}

// A console gone for good (its reader closed it) holds no worker back: the
// round ends, the lines are counted, and that is said once, on stderr.
TEST_F(SupervisorTest, AConsoleWhoseReaderIsGoneIsSaidOnceAndHoldsNoWorkerBack) {
  sighandler_t previous = ::signal(SIGPIPE, SIG_IGN);
  util::Pipe gone = util::make_pipe();
  gone.read_end.reset();
  util::ConsoleSink out(gone.write_end.get(), /*capacity=*/4096);
  rendezvous::NodeOutcome outcome =
      run_with(2, "i=0; while [ $i -lt 3000 ]; do echo line $i of $RANK; i=$((i+1)); done",
               [&](LaunchConfig&, SupervisorSettings& settings) { settings.console_stdout = &out; });
  ::signal(SIGPIPE, previous);
  EXPECT_TRUE(outcome.succeeded);
  EXPECT_EQ(out.dropped().total(), 6000u);
  std::string said = console();
  std::size_t first = said.find("dlaunch: stdout cannot be written any more (Broken pipe): its lines are dropped "
                                "from here on");
  EXPECT_NE(first, std::string::npos) << said;
  EXPECT_EQ(said.find("cannot be written any more", first + 40), std::string::npos) << "said once";
}

// Logs must not kill training: a log file that cannot be created (here a
// folder sits where it belongs) is reported, and the output meant for it
// (-r 3: files only) reaches the console instead.
TEST_F(SupervisorTest, ALogFileThatCannotBeCreatedSendsItsOutputToTheConsole) {
  std::filesystem::create_directories(log_root_ + "/attempt_0/rank0/stdout.log");
  rendezvous::NodeOutcome outcome = run_with(1, "echo hello", [&](LaunchConfig& config, SupervisorSettings&) {
    config.log_dir = log_root_;
    config.redirects.default_mask = kBothStreams;
  });
  EXPECT_TRUE(outcome.succeeded);
  std::string text = console();
  EXPECT_NE(text.find("[rank0]:hello\n"), std::string::npos) << text;
  EXPECT_NE(text.find("stdout.log could not be created: Is a directory"), std::string::npos) << text;
  ASSERT_EQ(incomplete_logs_.size(), 1u);
  EXPECT_EQ(incomplete_logs_[0].global_rank, 0);
  EXPECT_EQ(incomplete_logs_[0].stream, "stdout");
  EXPECT_FALSE(incomplete_logs_[0].fault.created);
  EXPECT_EQ(incomplete_logs_[0].fault.error, EISDIR);
  EXPECT_EQ(incomplete_logs_[0].fault.lost_bytes, 6u);
}

TEST_F(SupervisorTest, LogDirRequiredMakesAFailedLogFileStopTheRound) {
  std::filesystem::create_directories(log_root_ + "/attempt_0/rank1/stderr.log");
  rendezvous::NodeOutcome outcome =
      run_with(2, "echo started; exec sleep 300", [&](LaunchConfig& config, SupervisorSettings& settings) {
        config.log_dir = log_root_;
        settings.log_dir_required = true;
      });
  EXPECT_FALSE(outcome.succeeded);
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->global_rank, -1);
  EXPECT_NE(outcome.failure->description.find("rank 1 on testhost (node 0): its stderr log " +
                                              log_root_ + "/attempt_0/rank1/stderr.log could not be "
                                              "created (Is a directory)"),
            std::string::npos)
      << outcome.failure->description;
  EXPECT_NE(outcome.failure->description.find("--log-dir-required"), std::string::npos);
}

// A worker starts a daemon in a session of its own and exits: only a
// subreaper catches it.
class EscapedDaemon : public SupervisorTest {
 protected:
  pid_t run_daemon_worker(EscapedProcesses* escapes) {
    std::string pid_file = log_root_ + "/daemon.pid";
    run_with(1, "setsid -f /bin/sh -c 'echo $$ > " + pid_file + ".tmp; mv " + pid_file + ".tmp " +
                    pid_file + "; exec sleep 300' </dev/null >/dev/null 2>&1; "
                    "until [ -e " + pid_file + " ]; do :; done",
             [&](LaunchConfig&, SupervisorSettings& settings) { settings.escapes = escapes; });
    pid_t pid = 0;
    std::ifstream(pid_file) >> pid;
    return pid;
  }
};

TEST_F(EscapedDaemon, TheSubreaperKillsAndReapsIt) {
  pid_t daemon;
  {
    EscapedProcesses escapes(KillEscaped::kSubreaper);
    daemon = run_daemon_worker(&escapes);
  }
  ASSERT_GT(daemon, 0);
  EXPECT_NE(::kill(daemon, 0), 0) << "the daemon " << daemon << " is still there";
}

TEST_F(EscapedDaemon, WithoutItTheDaemonSurvives) {
  pid_t daemon = run_daemon_worker(nullptr);
  ASSERT_GT(daemon, 0);
  EXPECT_EQ(::kill(daemon, SIGKILL), 0) << "the daemon was gone: this test proves nothing";
}

}  // namespace
}  // namespace dlaunch::launch
