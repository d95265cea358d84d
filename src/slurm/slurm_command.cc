// Slurm's client commands run from dlaunch, and what is said when Slurm is
// not configured on this machine.
#include "slurm/slurm_command.h"

#include <filesystem>
#include <fmt/format.h>

#include "util/strings.h"

namespace dlaunch::slurm {
namespace {

constexpr std::string_view kUnconfiguredMarks[] = {"Could not establish a configuration source",
                                                   "Unable to process configuration file"};

// The last COUNT lines of OUTPUT ("scontrol: error: ...", "scontrol: fatal:
// ..."), the program's prefix dropped and control characters escaped: what
// Slurm itself said last.
std::string last_words(std::string_view program, std::string_view output, std::size_t count) {
  std::vector<std::string> lines;
  for (const auto& line : util::split(output, '\n')) {
    std::string_view text = util::trim(line);
    if (text.empty()) continue;
    const std::string prefix = fmt::format("{}: ", program);
    if (text.starts_with(prefix)) text.remove_prefix(prefix.size());
    lines.push_back(util::escaped(text));
  }
  if (lines.size() > count) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(count));
  return util::join(lines, " / ");
}

std::string what_to_do() {
  return "Run dlaunch where you submit Slurm jobs (the cluster's login node), or set SLURM_CONF to the "
         "cluster's slurm.conf";
}

}  // namespace

ConfigurationView ConfigurationView::of_this_machine() {
  return {util::Environment::from_process(), [](const std::string& path) {
            std::error_code ignored;
            return std::filesystem::exists(path, ignored);
          }};
}

std::optional<std::string> certain_configuration_problem(const ConfigurationView& view) {
  auto named = view.environment.get("SLURM_CONF");
  if (!named || view.file_exists(*named)) return std::nullopt;
  return fmt::format("Slurm is not configured on this machine: SLURM_CONF names {}, which does not exist (Slurm's "
                     "commands would wait 60 s for it, then fail). Point SLURM_CONF at the cluster's slurm.conf, "
                     "or unset it to use {}",
                     util::escaped(*named), kDefaultSlurmConf);
}

bool says_unconfigured(std::string_view output) {
  for (std::string_view mark : kUnconfiguredMarks)
    if (output.find(mark) != std::string_view::npos) return true;
  return false;
}

std::string unconfigured_message(std::string_view program, std::string_view output, const ConfigurationView& view) {
  auto named = view.environment.get("SLURM_CONF");
  const std::string path = named ? *named : std::string(kDefaultSlurmConf);
  if (!view.file_exists(path)) {
    std::string where = named ? fmt::format("SLURM_CONF names {}, which does not exist", util::escaped(path))
                              : fmt::format("SLURM_CONF is unset and {} does not exist", path);
    return fmt::format("Slurm is not configured on this machine ({}), so {} cannot find the cluster's controller "
                       "({} says: {}). {}",
                       where, program, program, last_words(program, output, 1), what_to_do());
  }
  std::string which = named ? fmt::format("{} (named by SLURM_CONF)", util::escaped(path)) : path;
  // Slurm's reason is the line before its fatal one ("ClusterName needs to be specified").
  return fmt::format("Slurm's configuration on this machine, {}, cannot be used: {} says: {}. Fix it, or point "
                     "SLURM_CONF at the cluster's slurm.conf (or run dlaunch where you submit Slurm jobs)",
                     which, program, last_words(program, output, 2));
}

util::CapturedRun run_slurm_command(const std::vector<std::string>& argv, std::string_view program) {
  require_configuration(program);
  util::CapturedRun run = util::run_captured(argv);
  throw_if_unconfigured(program, run);
  return run;
}

void throw_if_unconfigured(std::string_view program, const util::CapturedRun& run) {
  if (run.exit_code == 0 || !says_unconfigured(run.err + run.out)) return;
  throw NotConfigured(
      unconfigured_message(program, run.err.empty() ? run.out : run.err, ConfigurationView::of_this_machine()));
}

void require_configuration(std::string_view program) {
  if (auto problem = certain_configuration_problem(ConfigurationView::of_this_machine()))
    throw NotConfigured(fmt::format("cannot run {}: {}", program, *problem));
}

}  // namespace dlaunch::slurm
