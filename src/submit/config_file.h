// dlaunch.toml: defaults and named profiles for `dlaunch submit`.
//
//   [defaults]
//   partition = "gpu"
//   gpus-per-node = 4
//   sbatch-args = ["--quotatype=reserved"]
//
//   [profiles.big]
//   nodes = 16
//   time = "2-00:00:00"
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "submit/submit_settings.h"
#include "util/environment.h"

namespace dlaunch::submit {

// The config file to read: ./dlaunch.toml if it exists, else
// $XDG_CONFIG_HOME/dlaunch/config.toml (default ~/.config/...), else none.
std::optional<std::string> find_config_file(const util::Environment& environment);

// Validates the whole file at PATH and applies its [defaults], then
// [profiles.PROFILE] when PROFILE is given, onto SETTINGS. Throws
// InputError naming the file, line and key for a syntax error, an unknown
// key, a wrong type, a control character in a value bound for the job
// script (script_value.h) or a missing profile.
void apply_config_file(SubmitSettings& settings, const std::string& path,
                       const std::optional<std::string>& profile);

// The names of the [profiles.NAME] tables of the (valid) file at PATH, in
// the file's order; apply_config_file's errors for an invalid one.
std::vector<std::string> config_profile_names(const std::string& path);

}  // namespace dlaunch::submit
