// job_info_fuzz: scontrol's job records (slurm/job_info.h) on any text.
//
// scontrol's output is another program's, and on a shared cluster a job's
// name, comment or command come from other users: the parser must take any
// bytes. Checks that it never throws, keeps within its bounds (records,
// bytes per value), names every field with a plain name, and that
// durations and exit codes it reads are in range and round-trip.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "slurm/job_info.h"

namespace {

using namespace dlaunch;

void fail(const char* what) {
  std::fprintf(stderr, "job_info_fuzz: %s\n", what);
  std::abort();
}

void check_record(const slurm::JobInfo& record) {
  if (record.fields().empty()) fail("a record without fields was kept");
  for (const auto& [name, value] : record.fields()) {
    if (name.empty() || name.find('=') != std::string::npos || name.find(' ') != std::string::npos)
      fail("a field name holds '=' or a space, or is empty");
    if (value.size() > slurm::kMaxRecordBytes) fail("a value is longer than a record may be");
    if (value.find('\n') != std::string::npos) fail("a value spans lines");
    if (auto seconds = slurm::parse_duration(value)) {
      if (*seconds < 0) fail("a negative duration");
      if (slurm::parse_duration(slurm::format_duration(*seconds)) != seconds)
        fail("format_duration does not round-trip");
    }
    if (auto code = slurm::parse_exit_code(value); code && (*code < 0 || *code > 255))
      fail("an exit code outside 0..255");
  }
  (void)record.display_id();
  (void)slurm::is_final_state(record.state());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto records = slurm::parse_job_records(text);
  if (records.size() > slurm::kMaxRecords) fail("more records than the bound");
  for (const auto& record : records) check_record(record);
  return 0;
}
