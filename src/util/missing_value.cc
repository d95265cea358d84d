// The check that an option's value was not left out, walking the words as
// CLI11 will read them (util/missing_value.h says what is refused and why).
#include "util/missing_value.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <optional>

#include "util/error.h"

namespace dlaunch::util {
namespace {

// How many words CLI11 takes as OPTION's value(s) after it: 0 for a flag.
std::size_t values_taken(const CLI::Option& option) {
  return static_cast<std::size_t>(
      std::max(0, std::min(option.get_type_size_min(), option.get_items_expected_min())));
}

std::string placeholder_of(const CLI::Option& option) {
  std::string text = option.get_option_text().empty() ? option.get_type_name() : option.get_option_text();
  return text.empty() ? "VALUE" : text;
}

// "-" (standard input) and "-1" are words, not short options, as CLI11
// reads them too.
bool is_dash_or_negative_number(std::string_view word) {
  return word == "-" || (word.size() > 1 && word[0] == '-' && std::isdigit(static_cast<unsigned char>(word[1])));
}

const CLI::Option* short_option(const CLI::App& app, char name) {
  return app.get_option_no_throw(std::string{'-', name});
}

bool is_short_option_of(const CLI::App& app, std::string_view word) {
  return word.size() == 2 && word[0] == '-' && word[1] != '-' && short_option(app, word[1]) != nullptr;
}

// Whether WORD, after OPTION, is another option of APP rather than the
// value OPTION needs.
bool is_option_not_value(const CLI::App& app, const CLI::Option& option, std::string_view word) {
  if (word.starts_with("--")) return true;
  return placeholder_of(option) != kPassedOnPlaceholder && is_short_option_of(app, word);
}

// OPTION as "--name", the spelling that takes "=VALUE": the one typed when
// it is long, else its first long name.
std::string with_equals_spelling(const CLI::Option& option, std::string_view typed) {
  if (typed.starts_with("--") || option.get_lnames().empty()) return std::string(typed);
  return "--" + option.get_lnames().front();
}

[[noreturn]] void throw_missing_value(std::string_view command, const CLI::Option& option,
                                      std::string_view typed, std::string_view next) {
  std::string placeholder = placeholder_of(option);
  if (next == "--")
    throw UsageError(fmt::format("{}: {} needs a value ({}), got '--', which ends the options; give the value "
                                 "before it ({} {}).",
                                 command, typed, placeholder, typed, placeholder));
  throw UsageError(fmt::format("{}: {} needs a value ({}), got the option {}; give the value ({} {}), or write "
                               "{}={} if you mean that text.",
                               command, typed, placeholder, next, typed, placeholder,
                               with_equals_spelling(option, typed), next));
}

// Options whose empty value means "none", as torchrun takes them: a console
// line without prefix, no rendezvous settings, every local rank shown.
bool empty_value_means_none(const CLI::Option& option) {
  for (const char* name : {"prefix", "log-line-prefix-template", "rdzv-conf", "local-ranks-filter", "logs-specs"}) {
    for (const auto& spelled : option.get_lnames()) {
      if (spelled == name) return true;
    }
  }
  return false;
}

[[noreturn]] void throw_empty_value(std::string_view command, const CLI::Option& option, std::string_view typed) {
  std::string placeholder = placeholder_of(option);
  throw UsageError(fmt::format("{}: {} needs a value ({}), got an empty word (a variable that is unset or "
                               "empty?); give the value ({} {}), or leave {} out.",
                               command, typed, placeholder, typed, placeholder, typed));
}

[[noreturn]] void throw_value_left_off(std::string_view command, const CLI::Option& option,
                                       std::string_view typed) {
  std::string placeholder = placeholder_of(option);
  throw UsageError(fmt::format("{}: {} needs a value ({}), and nothing follows it; give the value ({} {}).",
                               command, typed, placeholder, typed, placeholder));
}

// The words of one command line in CLI11's order, each option's values
// checked before they are skipped.
class ValueWalk {
 public:
  ValueWalk(const CLI::App& app, const std::vector<std::string>& args, std::string_view command)
      : app_(app), args_(args), command_(command), program_room_(positional_room()) {}

  // The options' uses, in order, once every value is checked.
  std::vector<OptionUse> run() {
    for (std::size_t at = 0; at < args_.size();) {
      std::optional<std::size_t> next = step(at);
      if (!next) break;
      at = *next;
    }
    return std::move(uses_);
  }

