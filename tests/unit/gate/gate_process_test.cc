// This node's part of the pre-start gate: the check runs as a child with the
// gate rank's environment and the store's secret on a pipe (the one
// descriptor beyond 0-2 it inherits), its stdout and stderr are read
// without blocking, and finish() says how it ended: its exit code and last
// line, a kill at the deadline (with its whole process group), a signal, a
// program that could not start, the last lines of its stderr when it
// failed. The line goes to node 0 as it is: gate/gate_verdict judges it
// there.
//
// GateProcess runs the dlaunch-check installed beside the running program,
// which is this test binary here. So the fixture puts a stand-in of that
// name beside it (kFakeCheck below, a shell script): it writes what it was given to $DLAUNCH_TEST_GATE_RECORD and then runs the
// shell text in $DLAUNCH_TEST_GATE, which each test sets. A real
// dlaunch-check found there is never replaced: the tests skip.
#include "gate/gate_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../test_support/files.h"
#include "../test_support/temp_dir.h"
#include "../test_support/text.h"
#include "util/error.h"
#include "util/fd.h"
#include "util/own_executable.h"

namespace dlaunch::rendezvous {
namespace {

using namespace std::chrono_literals;
using ::dlaunch::test_support::contains;

constexpr const char* kMarker = "# dlaunch unit tests' stand-in for dlaunch-check";

// Records its arguments, the variables a gate rank gets, the secret on the
// descriptor $DLAUNCH_STORE_SECRET_FD names, what descriptor
// $DLAUNCH_TEST_GATE_LEAK_FD is in it (if it is open), where its stdin comes
// from and its process group, then runs what the test asks for.
constexpr const char* kFakeCheck = R"SH(#!/bin/sh
# dlaunch unit tests' stand-in for dlaunch-check
# (tests/unit/gate/gate_process_test.cc writes it beside the test binary,
# where GateProcess looks for dlaunch-check).
if [ -n "$DLAUNCH_TEST_GATE_RECORD" ]; then
  {
    echo "args=$*"
    echo "RANK=$RANK"
    echo "RANK_entries=$(tr '\0' '\n' < /proc/$$/environ | grep -c '^RANK=')"
    echo "WORLD_SIZE=$WORLD_SIZE"
    echo "LOCAL_RANK=$LOCAL_RANK"
    echo "LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE"
    echo "MASTER_ADDR=$MASTER_ADDR"
    echo "MASTER_PORT=$MASTER_PORT"
    echo "GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME-unset}"
    echo "DLAUNCH_STORE_SECRET_FD=$DLAUNCH_STORE_SECRET_FD"
    echo "secret_fd=$(readlink /proc/$$/fd/$DLAUNCH_STORE_SECRET_FD)"
    echo "secret=$(cat <&"$DLAUNCH_STORE_SECRET_FD")"
    echo "leaked=$(readlink /proc/$$/fd/${DLAUNCH_TEST_GATE_LEAK_FD:-none} 2>/dev/null)"
    echo "stdin=$(readlink /proc/$$/fd/0)"
    echo "pid=$$"
    echo "pgid=$(cut -d' ' -f5 /proc/$$/stat)"
    echo "sigblk=$(awk '/^SigBlk/ {print $2}' /proc/$$/status)"
  } > "$DLAUNCH_TEST_GATE_RECORD.part"
  mv "$DLAUNCH_TEST_GATE_RECORD.part" "$DLAUNCH_TEST_GATE_RECORD"
fi
eval "$DLAUNCH_TEST_GATE"
)SH";

// Sets NAME to VALUE (nullopt: unsets it) for one test, then puts it back.
class ScopedVariable {
 public:
  ScopedVariable(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value) ::setenv(name_.c_str(), value->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ~ScopedVariable() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

std::string read_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// "name=value" lines as a map.
std::map<std::string, std::string> read_record(const std::string& path) {
  std::map<std::string, std::string> record;
  std::istringstream lines(read_text(path));
  for (std::string line; std::getline(lines, line);) {
    auto equals = line.find('=');
    if (equals != std::string::npos) record[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return record;
}

// Whether PID is gone (or a zombie no one reaped yet: it runs no more).
bool gone(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close == std::string::npos || stat.substr(close + 2, 1) == "Z";
}

// This process's resident memory in KiB (VmRSS), 0 when unknown.
long resident_kib() {
  std::istringstream lines(read_text("/proc/self/status"));
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("VmRSS:")) return std::stol(line.substr(6));
  }
  return 0;
}

bool gone_within(pid_t pid, std::chrono::milliseconds limit) {
  for (auto give_up = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < give_up;) {
    if (gone(pid)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return gone(pid);
}

class GateProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto program = std::filesystem::path(util::own_executable()).parent_path() / "dlaunch-check";
    if (std::filesystem::exists(program) && !contains(read_text(program), kMarker))
      GTEST_SKIP() << program << " is a real dlaunch-check: the stand-in would replace it";
    // Written whole under another name, then renamed: tests in other
    // processes may run it meanwhile.
    std::string part = program.string() + "." + std::to_string(::getpid()) + ".part";
    {
      std::ofstream file(part);
      file << kFakeCheck;
    }
    ASSERT_EQ(::chmod(part.c_str(), 0755), 0);
    std::filesystem::rename(part, program);
    record_ = folder_.path() + "/record";
  }

  static GateMessage message() {
    GateMessage result;
    result.round = 0;
    result.gate_rank = 2;
    result.gate_size = 4;
    result.master_addr = "10.1.2.3";
    result.master_port = 29517;
    result.pair_bytes = 4096;
    result.timeout_ms = 7'000;
    result.ifname = "ib0";
    result.store_secret = "0123456789abcdef0123456789abcdef";
    return result;
  }

  // Waits up to 20 ms for either of the check's pipes, as the coordinator's
  // wait does (process/link_wait).
  static void wait_for_output(const GateProcess& check) {
    std::vector<pollfd> readable;
    for (int fd : check.fds()) readable.push_back({fd, POLLIN, 0});
    ::poll(readable.data(), readable.size(), 20);
  }

  // What the coordinator does: reads the check's output as it comes until
  // it ends or LIMIT passes, then finishes it (timed out in the second case).
  static GateReportMessage run(GateProcess& check, std::chrono::milliseconds limit) {
    bool ended = false;
    for (auto deadline = std::chrono::steady_clock::now() + limit;
         !ended && std::chrono::steady_clock::now() < deadline;) {
      wait_for_output(check);
      ended = check.read_some();
    }
    return check.finish(!ended);
  }

  // Runs the stand-in with SCRIPT as its body, recording what it was given.
  GateReportMessage run_script(const std::string& script, std::chrono::milliseconds limit = 10s,
                               const GateMessage& gate = message()) {
    ScopedVariable body("DLAUNCH_TEST_GATE", script);
    ScopedVariable record("DLAUNCH_TEST_GATE_RECORD", record_);
    GateProcess check(gate);
    return run(check, limit);
  }

  // The record, once the stand-in wrote it.
  std::map<std::string, std::string> recorded() {
    for (int tries = 0; tries < 1000 && !std::filesystem::exists(record_); ++tries) std::this_thread::sleep_for(10ms);
    return read_record(record_);
  }

  test_support::TempDir folder_;
  std::string record_;
};

TEST_F(GateProcessTest, ACheckThatPassesReportsItsLastLineAndExitCodeZero) {
  auto report = run_script(R"(echo "connecting to 10.1.2.3"; echo '{"gate":1,"rank":2,"allreduce":true}'; echo)");
  EXPECT_EQ(report.exit_code, 0);
  EXPECT_EQ(report.line, R"({"gate":1,"rank":2,"allreduce":true})");  // the last line that is not empty
  EXPECT_EQ(report.error, "");
}

TEST_F(GateProcessTest, TheCheckRunsAsTheGateRankWithTheSecretOnAPipe) {
  ScopedVariable launcher_rank("RANK", "17");  // a launcher inside a Slurm step may have its own
  ScopedVariable user_ifname("GLOO_SOCKET_IFNAME", std::nullopt);
  run_script("exit 0");
  auto seen = recorded();
  EXPECT_EQ(seen["args"], "--gate --pair-bytes 4096 --timeout 7");
  EXPECT_EQ(seen["RANK"], "2");
  // Replaced, not added beside the launcher's: a program's getenv takes the
  // first of two (the shell's own $RANK above does not show that).
  EXPECT_EQ(seen["RANK_entries"], "1");
  EXPECT_EQ(seen["WORLD_SIZE"], "4");
  EXPECT_EQ(seen["LOCAL_RANK"], "0");
  EXPECT_EQ(seen["LOCAL_WORLD_SIZE"], "1");
  EXPECT_EQ(seen["MASTER_ADDR"], "10.1.2.3");
  EXPECT_EQ(seen["MASTER_PORT"], "29517");
  EXPECT_EQ(seen["GLOO_SOCKET_IFNAME"], "ib0");  // the interface node 0 chose for this host
  // The secret comes on a pipe whose descriptor the variable names, not in
  // the environment (which /proc/PID/environ shows to the user's other
  // processes).
  EXPECT_GT(std::stoi(seen["DLAUNCH_STORE_SECRET_FD"]), 2);
  EXPECT_TRUE(seen["secret_fd"].starts_with("pipe:")) << seen["secret_fd"];
  EXPECT_EQ(seen["secret"], "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(seen["stdin"], "/dev/null");
  EXPECT_EQ(seen["pgid"], seen["pid"]);  // a process group of its own, killed whole
}

TEST_F(GateProcessTest, TheCheckStartsWithNoSignalBlocked) {
  // As the launcher does for its signalfd (process/signal_channel.h).
  sigset_t blocked;
  sigset_t before;
  sigemptyset(&blocked);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGUSR1}) sigaddset(&blocked, signal);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &blocked, &before), 0);
  run_script("exit 0");
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  EXPECT_EQ(recorded()["sigblk"], "0000000000000000");
}

