// The folder every submission gets, and the secret file in it.
#include "submit/submission_folder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "util/error.h"

namespace dlaunch::submit {
namespace {

namespace fs = std::filesystem;

class SubmissionFolder : public ::testing::Test {
 protected:
  void SetUp() override { fs::remove_all(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string read(const fs::path& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }
  fs::path dir_ = fs::path(::testing::TempDir()) / ("dlaunch_submission_" + std::to_string(::getpid()));
};

TEST(SubmissionTimestamp, IsTheLocalTimeAsYearMonthDayUnderscoreHourMinuteSecond) {
  std::tm local{};
  local.tm_year = 2026 - 1900;
  local.tm_mon = 11;
  local.tm_mday = 2;
  local.tm_hour = 17;
  local.tm_min = 45;
  local.tm_sec = 1;
  local.tm_isdst = -1;
  EXPECT_EQ(timestamp_for(std::mktime(&local)), "20261202_174501");
}

TEST_F(SubmissionFolder, AFolderPerSubmissionNumberedWithinOneSecond) {
  std::string output = (dir_ / "outputs").string();
  std::string first = create_submission_folder(output, "20261202_174501");  // creates outputs/ too
  EXPECT_EQ(first, output + "/20261202_174501");
  EXPECT_EQ(next_submission_path(output, "20261202_174501"), output + "/20261202_174501_1");
  std::string second = create_submission_folder(output, "20261202_174501");
  std::string third = create_submission_folder(output, "20261202_174501");
  EXPECT_EQ(second, output + "/20261202_174501_1");
  EXPECT_EQ(third, output + "/20261202_174501_2");
  EXPECT_EQ(next_submission_path(output, "20261202_174502"), output + "/20261202_174502");
  for (const auto& path : {first, second, third}) EXPECT_TRUE(fs::is_directory(path)) << path;
}

TEST_F(SubmissionFolder, ARelativeOutputDirGivesAnAbsolutePath) {
  fs::create_directories(dir_);
  fs::path previous = fs::current_path();
  fs::current_path(dir_);
  std::string path = create_submission_folder("slurm-outputs", "20261202_120000");
  std::string next = next_submission_path("slurm-outputs", "20261202_120000");
  fs::current_path(previous);
  EXPECT_TRUE(fs::path(path).is_absolute()) << path;
  EXPECT_EQ(fs::path(path), dir_ / "slurm-outputs/20261202_120000");
  EXPECT_EQ(fs::path(next), dir_ / "slurm-outputs/20261202_120000_1");
}

TEST_F(SubmissionFolder, AnOutputDirThatCannotBeCreatedIsNamed) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  std::string output = (dir_ / "file" / "outputs").string();
  try {
    create_submission_folder(output, "20261202_120000");
    FAIL() << "a folder below a file was created";
  } catch (const util::SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot create the output folder '" + output + "'"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(SubmissionFolder, TheSecretFileIsTheOwnersOnlyEvenUnderAPermissiveUmask) {
  fs::create_directories(dir_);
  fs::path secret = dir_ / "rdzv.token";
  mode_t previous = ::umask(0);
  write_secret_file(secret.string(), "s3cret");
  ::umask(previous);
  EXPECT_EQ(read(secret), "s3cret\n");
  struct stat info {};
  ASSERT_EQ(::stat(secret.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST_F(SubmissionFolder, TheSecretFileNeverReplacesAFileNorFollowsALink) {
  fs::create_directories(dir_);
  fs::path existing = dir_ / "existing";
  std::ofstream(existing) << "keep";
  EXPECT_THROW(write_secret_file(existing.string(), "s3cret"), util::SystemError);
  EXPECT_EQ(read(existing), "keep");

  fs::path link = dir_ / "link";
  fs::create_symlink(dir_ / "target", link);
  try {
    write_secret_file(link.string(), "s3cret");
    FAIL() << "the secret followed a link";
  } catch (const util::SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot create the secret file " + link.string()),
              std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "target"));
}

// Another user could rename a new submission folder away and put a link in
// its place, where job.sbatch and the token are written next (issue 24).
TEST_F(SubmissionFolder, AnOutputDirEveryoneMayWriteWithoutTheStickyBitIsRefused) {
  const fs::path output = dir_ / "outputs";
  fs::create_directories(output);
  ASSERT_EQ(::chmod(output.c_str(), 0777), 0);
  try {
    create_submission_folder(output.string(), "20261202_120000");
    FAIL() << "an output folder everyone may write was taken";
  } catch (const util::InputError& error) {
    EXPECT_NE(std::string(error.what()).find("the output folder '" + output.string() + "' may be written by every user"),
              std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(fs::is_empty(output));
  ASSERT_EQ(::chmod(output.c_str(), 01777), 0);
  EXPECT_NO_THROW(create_submission_folder(output.string(), "20261202_120000")) << "sticky, as /tmp";
}

TEST_F(SubmissionFolder, AnOutputDirOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  const fs::path output = dir_ / "outputs";
  fs::create_directories(output);
  ASSERT_EQ(::chown(output.c_str(), 65534, 65534), 0);
  EXPECT_THROW(create_submission_folder(output.string(), "20261202_120000"), util::InputError);
  EXPECT_TRUE(fs::is_empty(output));
}

}  // namespace
}  // namespace dlaunch::submit
