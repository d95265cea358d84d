// dlaunch ssh's session loop with real processes: each "ssh" is a
// /bin/sh -c script, so the loop's own behaviour is seen without a network:
// the first line on every session's stdin, every host's output relayed in
// whole lines (as it came: the hosts' launchers prefix their workers' lines),
// node 0's exit code as the job's, the hang-up -> SIGTERM -> SIGKILL
// escalation, the signals the launcher receives, and --host-log-dir files.
//
// Scripts that must run in a given order meet at FIFOs (a FIFO's open
// waits for the other end), never at sleeps. A script reaches the launcher
// (this test process, their parent) with `kill -SIG $PPID`: blocked while
// the SignalChannel lives, the signal arrives through its descriptor.
#include "ssh/ssh_sessions.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../test_support/temp_dir.h"
#include "../test_support/text.h"
#include "util/error.h"
#include "util/fd.h"

namespace dlaunch::ssh {
namespace {

using test_support::contains;
using Clock = std::chrono::steady_clock;

class SshSessionsTest : public ::testing::Test {
 protected:
  // A session whose "ssh" runs SCRIPT with /bin/sh.
  static Session host(const std::string& name, int node_rank, const std::string& script) {
    return Session{name, node_rank, {"/bin/sh", "-c", script}};
  }

  // Runs SESSIONS with SETTINGS, the console going to this test's sinks;
  // the first line every session reads is "s3cret".
  int run(const std::vector<Session>& sessions, SessionSettings settings = {}) {
    settings.first_line = "s3cret\n";
    settings.console_stdout = &out_sink_;
    settings.console_stderr = &err_sink_;
    process::SignalChannel signals;
    return run_sessions(sessions, settings, signals);
  }

  // A FIFO in the test's folder, for scripts to meet at; its path.
  std::string fifo(const std::string& name) {
    std::string path = dir_ + "/" + name;
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
    return path;
  }

  std::string out() { return read_memfd(out_); }
  std::string err() { return read_memfd(err_); }

