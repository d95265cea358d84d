#include "launch/torchrun_compat.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <fmt/format.h>

#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::launch {
namespace {

// torchrun's own choices for --start-method.
constexpr std::array<std::string_view, 3> kStartMethods = {"spawn", "fork", "forkserver"};

// The backends whose meaning dlaunch's own rendezvous gives: node 0 (the
// endpoint's host) serves it, as c10d's store does.
constexpr std::array<std::string_view, 2> kServedBackends = {"static", "c10d"};

// torchrun's template fields and dlaunch's --prefix fields they become.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kTemplateFields = {{
    {"rank", "rank"},
    {"local_rank", "local_rank"},
    {"role_name", "role"},
    {"hostname", "host"},
}};

bool contains(auto choices, std::string_view value) {
  return std::find(choices.begin(), choices.end(), value) != choices.end();
}

// The --rdzv-conf keys other than join_timeout, the one dlaunch honours.
std::vector<std::string> ignored_conf_keys(const Setting& conf) {
  std::vector<std::string> keys;
  for (const auto& pair : util::split(conf.value, ',')) {
    std::string key(util::trim(pair.substr(0, pair.find('='))));
    if (!key.empty() && key != "join_timeout") keys.push_back(key);
  }
  return keys;
}

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The field name at TEXT[AT] (after a '$'), and how many characters it took.
std::pair<std::string, std::size_t> field_at(std::string_view text, std::size_t at, const Setting& setting) {
  if (at < text.size() && text[at] == '{') {
    auto close = text.find('}', at);
    if (close == std::string_view::npos)
      throw util::InputError(fmt::format("{} '{}' has a '${{' without its '}}'", setting.source, setting.value));
    return {std::string(text.substr(at + 1, close - at - 1)), close - at + 1};
  }
  std::size_t end = at;
  while (end < text.size() && identifier_char(text[end])) ++end;
  return {std::string(text.substr(at, end - at)), end - at};
}

std::string prefix_field(const std::string& name, const Setting& setting) {
  for (const auto& [torchrun, ours] : kTemplateFields) {
    if (name == torchrun) return fmt::format("{{{}}}", ours);
  }
  throw util::InputError(fmt::format(
      "{} '{}' names the field '{}', which is not one of ${{rank}}, ${{local_rank}}, ${{role_name}}, "
      "${{hostname}}; write $$ for a dollar sign",
      setting.source, setting.value, name));
}

}  // namespace

void check_torchrun_options(const RunOptions& options) {
  // Ignored, but torchrun takes it as a number of seconds and refuses
  // anything else: so does dlaunch, rather than let a typo pass.
  if (options.monitor_interval) {
    const std::string& value = options.monitor_interval->value;
    char* end = nullptr;
    double seconds = value.empty() ? -1 : std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(seconds >= 0))
      throw util::UsageError(fmt::format("{} must be a number of seconds such as 0.1 (as torchrun takes it), got "
                                         "'{}'; dlaunch reacts to events and does not poll, so it may be left out",
                                         options.monitor_interval->source, value));
  }
  if (options.start_method && !contains(kStartMethods, options.start_method->value))
    throw util::UsageError(fmt::format("{} must be spawn, fork or forkserver (as torchrun takes), got '{}'",
                                       options.start_method->source, options.start_method->value));
  if (options.standalone && options.nnodes) {
    auto parts = util::split(options.nnodes->value, ':');
    if (parts.empty() || parts.back() != "1")
      throw util::UsageError(fmt::format(
          "--standalone runs one node alone, but {} is '{}'; drop --standalone for a job of several nodes, "
          "or --nnodes for one",
          options.nnodes->source, options.nnodes->value));
  }
  // --standalone makes its own rendezvous on this host as node 0: a node
  // rank or a master address given with it on the command line would be
  // silently overridden. (A PET_ variable may be a site's, for other jobs.)
  for (const auto* setting : {&options.node_rank, &options.master_addr}) {
    if (options.standalone && *setting && (*setting)->source.starts_with("--"))
      throw util::UsageError(fmt::format("--standalone runs one node alone with a rendezvous of its own, so {} "
                                         "'{}' would be ignored; drop one of the two",
                                         (*setting)->source, (*setting)->value));
  }
  if (options.prefix && options.log_line_prefix_template)
    throw util::UsageError(fmt::format("{} and {} both set the line prefix; give one",
                                       options.prefix->source, options.log_line_prefix_template->source));
}

std::vector<std::string> torchrun_ignored_notices(const RunOptions& options) {
  std::vector<std::string> notices;
  if (options.rdzv_backend && !contains(kServedBackends, options.rdzv_backend->value))
    notices.push_back(fmt::format(
        "{} {} is ignored: dlaunch's own rendezvous, hosted by node 0 (--master-addr or --rdzv-endpoint), "
        "takes its place; no {} server is used",
        options.rdzv_backend->source, options.rdzv_backend->value, options.rdzv_backend->value));
  if (options.rdzv_conf) {
    auto keys = ignored_conf_keys(*options.rdzv_conf);
    if (!keys.empty())
      notices.push_back(fmt::format("{}: {} ignored: dlaunch's rendezvous takes only join_timeout from it",
                                    options.rdzv_conf->source, util::join(keys, ", ")));
  }
  if (options.logs_specs)
    notices.push_back(fmt::format(
        "{} {} is ignored: dlaunch writes each worker's logs under --log-dir itself (attempt_N/rankR/)",
        options.logs_specs->source, options.logs_specs->value));
  if (options.start_method && options.start_method->value != "spawn")
    notices.push_back(fmt::format("{} {} is ignored: workers are always started with exec, as with spawn",
                                  options.start_method->source, options.start_method->value));
  return notices;
}

std::string prefix_from_torchrun_template(const Setting& setting) {
  const std::string_view text = setting.value;
  std::string prefix;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '{' || c == '}') {
      prefix.append(2, c);  // literal braces, as fmt spells them
    } else if (c != '$') {
      prefix.push_back(c);
    } else if (i + 1 < text.size() && text[i + 1] == '$') {
      prefix.push_back('$');
      ++i;
    } else {
      auto [name, length] = field_at(text, i + 1, setting);
      if (name.empty())
        throw util::InputError(fmt::format("{} '{}' has a '$' without a field name; write $$ for a dollar sign",
                                           setting.source, setting.value));
      prefix += prefix_field(name, setting);
      i += length;
    }
  }
  return prefix;
}

}  // namespace dlaunch::launch
