// The settings of `dlaunch submit`, merged from built-in defaults, the
// config file's [defaults], a [profiles.NAME] table and the command line,
// each value remembering where it came from (for --print-config and errors).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "util/sourced.h"

namespace dlaunch::submit {

using Value = std::variant<std::int64_t, bool, std::string, std::vector<std::string>>;

enum class ValueKind { kInteger, kBool, kString, kStringList };

// One setting: the same name is a flag (--NAME) and a config key (NAME, or
// with underscores). GROUP is its heading in `dlaunch submit --help`,
// PLACEHOLDER what its value looks like there (util/command_line.h: N,
// SECONDS, FILE, a|b; nullptr: derived from the kind).
// The values an integer setting may take.
struct IntegerRange {
  std::int64_t low = 0;
  std::int64_t high = std::int64_t{1} << 30;
};

struct Key {
  const char* name;
  ValueKind kind;
  const char* help;
  const char* group = "Job";
  const char* placeholder = nullptr;
  IntegerRange range{};  // kInteger only
};

// Every setting submit knows, in the order --print-config shows them.
const std::vector<Key>& submit_keys();
// The key named NAME ("gpus-per-node" or "gpus_per_node"); nullptr if none.
const Key* find_key(const std::string& name);
const char* kind_name(ValueKind kind);
// VALUE when it lies in KEY's range; else InputError "SOURCE must be an
// integer from LOW to HIGH, got VALUE", the same for a flag and a
// dlaunch.toml key.
std::int64_t check_integer_range(const Key& key, std::int64_t value, const std::string& source);
// KEY's placeholder in the help: its own, else N, VALUE or ARG by its kind.
const char* placeholder_of(const Key& key);

class SubmitSettings {
 public:
  // Sets NAME to VALUE from SOURCE, replacing a value from an earlier layer.
  // Lists from a later layer replace, they do not append.
  void set(const std::string& name, Value value, std::string source);
  const util::Sourced<Value>* find(const std::string& name) const;

  std::optional<std::int64_t> integer(const std::string& name) const;
  // integer(NAME), which must lie in LOW..HIGH: else InputError naming NAME,
  // the range, the value and its source.
  std::optional<int> bounded_integer(const std::string& name, int low, int high) const;
  // bounded_integer in the range NAME's key declares.
  std::optional<int> bounded_integer(const std::string& name) const;
  std::optional<std::string> string(const std::string& name) const;
  bool flag(const std::string& name) const;
  std::vector<std::string> list(const std::string& name) const;

  const std::map<std::string, util::Sourced<Value>>& values() const { return values_; }

 private:
  std::map<std::string, util::Sourced<Value>> values_;
};

// The source of the built-in defaults' values.
inline constexpr const char* kBuiltInSource = "built-in default";

// The built-in defaults layer.
SubmitSettings default_submit_settings();

// "4", "true", "'debug'", "['a', 'b']" for --print-config.
std::string format_value(const Value& value);

}  // namespace dlaunch::submit
