#include "submit/config_file.h"

#include <filesystem>
#include <fmt/format.h>
#include <toml++/toml.h>

#include "submit/script_value.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::submit {
namespace {

std::string where(const std::string& path, const toml::node& node) {
  return fmt::format("{}:{}", path, node.source().begin.line);
}

std::vector<std::string> key_names() {
  std::vector<std::string> names;
  for (const auto& key : submit_keys()) names.emplace_back(key.name);
  return names;
}

const char* toml_type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date or time";
  }
}

Value convert(const Key& key, const toml::node& node, const std::string& path,
              const std::string& name) {
  auto wrong_type = [&] {
    return util::InputError(fmt::format("{}: '{}' must be {}, got {}", where(path, node), name,
                                  kind_name(key.kind), toml_type_name(node)));
  };
  switch (key.kind) {
    case ValueKind::kInteger: {
      // The type first: value<std::int64_t>() would convert a float, and one
      // beyond 2^63 ("nodes = 3e23") is undefined behaviour (found by fuzzing).
      const toml::value<std::int64_t>* integer = node.as_integer();
      if (integer == nullptr) throw wrong_type();
      return check_integer_range(key, integer->get(), fmt::format("{}: '{}'", where(path, node), name));
    }
    case ValueKind::kBool:
      if (!node.is_boolean()) throw wrong_type();
      return *node.value<bool>();
    case ValueKind::kString:
      if (!node.is_string()) throw wrong_type();
      return *node.value<std::string>();
    case ValueKind::kStringList: {
      if (node.is_string()) return std::vector<std::string>{*node.value<std::string>()};
      const toml::array* array = node.as_array();
      if (array == nullptr) throw wrong_type();
      std::vector<std::string> items;
      for (const auto& item : *array) {
        if (!item.is_string()) throw wrong_type();
        items.push_back(*item.value<std::string>());
      }
      return items;
    }
  }
  throw wrong_type();
}

// Checks every key of TABLE and, when APPLY, sets it from SOURCE.
void read_settings_table(const toml::table& table, const std::string& path,
                         const std::string& table_name, SubmitSettings* apply) {
  for (const auto& [raw_key, node] : table) {
    std::string name(raw_key.str());
    const Key* key = find_key(name);
    if (key == nullptr) {
      std::string dashed = name;
      for (char& c : dashed) c = (c == '_') ? '-' : c;
      std::string hint;
      if (auto close = util::closest_match(dashed, key_names()))
        hint = fmt::format("; did you mean '{}'?", *close);
      throw util::InputError(fmt::format("{}: unknown key '{}' in [{}]{}", where(path, node), name,
                                   table_name, hint));
    }
    Value value = convert(*key, node, path, name);
    std::string source = fmt::format("{} [{}]", where(path, node), table_name);
    // TOML strings may hold any control character ("a\nb", "\u0000"): one
    // bound for the job script is refused here, in every table, used or not.
    check_script_setting(key->name, value, source);
    if (apply != nullptr) apply->set(key->name, std::move(value), std::move(source));
  }
}

const toml::table& expect_table(const toml::node& node, const std::string& path,
                                const std::string& name) {
  const toml::table* table = node.as_table();
  if (table == nullptr)
    throw util::InputError(fmt::format("{}: '{}' must be a table ([{}])", where(path, node), name, name));
  return *table;
}

toml::table parse(const std::string& path) {
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& error) {
    throw util::InputError(fmt::format("{}:{}:{}: not valid TOML: {}", path, error.source().begin.line,
                                 error.source().begin.column, error.description()));
  }
}

}  // namespace

std::optional<std::string> find_config_file(const util::Environment& environment) {
  if (std::filesystem::exists("dlaunch.toml")) return std::string("dlaunch.toml");
  std::string base;
  if (auto xdg = environment.get("XDG_CONFIG_HOME")) base = *xdg;
  else if (auto home = environment.get("HOME")) base = *home + "/.config";
  else return std::nullopt;
  std::string path = base + "/dlaunch/config.toml";
  if (std::filesystem::exists(path)) return path;
  return std::nullopt;
}

void apply_config_file(SubmitSettings& settings, const std::string& path,
                       const std::optional<std::string>& profile) {
  toml::table root = parse(path);
  const toml::table* defaults = nullptr;
  const toml::table* profiles = nullptr;
  for (const auto& [raw_key, node] : root) {
    std::string name(raw_key.str());
    if (name == "defaults") defaults = &expect_table(node, path, name);
    else if (name == "profiles") profiles = &expect_table(node, path, name);
    else
      throw util::InputError(fmt::format("{}: unknown top-level key '{}'; expected [defaults] or "
                                   "[profiles.NAME]",
                                   where(path, node), name));
  }
  // Every profile is checked, so a typo in one not used today still shows.
  std::vector<std::string> profile_names;
  const toml::table* chosen = nullptr;
  if (profiles != nullptr) {
    for (const auto& [raw_name, node] : *profiles) {
      std::string name(raw_name.str());
      const toml::table& table = expect_table(node, path, "profiles." + name);
      read_settings_table(table, path, "profiles." + name, nullptr);
      profile_names.push_back(name);
      if (profile && *profile == name) chosen = &table;
    }
  }
  if (defaults != nullptr) read_settings_table(*defaults, path, "defaults", &settings);
  if (!profile) return;
  if (chosen == nullptr)
    throw util::InputError(fmt::format("{}: no profile '{}' (known: {}); add a [profiles.{}] table",
                                 path, *profile,
                                 profile_names.empty() ? "none" : util::join(profile_names, ", "),
                                 *profile));
  read_settings_table(*chosen, path, "profiles." + *profile, &settings);
}

std::vector<std::string> config_profile_names(const std::string& path) {
  SubmitSettings ignored;
  apply_config_file(ignored, path, std::nullopt);  // the whole file is checked first
  std::vector<std::string> names;
  toml::table root = parse(path);
  if (const toml::table* profiles = root["profiles"].as_table()) {
    for (const auto& [name, node] : *profiles) names.emplace_back(name.str());
  }
  return names;
}

}  // namespace dlaunch::submit
