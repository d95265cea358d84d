// The job's step, ended by the job's verdict rather than by srun alone.
//
// srun returns only once every task of the step has reported its end, and
// the task of a node that froze, lost its link or lost its power never
// does: Slurm notices such a node only at SlurmdTimeout (300 s by default),
// and keeps a --no-kill job RUNNING even then when that node was the batch
// host. dlaunch knows sooner: the launcher that speaks for the job writes
// the job's exit code to a file on the shared file system as soon as the
// verdict is in (launch/run_record.h). So the job script runs srun under
// this guard (`dlaunch __run-step`), which returns when srun does, or a
// grace period after the verdict appeared, ending srun then. The script
// exits with the verdict's code, and the job's end (which Slurm carries out
// when the batch script exits) ends whatever the lost node left.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "process/signal_channel.h"

namespace dlaunch::submit {

struct StepGuardSettings {
  std::string verdict_file;  // where the launcher that speaks for the job writes its exit code
  // After the verdict appeared: how long srun may still take to end by
  // itself (the other launchers exit right after the verdict; a lost
  // node's task never reports).
  std::chrono::milliseconds grace{15'000};
  // How often the verdict file is looked at: a read, not a stat, so that
  // an NFS client revalidates its cache (close-to-open consistency).
  std::chrono::milliseconds poll_interval{250};
  // --srun mode: srun owns the allocation, so it is asked to quit with
  // SIGINT (the job script gives it --quit-on-interrupt), which releases
  // the allocation; SIGKILL follows if it does not. In a batch job srun is
  // killed at once: the batch script's end ends the job and its steps.
  bool foreground = false;
  std::chrono::milliseconds quit_grace{5'000};
  // One line for the log (default: stderr).
  std::function<void(const std::string&)> say;
};

// Runs STEP (srun and its arguments) until it ends, or until GRACE after
// the verdict file holds an exit code, forwarding to it every signal the
// guard receives. Returns the verdict's exit code when there is one, else
// srun's (128+N when a signal ended it). Throws SystemError when STEP
// cannot be started.
int run_step_until_verdict(const std::vector<std::string>& step, const StepGuardSettings& settings,
                           process::SignalChannel& signals);

// The exit code in a verdict file's TEXT ("0\n"): a whole number from 0 to
// 255, surrounding white space aside; nullopt for anything else (a file
// being written, garbage), which the guard keeps waiting past.
std::optional<int> parse_verdict_code(std::string_view text);

}  // namespace dlaunch::submit
