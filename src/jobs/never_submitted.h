// A submission Slurm never took: sbatch refused the job (or could not be
// run, or printed no job id), and the folder says so.
//
// Why the folder is kept, not removed: it holds the job script sbatch
// refused, which is what the user needs to read to see which #SBATCH line
// was wrong (sbatch's messages rarely name it), and the newest folder is
// what `dlaunch status last` shows: removed, `status last` would show an
// older job as if nothing had happened. So dlaunch submit writes
// not_submitted.json beside job.sbatch and config.json, removes the
// rendezvous secret no job will read, and `dlaunch jobs` and `status` show
// the folder as NOT-SUBMITTED with sbatch's own words, never as a job whose
// state is unknown or a --srun run. When sbatch cannot be found at all,
// dlaunch submit stops before it makes a folder: there is no job script to
// read that --dry-run would not print.
#pragma once

#include <optional>
#include <string>

namespace dlaunch::jobs {

// The file in a submission folder that says the job was never submitted.
inline constexpr const char* kNotSubmittedFileName = "not_submitted.json";

// The state `dlaunch jobs` and `status` show for such a folder.
inline constexpr const char* kNotSubmittedState = "NOT-SUBMITTED";

struct NeverSubmitted {
  std::string program = "sbatch";
  std::optional<int> exit_code;  // its exit code; nullopt when it could not be run
  std::string message;           // its own words (stderr, else stdout), or why it could not run
  std::string recorded;          // when: "2026-12-03T14:05:09"
  // sbatch exited 0 but printed no job id: the job may be queued after all.
  bool may_be_queued = false;
};

// WHY in one line: "sbatch refused it, exit code 1: sbatch: error: Batch
// job submission failed: Invalid partition name specified" (the last line
// of sbatch's words, where sbatch puts its verdict).
std::string never_submitted_summary(const NeverSubmitted& why);

// WHY's whole message on one line (its lines joined by " / ").
std::string never_submitted_message(const NeverSubmitted& why);

// Writes FOLDER/not_submitted.json. Returns why it could not, "" on
// success: the submission has failed already, and that error is the one to
// report.
std::string record_never_submitted(const std::string& folder, const NeverSubmitted& why);

// FOLDER's record; nullopt when there is none or it cannot be read.
std::optional<NeverSubmitted> read_never_submitted(const std::string& folder);

}  // namespace dlaunch::jobs
