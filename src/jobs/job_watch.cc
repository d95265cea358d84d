#include "jobs/job_watch.h"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include "slurm/job_info.h"
#include "slurm/job_query.h"
#include "util/error.h"
#include "util/exit_codes.h"
#include "util/fd.h"
#include "util/outside_file.h"
#include "util/strings.h"

namespace dlaunch::jobs {
namespace {

// Opens the job's Slurm log when it is a regular file: a FIFO planted
// there must not hang the follower, nor a link to /dev/zero feed it
// forever. An invalid Fd when there is none yet (Slurm creates it when the
// job starts) or it is no such file.
util::Fd open_job_log(const std::string& log_path) {
  try {
    return util::open_outside_file(log_path, {"the job's Slurm log", 0, util::Links::kRefuse});
  } catch (const std::exception&) {
    return util::Fd();
  }
}

// Copies what LOG_PATH gained since OFFSET to stdout.
void stream_new_output(const std::string& log_path, off_t& offset) {
  util::Fd file = open_job_log(log_path);
  if (!file) return;
  ::lseek(file.get(), offset, SEEK_SET);
  char buffer[64 * 1024];
  ssize_t got;
  while ((got = util::read_retrying(file.get(), buffer, sizeof(buffer))) > 0) {
    util::write_all(STDOUT_FILENO, std::string_view(buffer, static_cast<std::size_t>(got)));
    offset += got;
  }
}

void pause_for(std::chrono::milliseconds interval) {
  ::poll(nullptr, 0, static_cast<int>(interval.count()));
}

}  // namespace

JobEnd parse_job_end(const slurm::JobInfo& record) {
  if (!record.has("JobState") || !record.has("ExitCode"))
    throw util::SystemError(fmt::format("cannot read job {}'s end from scontrol: it shows no JobState or "
                                        "ExitCode",
                                        record.job_id().empty() ? "?" : record.job_id()));
  std::string state = record.state();
  return JobEnd{state.substr(0, state.find(' ')), slurm::end_exit_code(record), ""};
}

std::string pending_line(const std::string& job_id, const std::string& state, const std::string& reason,
                         long long waited_seconds) {
  std::string why = reason.empty() || reason == "None" ? "" : fmt::format(" ({})", reason);
  return fmt::format("job {}: {}{}, {} s since it was submitted", job_id, state, why, waited_seconds);
}

std::optional<JobEnd> judged_end(const std::optional<JobEnd>& slurm, const std::optional<RunVerdict>& verdict,
                                 const std::string& why_no_slurm_end) {
  if (!verdict) return slurm;
  if (!slurm)
    return JobEnd{verdict->state, verdict->exit_code,
                  fmt::format("{}; the job's verdict, from its launcher on {}, is {} with exit code {}",
                              why_no_slurm_end, verdict->written_by.empty() ? "node 0" : verdict->written_by,
                              verdict->state, verdict->exit_code)};
  if (!verdict->slurm_end.empty())
    return JobEnd{verdict->state, verdict->exit_code,
                  fmt::format("Slurm records {}: {}", slurm->state, verdict->slurm_end)};
  return slurm;
}

JobEnd follow_job(const std::string& job_id, const std::string& log_path, const std::string& folder,
                  std::chrono::milliseconds poll_interval) {
  const auto started = std::chrono::steady_clock::now();
  // scontrol rather than squeue: it shows state, reason and exit code at
  // once, and still shows a finished job for MinJobAge seconds, so the end
  // is never missed between two looks.
  const bool interactive = ::isatty(STDERR_FILENO) != 0;
  std::string last_status;
  off_t offset = 0;
  bool seen = false;
  bool completing = false;  // and since when
  auto completing_since = started;
  for (;;) {
    std::vector<slurm::JobInfo> records = slurm::show_job(job_id);
    if (records.empty()) {
      // A job that ended while COMPLETING for long is purged at once (its
      // MinJobAge counts from its end): the verdict says how it ended.
      if (seen) {
        stream_new_output(log_path, offset);
        if (auto end = judged_end(std::nullopt, run_verdict(folder), "Slurm no longer knows the job")) return *end;
      }
      throw util::SystemError(fmt::format("cannot follow job {}: Slurm does not know it{}", job_id,
                                          seen ? " any more, and its launcher recorded no verdict" : ""));
    }
    seen = true;
    const slurm::JobInfo& record = records.front();
    std::string state = record.has("JobState") ? record.state().substr(0, record.state().find(' ')) : "UNKNOWN";
    if (slurm::is_queued_state(state)) {
      std::string reason = record.has("Reason") ? record.field("Reason") : "None";
      auto waited = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started);
      std::string line = pending_line(job_id, state, reason, waited.count());
      // A terminal gets the clock ticking in place; a log gets a line only
      // when the state or the reason changes.
      std::string status = state + " " + reason;
      if (interactive) fmt::print(stderr, "\r\033[K{}", line);
      else if (status != last_status) fmt::print(stderr, "dlaunch: {}\n", line);
      last_status = status;
    } else {
      if (interactive && !last_status.empty()) fmt::print(stderr, "\r\033[K");
      last_status.clear();
      stream_new_output(log_path, offset);
      if (slurm::is_final_state(state)) {
        auto end = judged_end(parse_job_end(record), run_verdict(folder), "");
        return *end;
      }
      if (state == "COMPLETING" && !completing) completing_since = std::chrono::steady_clock::now();
      completing = state == "COMPLETING";
      if (completing && std::chrono::steady_clock::now() - completing_since >= kCompletingPatience) {
        auto end = judged_end(std::nullopt, run_verdict(folder),
                              fmt::format("Slurm still shows the job COMPLETING after {} s: a node of it does "
                                          "not answer (it froze, or lost its link or power), and Slurm releases "
                                          "it once it declares that node down (SlurmdTimeout)",
                                          kCompletingPatience.count()));
        if (end) return *end;
      }
    }
    pause_for(poll_interval);
  }
}

}  // namespace dlaunch::jobs
