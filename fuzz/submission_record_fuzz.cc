// submission_record_fuzz: a submission folder read back
// (jobs/submission_record.h) as `dlaunch status`, `jobs`, `logs` and
// `cancel` read it, whatever its files hold: a shared, copied or damaged
// folder.
//
// The input is cut at each 0x1e byte into config.json, job_id, sweep.json,
// state.json and logs/result.json, written into one folder. Checks that
// reading it throws nothing but InputError or SystemError, that a job id
// it takes is one (slurm/job_id.h), that every task folder lies inside the
// submission's, and that the recorded end and verdict never throw.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "jobs/submission_record.h"
#include "slurm/job_id.h"
#include "util/error.h"

namespace {

using namespace dlaunch;
namespace fs = std::filesystem;

void check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "submission_record_fuzz: invariant broken: %s\n", what);
  std::abort();
}

// One folder for the whole run, its files rewritten for every input.
const std::string& folder() {
  static const std::string path = [] {
    std::string made = (fs::temp_directory_path() / "submission_record_fuzz_XXXXXX").string();
    check(::mkdtemp(made.data()) != nullptr, "cannot make a temporary folder");
    fs::create_directories(made + "/logs");
    return made;
  }();
  return path;
}

void write_files(std::string_view input) {
  static const char* const kFiles[] = {"config.json", "job_id", "sweep.json", "state.json", "logs/result.json"};
  for (const char* name : kFiles) {
    const std::size_t cut = input.find('\x1e');
    std::error_code ignored;
    fs::remove(folder() + "/" + name, ignored);
    if (!input.empty() || cut != std::string_view::npos)
      std::ofstream(folder() + "/" + name, std::ios::binary) << input.substr(0, cut);
    input = cut == std::string_view::npos ? std::string_view() : input.substr(cut + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  write_files(std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    jobs::SubmissionRecord record = jobs::read_submission(folder());
    check(record.job_id.empty() || slurm::is_job_id(record.job_id), "a job id that is not one");
    for (const auto& task : record.tasks)
      check(fs::path(task.folder).parent_path() == fs::path(record.folder), "a task folder outside the submission");
    (void)record.settings.dump();
  } catch (const util::InputError&) {
  } catch (const util::SystemError&) {
  }
  (void)jobs::recorded_end(folder());
  (void)jobs::run_verdict(folder());
  return 0;
}
