#include "util/command_line_spec.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>

#include "util/strings.h"

namespace dlaunch::util {
namespace {

// A word in upper case (FILE, MAP) stands for a value; one in lower case or
// digits (node, 3) is the value itself.
bool is_literal(std::string_view word) {
  return !word.empty() && std::none_of(word.begin(), word.end(), [](unsigned char c) {
    return std::isupper(c) || std::isspace(c);
  });
}

bool is_underscore_twin(const CLI::Option& option, const std::string& long_name) {
  if (long_name.find('_') == std::string::npos) return false;
  std::string dashed = long_name;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  const auto& names = option.get_lnames();
  return std::find(names.begin(), names.end(), dashed) != names.end();
}

OptionSpec describe_option(const CLI::Option& option) {
  OptionSpec spec;
  spec.names = shown_names(option);
  spec.takes_value = option.get_expected_max() > 0;  // a flag expects no value
  if (spec.takes_value)
    spec.placeholder = option.get_option_text().empty() ? option.get_type_name() : option.get_option_text();
  spec.help = option.get_description();
  return spec;
}

}  // namespace

std::vector<std::string> shown_names(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const auto& name : option.get_snames()) names.push_back("-" + name);
  for (const auto& name : option.get_lnames()) {
    if (!is_underscore_twin(option, name)) names.push_back("--" + name);
  }
  return names;
}

CommandLineSpec describe_command_line(const CLI::App& app) {
  CommandLineSpec spec;
  spec.takes_program = app.get_prefix_command();
  for (const std::string& group : app.get_groups()) {
    if (group.empty()) continue;  // hidden options
    for (const CLI::Option* option : app.get_options()) {
      if (option->get_group() == group && option->nonpositional())
        spec.options.push_back(describe_option(*option));
    }
  }
  return spec;
}

std::vector<std::string> placeholder_choices(std::string_view placeholder) {
  if (placeholder.find('|') == std::string_view::npos) return {};
  std::vector<std::string> choices;
  for (const auto& word : split(placeholder, '|')) {
    if (is_literal(word)) choices.push_back(word);
  }
  return choices;
}

}  // namespace dlaunch::util
