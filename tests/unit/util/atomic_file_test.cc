// Small files that others poll, written whole or not at all; and written
// only by the first of several writers (a job's result.json).
#include "util/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../test_support/temp_dir.h"
#include "../test_support/text.h"
#include "util/error.h"

namespace dlaunch::util {
namespace {

std::string read(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The names in FOLDER: a temporary left beside the file shows here.
std::set<std::string> names_in(const std::string& folder) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) names.insert(entry.path().filename());
  return names;
}

TEST(WriteFileAtomically, ReplacesTheContentWholeAndLeavesNoTemporary) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/state.json";
  write_file_atomically(path, "{\"state\": \"RUNNING\"}\n");
  EXPECT_EQ(read(path), "{\"state\": \"RUNNING\"}\n");
  write_file_atomically(path, "{}\n");
  EXPECT_EQ(read(path), "{}\n");
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"state.json"});
}

TEST(WriteFileAtomically, ALinkPlantedAtThePathIsReplacedNotWrittenThrough) {
  test_support::TempDir dir;
  const std::string target = dir.path() + "/victim";
  std::ofstream(target) << "precious";
  const std::string path = dir.path() + "/result.json";
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
  write_file_atomically(path, "new\n");
  EXPECT_EQ(read(target), "precious");
  EXPECT_FALSE(std::filesystem::is_symlink(path));
  EXPECT_EQ(read(path), "new\n");
}

TEST(WriteFileAtomically, AFolderThatDoesNotExistIsAnErrorNamingThePath) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/missing/state.json";
  try {
    write_file_atomically(path, "x");
    FAIL() << "no error";
  } catch (const SystemError& error) {
    EXPECT_TRUE(test_support::contains(error.what(), path)) << error.what();
  }
}

TEST(WriteFileIfAbsent, WritesAFileThatIsNotThereAndLeavesNoTemporary) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/result.json";
  EXPECT_TRUE(write_file_if_absent(path, "{\"exit_code\": 0}\n"));
  EXPECT_EQ(read(path), "{\"exit_code\": 0}\n");
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"result.json"});
}

// A launcher that decided alone writes its result only where no launcher
// that spoke for the job wrote one first.
TEST(WriteFileIfAbsent, LeavesAFileThatIsThereAsItIsAndSaysSo) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/result.json";
  std::ofstream(path) << "the service's verdict\n";
  EXPECT_FALSE(write_file_if_absent(path, "a lone launcher's verdict\n"));
  EXPECT_EQ(read(path), "the service's verdict\n");
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"result.json"});
}

// Launchers on several hosts race to write the one file: separate
// processes, let go at once by closing the pipe they all wait to read.
// Exactly one wins, and the file holds its content whole.
TEST(WriteFileIfAbsent, OfWritersRacingExactlyOneWins) {
  constexpr int kWriters = 8;
  test_support::TempDir dir;
  const std::string path = dir.path() + "/result.json";
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  std::vector<pid_t> writers;
  for (int writer = 0; writer < kWriters; ++writer) {
    pid_t pid = ::fork();
    if (pid < 0) break;  // the writers started so far are still let go and waited for
    if (pid == 0) {
      ::close(start[1]);
      char byte;
      ssize_t got = ::read(start[0], &byte, 1);  // returns at end of file: every writer is let go
      (void)got;
      int code = 2;
      try {
        code = write_file_if_absent(path, "writer " + std::to_string(writer) + "\n") ? 0 : 1;
      } catch (...) {
      }
      ::_exit(code);
    }
    writers.push_back(pid);
  }
  ::close(start[0]);
  ::close(start[1]);
  int won = 0, lost = 0;
  std::string winner;
  for (std::size_t writer = 0; writer < writers.size(); ++writer) {
    int status = 0;
    ASSERT_EQ(::waitpid(writers[writer], &status, 0), writers[writer]);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_NE(WEXITSTATUS(status), 2) << "writer " << writer << " failed instead of losing";
    if (WEXITSTATUS(status) == 0) {
      ++won;
      winner = "writer " + std::to_string(writer) + "\n";
    } else {
      ++lost;
    }
  }
  ASSERT_EQ(writers.size(), std::size_t{kWriters}) << "cannot fork";
  EXPECT_EQ(won, 1);
  EXPECT_EQ(lost, kWriters - 1);
  EXPECT_EQ(read(path), winner);
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"result.json"});
}

TEST(WriteFileIfAbsent, OnlyTheFirstOfSeveralAttemptsWrites) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/exit_code";
  int won = 0;
  for (int attempt = 0; attempt < 5; ++attempt)
    won += write_file_if_absent(path, std::to_string(attempt) + "\n") ? 1 : 0;
  EXPECT_EQ(won, 1);
  EXPECT_EQ(read(path), "0\n");
}

TEST(WriteFileIfAbsent, AFolderThatDoesNotExistIsAnErrorNamingThePath) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/no such folder/result.json";
  try {
    write_file_if_absent(path, "0\n");
    FAIL() << "wrote into a folder that does not exist";
  } catch (const SystemError& error) {
    EXPECT_TRUE(test_support::contains(error.what(), path));
  }
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{});
}

}  // namespace
}  // namespace dlaunch::util
