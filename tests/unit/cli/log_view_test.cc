// `dlaunch logs` showing and following rank logs, against files that grow
// between the follower's looks: the world it asks (has the job ended? a
// pause) is a script here, so no Slurm and no clock are needed.
#include "cli/log_view.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

#include "../test_support/temp_dir.h"
#include "util/error.h"

namespace dlaunch::cli {
namespace {

namespace fs = std::filesystem;

// What a LinePrinter wrote, read back from a memory stream.
class Captured {
 public:
  Captured() : file_(::open_memstream(&data_, &size_)) {}
  ~Captured() {
    std::fclose(file_);
    std::free(data_);
  }
  Captured(const Captured&) = delete;
  Captured& operator=(const Captured&) = delete;
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(data_, size_);
  }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
};

// A job's submission folder whose rank logs the test writes piece by piece.
class LogFollow : public ::testing::Test {
 protected:
  std::string log_of(int rank, int attempt = 0) const {
    return dir_.path() + "/logs/attempt_" + std::to_string(attempt) + "/rank" + std::to_string(rank) + "/stdout.log";
  }
  void append(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::app) << text;
  }

  // A world in which each pause runs the next of STEPS (the job writing),
  // and the job is over once every step ran. A follower that never stops
  // fails the test instead of hanging it.
  FollowWorld scripted(std::vector<std::function<void()>> steps) {
    steps_ = std::move(steps);
    return {[this] { return next_step_ >= steps_.size(); },
            [this](std::chrono::milliseconds) {
              ++pauses_;
              if (pauses_ > 1000) throw std::runtime_error("the follower did not stop after the job ended");
              if (next_step_ < steps_.size()) steps_[next_step_++]();
            }};
  }
  // Asks whether the job ended at every look, so each step is one look.
  static FollowPace every_look() { return {std::chrono::milliseconds(0), 1}; }

  test_support::TempDir dir_;
  std::vector<std::function<void()>> steps_;
  std::size_t next_step_ = 0;
  int pauses_ = 0;
};

TEST_F(LogFollow, LinesOfAGrowingFileComeOutWholeAndInOrder) {
  append(log_of(0), "one\n");
  Captured out;
  LinePrinter printer(".", -1, out.file());  // under --grep a line shows only once it is whole
  std::vector<std::string> seen;
  follow_logs(dir_.path(), {}, printer,
              scripted({[&] { append(log_of(0), "tw"); },
                        [&] { seen.push_back(out.text()); append(log_of(0), "o\nthr"); },
                        [&] { seen.push_back(out.text()); append(log_of(0), "ee\nfour\n"); },
                        [&] { seen.push_back(out.text()); }}),
              every_look());
  EXPECT_EQ(seen, (std::vector<std::string>{"one\n", "one\ntwo\n", "one\ntwo\nthree\nfour\n"}));
  EXPECT_EQ(out.text(), "one\ntwo\nthree\nfour\n");
}

TEST_F(LogFollow, TwoRanksAreMergedWithTheirPrefixes) {
  append(log_of(0), "a0\n");
  append(log_of(1), "a1\n");
  Captured out;
  LinePrinter printer("", -1, out.file());
  follow_logs(dir_.path(), {}, printer, scripted({[&] { append(log_of(1), "b1\n"); }}), every_look());
  EXPECT_EQ(out.text(), "[rank0]:a0\n[rank1]:a1\n[rank1]:b1\n");
}

TEST_F(LogFollow, ItEndsWhenTheJobEndsWithTheUnfinishedLastLine) {
  append(log_of(0), "start\n");
  Captured out;
  LinePrinter printer(".", -1, out.file());
  follow_logs(dir_.path(), {}, printer, scripted({[&] { append(log_of(0), "no newline at the end"); }}),
              every_look());
  EXPECT_EQ(out.text(), "start\nno newline at the end\n");
  EXPECT_EQ(pauses_, 1);  // one look after the job wrote, and it saw the end
}

TEST_F(LogFollow, ItAsksWhetherTheJobEndedOnlyEveryFewLooks) {
  append(log_of(0), "x\n");
  Captured out;
  LinePrinter printer("", -1, out.file());
  int asked = 0;
  FollowWorld world{[&] { return ++asked > 2; }, [&](std::chrono::milliseconds) { ++pauses_; }};
  follow_logs(dir_.path(), {}, printer, world, {std::chrono::milliseconds(0), 4});
  EXPECT_EQ(asked, 3);  // at the start, then at looks 4 and 8
  EXPECT_EQ(pauses_, 8);
}

TEST_F(LogFollow, APendingJobsLogsAreWaitedFor) {
  Captured out;
  LinePrinter printer("", -1, out.file());
  follow_logs(dir_.path(), {}, printer,
              scripted({[] {}, [&] { append(log_of(0), "started\n"); }, [&] { append(log_of(0), "done\n"); }}),
              every_look());
  EXPECT_EQ(out.text(), "started\ndone\n");
}

TEST_F(LogFollow, AJobThatEndedWithoutLogsIsAnError) {
  Captured out;
  LinePrinter printer("", -1, out.file());
  EXPECT_THROW(follow_logs(dir_.path(), {}, printer, scripted({}), every_look()), util::InputError);
}

TEST_F(LogFollow, ARestartSwitchesToTheNewAttemptAfterTheOldOnesEnd) {
  append(log_of(0), "first try\n");
  Captured out;
  LinePrinter printer("", -1, out.file());
  follow_logs(dir_.path(), {}, printer,
              scripted({[&] {
                          append(log_of(0), "crash");
                          append(log_of(0, 1), "second try\n");
                        },
                        [&] { append(log_of(0, 1), "done\n"); }}),
              every_look());
  EXPECT_EQ(out.text(), "first try\ncrash\nsecond try\ndone\n");
}

TEST_F(LogFollow, AChosenAttemptIsFollowedThroughARestart) {
  append(log_of(0), "first try\n");
  Captured out;
  LinePrinter printer("", -1, out.file());
  jobs::LogChoice choice;
  choice.attempt = 0;
  follow_logs(dir_.path(), choice, printer,
              scripted({[&] { append(log_of(0, 1), "second try\n"); }, [&] { append(log_of(0), "late\n"); }}),
              every_look());
  EXPECT_EQ(out.text(), "first try\nlate\n");
}

TEST_F(LogFollow, ShowingOnceTakesTheFilesAsTheyAre) {
  append(log_of(0), "one\ntwo");
  Captured out;
  LinePrinter printer("", -1, out.file());
  show_logs(dir_.path(), {}, printer);
  EXPECT_EQ(out.text(), "one\ntwo\n");
}

}  // namespace
}  // namespace dlaunch::cli