TEST_F(GateProcessTest, TheUsersInterfaceWinsOverTheChosenOne) {
  ScopedVariable user_ifname("GLOO_SOCKET_IFNAME", "eth7");
  run_script("exit 0");
  EXPECT_EQ(recorded()["GLOO_SOCKET_IFNAME"], "eth7");
}

TEST_F(GateProcessTest, WithoutAChosenInterfaceNoneIsSet) {
  ScopedVariable user_ifname("GLOO_SOCKET_IFNAME", std::nullopt);
  GateMessage gate = message();
  gate.ifname = "";
  run_script("exit 0", 10s, gate);
  EXPECT_EQ(recorded()["GLOO_SOCKET_IFNAME"], "unset");
}

TEST_F(GateProcessTest, TheTimeoutIsWholeSecondsAndAtLeastOne) {
  GateMessage gate = message();
  gate.timeout_ms = 300;
  run_script("exit 0", 10s, gate);
  EXPECT_EQ(recorded()["args"], "--gate --pair-bytes 4096 --timeout 1");
}

TEST_F(GateProcessTest, ACheckThatFailsReportsItsExitCodeAndLineWithoutALauncherError) {
  auto report = run_script(R"(echo '{"gate":1,"rank":2,"allreduce":false,"error":"peer 3 timed out"}'; exit 3)");
  EXPECT_EQ(report.exit_code, 3);
  EXPECT_EQ(report.line, R"({"gate":1,"rank":2,"allreduce":false,"error":"peer 3 timed out"})");
  EXPECT_EQ(report.error, "");  // the check said why itself
}

