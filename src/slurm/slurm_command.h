// Running Slurm's client commands (scontrol, sbatch, scancel, sacct) from
// dlaunch, and the one place that knows when Slurm is not configured on
// this machine and says so in dlaunch's words instead of Slurm's.
//
// A machine with Slurm's commands but no configuration (no slurm.conf,
// SLURM_CONF unset) makes every one of them print
//   scontrol: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host
//   ...
//   scontrol: fatal: Could not establish a configuration source
// and SLURM_CONF naming a file that does not exist makes them wait 60 s for
// it first. Every command of dlaunch that asks Slurm goes through here, so
// each says the same: what is missing and what to do.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/environment.h"
#include "util/error.h"
#include "util/subprocess.h"

namespace dlaunch::slurm {

// Where Slurm's commands read their configuration when SLURM_CONF is unset
// (Debian's and most sites' builds).
inline constexpr std::string_view kDefaultSlurmConf = "/etc/slurm/slurm.conf";

// Slurm's commands cannot work on this machine: they find no configuration.
// The message names what is missing and what to do.
class NotConfigured : public util::SystemError {
 public:
  using util::SystemError::SystemError;
};

// What the configuration check looks at: the environment (SLURM_CONF) and
// whether a file exists. Tests give both.
struct ConfigurationView {
  util::Environment environment;
  std::function<bool(const std::string&)> file_exists;
  static ConfigurationView of_this_machine();
};

// Why no Slurm command can work here, when that is certain before running
// one: SLURM_CONF names a file that does not exist (the command would wait
// 60 s for it, then fail). nullopt otherwise.
std::optional<std::string> certain_configuration_problem(const ConfigurationView& view);

// Whether OUTPUT (a Slurm command's stderr) says it found no usable
// configuration: "Could not establish a configuration source", "Unable to
// process configuration file".
bool says_unconfigured(std::string_view output);

// The message for PROGRAM ("scontrol") having failed with OUTPUT, which
// says_unconfigured(): whether SLURM_CONF is set, which slurm.conf does or
// does not exist, Slurm's own last words when the file exists but cannot be
// used, and what to do.
std::string unconfigured_message(std::string_view program, std::string_view output, const ConfigurationView& view);

// Throws NotConfigured when RUN, PROGRAM's, failed saying that Slurm is not
// configured here (says_unconfigured()); returns otherwise. For a caller
// that runs PROGRAM itself and reads its other failures its own way.
void throw_if_unconfigured(std::string_view program, const util::CapturedRun& run);

// Runs ARGV (PROGRAM, or PROGRAM under a wrapper such as coreutils'
// timeout) as util::run_captured() does. Throws NotConfigured, before
// running it when that is certain and otherwise when its output says so;
// SystemError when it cannot be started. Any other failure is returned for
// the caller to read.
util::CapturedRun run_slurm_command(const std::vector<std::string>& argv, std::string_view program);

// Throws NotConfigured when certain_configuration_problem() finds one on
// this machine: for a command dlaunch starts with the terminal's output
// (srun), whose errors it does not read.
void require_configuration(std::string_view program);

}  // namespace dlaunch::slurm
