#include "util/option_rules.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <map>

#include "util/error.h"

namespace dlaunch::util {
namespace {

// CLI11 gives a flag room for no value (add_flag sets expected(0)).
bool is_flag(const CLI::Option& option) { return option.get_items_expected_max() == 0; }

// Whether OPTION holds one value: not a flag, not a list that each use
// adds to (a vector's option, or one whose policy keeps every value).
bool holds_one_value(const CLI::Option& option) {
  auto policy = option.get_multi_option_policy();
  return !is_flag(option) && !option.get_positional() && option.get_items_expected_max() == 1 &&
         policy != CLI::MultiOptionPolicy::TakeAll && policy != CLI::MultiOptionPolicy::Join;
}

}  // namespace

void refuse_flag_values(const std::vector<OptionUse>& uses, std::string_view command) {
  for (const OptionUse& use : uses) {
    if (!is_flag(*use.option) || !use.value) continue;
    throw UsageError(fmt::format("{}: {} is a flag and takes no value, got '{}'; give {} to turn it on, or "
                                 "leave it out to keep it off.",
                                 command, use.typed, use.words, use.typed));
  }
}

void refuse_conflicting_repeats(const std::vector<OptionUse>& uses, std::string_view command) {
  std::map<const CLI::Option*, const OptionUse*> first_use;
  for (const OptionUse& use : uses) {
    if (!holds_one_value(*use.option) || !use.value) continue;
    auto [earlier, inserted] = first_use.emplace(use.option, &use);
    if (inserted || earlier->second->value == use.value) continue;
    throw UsageError(fmt::format("{}: {} is given twice with different values, '{}' and '{}'; it takes one: "
                                 "keep the one you mean and drop the other.",
                                 command, use.typed, earlier->second->words, use.words));
  }
}

void accept_identical_repeats(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (holds_one_value(*option)) option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
}

}  // namespace dlaunch::util