TEST_F(GateProcessTest, ACheckPastItsTimeoutIsKilledWithItsGroupAndSaysSo) {
  // A child of the check holds its stdout too, as a helper of its own
  // would: the output never ends by itself.
  ScopedVariable body("DLAUNCH_TEST_GATE",
                      R"(echo "still pairing"; sleep 600 & echo "sleeper=$!" > "$DLAUNCH_TEST_GATE_RECORD.sleeper"; wait)");
  ScopedVariable record("DLAUNCH_TEST_GATE_RECORD", record_);
  GateProcess check(message());
  const std::string sleeper_file = record_ + ".sleeper";
  for (auto give_up = std::chrono::steady_clock::now() + 10s;
       !std::filesystem::exists(sleeper_file) && std::chrono::steady_clock::now() < give_up;) {
    wait_for_output(check);
    EXPECT_FALSE(check.read_some());
  }
  auto sleeper = read_record(sleeper_file);
  ASSERT_FALSE(sleeper["sleeper"].empty());
  auto started = std::chrono::steady_clock::now();
  auto report = check.finish(true);  // the coordinator's deadline passed
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);  // not the check's 600 s
  EXPECT_EQ(report.exit_code, 128 + SIGKILL);
  EXPECT_EQ(report.line, "still pairing");
  EXPECT_EQ(report.error, "the gate's check did not end within --gate-timeout (7 s) and was killed");
  EXPECT_TRUE(gone_within(std::stoi(sleeper["sleeper"]), 30s)) << "the check's own child outlived it";
}

