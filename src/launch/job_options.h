// The options of `dlaunch run` that set the job's shared settings
// (service/job_settings.h: what every launcher and node 0's service hold).
//
// Each is declared once, as a row: its spelling, heading, placeholder and
// help, how its value is parsed into JobSettings, and how `dlaunch env`
// shows it. run_options derives the command line, torchrun's underscore
// spelling and the PET_* fallback from the row; launch_config applies the
// rows; the coordinator hands JobSettings whole to the service. So an
// option node 0's service uses touches three files: a row here, a field in
// service/job_settings.h, and the code that uses it.
#pragma once

#include <chrono>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "service/job_settings.h"
#include "util/sourced.h"

namespace dlaunch::launch {

using Setting = util::Sourced<std::string>;

// The headings of `dlaunch run --help`, in the order it shows them.
namespace option_group {
inline constexpr const char* kTopology = "Topology";
inline constexpr const char* kWorkers = "Workers";
inline constexpr const char* kOutput = "Output";
inline constexpr const char* kReliability = "Reliability";
inline constexpr const char* kHangs = "Hangs and stacks";
inline constexpr const char* kRendezvous = "Rendezvous";
inline constexpr const char* kCompatibility = "Accepted for torchrun compatibility";
}  // namespace option_group

struct JobOption {
  const char* name;         // the dashed spelling without "--": "hang-timeout"
  const char* group;        // its heading in the help (option_group)
  const char* placeholder;  // what its value looks like; nullptr: a flag, which takes none
  const char* help;
  // Parses VALUE (a flag's is "true") into JOB; throws InputError naming
  // VALUE's source, the value and what was expected.
  void (*apply)(rendezvous::JobSettings& job, const Setting& value);
  // Its value in JOB as `dlaunch env` shows it.
  std::string (*show)(const rendezvous::JobSettings& job);

  bool is_flag() const { return placeholder == nullptr; }
};

// Every job option, in the order the help lists them within a heading.
std::span<const JobOption> job_options();

// The row spelled NAME ("hang-timeout"); nullptr when NAME is not a job option.
const JobOption* find_job_option(std::string_view name);

// Applies the job options GIVEN (by name, as in RunOptions::job) to JOB.
void apply_job_options(const std::map<std::string, Setting>& given, rendezvous::JobSettings& job);

// SETTING as whole seconds from MINIMUM to a week. Throws InputError
// naming SETTING's source and the value.
std::chrono::milliseconds parse_seconds(const Setting& setting, std::int64_t minimum = 0);

}  // namespace dlaunch::launch