 private:
  // Reads the word at AT: the index of the next word to read, or nullopt
  // where the options end (or an unknown one leaves the rest unclear).
  std::optional<std::size_t> step(std::size_t at) {
    const std::string& word = args_[at];
    if (word == "--") return std::nullopt;
    if (word.starts_with("--")) return long_option(at);
    if (word.size() > 1 && word[0] == '-' && !is_dash_or_negative_number(word)) return short_options(at);
    return positional(at);
  }

  // "--name" (its values follow) or "--name=value" (nothing follows).
  std::optional<std::size_t> long_option(std::size_t at) {
    const std::string& word = args_[at];
    const std::size_t equals = word.find('=');
    if (equals != std::string::npos) {
      // "--account=" would take the next word as its value (CLI11 reads it
      // so): an empty value is refused here, as after a space.
      const CLI::Option* option = app_.get_option_no_throw(word.substr(0, equals));
      if (option != nullptr && equals + 1 == word.size() && values_taken(*option) > 0 &&
          !empty_value_means_none(*option))
        throw_empty_value(command_, *option, word.substr(0, equals));
      if (option != nullptr) uses_.push_back({option, word.substr(0, equals), word.substr(equals + 1), word});
      return at + 1;
    }
    const CLI::Option* option = app_.get_option_no_throw(word);
    if (option == nullptr) return std::nullopt;
    return after_values(*option, word, at);
  }

  // "-N" (its value follows), "-N2" (attached), "-fn" (flags, the last one
  // maybe valued), as CLI11 splits them.
  std::optional<std::size_t> short_options(std::size_t at) {
    const std::string& word = args_[at];
    for (std::size_t letter = 1; letter < word.size(); ++letter) {
      const CLI::Option* option = short_option(app_, word[letter]);
      if (option == nullptr) return std::nullopt;
      std::string typed{'-', word[letter]};
      if (values_taken(*option) == 0) {
        uses_.push_back({option, typed, std::nullopt, typed});
        continue;
      }
      if (letter + 1 < word.size()) {  // the rest of the word is its value
        uses_.push_back({option, typed, word.substr(letter + 1), word});
        return at + 1;
      }
      return after_values(*option, typed, at);
    }
    return at + 1;
  }

  // A word for an argument of the command; with prefix_command(), once its
  // arguments are filled, PROGRAM, whose words are its own.
  std::optional<std::size_t> positional(std::size_t at) {
    if (!app_.get_prefix_command()) return at + 1;
    if (program_room_ == 0) return std::nullopt;
    --program_room_;
    return at + 1;
  }

  // Checks the words OPTION (typed as TYPED at AT) takes as its values and
  // returns the index after them.
  std::size_t after_values(const CLI::Option& option, std::string_view typed, std::size_t at) {
    const std::size_t count = values_taken(option);
    if (count > 0 && at + 1 == args_.size()) throw_value_left_off(command_, option, typed);
    for (std::size_t value = at + 1; value <= at + count && value < args_.size(); ++value) {
      if (is_option_not_value(app_, option, args_[value])) throw_missing_value(command_, option, typed, args_[value]);
      if (args_[value].empty() && !empty_value_means_none(option)) throw_empty_value(command_, option, typed);
    }
    if (count == 0) uses_.push_back({&option, std::string(typed), std::nullopt, std::string(typed)});
    else uses_.push_back({&option, std::string(typed), args_[at + 1], fmt::format("{} {}", typed, args_[at + 1])});
    return at + 1 + count;
  }

  // How many words the command's own arguments take before PROGRAM.
  std::size_t positional_room() const {
    std::size_t room = 0;
    for (const CLI::Option* option : app_.get_options()) {
      if (option->get_positional()) room += static_cast<std::size_t>(std::max(0, option->get_items_expected_max()));
    }
    return room;
  }

  const CLI::App& app_;
  const std::vector<std::string>& args_;
  std::string_view command_;
  std::size_t program_room_;
  std::vector<OptionUse> uses_;
};

}  // namespace

std::vector<OptionUse> read_option_uses(const CLI::App& app, const std::vector<std::string>& args,
                                        std::string_view command) {
  return ValueWalk(app, args, command).run();
}

void refuse_missing_values(const CLI::App& app, const std::vector<std::string>& args, std::string_view command) {
  (void)read_option_uses(app, args, command);
}

}  // namespace dlaunch::util
