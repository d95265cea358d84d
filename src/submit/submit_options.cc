#include "submit/submit_options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <string_view>

#include "launch/run_options.h"
#include "submit/sweep.h"
#include "util/command_line.h"
#include "util/command_line_spec.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::submit {
namespace {

// sbatch's short spellings of the options that mean the same here (-G as
// sbatch's: the whole job's GPUs, which dlaunch spreads evenly).
const std::map<std::string, std::string>& sbatch_short_names() {
  static const std::map<std::string, std::string> names = {
      {"nodes", "-N"},   {"partition", "-p"}, {"time", "-t"},      {"job-name", "-J"},
      {"account", "-A"}, {"qos", "-q"},       {"constraint", "-C"},  {"gpus", "-G"},
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

// The headings of the help, in order; a key of another group comes last.
constexpr const char* kGroupOrder[] = {"Topology", "Job",    "Sweeps", "Slurm", "Containers",
                                       "Reliability", "Hangs and stacks", "Output"};

bool in_known_group(const Key& key) {
  for (const char* group : kGroupOrder) {
    if (std::string_view(key.group) == group) return true;
  }
  return false;
}

void add_setting_option(CLI::App& app, RawValues& raw, const Key& key) {
  std::string name = key.name;
  CLI::Option* option = nullptr;
  switch (key.kind) {
    case ValueKind::kBool: option = app.add_flag(cli_names(name), raw.flags[name], key.help); break;
    case ValueKind::kStringList:
      option = app.add_option(cli_names(name), raw.lists[name], key.help)->allow_extra_args(false);
      break;
    default: option = app.add_option(cli_names(name), raw.scalars[name], key.help);
  }
  option->group(key.group);
  if (key.kind != ValueKind::kBool) option->type_name(placeholder_of(key));
}

void add_setting_options(CLI::App& app, RawValues& raw) {
  for (const char* group : kGroupOrder) {
    for (const auto& key : submit_keys()) {
      if (std::string_view(key.group) == group) add_setting_option(app, raw, key);
    }
  }
  for (const auto& key : submit_keys()) {
    if (!in_known_group(key)) add_setting_option(app, raw, key);
  }
}

// TEXT as KEY's integer, in KEY's range (the same message as dlaunch.toml's).
std::int64_t integer_flag(const Key& key, const std::string& text, const std::string& source) {
  auto value = util::parse_int(text);
  if (!value)
    throw util::InputError(fmt::format("{} must be an integer from {} to {}, got '{}'", source, key.range.low,
                                       key.range.high, text));
  return check_integer_range(key, *value, source);
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
        flags.set(name, integer_flag(key, raw.scalars[name], source), source);
        break;
    }
  }
}

// dlaunch run options that the job's step or dlaunch submit's own settings
// decide (the node count and rank, the workers per node, where node 0 is,
// the job's folders): the parser's hint names the setting to use instead.
bool set_for_the_nodes(std::string_view name) {
  static constexpr std::string_view kSet[] = {
      "--nnodes",         "--nproc-per-node", "--node-rank",      "--master-addr",   "--master-port",
      "--rdzv-endpoint",  "--standalone",     "--log-dir",        "--exit-code-file", "--end-job-after",
      "--preempt-signal", "--bench-record",   "--rdzv-token-file", "--rdzv-token"};
  std::string dashed(name);
  for (char& c : dashed) c = (c == '_') ? '-' : c;
  return std::find(std::begin(kSet), std::end(kSet), dashed) != std::end(kSet);
}

// An option of dlaunch run that submit has no setting for (--console-overflow,
// --bench-cooldown) is for the nodes: sbatch knows it no more than submit
// does, so the advice is --run-arg. Looked for among the words before
// PROGRAM, before the parser calls it unknown and offers --sbatch-arg.
void refuse_run_option(const CLI::App& app, const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--" || arg == "-" || !arg.starts_with("-")) return;  // PROGRAM from here on
    const std::string name = arg.substr(0, arg.find('='));
    const bool inline_value = name.size() != arg.size();
    if (const CLI::Option* option = app.get_option_no_throw(name)) {
      if (option->get_type_size() != 0 && !inline_value) ++i;  // its value
      continue;
    }
    auto kind = launch::run_option_kind(arg);
    if (kind == launch::RunOptionKind::kUnknown || set_for_the_nodes(name)) return;  // the parser's to say
    std::string word = name;
    if (kind == launch::RunOptionKind::kValued)
      word += "=" + (inline_value ? arg.substr(name.size() + 1) : i + 1 < args.size() ? args[i + 1] : "VALUE");
    throw util::UsageError(fmt::format(
        "unknown option '{}' for dlaunch submit: it is an option of dlaunch run, which dlaunch submit has no "
        "setting for. Pass it to the nodes with --run-arg={} (in dlaunch.toml: run-args = [\"{}\"]). "
        "'dlaunch submit --help' lists the options.",
        name, word, word));
  }
}

}  // namespace

