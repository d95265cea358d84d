// The folder `dlaunch ssh` keeps on this machine while its job runs, so
// that `dlaunch stacks FOLDER` can reach the job: where node 0's
// rendezvous answers and the job's token. The hosts' log folders are
// theirs; this one is the launcher's.
#pragma once

#include <optional>
#include <string>

#include "ssh/remote_command.h"
#include "util/environment.h"
#include "util/temporary_folder.h"

namespace dlaunch::cli {

// Writes into FOLDER the job's TOKEN, as rdzv.token (the name a
// submission folder gives it, where `dlaunch stacks` looks): a new file of
// mode 0600, so no other user reads it even for a moment, never written
// through a link or over a file already there; and where PLAN's node 0
// answers. Throws SystemError naming the file when the token cannot be
// written.
void fill_stacks_folder(const std::string& folder, const ssh::JobPlan& plan, const std::string& token);

// A new private folder (mode 0700) under ENVIRONMENT's $TMPDIR (else /tmp)
// holding what fill_stacks_folder() writes, removed with the returned
// object. Best effort: nullopt when it cannot be made or filled, since the
// job does not need it.
std::optional<util::TemporaryFolder> make_stacks_folder(const ssh::JobPlan& plan, const std::string& token,
                                                        const util::Environment& environment);

}  // namespace dlaunch::cli
