// The line a launcher under `dlaunch ssh` prints when it speaks for the
// job's end, so that dlaunch ssh knows the job's verdict as soon as it is
// in, whatever the other hosts do: a host that froze, or whose link was
// cut, never ends its ssh session, and a job must not wait on it.
//
// The line travels with the launcher's own output through ssh; it carries
// an HMAC under the job's rendezvous secret (which dlaunch ssh made and
// handed to every host on stdin; the workers never see it), so neither a
// worker's output nor anything else on the way can pass for a verdict.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "wire/world.h"

namespace dlaunch::launch {

// What dlaunch ssh learns from the line.
struct AnnouncedVerdict {
  std::string state;  // COMPLETED or FAILED
  int exit_code = 0;
};

// "dlaunch: the job's verdict: COMPLETED with exit code 0 [verdict TAG]",
// TAG the HMAC of the run id, the state and the code under TOKEN.
std::string verdict_line(const rendezvous::Verdict& verdict, const std::string& run_id, const std::string& token);

// The verdict LINE announces, when it is such a line and its tag is right
// for RUN_ID and TOKEN; nullopt for any other line.
std::optional<AnnouncedVerdict> read_verdict_line(std::string_view line, const std::string& run_id,
                                                  const std::string& token);

}  // namespace dlaunch::launch
