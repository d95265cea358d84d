// Starting a worker: the program found as exec would find it, argv and the
// given environment (and nothing else) reaching it, a process group of its
// own, stdout and stderr on separate pipes, stdin from the caller or
// /dev/null, an exec failure reported with its errno, the open-file limit
// the launcher started with, and SIGKILL when the launcher dies.
#include "process/worker_process.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../test_support/temp_dir.h"
#include "../test_support/text.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/fd.h"
#include "util/open_file_limit.h"

namespace dlaunch::process {
namespace {

using test_support::contains;

// Everything FD yields until end-of-file.
std::string read_all(int fd) {
  std::string all;
  char buffer[4096];
  ssize_t got;
  while ((got = util::read_retrying(fd, buffer, sizeof(buffer))) > 0)
    all.append(buffer, static_cast<std::size_t>(got));
  return all;
}

// Reaps PID and returns its wait status.
int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// What a worker printed on stdout and how it ended, once it has.
struct Finished {
  std::string out;
  std::string err;
  int status = 0;
};

Finished finish(StartedWorker& worker) {
  Finished finished;
  finished.out = read_all(worker.stdout_pipe.get());
  finished.err = read_all(worker.stderr_pipe.get());
  finished.status = reap(worker.pid);
  return finished;
}

// A folder of its own under the test's temporary folder, removed afterwards.
class TempFolder : public test_support::TempDir {
 public:
  // Writes NAME with CONTENT and MODE; returns its path.
  std::string file(const std::string& name, const std::string& content, mode_t mode) const {
    std::string file_path = path() + "/" + name;
    std::ofstream(file_path) << content;
    ::chmod(file_path.c_str(), mode);
    return file_path;
  }
};

TEST(WorkerProcess, ArgvAndOnlyTheGivenEnvironmentReachTheProgram) {
  util::Environment environment({{"ALPHA", "1"}, {"BETA", "two words"}});
  StartedWorker worker = start_worker({"/usr/bin/env"}, environment);
  EXPECT_EQ(worker.path, "/usr/bin/env");
  ASSERT_EQ(confirm_exec(worker).error, 0);
  Finished finished = finish(worker);
  // The launcher's own variables (PATH, HOME) are not passed on behind its back.
  EXPECT_EQ(finished.out, "ALPHA=1\nBETA=two words\n");
  EXPECT_TRUE(WIFEXITED(finished.status));
  EXPECT_EQ(WEXITSTATUS(finished.status), 0);

  StartedWorker shell = start_worker({"/bin/sh", "-c", "printf '%s|%s|%s' \"$0\" \"$1\" \"$2\"", "zero",
                                      "one arg", ""},
                                     environment);
  ASSERT_EQ(confirm_exec(shell).error, 0);
  EXPECT_EQ(finish(shell).out, "zero|one arg|");
}

TEST(WorkerProcess, StdoutAndStderrArriveOnTheirOwnPipes) {
  StartedWorker worker = start_worker({"/bin/sh", "-c", "echo to-out; echo to-err >&2; exit 3"},
                                      util::Environment::from_process());
  ASSERT_EQ(confirm_exec(worker).error, 0);
  Finished finished = finish(worker);
  EXPECT_EQ(finished.out, "to-out\n");
  EXPECT_EQ(finished.err, "to-err\n");
  ASSERT_TRUE(WIFEXITED(finished.status));
  EXPECT_EQ(WEXITSTATUS(finished.status), 3);
}

TEST(WorkerProcess, TheWorkerLeadsAProcessGroupOfItsOwn) {
  // Stdin from a pipe the test holds, so the worker waits until told.
  util::Pipe input = util::make_pipe();
  StartedWorker worker = start_worker({"/bin/sh", "-c", "read line; echo \"$line\""},
                                      util::Environment::from_process(), input.read_end.get());
  ASSERT_EQ(confirm_exec(worker).error, 0);
  // setpgid happens in the parent too, so the group exists when start_worker returns.
  EXPECT_EQ(::getpgid(worker.pid), worker.pid);
  EXPECT_NE(::getpgid(worker.pid), ::getpgrp());
  ASSERT_TRUE(util::write_all(input.write_end.get(), "go\n"));
  Finished finished = finish(worker);
  EXPECT_EQ(finished.out, "go\n");
}

TEST(WorkerProcess, StdinIsTheGivenDescriptor) {
  util::Pipe input = util::make_pipe();
  StartedWorker worker =
      start_worker({"/bin/cat"}, util::Environment::from_process(), input.read_end.get());
  ASSERT_EQ(confirm_exec(worker).error, 0);
  ASSERT_TRUE(util::write_all(input.write_end.get(), "through the pipe\n"));
  input.write_end.reset();  // cat ends at end-of-file
  Finished finished = finish(worker);
  EXPECT_EQ(finished.out, "through the pipe\n");
  EXPECT_TRUE(WIFEXITED(finished.status));
}

TEST(WorkerProcess, StdinIsDevNullWhenNoneIsGiven) {
  StartedWorker worker = start_worker({"/bin/sh", "-c", "readlink /proc/self/fd/0; cat; echo end"},
                                      util::Environment::from_process());
  ASSERT_EQ(confirm_exec(worker).error, 0);
  // cat ends at once: the launcher's own stdin (a terminal, a session) is not shared.
  EXPECT_EQ(finish(worker).out, "/dev/null\nend\n");
}

// The program holds stdin, stdout and stderr and nothing else, as under
// torchrun: not a descriptor the launcher inherited without close-on-exec
// (here one the test opens so), nor a stray /dev/null.
TEST(WorkerProcess, TheProgramGetsOnlyItsThreeStandardDescriptors) {
  util::Fd inherited(::open("/dev/null", O_RDONLY));  // no O_CLOEXEC, like a shell's
  ASSERT_TRUE(inherited);
  StartedWorker worker = start_worker({"/bin/ls", "/proc/self/fd"}, util::Environment::from_process());
  ASSERT_EQ(confirm_exec(worker).error, 0);
  // 3 is ls's own handle on the folder it lists.
  EXPECT_EQ(finish(worker).out, "0\n1\n2\n3\n");
}

TEST(WorkerProcess, AnExecFailureIsReportedWithItsErrno) {
  TempFolder folder;
  // Executable, but neither a binary nor a script with #!: execve says ENOEXEC.
  std::string not_a_program = folder.file("not-a-program", "just text\n", 0755);
  StartedWorker worker = start_worker({not_a_program}, util::Environment::from_process());
  EXPECT_EQ(worker.path, not_a_program);
  ExecResult result = confirm_exec(worker);
  EXPECT_EQ(result.error, ENOEXEC);
  EXPECT_FALSE(result.joining_cgroup);
  EXPECT_FALSE(worker.exec_status.valid());
  Finished finished = finish(worker);
  EXPECT_EQ(finished.out, "");
  ASSERT_TRUE(WIFEXITED(finished.status));
  EXPECT_EQ(WEXITSTATUS(finished.status), 127);
}

TEST(WorkerProcess, ACgroupThatCannotBeJoinedIsReportedAsTheCgroups) {
  // A descriptor the child cannot write "0" to stands in for a cgroup.procs
  // the kernel refuses: the read end of a pipe fails with EBADF.
  util::Pipe not_writable = util::make_pipe();
  StartedWorker worker = start_worker({"/bin/true"}, util::Environment::from_process(), -1,
                                      not_writable.read_end.get());
  ExecResult result = confirm_exec(worker);
  EXPECT_EQ(result.error, EBADF);
  EXPECT_TRUE(result.joining_cgroup);
  int status = reap(worker.pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 127);
}

TEST(WorkerProcess, AProgramThatIsNotFoundThrowsNamingIt) {
  util::Environment environment(
      std::map<std::string, std::string>{{"PATH", "/nonexistent-dlaunch-folder"}});
  try {
    start_worker({"dlaunch-no-such-program"}, environment);
    FAIL() << "no SystemError";
  } catch (const util::SystemError& error) {
    EXPECT_TRUE(contains(error.what(), "'dlaunch-no-such-program' is not an executable file in PATH"));
  }
  try {
    start_worker({"/nonexistent-dlaunch-folder/program"}, environment);
    FAIL() << "no SystemError";
  } catch (const util::SystemError& error) {
    std::string message = error.what();
    EXPECT_TRUE(contains(message, "'/nonexistent-dlaunch-folder/program' is not an executable file"));
    EXPECT_FALSE(contains(message, "in PATH"));
  }
}

TEST(WorkerProcess, FindExecutableSearchesTheWorkersPath) {
  TempFolder first;
  TempFolder second;
  first.file("dlaunch-tool", "#!/bin/sh\n", 0644);  // not executable: skipped
  std::filesystem::create_directory(second.path() + "/dlaunch-dir");  // a folder: skipped
  std::string tool = second.file("dlaunch-tool", "#!/bin/sh\n", 0755);
  util::Environment environment(std::map<std::string, std::string>{
      {"PATH", "/nonexistent-dlaunch-folder:" + first.path() + ":" + second.path()}});
  EXPECT_EQ(find_executable("dlaunch-tool", environment), tool);
  EXPECT_EQ(find_executable("dlaunch-dir", environment), std::nullopt);
  EXPECT_EQ(find_executable("dlaunch-missing", environment), std::nullopt);
  // Not the launcher's own PATH: the environment the worker will see.
  util::Environment first_only(std::map<std::string, std::string>{{"PATH", first.path()}});
  EXPECT_EQ(find_executable("dlaunch-tool", first_only), std::nullopt);
  // A name with a '/' is taken as it is.
  EXPECT_EQ(find_executable(tool, util::Environment()), tool);
  EXPECT_EQ(find_executable(first.path() + "/dlaunch-tool", environment), std::nullopt);
}

TEST(WorkerProcess, WithoutPathTheDefaultFoldersAreSearched) {
  auto found = find_executable("sh", util::Environment());
  ASSERT_TRUE(found.has_value());
  EXPECT_TRUE(*found == "/usr/local/bin/sh" || *found == "/usr/bin/sh" || *found == "/bin/sh") << *found;
}

// Runs in a fresh process (the limit once raised stays raised, and which
// limit counts as the original is decided by the first raise).
TEST(WorkerProcessDeathTest, TheWorkerGetsTheOpenFileLimitTheLauncherStartedWith) {
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < 512)
    GTEST_SKIP() << "the hard open-file limit (" << limit.rlim_max << ") leaves no room to raise";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        rlimit lowered = limit;
        lowered.rlim_cur = 256;
        if (::setrlimit(RLIMIT_NOFILE, &lowered) != 0) std::_Exit(10);
        if (util::raise_open_file_limit(512) != 512) std::_Exit(11);
        StartedWorker worker =
            start_worker({"/bin/sh", "-c", "ulimit -n"}, util::Environment::from_process());
        if (confirm_exec(worker).error != 0) std::_Exit(12);
        std::string out = read_all(worker.stdout_pipe.get());
        reap(worker.pid);
        std::_Exit(out == "256\n" ? 0 : 13);
      },
      ::testing::ExitedWithCode(0), "");
}

// PR_SET_PDEATHSIG: a launcher killed outright takes its workers with it.
TEST(WorkerProcessDeathTest, TheWorkerIsKilledWhenTheLauncherDies) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // The orphaned worker becomes this process's child, so it can be reaped here.
        if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) std::_Exit(10);
        util::Pipe report = util::make_pipe();
        pid_t launcher = ::fork();
        if (launcher == 0) {
          StartedWorker worker =
              start_worker({"/bin/sh", "-c", "exec sleep 30"}, util::Environment::from_process());
          if (confirm_exec(worker).error != 0) std::_Exit(1);
          util::write_all(report.write_end.get(), std::string_view(reinterpret_cast<const char*>(&worker.pid),
                                                                   sizeof(worker.pid)));
          ::kill(::getpid(), SIGKILL);
        }
        report.write_end.reset();
        pid_t worker = 0;
        if (util::read_retrying(report.read_end.get(), &worker, sizeof(worker)) !=
            static_cast<ssize_t>(sizeof(worker)))
          std::_Exit(11);
        reap(launcher);
        int status = reap(worker);
        std::_Exit(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : 12);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace dlaunch::process
