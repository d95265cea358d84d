#include "ssh/remote_command.h"

#include <fmt/format.h>

#include "launch/run_options.h"
#include "launch/token_setting.h"
#include "util/error.h"
#include "util/shell_words.h"
#include "util/strings.h"

namespace dlaunch::ssh {
namespace {

bool valid_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

void check_name(const std::string& name, const std::string& where) {
  if (!valid_name(name))
    throw util::InputError(fmt::format("{}: '{}' is not a variable name (letters, digits and _, not "
                                 "starting with a digit)",
                                 where, name));
  if (name == launch::kTokenVariable)
    throw util::InputError(fmt::format("{}: {} is dlaunch ssh's own rendezvous secret; it makes one per job",
                                 where, name));
}

std::pair<std::string, std::string> parse_assignment(std::string_view text, const std::string& where) {
  auto equals = text.find('=');
  std::string name(util::trim(text.substr(0, equals)));
  check_name(name, where);
  return {name, std::string(text.substr(equals + 1))};
}

}  // namespace

std::vector<std::string> ssh_argv(const JobPlan& plan, const std::string& host,
                                  const std::string& remote_command) {
  std::vector<std::string> argv{"ssh"};
  argv.insert(argv.end(), plan.ssh_args.begin(), plan.ssh_args.end());
  argv.insert(argv.end(), {"-o", "BatchMode=yes", "-o",
                           fmt::format("ConnectTimeout={}", plan.connect_timeout), "--", host,
                           remote_command});
  return argv;
}

std::vector<std::string> remote_run_arguments(const JobPlan& plan, const HostLaunch& host) {
  std::vector<std::string> run{"--nnodes",
                               std::to_string(plan.nnodes),
                               "--node-rank",
                               std::to_string(host.node_rank),
                               "--master-addr",
                               plan.master_addr,
                               "--master-port",
                               std::to_string(plan.master_port),
                               "--rdzv-id",
                               plan.run_id,
                               "--stop-on-stdin-close"};
  // The host in every line, unless the user chose a prefix of their own:
  // dlaunch run refuses an option given twice with different values.
  if (!launch::run_option_value(plan.run_args, "--prefix") &&
      !launch::run_option_value(plan.run_args, "--log-line-prefix-template"))
    run.insert(run.end(), {"--prefix", fmt::format("[{}:rank{{rank}}]:", host.host)});
  if (plan.spare_nodes > 0) run.insert(run.end(), {"--spare-nodes", std::to_string(plan.spare_nodes)});
  if (host.nproc) run.insert(run.end(), {"--nproc-per-node", std::to_string(*host.nproc)});
  if (plan.uneven) run.push_back("--allow-uneven");
  run.insert(run.end(), plan.run_args.begin(), plan.run_args.end());
  run.push_back("--");
  run.insert(run.end(), plan.command.begin(), plan.command.end());
  return run;
}

std::string remote_launch_command(const JobPlan& plan, const HostLaunch& host) {
  std::vector<std::string> env{"env"};
  for (const auto& [name, value] : plan.env) env.push_back(name + "=" + value);
  if (!host.visible_slots.empty())
    env.push_back(fmt::format("CUDA_VISIBLE_DEVICES={}", fmt::join(host.visible_slots, ",")));
  std::vector<std::string> run{plan.remote_dlaunch, "run"};
  auto arguments = remote_run_arguments(plan, host);
  run.insert(run.end(), arguments.begin(), arguments.end());
  // The secret arrives as the first line of stdin; the rest of stdin stays
  // open for the job's life (dlaunch run --stop-on-stdin-close).
  return fmt::format("cd -- {} && IFS= read -r {} && export {} && exec {} {}",
                     util::shell_quote(plan.working_dir), launch::kTokenVariable, launch::kTokenVariable,
                     util::shell_join(env), util::shell_join(run));
}

std::string remote_preflight_command(const JobPlan& plan, const std::vector<std::string>& worker_argv) {
  std::string dlaunch = util::shell_quote(plan.remote_dlaunch);
  std::string text = fmt::format(
      "cd -- {} 2>/dev/null || {{ echo 'dlaunch-preflight: no-dir'; exit 0; }}; "
      "command -v -- {} >/dev/null 2>&1 || {{ echo 'dlaunch-preflight: no-dlaunch'; exit 0; }}; "
      "echo \"dlaunch-preflight: version $({} version 2>&1)\"; ",
      util::shell_quote(plan.working_dir), dlaunch, dlaunch);
  if (!worker_argv.empty()) {
    text += fmt::format("command -v -- {} >/dev/null 2>&1 || echo 'dlaunch-preflight: no-program'; ",
                        util::shell_quote(worker_argv.front()));
    // An interpreter's script (python -u train.py) must be there too.
    for (std::size_t i = 1; i < worker_argv.size(); ++i) {
      const std::string& word = worker_argv[i];
      if (word.ends_with(".py") && !word.starts_with("-")) {
        text += fmt::format("[ -f {} ] || echo 'dlaunch-preflight: no-script {}'; ", util::shell_quote(word),
                            word);
        break;
      }
    }
  }
  return text + "exit 0";
}

std::vector<std::pair<std::string, std::string>> carried_variables(
    const std::vector<std::string>& env_options, const std::optional<std::string>& env_file_text,
    const std::string& env_file_name,
    const std::function<std::optional<std::string>(const std::string&)>& environment_value) {
  std::vector<std::pair<std::string, std::string>> variables;
  if (env_file_text) {
    int number = 0;
    for (const auto& raw : util::split(*env_file_text, '\n')) {
      ++number;
      std::string_view line = util::trim(raw);
      if (line.empty() || line[0] == '#') continue;
      if (line.starts_with("export ")) line = util::trim(line.substr(7));
      std::string where = fmt::format("{}:{}", env_file_name, number);
      if (line.find('=') == std::string_view::npos)
        throw util::InputError(fmt::format("{}: expected NAME=VALUE, got '{}'", where, line));
      variables.push_back(parse_assignment(line, where));
    }
  }
  for (const auto& option : env_options) {
    if (option.find('=') != std::string::npos) {
      variables.push_back(parse_assignment(option, "--env"));
      continue;
    }
    check_name(option, "--env");
    auto value = environment_value(option);
    if (!value)
      throw util::InputError(fmt::format("--env {}: {} is not set here; set it, or give --env {}=VALUE",
                                   option, option, option));
    variables.emplace_back(option, *value);
  }
  return variables;
}

}  // namespace dlaunch::ssh
