#include "process/log_file_fault.h"

#include <cstring>
#include <fmt/format.h>

namespace dlaunch::process {
namespace {

// Why FAULT happened, in words: a refusal says more than its errno.
std::string reason(const LogFileFault& fault) {
  return fault.refusal.empty() ? std::string(std::strerror(fault.error)) : fault.refusal;
}

std::string what_failed(const IncompleteLog& log) {
  return fmt::format("rank {}'s {} log {} could not be {}: {}", log.global_rank, log.stream,
                     log.path, log.fault.created ? "written" : "created", reason(log.fault));
}

}  // namespace

std::string log_fault_notice(const IncompleteLog& log, bool required) {
  const LogFileFault& fault = log.fault;
  std::string text = "dlaunch: " + what_failed(log);
  if (fault.created)
    text += fmt::format(
        "; {} bytes of its output are not in that file, which holds only its first {} bytes. "
        "dlaunch writes nothing more to it",
        fault.lost_bytes, fault.filed_bytes);
  if (required) return text + "; --log-dir-required: stopping the job";
  return text + fmt::format("; rank {}'s {} goes to the console instead", log.global_rank,
                            log.stream);
}

std::string log_fault_failure(const IncompleteLog& log, const std::string& host, int node_rank) {
  return fmt::format(
      "rank {} on {} (node {}): its {} log {} could not be {} ({}), and --log-dir-required stops "
      "the job when a log file fails",
      log.global_rank, host, node_rank, log.stream, log.path,
      log.fault.created ? "written" : "created", reason(log.fault));
}

std::string incomplete_logs_summary(const std::vector<IncompleteLog>& logs) {
  if (logs.empty()) return "";
  std::string text = fmt::format("dlaunch: {} worker log file{} incomplete:\n", logs.size(),
                                 logs.size() == 1 ? " is" : "s are");
  for (const auto& log : logs) {
    const LogFileFault& fault = log.fault;
    if (fault.created)
      text += fmt::format(
          "dlaunch:   {}: rank {}'s {} from byte {} on is missing ({}); {} bytes were not filed\n",
          log.path, log.global_rank, log.stream, fault.filed_bytes, std::strerror(fault.error),
          fault.lost_bytes);
    else
      text += fmt::format(
          "dlaunch:   {}: could not be created ({}); none of rank {}'s {} bytes of {} were filed\n",
          log.path, reason(fault), log.global_rank, fault.lost_bytes, log.stream);
  }
  return text + "dlaunch:   those bytes went to the console instead\n";
}

std::string mark_incomplete(const std::string& path, const LogFileFault& fault) {
  if (!fault.created)
    return fmt::format("{} (missing: it could not be created: {})", path, reason(fault));
  return fmt::format("{} (incomplete: everything from byte {} on is missing: {})", path,
                     fault.filed_bytes, std::strerror(fault.error));
}

}  // namespace dlaunch::process
