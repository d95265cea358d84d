// Calling a function in another process: the address of a symbol in a
// running executable, and CPython's stack dump made by a ptrace call into
// a pipe the worker inherited; the worker goes on afterwards.
#include "forensics/python_dump.h"

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forensics/elf_symbol.h"
#include "forensics/stack_text.h"

extern "C" [[gnu::noinline]] int dlaunch_elf_symbol_probe(int value) { return value + 1; }

namespace dlaunch::forensics {
namespace {

TEST(ElfSymbol, FindsAFunctionOfARunningExecutableWhereItIsLoaded) {
  std::string problem;
  auto address = symbol_address(::getpid(), "dlaunch_elf_symbol_probe", problem);
  ASSERT_TRUE(address) << problem;
  EXPECT_EQ(*address, reinterpret_cast<std::uintptr_t>(&dlaunch_elf_symbol_probe));
  EXPECT_FALSE(symbol_address(::getpid(), "no_such_symbol_anywhere", problem));
  EXPECT_EQ(problem, "the worker's executable has no symbol no_such_symbol_anywhere");
}

bool sleeping_with_marker(pid_t pid, const std::string& marker) {
  for (int i = 0; i < 1000; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    bool sleeping = close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'S';
    if (sleeping && ::access(marker.c_str(), F_OK) == 0) return true;
    ::usleep(10'000);
  }
  return false;
}

TEST(PythonDump, TheInterpreterWritesItsStacksAndGoesOn) {
  if (!can_inject_python_dump() || ::access("/usr/bin/python3", X_OK) != 0)
    GTEST_SKIP() << "needs x86-64 and /usr/bin/python3";
  std::string marker = ::testing::TempDir() + "dlaunch_python_dump_" + std::to_string(::getpid());
  ::unlink(marker.c_str());
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
  // Sleeps in a function of its own, then says whether it slept its full
  // time: a system call interrupted by the dump must resume.
  std::string program = "import time\ndef nap():\n    open('" + marker +
                        "', 'w').close()\n    start = time.monotonic()\n    time.sleep(1.5)\n"
                        "    return time.monotonic() - start\nraise SystemExit(0 if nap() >= 1.5 else 3)\n";
  pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    ::execl("/usr/bin/python3", "python3", "-c", program.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(fds[1]);
  ASSERT_TRUE(sleeping_with_marker(child, marker));
  std::string problem;
  auto function = symbol_address(child, "_Py_DumpTracebackThreads", problem);
  ASSERT_TRUE(function) << problem;
  EXPECT_EQ(dump_python_stacks(child, *function, fds[1], std::chrono::seconds(5)), "");
  char buffer[8192];
  ssize_t got = ::read(fds[0], buffer, sizeof(buffer));
  ASSERT_GT(got, 0);
  auto threads = parse_faulthandler(std::string(buffer, static_cast<std::size_t>(got)));
  ASSERT_EQ(threads.size(), 1u);
  ASSERT_EQ(threads[0].frames.size(), 2u);
  EXPECT_EQ(threads[0].frames[1].function, "nap");
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the worker's sleep did not resume after the dump";
  ::close(fds[0]);
  ::unlink(marker.c_str());
}

TEST(PythonDump, AProcessThatIsGoneIsSaidSo) {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_NE(dump_python_stacks(child, 0x1000, 3, std::chrono::milliseconds(100)), "");
}

}  // namespace
}  // namespace dlaunch::forensics
