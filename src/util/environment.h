// A process environment as a value.
//
// Everything that derives configuration from variables takes an Environment
// rather than calling getenv(), so that any combination of SLURM_* and PET_*
// variables can be unit-tested without touching the real process.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlaunch::util {

class Environment {
 public:
  Environment() = default;
  explicit Environment(std::map<std::string, std::string> variables);

  // A copy of this process's environment.
  static Environment from_process();

  // The value of NAME; nullopt when unset. An empty value counts as unset,
  // because Slurm and shells export empty variables that mean "not given".
  std::optional<std::string> get(std::string_view name) const;
  bool has(std::string_view name) const { return get(name).has_value(); }

  void set(std::string name, std::string value);
  void set_default(std::string name, std::string value);  // only when unset
  void erase(std::string_view name);

  const std::map<std::string, std::string, std::less<>>& variables() const { return variables_; }

  // "NAME=VALUE" strings in the layout execve() wants.
  std::vector<std::string> to_entries() const;

 private:
  std::map<std::string, std::string, std::less<>> variables_;
};

}  // namespace dlaunch::util