  static std::string read_file(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

  test_support::TempDir temp_;
  std::string dir_ = temp_.path();

 private:
  static std::string read_memfd(const util::Fd& fd) {
    std::string all;
    ::lseek(fd.get(), 0, SEEK_SET);
    char buffer[4096];
    ssize_t got;
    while ((got = ::read(fd.get(), buffer, sizeof(buffer))) > 0) all.append(buffer, static_cast<std::size_t>(got));
    return all;
  }

  util::Fd out_{::memfd_create("stdout", MFD_CLOEXEC)};
  util::Fd err_{::memfd_create("stderr", MFD_CLOEXEC)};
  util::ConsoleSink out_sink_{out_.get()};
  util::ConsoleSink err_sink_{err_.get()};
};

// Host A writes half a line, lets host B write a whole one, then ends its
// own: the console must show both lines whole, each as the host wrote it.
TEST_F(SshSessionsTest, EveryHostsOutputReachesItsConsoleInWholeLines) {
  std::string half_written = fifo("half_written");
  std::string b_done = fifo("b_done");
  int code = run({host("hostA", 0,
                       "read secret; printf 'A read %s, ' \"$secret\"; echo > " + half_written +
                           "; read x < " + b_done + "; echo 'then ended its line'; echo 'A on stderr' >&2"),
                  host("hostB", 1,
                       "read secret; read x < " + half_written + "; echo \"B read $secret\"; echo > " + b_done +
                           "; echo 'B on stderr' >&2")});
  EXPECT_EQ(code, 0);
  const std::string a_line = "A read s3cret, then ended its line\n";
  const std::string b_line = "B read s3cret\n";
  std::string stdout_text = out();
  EXPECT_TRUE(stdout_text == a_line + b_line || stdout_text == b_line + a_line) << stdout_text;
  std::string stderr_text = err();
  EXPECT_TRUE(stderr_text == "A on stderr\nB on stderr\n" || stderr_text == "B on stderr\nA on stderr\n")
      << stderr_text;
}

// Node 0 fails: its code is the job's, and the other host is hung up (its
// stdin closes, so its `cat` ends).
TEST_F(SshSessionsTest, NodeZerosFailureIsTheJobsExitCodeAndHangsUpTheOthers) {
  int code = run({host("hostA", 0, "read secret; exit 7"),
                  host("hostB", 1, "cat > /dev/null; echo 'B was hung up'")});
  EXPECT_EQ(code, 7);
  EXPECT_EQ(out(), "B was hung up\n");
  EXPECT_TRUE(contains(err(), "dlaunch ssh: stopped every host: hostA (node 0) ended with exit code 7\n"));
}

// With spares (hosts_replaceable) a host that ends early, node 0's too,
// hangs up nobody: the rendezvous replaces it. The survivors end last,
// together, with the job's code, which is then the code most hosts ended
// with. Here hostA is lost first (137); hostB and hostC finish with 0 once
// hostA is gone (each waits on a FIFO hostA's script opens last).
TEST_F(SshSessionsTest, WithSparesALostHostHangsUpNobodyAndTheSurvivorsCodeIsTheJobs) {
  std::string gone = dir_ + "/a_gone";
  ASSERT_EQ(::mkfifo(gone.c_str(), 0600), 0);
  SessionSettings settings;
  settings.hosts_replaceable = true;
  int code = run({host("hostA", 0, "read secret; exec 3>" + gone + "; echo x >&3; exit 137"),
                  host("hostB", 1, "read secret; read line < " + gone + "; echo 'B done'; exit 0"),
                  host("hostC", 2, "read secret; exit 0")},
                 settings);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out(), "B done\n");
  EXPECT_TRUE(contains(err(), "dlaunch ssh: hostA (slot 0) ended with exit code 137; the job goes on without it"))
      << err();
  EXPECT_FALSE(contains(err(), "stopped every host")) << err();
}

// Another host fails: every host is hung up, but the job's code is still
// node 0's (every host's launcher agrees on it), here 0.
TEST_F(SshSessionsTest, TheJobsExitCodeIsNodeZerosEvenWhenAnotherHostFailed) {
  int code = run({host("hostA", 0, "cat > /dev/null; echo 'A was hung up'; exit 0"),
                  host("hostB", 1, "read secret; exit 4")});
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out(), "A was hung up\n");
  EXPECT_TRUE(contains(err(), "dlaunch ssh: stopped every host: hostB (node 1) ended with exit code 4\n"));
}

// 255 is ssh's own failure: node 0's launcher never said anything, so the
// first other host's code is the job's.
TEST_F(SshSessionsTest, WhenNodeZerosSshFailsTheNextHostsCodeIsTheJobs) {
  int code = run({host("hostA", 0, "exit 255"), host("hostB", 1, "cat > /dev/null; exit 6")});
  EXPECT_EQ(code, 6);
  std::string stderr_text = err();
  EXPECT_TRUE(contains(stderr_text, "dlaunch ssh: lost the ssh connection to hostA (node 0)\n"));
  EXPECT_TRUE(contains(stderr_text, "stopped every host: hostA (node 0) ended with exit code 255\n"));
}

TEST_F(SshSessionsTest, AnSshThatCannotBeStartedIsASystemError) {
  EXPECT_THROW(run({Session{"hostA", 0, {dir_ + "/no-such-ssh"}}}), util::SystemError);
}

// Host A does not read its stdin, so the hang-up does not end it: SIGTERM
// does, once the grace period has passed.
TEST_F(SshSessionsTest, AHostThatIgnoresTheHangUpGetsSigtermAfterTheGrace) {
  SessionSettings settings;
  settings.grace = std::chrono::milliseconds(200);
  auto start = Clock::now();
  int code = run({host("hostA", 0, "exec sleep 60"), host("hostB", 1, "exit 2")}, settings);
  EXPECT_GE(Clock::now() - start, settings.grace);
  EXPECT_EQ(code, 128 + SIGTERM);
  EXPECT_TRUE(contains(err(), "stopped every host: hostB (node 1) ended with exit code 2\n"));
}

// Host A ignores SIGTERM too (host B fails only once A is deaf to it):
// SIGKILL ends it, 5 seconds after the SIGTERM.
TEST_F(SshSessionsTest, AHostThatIgnoresSigtermIsKilledAfterTheKillGrace) {
  std::string deaf = fifo("deaf");
  SessionSettings settings;
  settings.grace = std::chrono::milliseconds(50);
  auto start = Clock::now();
  int code = run({host("hostA", 0, "trap '' TERM; echo > " + deaf + "; exec sleep 60"),
                  host("hostB", 1, "read x < " + deaf + "; exit 2")},
                 settings);
  EXPECT_GE(Clock::now() - start, settings.grace + std::chrono::seconds(5));
  EXPECT_EQ(code, 128 + SIGKILL);
}

// SIGTERM to dlaunch ssh hangs up every host (each ends when its stdin
// closes, well before the grace period), and the job's code says why.
TEST_F(SshSessionsTest, AStopSignalToTheLauncherHangsUpEveryHost) {
  SessionSettings settings;
  settings.grace = std::chrono::minutes(10);  // only the hang-up can end them in time
  int code = run({host("hostA", 0, "cat > /dev/null; echo 'A was hung up'"),
                  host("hostB", 1, "read secret; kill -TERM $PPID; cat > /dev/null; echo 'B was hung up'")},
                 settings);
  EXPECT_EQ(code, 128 + SIGTERM);
  std::string stdout_text = out();
  EXPECT_TRUE(contains(stdout_text, "A was hung up\n"));
  EXPECT_TRUE(contains(stdout_text, "B was hung up\n"));
  EXPECT_TRUE(contains(err(), "dlaunch ssh: stopped every host: received SIGTERM\n"));
}

// A second Ctrl-C does not wait for the grace period: SIGKILL at once.
// Host A would end by SIGTERM (143) if it waited that long.
TEST_F(SshSessionsTest, ASecondInterruptKillsEveryHostAtOnce) {
  SessionSettings settings;
  settings.grace = std::chrono::seconds(60);
  settings.host_log_dir = dir_ + "/logs";
  int code = run({host("hostA", 0, "read secret; kill -INT $PPID; cat > /dev/null; kill -INT $PPID; exec sleep 60")},
                 settings);
  EXPECT_EQ(code, 128 + SIGINT);
  std::string stderr_text = err();
  EXPECT_TRUE(contains(stderr_text, "hostA (node 0) ended with exit code 137;"));
  EXPECT_TRUE(contains(stderr_text, "stopped every host: received SIGINT\n"));
}

// SIGUSR1 does not stop dlaunch ssh: it reaches the hosts' process groups,
// as it would reach the workers of a local run.
TEST_F(SshSessionsTest, USR1ToTheLauncherIsForwardedToEveryHost) {
  int code = run({host("hostA", 0, "kill -USR1 $PPID; exec sleep 60")});
  EXPECT_EQ(code, 128 + SIGUSR1);  // node 0's code: killed by the forwarded SIGUSR1
  std::string stderr_text = err();
  EXPECT_TRUE(contains(stderr_text, "stopped every host: hostA (node 0) ended with exit code 138\n"));
  EXPECT_FALSE(contains(stderr_text, "received SIGUSR1"));
}

// --host-log-dir: each host's output goes to DIR/HOST.log, not the console;
// a failed host's file is named with its last lines.
TEST_F(SshSessionsTest, WithAHostLogDirEachHostsOutputGoesToItsFile) {
  SessionSettings settings;
  settings.host_log_dir = dir_ + "/logs";
  int code = run({host("hostA", 0, "read secret; echo \"A read $secret\"; echo 'A on stderr' >&2; cat > /dev/null"),
                  host("hostB", 1, "echo 'B starts'; echo 'B last words' >&2; exit 3")},
                 settings);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out(), "");
  std::string a_log = read_file(dir_ + "/logs/hostA.log");
  EXPECT_TRUE(contains(a_log, "A read s3cret\n"));
  EXPECT_TRUE(contains(a_log, "A on stderr\n"));
  std::string b_log = read_file(dir_ + "/logs/hostB.log");
  EXPECT_TRUE(contains(b_log, "B starts\n"));
  EXPECT_TRUE(contains(b_log, "B last words\n"));
  std::string stderr_text = err();
  EXPECT_TRUE(contains(stderr_text, "dlaunch ssh: hostB (node 1) ended with exit code 3; its output is in " +
                                        dir_ + "/logs/hostB.log\n"));
  EXPECT_TRUE(contains(stderr_text, "  | B last words\n"));
  EXPECT_FALSE(contains(stderr_text, "A read"));
  EXPECT_FALSE(contains(stderr_text, "hostA (node 0) ended"));
}

