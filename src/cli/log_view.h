// Showing a run's rank logs (`dlaunch logs`): what is there now, or, with
// --follow, every new line as the files grow until the job ends.
//
// The follower asks two things of the world outside the files, through
// FollowWorld: whether the job has ended (the command asks Slurm) and a
// pause between looks (the command sleeps). Tests give both, so the loop
// runs against files that grow under it, without Slurm or a clock.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "cli/line_printer.h"
#include "jobs/rank_logs.h"

namespace dlaunch::cli {

struct FollowWorld {
  std::function<bool()> job_is_over;
  std::function<void(std::chrono::milliseconds)> pause;
};

struct FollowPace {
  std::chrono::milliseconds poll{250};  // between looks at the files
  // Looks between two questions whether the job ended (and whether a new
  // attempt started): Slurm is asked every 2 s, not at every look.
  int status_every_polls = 8;
};

// Prints FOLDER's logs (a submission's or a task's) as CHOICE narrows them,
// once, through PRINTER. Throws InputError (jobs::find_rank_logs) when
// there are none.
void show_logs(const std::string& folder, const jobs::LogChoice& choice, LinePrinter& printer);

// Prints what is there, then each new line whole and in time order, until
// WORLD says the job is over; then what is left, an unterminated last line
// as a line, and returns. Waits for the logs of a job still pending. A
// restart (a new attempt folder) switches to the new attempt's files,
// unless CHOICE names an attempt. Throws InputError when the job ended
// without logs.
void follow_logs(const std::string& folder, const jobs::LogChoice& choice, LinePrinter& printer,
                 const FollowWorld& world, const FollowPace& pace = {});

}  // namespace dlaunch::cli
