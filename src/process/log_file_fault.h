// A worker's log file that could not be written in full, and the words
// that tell the user so.
//
// Logs must not kill training: when a write to a worker's log file fails
// (a full disk, a lost mount) or the file cannot be created, dlaunch says
// so at once, writes nothing more to that file (no hole in the middle of
// a log), and shows the rest of that stream on the console instead. The
// end of the run lists every incomplete file again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dlaunch::process {

// What a relay knows about its failed file.
struct LogFileFault {
  int error = 0;                  // errno of the failed write or open
  bool created = true;            // false: the file could not be created at all
  std::uint64_t filed_bytes = 0;  // the file holds the stream's first FILED_BYTES bytes
  std::uint64_t lost_bytes = 0;   // bytes of the stream since then that are not in it
  // Why the file was not created, when dlaunch refused what it found at its
  // name (a symbolic link, a FIFO: util/safe_file.h); empty: ERROR says it.
  std::string refusal;
};

// A failed file with the worker and stream it belongs to.
struct IncompleteLog {
  std::string path;
  int global_rank = 0;
  std::string stream;  // "stdout" or "stderr"
  LogFileFault fault;
};

// The line printed the moment LOG fails; REQUIRED: --log-dir-required
// makes it stop the job.
std::string log_fault_notice(const IncompleteLog& log, bool required);

// The one-line reason a job stopped by --log-dir-required gives, for a
// worker on HOST, node NODE_RANK.
std::string log_fault_failure(const IncompleteLog& log, const std::string& host, int node_rank);

// The end-of-run list of LOGS ("dlaunch: N worker log files are
// incomplete: ..."); empty when there are none.
std::string incomplete_logs_summary(const std::vector<IncompleteLog>& logs);

// PATH marked as incomplete for the failure summary's "log file" line.
std::string mark_incomplete(const std::string& path, const LogFileFault& fault);

}  // namespace dlaunch::process
