// The words that tell a user a worker's log file is incomplete.
#include "process/log_file_fault.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

namespace dlaunch::process {
namespace {

IncompleteLog full_disk() {
  IncompleteLog log;
  log.path = "/logs/3/stderr.log";
  log.global_rank = 3;
  log.stream = "stderr";
  log.fault.error = ENOSPC;
  log.fault.created = true;
  log.fault.filed_bytes = 4096;
  log.fault.lost_bytes = 100;
  return log;
}

IncompleteLog never_created() {
  IncompleteLog log;
  log.path = "/logs/0/stdout.log";
  log.global_rank = 0;
  log.stream = "stdout";
  log.fault.error = EACCES;
  log.fault.created = false;
  log.fault.lost_bytes = 12;
  return log;
}

TEST(LogFileFault, TheNoticeSaysWhatIsMissingAndWhereTheRestGoes) {
  EXPECT_EQ(log_fault_notice(full_disk(), false),
            "dlaunch: rank 3's stderr log /logs/3/stderr.log could not be written: No space left "
            "on device; 100 bytes of its output are not in that file, which holds only its first "
            "4096 bytes. dlaunch writes nothing more to it; rank 3's stderr goes to the console "
            "instead");
  EXPECT_EQ(log_fault_notice(never_created(), false),
            "dlaunch: rank 0's stdout log /logs/0/stdout.log could not be created: Permission "
            "denied; rank 0's stdout goes to the console instead");
}

TEST(LogFileFault, WithLogDirRequiredTheNoticeSaysTheJobStops) {
  std::string notice = log_fault_notice(full_disk(), true);
  EXPECT_NE(notice.find("could not be written: No space left on device"), std::string::npos) << notice;
  EXPECT_NE(notice.find("; --log-dir-required: stopping the job"), std::string::npos) << notice;
  EXPECT_EQ(notice.find("console"), std::string::npos) << notice;
}

TEST(LogFileFault, TheFailureNamesTheWorkerItsHostAndTheRule) {
  EXPECT_EQ(log_fault_failure(full_disk(), "node2", 1),
            "rank 3 on node2 (node 1): its stderr log /logs/3/stderr.log could not be written (No "
            "space left on device), and --log-dir-required stops the job when a log file fails");
  EXPECT_NE(log_fault_failure(never_created(), "node1", 0).find("could not be created (Permission denied)"),
            std::string::npos);
}

TEST(LogFileFault, TheSummaryListsEveryIncompleteFile) {
  EXPECT_EQ(incomplete_logs_summary({}), "");
  EXPECT_EQ(incomplete_logs_summary({full_disk()}),
            "dlaunch: 1 worker log file is incomplete:\n"
            "dlaunch:   /logs/3/stderr.log: rank 3's stderr from byte 4096 on is missing (No space "
            "left on device); 100 bytes were not filed\n"
            "dlaunch:   those bytes went to the console instead\n");
  EXPECT_EQ(incomplete_logs_summary({full_disk(), never_created()}),
            "dlaunch: 2 worker log files are incomplete:\n"
            "dlaunch:   /logs/3/stderr.log: rank 3's stderr from byte 4096 on is missing (No space "
            "left on device); 100 bytes were not filed\n"
            "dlaunch:   /logs/0/stdout.log: could not be created (Permission denied); none of rank "
            "0's 12 bytes of stdout were filed\n"
            "dlaunch:   those bytes went to the console instead\n");
}

TEST(LogFileFault, TheFailureSummaryMarksTheLogFile) {
  EXPECT_EQ(mark_incomplete("/logs/3/stderr.log", full_disk().fault),
            "/logs/3/stderr.log (incomplete: everything from byte 4096 on is missing: No space left "
            "on device)");
  EXPECT_EQ(mark_incomplete("/logs/0/stdout.log", never_created().fault),
            "/logs/0/stdout.log (missing: it could not be created: Permission denied)");
}

// A link planted at a log's name (issue 24): the notice says what was
// there and that dlaunch did not write through it, not a bare errno.
TEST(LogFileFault, ARefusalIsSaidInItsOwnWords) {
  IncompleteLog log = never_created();
  log.fault.error = EEXIST;
  log.fault.refusal = "it is a symbolic link, and dlaunch never writes through one (remove it)";
  EXPECT_EQ(log_fault_notice(log, false),
            "dlaunch: rank 0's stdout log /logs/0/stdout.log could not be created: it is a symbolic link, "
            "and dlaunch never writes through one (remove it); rank 0's stdout goes to the console instead");
  EXPECT_NE(incomplete_logs_summary({log}).find("could not be created (it is a symbolic link"), std::string::npos);
  EXPECT_NE(mark_incomplete(log.path, log.fault).find("it is a symbolic link"), std::string::npos);
}

}  // namespace
}  // namespace dlaunch::process
