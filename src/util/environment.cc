#include "util/environment.h"

#include <cstring>
#include <unistd.h>  // environ


namespace dlaunch::util {

Environment::Environment(std::map<std::string, std::string> variables)
    : variables_(variables.begin(), variables.end()) {}

Environment Environment::from_process() {
  Environment environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* equals = std::strchr(*entry, '=');
    if (equals == nullptr) continue;
    environment.variables_.emplace(std::string(*entry, static_cast<std::size_t>(equals - *entry)), std::string(equals + 1));
  }
  return environment;
}

std::optional<std::string> Environment::get(std::string_view name) const {
  auto found = variables_.find(name);
  if (found == variables_.end() || found->second.empty()) return std::nullopt;
  return found->second;
}

void Environment::set(std::string name, std::string value) {
  variables_[std::move(name)] = std::move(value);
}

void Environment::set_default(std::string name, std::string value) {
  variables_.try_emplace(std::move(name), std::move(value));
}

void Environment::erase(std::string_view name) {
  auto found = variables_.find(name);
  if (found != variables_.end()) variables_.erase(found);
}

std::vector<std::string> Environment::to_entries() const {
  std::vector<std::string> entries;
  entries.reserve(variables_.size());
  for (const auto& [name, value] : variables_) entries.push_back(name + "=" + value);
  return entries;
}

}  // namespace dlaunch::util
