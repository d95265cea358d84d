#include "submit/submit_options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <map>

#include "util/command_line.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::submit {
namespace {

// sbatch's short spellings of the options that mean the same here (not -G:
// sbatch's --gpus counts the whole job's GPUs, not a node's).
const std::map<std::string, std::string>& sbatch_short_names() {
  static const std::map<std::string, std::string> names = {
      {"nodes", "-N"},   {"partition", "-p"}, {"time", "-t"},      {"job-name", "-J"},
      {"account", "-A"}, {"qos", "-q"},       {"constraint", "-C"},
  };
  return names;
}

std::string cli_names(const std::string& name) {
  std::string underscored = name;
  for (char& c : underscored) c = (c == '-') ? '_' : c;
  std::string names = "--" + name;
  if (underscored != name) names += ",--" + underscored;
  if (name == "wait") names += ",--follow";
  if (auto short_name = sbatch_short_names().find(name); short_name != sbatch_short_names().end())
    names += "," + short_name->second;
  return names;
}

struct RawValues {
  std::map<std::string, std::string> scalars;
  std::map<std::string, std::vector<std::string>> lists;
  std::map<std::string, bool> flags;
};

void add_setting_options(CLI::App& app, RawValues& raw) {
  for (const auto& key : submit_keys()) {
    std::string name = key.name;
    switch (key.kind) {
      case ValueKind::kBool:
        app.add_flag(cli_names(name), raw.flags[name], key.help);
        break;
      case ValueKind::kStringList:
        app.add_option(cli_names(name), raw.lists[name], key.help)->allow_extra_args(false);
        break;
      default:
        app.add_option(cli_names(name), raw.scalars[name], key.help);
    }
  }
}

void collect_flags(const CLI::App& app, RawValues& raw, SubmitSettings& flags) {
  for (const auto& key : submit_keys()) {
    std::string name = key.name;
    if (app.count("--" + name) == 0 && !(name == "wait" && app.count("--follow") > 0)) continue;
    std::string source = "--" + name;
    switch (key.kind) {
      case ValueKind::kBool: flags.set(name, true, source); break;
      case ValueKind::kStringList: flags.set(name, raw.lists[name], source); break;
      case ValueKind::kString: flags.set(name, raw.scalars[name], source); break;
      case ValueKind::kInteger:
        flags.set(name, util::parse_int_in_range(raw.scalars[name], 0, 1 << 30, source), source);
        break;
    }
  }
}

}  // namespace

std::optional<SubmitOptions> parse_submit_options(const std::vector<std::string>& args) {
  CLI::App app("Submit a distributed job to Slurm (sbatch), or run it now (srun)",
               "dlaunch submit");
  app.prefix_command();
  app.set_help_flag("-h,--help", "Show this help and exit");
  RawValues raw;
  SubmitOptions options;
  std::string profile, config;
  add_setting_options(app, raw);
  app.add_option("--profile", profile, "Use [profiles.NAME] of the config file");
  app.add_option("--config", config, "Config file (default ./dlaunch.toml, else "
                                     "$XDG_CONFIG_HOME/dlaunch/config.toml)");
  app.add_flag("--print-config", options.print_config,
               "Show the merged settings and where each came from, then exit");
  app.add_flag("--dry-run", options.dry_run, "Print the job script and command; submit nothing");
  app.footer("Flags override the profile, the profile overrides [defaults], which override "
             "built-in defaults.\nsbatch options with values that start with '-' take the "
             "--sbatch-arg=VALUE form.");

  if (!util::parse_command_line(app, args, "dlaunch submit")) return std::nullopt;
  collect_flags(app, raw, options.flags);
  if (app.count("--profile") > 0) options.profile = profile;
  if (app.count("--config") > 0) options.config = config;
  auto program = util::program_after_options(app);
  if (!program)
    throw util::UsageError(fmt::format("unknown option '{}' for dlaunch submit; 'dlaunch submit --help' "
                                 "lists the options",
                                 app.remaining().front()));
  options.command = std::move(*program);
  if (options.command.empty() && !options.print_config)
    throw util::UsageError("no PROGRAM given to dlaunch submit. Usage: dlaunch submit [options] [--] "
                     "PROGRAM [ARGS...]");
  return options;
}

}  // namespace dlaunch::submit