TEST_F(GateProcessTest, ReadingASilentCheckNeverBlocks) {
  ScopedVariable body("DLAUNCH_TEST_GATE", "sleep 600");
  GateProcess check(message());
  auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(check.read_some());  // nothing yet, and not at its end
  EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);  // not the check's 600 s, even on a loaded machine
  auto report = check.finish(true);
  EXPECT_EQ(report.exit_code, 128 + SIGKILL);
}

TEST_F(GateProcessTest, GarbageIsPassedOnAsItsLastLineForNode0ToJudge) {
  // No newline at the end, bytes that are no text: GateProcess does not
  // parse the line (gate/gate_verdict does, on node 0).
  auto report = run_script(R"(printf 'warming up\n\001\377 not json {')");
  EXPECT_EQ(report.exit_code, 0);
  EXPECT_EQ(report.line, "\001\377 not json {");
  EXPECT_EQ(report.error, "");
}

TEST_F(GateProcessTest, OutputFarBeyondAPipesBufferIsDrainedAndTheLastLineKept) {
  // 1 MiB would block a check whose reader stopped (a pipe holds 64 KiB).
  auto report = run_script(R"(head -c 1048576 /dev/zero | tr '\0' 'x' | fold -w 100; echo; echo '{"gate":1}')");
  EXPECT_EQ(report.exit_code, 0);
  EXPECT_EQ(report.line, R"({"gate":1})");
  EXPECT_EQ(report.error, "");
}

TEST_F(GateProcessTest, ACheckKilledByASignalSaysWhich) {
  auto report = run_script(R"(echo '{"gate":1,"rank":2}'; ulimit -c 0; kill -SEGV $$)");
  EXPECT_EQ(report.exit_code, 128 + SIGSEGV);
  EXPECT_EQ(report.line, R"({"gate":1,"rank":2})");
  // Named by util/signal_names (before the one exit-code table: by number).
  EXPECT_TRUE(report.error == "the gate's check was killed by SIGSEGV" ||
              report.error == "the gate's check was killed by signal 11")
      << report.error;
}

TEST_F(GateProcessTest, ExitCode127WithoutALineMeansItCouldNotStart) {
  auto report = run_script("exit 127");
  EXPECT_EQ(report.exit_code, 127);
  EXPECT_EQ(report.line, "");
  EXPECT_EQ(report.error, "dlaunch-check could not be started on this node");
}

TEST_F(GateProcessTest, ExitCode127WithALineIsTheChecksOwnWord) {
  auto report = run_script(R"(echo '{"gate":1,"error":"gloo: no such interface"}'; exit 127)");
  EXPECT_EQ(report.exit_code, 127);
  EXPECT_EQ(report.error, "");
}

TEST_F(GateProcessTest, DestroyingItKillsACheckThatStillRuns) {
  // Node 0 aborting the job while the gate runs: the coordinator drops it.
  {
    ScopedVariable body("DLAUNCH_TEST_GATE", "sleep 600");
    ScopedVariable record("DLAUNCH_TEST_GATE_RECORD", record_);
    GateProcess check(message());
    ASSERT_FALSE(recorded()["pid"].empty());  // it runs
  }
  auto pid = recorded()["pid"];
  ASSERT_FALSE(pid.empty());
  EXPECT_TRUE(gone_within(std::stoi(pid), 30s));
}

