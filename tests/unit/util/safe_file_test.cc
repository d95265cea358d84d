// Files dlaunch writes are never written through what someone planted at
// their names: a symbolic link, a FIFO, a hard link of another file; and
// temporary names cannot be guessed ahead.
#include "util/safe_file.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "../test_support/temp_dir.h"
#include "../test_support/text.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace dlaunch::util {
namespace {

std::string read(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// A file a root run must never change, and a link to it at PATH.
struct PlantedLink {
  std::string victim;
  std::string link;
  PlantedLink(const std::string& folder, const std::string& link_path) : victim(folder + "/victim"), link(link_path) {
    std::ofstream(victim) << "precious\n";
    std::filesystem::create_symlink(victim, link);
  }
  bool victim_untouched() const { return read(victim) == "precious\n"; }
  bool still_a_link() const { return std::filesystem::is_symlink(link); }
};

TEST(CreateNewFile, CreatesAFileThatIsNotThere) {
  test_support::TempDir dir;
  OpenedFile opened = create_new_file(dir.path() + "/job.sbatch", 0644);
  ASSERT_TRUE(opened.file) << opened.reason();
  EXPECT_TRUE(write_all(opened.file.get(), "#!/bin/bash\n"));
  EXPECT_EQ(read(dir.path() + "/job.sbatch"), "#!/bin/bash\n");
}

TEST(CreateNewFile, RefusesALinkAndLeavesItsTargetAlone) {
  test_support::TempDir dir;
  PlantedLink planted(dir.path(), dir.path() + "/config.json");
  OpenedFile opened = create_new_file(planted.link, 0644);
  EXPECT_FALSE(opened.file);
  EXPECT_TRUE(test_support::contains(opened.reason(), "symbolic link"));
  EXPECT_TRUE(planted.victim_untouched());
  EXPECT_TRUE(planted.still_a_link());
}

TEST(CreateNewFile, RefusesADanglingLinkToo) {
  test_support::TempDir dir;
  const std::string link = dir.path() + "/rdzv.token";
  std::filesystem::create_symlink(dir.path() + "/not yet there", link);
  EXPECT_FALSE(create_new_file(link, 0600).file);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/not yet there"));
}

TEST(OpenFileToRewrite, CreatesANewFile) {
  test_support::TempDir dir;
  OpenedFile opened = open_file_to_rewrite(dir.path() + "/stdout.log", 0644, O_NONBLOCK);
  ASSERT_TRUE(opened.file) << opened.reason();
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path() + "/stdout.log"));
}

// A reused --log-dir: the earlier run's log is this user's, and starts over.
TEST(OpenFileToRewrite, EmptiesAnEarlierLogOfOurs) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/stdout.log";
  std::ofstream(path) << "the earlier run\n";
  OpenedFile opened = open_file_to_rewrite(path, 0644);
  ASSERT_TRUE(opened.file) << opened.reason();
  EXPECT_TRUE(write_all(opened.file.get(), "this run\n"));
  EXPECT_EQ(read(path), "this run\n");
}

TEST(OpenFileToRewrite, RefusesALinkAndLeavesItsTargetAlone) {
  test_support::TempDir dir;
  PlantedLink planted(dir.path(), dir.path() + "/stdout.log");
  OpenedFile opened = open_file_to_rewrite(planted.link, 0644, O_NONBLOCK);
  EXPECT_FALSE(opened.file);
  EXPECT_TRUE(test_support::contains(opened.reason(), "it is a symbolic link, and dlaunch never writes through one"));
  EXPECT_TRUE(planted.victim_untouched());
  EXPECT_TRUE(planted.still_a_link());
}

