// job_id_fuzz: Slurm job ids as dlaunch hands them to scontrol, scancel and
// sacct (slurm/job_id.h), on any text (a job_id file anyone could write).
//
// Checks that what is taken as an id is digits with at most one '_' or '+'
// part, never starts with '-' (so never an option), never holds a space or
// a newline; that checked_job_id throws InputError exactly when is_job_id
// is false; and that job_command puts every accepted id after "--".
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "slurm/job_id.h"
#include "util/error.h"

namespace {

using namespace dlaunch;

void check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "job_id_fuzz: invariant broken: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  const bool valid = slurm::is_job_id(text);
  if (valid) {
    check(text.find_first_not_of("0123456789_+") == std::string::npos, "an id with other characters");
    check(text.front() >= '0' && text.front() <= '9', "an id that does not start with a digit");
    check(text.find_first_of("_+") == text.find_last_of("_+"), "an id with two parts after the job's");
    check(text.size() <= 18, "an id longer than Slurm writes one");
  }
  try {
    auto command = slurm::job_command({"scancel", "--signal=USR1"}, text);
    check(valid, "job_command took what is_job_id refuses");
    check(command.size() == 4 && command[2] == "--" && command[3] == text, "the id is not after --");
  } catch (const util::InputError&) {
    check(!valid, "job_command refused a valid id");
  }
  return 0;
}
