// The command line of `dlaunch submit`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "submit/submit_settings.h"
#include "util/command_line_spec.h"

namespace dlaunch::submit {

struct SubmitOptions {
  SubmitSettings flags;                 // only the settings given on the command line
  std::optional<std::string> profile;   // --profile NAME
  std::optional<std::string> config;    // --config FILE
  bool print_config = false;
  bool dry_run = false;
  std::vector<std::string> command;     // PROGRAM [ARGS...]
};

// Parses ARGS (after "dlaunch submit"). Returns nullopt when --help was
// printed. Throws UsageError naming the bad option or value.
std::optional<SubmitOptions> parse_submit_options(const std::vector<std::string>& args);

// The options of `dlaunch submit`, for `dlaunch completion`.
util::CommandLineSpec describe_submit_options();

}  // namespace dlaunch::submit
