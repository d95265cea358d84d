// traceback_fuzz: the doctor's reading of a worker's last lines
// (doctor/traceback.h, doctor/diagnosis.h) on any bytes, and of what the
// health checks read from outside between rounds: kernel log records and
// their Xid lines, nvidia-smi's ECC answer, a cgroup's OOM count.
//
// The lines are the worker's own output: whatever they hold, the parser
// must not throw or crash, a frame it returns came from a "File" line, its
// traceback lines are the input's, and the signature never carries a digit
// outside a user frame's file:line.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "doctor/diagnosis.h"
#include "doctor/gpu_errors.h"
#include "doctor/traceback.h"
#include "util/kernel_log.h"
#include "util/oom_counter.h"

namespace {

using namespace dlaunch;

void check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "traceback_fuzz: invariant broken: %s\n", what);
  std::abort();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The readers of kernel lines, nvidia-smi and cgroup files: a message is
// part of its record, an Xid's device is part of its line, and a problem
// is reported for a hardware code only.
void check_host_readers(const std::string& text, const std::vector<std::string>& lines) {
  std::vector<std::string> messages;
  for (const auto& line : lines) {
    messages.push_back(util::kernel_message(line));
    check(line.find(messages.back()) != std::string::npos, "a kernel message not in its record");
    if (auto xid = doctor::read_xid(messages.back())) {
      check(line.find(xid->device) != std::string::npos, "an Xid device not in its line");
      check(xid->code >= 0, "a negative Xid");
    }
  }
  if (doctor::xid_problem(messages, "host"))
    check(text.find("NVRM: Xid (") != std::string::npos, "an Xid problem without an Xid line");
  (void)doctor::ecc_problem(text, "host");
  (void)util::parse_oom_kill_count(text);
  (void)util::memory_cgroup_v1_path(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines = lines_of(text);
  if (auto error = doctor::parse_traceback(lines)) {
    check(!error->type.empty() && !error->frames.empty(), "an exception without a type or a frame");
    check(error->lines.size() <= lines.size(), "more traceback lines than input lines");
    for (const auto& frame : error->frames) check(text.find(frame.file) != std::string::npos, "a file not in the input");
  }
  rendezvous::Failure failure;
  failure.global_rank = 0;
  failure.exit_code = size > 0 ? data[0] : 1;
  failure.last_lines = lines;
  failure.error_message = lines.empty() ? "" : lines.front();
  doctor::Diagnosis diagnosis = doctor::diagnose(failure);
  check(!diagnosis.signature.empty(), "an empty signature");
  (void)doctor::root_cause_line(failure, diagnosis);
  check_host_readers(text, lines);
  return 0;
}
