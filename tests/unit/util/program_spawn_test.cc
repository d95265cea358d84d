// The hygiene every helper program gets from spawn_program, whatever the
// caller (a launcher that blocks and ignores signals for its signalfd).
#include "util/program_spawn.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include "util/fd.h"

namespace dlaunch::util {
namespace {

ProgramSpawn program(std::vector<std::string> argv) {
  ProgramSpawn request;
  request.argv = std::move(argv);
  return request;
}

// What ARGV, spawned with REQUEST's other fields, writes to its stdout.
std::string output_of(ProgramSpawn request) {
  Pipe out = make_pipe();
  request.stdout_fd = out.write_end.get();
  SpawnedProgram spawned = spawn_program(request);
  EXPECT_EQ(spawned.error, 0);
  out.write_end.reset();
  std::string text;
  char buffer[4096];
  ssize_t got;
  while ((got = read_retrying(out.read_end.get(), buffer, sizeof buffer)) > 0) text.append(buffer, got);
  int status = 0;
  ::waitpid(spawned.pid, &status, 0);
  return text;
}

std::string status_field(const std::string& status, const std::string& name) {
  auto at = status.find(name + ":");
  if (at == std::string::npos) return "";
  auto end = status.find('\n', at);
  std::string value = status.substr(at + name.size() + 1, end - at - name.size() - 1);
  return value.substr(value.find_first_not_of(" \t"));
}

// Blocks SIGUSR1 and ignores SIGUSR2 while it lives, as a launcher would.
class CallerSignals {
 public:
  CallerSignals() {
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    ::sigprocmask(SIG_BLOCK, &usr1, &saved_mask_);
    saved_usr2_ = ::signal(SIGUSR2, SIG_IGN);
  }
  ~CallerSignals() {
    ::signal(SIGUSR2, saved_usr2_);
    ::sigprocmask(SIG_SETMASK, &saved_mask_, nullptr);
  }

 private:
  sigset_t saved_mask_;
  sighandler_t saved_usr2_;
};

TEST(ProgramSpawn, TheProgramGetsNoBlockedOrIgnoredSignalOfTheCaller) {
  CallerSignals caller;
  std::string status = output_of(program({"/bin/cat", "/proc/self/status"}));
  // Signals 32 and 33 are glibc's own (thread cancellation, setxid): its
  // posix_spawn ignores them in the child, and the program's libc sets
  // them up again, so only the caller's signals are looked at.
  const auto blocked = std::stoull(status_field(status, "SigBlk"), nullptr, 16);
  const auto ignored = std::stoull(status_field(status, "SigIgn"), nullptr, 16);
  const unsigned long long kCallers = (1ULL << (SIGUSR1 - 1)) | (1ULL << (SIGUSR2 - 1)) | 0x7fffffffULL;  // signals 1-31
  EXPECT_EQ(blocked & kCallers, 0u) << status;
  EXPECT_EQ(ignored & kCallers, 0u) << status;
}

TEST(ProgramSpawn, StdinIsDevNullUnlessInherited) {
  EXPECT_EQ(output_of(program({"readlink", "/proc/self/fd/0"})), "/dev/null\n");
  // Our stdin a pipe for a moment (under ctest it may be /dev/null itself).
  Pipe in = make_pipe();
  Fd saved(::dup(STDIN_FILENO));
  ASSERT_GE(saved.get(), 0);
  ::dup2(in.read_end.get(), STDIN_FILENO);
  ProgramSpawn inheriting = program({"readlink", "/proc/self/fd/0"});
  inheriting.inherit_stdin = true;
  std::string inherited = output_of(inheriting);
  ::dup2(saved.get(), STDIN_FILENO);
  EXPECT_EQ(inherited.rfind("pipe:", 0), 0u) << inherited;
}

TEST(ProgramSpawn, TheEnvironmentGivenIsAllItSees) {
  ProgramSpawn request = program({"/usr/bin/env"});
  request.environment = std::vector<std::string>{"ONLY=this"};
  EXPECT_EQ(output_of(request), "ONLY=this\n");
}

TEST(ProgramSpawn, AnOwnProcessGroupWhenAsked) {
  ProgramSpawn request = program({"sleep", "30"});
  request.own_process_group = true;
  SpawnedProgram spawned = spawn_program(request);
  ASSERT_EQ(spawned.error, 0);
  EXPECT_EQ(::getpgid(spawned.pid), spawned.pid);
  ::kill(-spawned.pid, SIGKILL);
  ::waitpid(spawned.pid, nullptr, 0);
  SpawnedProgram same_group = spawn_program(program({"sleep", "30"}));
  ASSERT_EQ(same_group.error, 0);
  EXPECT_EQ(::getpgid(same_group.pid), ::getpgrp());
  ::kill(same_group.pid, SIGKILL);
  ::waitpid(same_group.pid, nullptr, 0);
}

TEST(ProgramSpawn, AProgramThatCannotStartGivesItsErrno) {
  SpawnedProgram missing = spawn_program(program({"dlaunch-no-such-program-anywhere"}));
  EXPECT_EQ(missing.error, ENOENT);
  EXPECT_EQ(missing.pid, -1);
  EXPECT_EQ(spawn_program(ProgramSpawn{}).error, EINVAL);
}

}  // namespace
}  // namespace dlaunch::util