// This process's children (running or not yet reaped), from /proc.
std::set<pid_t> children_of_this_process() {
  std::set<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    char state = 0;
    pid_t parent = 0;
    if (rest >> state >> parent && parent == ::getpid()) children.insert(std::stoi(entry.path().filename()));
  }
  return children;
}

// The second host's log file cannot be made (a folder holds its name): the
// error reaches the caller, and the first host's ssh, already started, is
// killed and reaped, not left running (nor a zombie).
TEST_F(SshSessionsTest, AHostThatCannotStartLeavesNoEarlierHostRunning) {
  SessionSettings settings;
  settings.host_log_dir = dir_ + "/logs";
  std::filesystem::create_directories(dir_ + "/logs/hostB.log");
  const std::set<pid_t> before = children_of_this_process();
  try {
    run({host("hostA", 0, "exec sleep 30"), host("hostB", 1, "exit 0")}, settings);
    ADD_FAILURE() << "run_sessions returned";
  } catch (const util::SystemError& error) {
    EXPECT_TRUE(contains(error.what(), "hostB.log")) << error.what();
  }
  const std::set<pid_t> after = children_of_this_process();
  EXPECT_EQ(after, before) << "an ssh of the failed start was left behind";
  for (pid_t left : after) {
    if (before.count(left) == 0) ::kill(left, SIGKILL);
  }
}

}  // namespace
}  // namespace dlaunch::ssh
