// dlaunch ssh reading the files its user names (--hostfile, --env-file):
// what is not a regular file, or is too big, is refused at once with the
// path and what was expected; a link the user made is followed. Every case
// stops before a host is contacted.
#include "cli/ssh_command.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "../test_support/input_error.h"
#include "../test_support/temp_dir.h"

namespace dlaunch::cli {
namespace {

std::string ssh_error(const CommandArgs& args) {
  return test_support::input_error_of([&] { (void)ssh_command(args); });
}

// Issue 24: a FIFO given as --hostfile made dlaunch ssh wait in open()
// forever for a writer.
TEST(SshCommand, AFifoAsHostfileIsRefusedNotWaitedOn) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/hosts";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::string error = ssh_error({"--hostfile", path, "--", "true"});
  EXPECT_NE(error.find(path + " is a FIFO, where dlaunch expects a hostfile (a regular file)"), std::string::npos)
      << error;
  EXPECT_NE(error.find("Remove it or put the right file there"), std::string::npos) << error;
}

TEST(SshCommand, AnOversizedHostfileIsRefusedUnread) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/hosts";
  std::ofstream(path) << std::string((1 << 20) + 1, '#');
  std::string error = ssh_error({"--hostfile", path, "--", "true"});
  EXPECT_NE(error.find(path + " is larger than 1 MiB, more than a hostfile ever is"), std::string::npos) << error;
}

TEST(SshCommand, AMissingHostfileIsNamed) {
  test_support::TempDir dir;
  std::string error = ssh_error({"--hostfile", dir.path() + "/none", "--", "true"});
  EXPECT_NE(error.find("--hostfile " + dir.path() + "/none: there is no such file; give the path of a hostfile"),
            std::string::npos)
      << error;
}

// The user's own link is followed: the hosts are read through it (the
// selection below then refuses a host it lacks, before any is contacted).
TEST(SshCommand, AHostfileLinkTheUserMadeIsFollowed) {
  test_support::TempDir dir;
  std::ofstream(dir.path() + "/real") << "node1 slots=2\nnode2 slots=2\n";
  const std::string path = dir.path() + "/hosts";
  ASSERT_EQ(::symlink((dir.path() + "/real").c_str(), path.c_str()), 0);
  std::string error = ssh_error({"--hostfile", path, "--include", "node9", "--", "true"});
  EXPECT_NE(error.find("--include names host 'node9', which is not in the host list"), std::string::npos) << error;
}

TEST(SshCommand, AFifoAsEnvFileIsRefusedNotWaitedOn) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/env";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::string error = ssh_error({"--hosts", "node1", "--env-file", path, "--", "true"});
  EXPECT_NE(error.find(path + " is a FIFO, where dlaunch expects an env file"), std::string::npos) << error;
}

// Node 0's dlaunch run command line is read by run's own code before any
// host is contacted; hosts that do not exist are never dialled.
TEST(SshCommand, WhatEveryHostsDlaunchRunWouldRefuseIsRefusedBeforeSsh) {
  std::string error = ssh_error({"--hosts", "nohost-a,nohost-b", "--nproc-per-node", "0", "./w.sh"});
  EXPECT_NE(error.find("dlaunch ssh: --nproc-per-node must be a number from 1 to 4096"), std::string::npos) << error;
  EXPECT_NE(error.find("before ssh: nothing was started"), std::string::npos) << error;
  error = ssh_error({"--hosts", "nohost-a,nohost-b", "--nnodes", "2", "--min-nodes", "3", "./w.sh"});
  EXPECT_NE(error.find("--min-nodes must be from 1 to --nnodes (2), got 3"), std::string::npos) << error;
  error = ssh_error({"--hosts", "nohost-a,nohost-b", "--console-overflow", "lossy", "./w.sh"});
  EXPECT_NE(error.find("--console-overflow must be"), std::string::npos) << error;
  // GPUs are the host's to count: --nproc-per-node gpu is not judged by this machine's.
  error = ssh_error({"--hosts", "nohost-a", "--nproc-per-node", "gpu", "--local-ranks-filter", "3", "--prefix",
                     "{bogus", "./w.sh"});
  EXPECT_EQ(error.find("no GPU is visible"), std::string::npos) << error;
  EXPECT_NE(error.find("--prefix '{bogus'"), std::string::npos) << error;
}

}  // namespace
}  // namespace dlaunch::cli