namespace {

struct SubmitParser {
  CLI::App app{"Submit a distributed job to Slurm (sbatch), or run it now (srun)", "dlaunch submit"};
  RawValues raw;
  SubmitOptions options;
  std::string profile, config;
};

void configure(SubmitParser& parser) {
  CLI::App& app = parser.app;
  app.prefix_command();
  util::set_usage(app, "dlaunch submit [options] [--] PROGRAM [ARGS...]");
  add_setting_options(app, parser.raw);
  app.add_option("--profile", parser.profile, "Use [profiles.NAME] of the config file")
      ->group("Settings")
      ->type_name("NAME");
  app.add_option("--config", parser.config,
                 "Config file (default ./dlaunch.toml, else $XDG_CONFIG_HOME/dlaunch/config.toml)")
      ->group("Settings")
      ->type_name("FILE");
  app.add_flag("--print-config", parser.options.print_config,
               "Show the merged settings and where each came from, then exit")
      ->group("Settings");
  app.add_flag("--dry-run", parser.options.dry_run, "Print the job script and command; submit nothing")
      ->group("Settings");
  app.footer("Flags override the profile, the profile overrides [defaults], which override "
             "built-in defaults.\nsbatch options with values that start with '-' take the "
             "--sbatch-arg=VALUE form.");
  util::finish_help(
      app, {
               {"dlaunch submit --nodes 2 --gpus-per-node 4 --time 2:00:00 train.py --lr 0.1",
                "two nodes of four GPUs for two hours; prints the job id and its folder"},
               {"dlaunch submit -N 4 -p gpu --wait -- python3 -m mypackage.train",
                "sbatch's short options; --wait follows the job and exits with its exit code"},
               {"dlaunch submit --srun --nodes 2 --gpus-per-node 2 train.py",
                "run now in the foreground with srun instead of queueing a batch job"},
               {"dlaunch submit --profile big --dry-run train.py",
                "print the job script the profile [profiles.big] of dlaunch.toml would submit"},
               {"dlaunch submit --print-config --profile big",
                "show every setting and where it came from (flag, profile, [defaults], built-in)"},
           });
}

}  // namespace

std::optional<SubmitOptions> parse_submit_options(const std::vector<std::string>& args) {
  SubmitParser parser;
  configure(parser);
  CLI::App& app = parser.app;
  refuse_run_option(app, args);
  if (!util::parse_command_line(app, args, "dlaunch submit")) return std::nullopt;
  SubmitOptions options = std::move(parser.options);
  collect_flags(app, parser.raw, options.flags);
  if (app.count("--profile") > 0) options.profile = parser.profile;
  if (app.count("--config") > 0) options.config = parser.config;
  options.command = util::program_after_options(app);
  refuse_split_sweep(parser.raw.lists["sweep"], options.command);
  if (options.command.empty() && !options.print_config)
    throw util::UsageError("no PROGRAM given to dlaunch submit. Usage: dlaunch submit [options] [--] "
                     "PROGRAM [ARGS...]");
  return options;
}

util::CommandLineSpec describe_submit_options() { return util::describe_parser(configure); }

}  // namespace dlaunch::submit
