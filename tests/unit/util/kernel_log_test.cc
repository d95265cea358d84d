// The kernel log reader: a /dev/kmsg record's message, and reading only
// what came after the opening, from a plain file standing in for the log
// (/dev/kmsg itself needs root where kernel.dmesg_restrict is 1).
#include "util/kernel_log.h"

#include <gtest/gtest.h>

#include <fstream>

#include "../test_support/files.h"
#include "../test_support/temp_dir.h"

namespace dlaunch::util {
namespace {

TEST(KernelLog, TheMessageOfARecord) {
  EXPECT_EQ(kernel_message("4,1033,96422811,-;NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
                           " SUBSYSTEM=pci\n"),
            "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
  EXPECT_EQ(kernel_message("6,2,0,c;continued"), "continued");
  EXPECT_EQ(kernel_message("a plain line; with a semicolon"), "a plain line; with a semicolon");
  EXPECT_EQ(kernel_message(""), "");
}

TEST(KernelLog, ReadsOnlyWhatCameAfterItWasOpened) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/kmsg";
  test_support::write_file(path, "6,1,10,-;before the launcher\n");
  KernelLog log(path);
  EXPECT_TRUE(log.error().empty());
  EXPECT_TRUE(log.read_new().empty());
  std::ofstream(path, std::ios::app) << "4,2,20,-;NVRM: Xid (PCI:0000:3b:00): 48, DBE\n SUBSYSTEM=pci\n6,3,30,-;half";
  EXPECT_EQ(log.read_new(), (std::vector<std::string>{"NVRM: Xid (PCI:0000:3b:00): 48, DBE"}));
  std::ofstream(path, std::ios::app) << " a line\n";
  EXPECT_EQ(log.read_new(), (std::vector<std::string>{"half a line"}));
  EXPECT_TRUE(log.read_new().empty());
}

TEST(KernelLog, ALogThatCannotBeOpenedSaysWhy) {
  KernelLog log("/nonexistent/kmsg");
  EXPECT_NE(log.error().find("/nonexistent/kmsg: No such file"), std::string::npos) << log.error();
  EXPECT_TRUE(log.read_new().empty());
}

}  // namespace
}  // namespace dlaunch::util
