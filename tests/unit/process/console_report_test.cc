// The line that takes the place of lines a stalled console dropped: it says
// where they can still be read.
#include "process/console_report.h"

#include <gtest/gtest.h>

#include <string>

namespace dlaunch::process {
namespace {

util::ConsoleDrops drops(std::uint64_t filed, std::uint64_t unfiled) {
  util::ConsoleDrops counted;
  counted.filed = filed;
  counted.unfiled = unfiled;
  return counted;
}

TEST(ConsoleReport, EveryDroppedLineWasFiled) {
  EXPECT_EQ(console_drop_notice(drops(12, 0), "/runs/logs", true),
            "dlaunch: console stalled, 12 lines dropped; the --log-dir files have them\n");
  EXPECT_EQ(console_drop_notice(drops(12, 0), "/tmp/dlaunch_x", false),
            "dlaunch: console stalled, 12 lines dropped; the log files in /tmp/dlaunch_x have them\n");
}

TEST(ConsoleReport, NoDroppedLineWasFiled) {
  EXPECT_EQ(console_drop_notice(drops(0, 5), "/runs/logs", true),
            "dlaunch: console stalled, 5 lines dropped; no log file has them\n");
  EXPECT_EQ(console_drop_notice(drops(0, 5), "/tmp/dlaunch_x", false),
            "dlaunch: console stalled, 5 lines dropped; they were not filed: pass --log-dir to keep "
            "every line\n");
}

TEST(ConsoleReport, SomeDroppedLinesWereFiled) {
  EXPECT_EQ(console_drop_notice(drops(3, 4), "/runs/logs", true),
            "dlaunch: console stalled, 7 lines dropped; 3 of them are in the --log-dir files, 4 "
            "were not filed\n");
  EXPECT_EQ(console_drop_notice(drops(3, 4), "/tmp/dlaunch_x", false),
            "dlaunch: console stalled, 7 lines dropped; 3 of them are in the log files in "
            "/tmp/dlaunch_x, 4 were not filed: pass --log-dir to keep every line\n");
}

}  // namespace
}  // namespace dlaunch::process