TEST(OpenFileToRewrite, RefusesAHardLinkOfAnotherFile) {
  test_support::TempDir dir;
  const std::string victim = dir.path() + "/victim";
  std::ofstream(victim) << "precious\n";
  ASSERT_EQ(::link(victim.c_str(), (dir.path() + "/stdout.times").c_str()), 0);
  OpenedFile opened = open_file_to_rewrite(dir.path() + "/stdout.times", 0644);
  EXPECT_FALSE(opened.file);
  EXPECT_TRUE(test_support::contains(opened.reason(), "hard links"));
  EXPECT_EQ(read(victim), "precious\n");
}

// Without a reader, opening a FIFO for writing would wait for ever (or
// fail); with one, the log would go to whoever reads it.
TEST(OpenFileToRewrite, RefusesAFifoWithoutWaitingForAReader) {
  test_support::TempDir dir;
  const std::string fifo = dir.path() + "/stderr.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  OpenedFile opened = open_file_to_rewrite(fifo, 0644);
  EXPECT_FALSE(opened.file);
  EXPECT_TRUE(test_support::contains(opened.reason(), "not a regular file"));
}

TEST(OpenFileToRewrite, RefusesAFileOfAnotherUserWhenRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  test_support::TempDir dir;
  const std::string path = dir.path() + "/stdout.log";
  std::ofstream(path) << "nobody's\n";
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  OpenedFile opened = open_file_to_rewrite(path, 0644);
  EXPECT_FALSE(opened.file);
  EXPECT_TRUE(test_support::contains(opened.reason(), "belongs to another user (uid 65534)"));
  EXPECT_EQ(read(path), "nobody's\n");
}

TEST(WriteNewFile, ThrowsNamingTheFileWhenALinkIsThere) {
  test_support::TempDir dir;
  PlantedLink planted(dir.path(), dir.path() + "/job_id");
  try {
    write_new_file(planted.link, "42\n");
    FAIL() << "wrote through a link";
  } catch (const SystemError& error) {
    EXPECT_TRUE(test_support::contains(error.what(), planted.link));
    EXPECT_TRUE(test_support::contains(error.what(), "symbolic link"));
  }
  EXPECT_TRUE(planted.victim_untouched());
}

// 16 random hex digits and nothing else after the name (no pid, host or
// counter, which made the old names guessable), and no two alike.
TEST(CreateTemporaryBeside, NamesAreRandomAndNeverCollide) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/rendezvous.json";
  const std::regex shape(std::regex_replace(path, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                         R"(\.[0-9a-f]{16}\.tmp)");
  std::set<std::string> names;
  for (int made = 0; made < 200; ++made) {
    TemporaryFile temporary = create_temporary_beside(path);
    EXPECT_TRUE(std::regex_match(temporary.path, shape)) << temporary.path;
    names.insert(temporary.path);
  }
  EXPECT_EQ(names.size(), 200u);
}

// The attack of the issue: links at the names the old temporaries had
// ("X.<host>.<pid>.<n>.tmp") and at the file itself.
TEST(WriteFileAtomically, NeitherALinkAtTheFileNorAtOldTemporaryNamesIsWrittenThrough) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/node0.json";
  PlantedLink at_file(dir.path(), path);
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  const std::string guessed = path + "." + host + "." + std::to_string(::getpid()) + ".0.tmp";
  std::filesystem::create_symlink(at_file.victim, guessed);
  write_file_atomically(path, "{\"node_rank\": 0}\n");
  EXPECT_TRUE(at_file.victim_untouched());
  EXPECT_FALSE(std::filesystem::is_symlink(path)) << "the link is replaced, not followed";
  EXPECT_EQ(read(path), "{\"node_rank\": 0}\n");
  EXPECT_TRUE(std::filesystem::is_symlink(guessed));
}

TEST(WriteFileIfAbsent, ALinkAtTheFileCountsAsTakenAndIsNotFollowed) {
  test_support::TempDir dir;
  PlantedLink planted(dir.path(), dir.path() + "/exit_code");
  EXPECT_FALSE(write_file_if_absent(planted.link, "0\n"));
  EXPECT_TRUE(planted.victim_untouched());
}

}  // namespace
}  // namespace dlaunch::util