TEST_F(GateProcessTest, NoDescriptorOfTheLauncherButTheSecretsReachesTheCheck) {
  // Opened without O_CLOEXEC, as a shell's or a batch system's descriptor
  // reaches the launcher; a worker never gets it, nor may the check.
  const std::string marker = folder_.path() + "/launcher-only";
  test_support::write_file(marker, "not for the check\n");
  util::Fd held(::open(marker.c_str(), O_RDONLY));
  ASSERT_TRUE(held.valid());
  ASSERT_EQ(::fcntl(held.get(), F_GETFD) & FD_CLOEXEC, 0);
  ScopedVariable leak("DLAUNCH_TEST_GATE_LEAK_FD", std::to_string(held.get()));
  run_script("exit 0");
  auto seen = recorded();
  // (The number may name something of the shell's own by then: a pipe.)
  EXPECT_NE(seen["leaked"], marker) << "descriptor " << held.get() << " reached the check";
  // ... while the secret's pipe, close-on-exec in the launcher, is handed on.
  EXPECT_TRUE(seen["secret_fd"].starts_with("pipe:")) << seen["secret_fd"];
  EXPECT_EQ(seen["secret"], "0123456789abcdef0123456789abcdef");
}

TEST_F(GateProcessTest, AFloodOnStderrNeitherStallsStdoutNorFillsMemory) {
  // 64 MiB on stderr before the line on stdout: a stderr nobody read would
  // block the check at its pipe's size and the line would never come.
  ScopedVariable body("DLAUNCH_TEST_GATE", R"SH(yes "$(printf '%0100d' 0)" | head -c 67108864 >&2
echo '{"gate":1,"rank":2}'; echo 'the last words' >&2; exit 4)SH");
  GateProcess check(message());
  long before = resident_kib();
  auto started = std::chrono::steady_clock::now();
  auto report = run(check, 20s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 15s);
  EXPECT_EQ(report.exit_code, 4);
  EXPECT_EQ(report.line, R"({"gate":1,"rank":2})");
  // Its last lines are kept, and only a bounded part of what it wrote:
  // neither the error nor this process grew with the flood.
  EXPECT_TRUE(contains(report.error, "the last words")) << report.error;
  EXPECT_LT(report.error.size(), 400u) << report.error;
  EXPECT_LT(resident_kib() - before, 24 * 1024) << "the check's stderr was kept whole";
}

TEST_F(GateProcessTest, AFailedChecksLastLinesOnStderrAreInItsError) {
  auto report = run_script(R"(echo 'Traceback (most recent call last):' >&2
echo 'RuntimeError: no CUDA device' >&2; exit 1)");
  EXPECT_EQ(report.exit_code, 1);
  EXPECT_EQ(report.line, "");
  EXPECT_EQ(report.error,
            "the gate's check exited with code 1; its stderr ended: Traceback (most recent call last): | "
            "RuntimeError: no CUDA device");
}

TEST_F(GateProcessTest, APassingChecksStderrLeavesItsErrorEmpty) {
  // Node 0 takes any launcher error for a failed check.
  auto report = run_script(R"(echo 'warning: slow link' >&2; echo '{"gate":1,"rank":2,"allreduce":true}')");
  EXPECT_EQ(report.exit_code, 0);
  EXPECT_EQ(report.line, R"({"gate":1,"rank":2,"allreduce":true})");
  EXPECT_EQ(report.error, "");
}

TEST_F(GateProcessTest, AnExecThatFailsIsReportedAsSuchWithItsReason) {
  // One variable longer than the kernel takes (MAX_ARG_STRLEN, 128 KiB):
  // the program is there and executable, and execve itself fails (E2BIG).
  ScopedVariable huge("DLAUNCH_TEST_GATE_HUGE", std::string(200 * 1024, 'x'));
  ScopedVariable record("DLAUNCH_TEST_GATE_RECORD", record_);
  try {
    GateProcess check(message());
    FAIL() << "the check started, or its failed exec went unnoticed";
  } catch (const util::SystemError& error) {
    std::string what = error.what();
    EXPECT_TRUE(contains(what, "the gate cannot execute ")) << what;
    EXPECT_TRUE(contains(what, "/dlaunch-check: ")) << what;
    EXPECT_TRUE(contains(what, std::strerror(E2BIG))) << what;
  }
  EXPECT_FALSE(std::filesystem::exists(record_)) << "the stand-in ran";
}

}  // namespace
}  // namespace dlaunch::rendezvous
