#include "submit/sweep.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <system_error>

#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::submit {
namespace {

constexpr const char* kExample = "e.g. --sweep lr=0.1,0.01 --sweep batch_size=32,64";

bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '-'; }

// NAME becomes the program's option --NAME=VALUE: no '=', space or quote.
bool is_sweep_name(std::string_view name) {
  return !name.empty() && is_name_start(name.front()) && std::all_of(name.begin(), name.end(), is_name_char);
}

std::string what(const std::string& text, const std::string& source) {
  return fmt::format("sweep '{}' (from {})", text, source);
}

// "0.01", "1e-4", "-3", "+2.5", "32": a number as it is written in a sweep.
bool is_number(std::string_view word) {
  if (!word.empty() && (word.front() == '+' || word.front() == '-')) word.remove_prefix(1);
  if (word.empty() || !(std::isdigit(static_cast<unsigned char>(word.front())) || word.front() == '.')) return false;
  double value = 0;
  auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  return end == word.data() + word.size() && error != std::errc::invalid_argument;
}

// "0.01," of "lr=0.1, 0.01, 0.001" is "0.01"; a lone "," is "".
std::string_view without_commas(std::string_view word) {
  while (!word.empty() && word.front() == ',') word.remove_prefix(1);
  while (!word.empty() && word.back() == ',') word.remove_suffix(1);
  return word;
}

// A word after "--sweep lr=0.1" that belongs to its values, not a program:
// a number, with or without commas around it, or a lone comma. No program
// is named so.
bool is_split_off_value(std::string_view word) {
  return without_commas(word).empty() || is_number(without_commas(word));
}

// The words of TEXT between spaces and tabs.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  for (const std::string& part : util::split(text, ' ')) {
    for (const std::string& word : util::split(part, '\t')) {
      if (!word.empty()) words.push_back(word);
    }
  }
  return words;
}

// "0.1 0.01": numbers separated by spaces, a list that was meant to be one.
bool is_spaced_numbers(std::string_view value) {
  std::vector<std::string> words = words_of(value);
  return words.size() > 1 && std::all_of(words.begin(), words.end(), is_number);
}

// LIST with ';' ("1e-3;1e-4") or numbers with spaces between them ("0.1 0.01",
// quoted) would each be a single value: refused, with the comma form.
void refuse_misplaced_separator(const std::string& name, const std::string& list, const std::string& text,
                                const std::string& source) {
  const bool semicolons = list.find(';') != std::string::npos;
  bool spaced = false;
  std::vector<std::string> values;
  for (const std::string& raw : util::split(list, semicolons ? ';' : ',')) {
    if (is_spaced_numbers(raw)) {
      spaced = true;
      for (std::string& word : words_of(raw)) values.push_back(std::move(word));
    } else {
      values.emplace_back(util::trim(raw));
    }
  }
  if (!semicolons && !spaced) return;
  throw util::InputError(fmt::format(
      "{}: the values are separated by {}, which would make them one value. Separate them with commas: "
      "--sweep {}={}",
      what(text, source), semicolons ? "';'" : "spaces", name, util::join(values, ",")));
}

// Whether VALUE opens a bracket it does not close, or closes one it did
// not open: a piece of a bracketed list that the commas cut apart.
bool unbalanced_brackets(std::string_view value) {
  int depth = 0;
  for (char c : value) {
    if (c == '[' || c == '(' || c == '{') ++depth;
    if (c == ']' || c == ')' || c == '}') --depth;
    if (depth < 0) return true;
  }
  return depth != 0;
}

// LIST written as a list of Python's or JSON's ("[0.1,0.01]"): the commas
// cut it into "[0.1" and "0.01]", and each task would get a bracket.
// Refused, with the bare comma form.
void refuse_bracketed_list(const std::string& name, const std::string& list, const std::string& text,
                           const std::string& source) {
  auto pieces = util::split(list, ',');
  if (std::none_of(pieces.begin(), pieces.end(), [](const std::string& piece) { return unbalanced_brackets(piece); }))
    return;
  std::string bare(util::trim(list));
  while (!bare.empty() && (bare.front() == '[' || bare.front() == '(' || bare.front() == '{')) bare.erase(0, 1);
  while (!bare.empty() && (bare.back() == ']' || bare.back() == ')' || bare.back() == '}')) bare.pop_back();
  throw util::InputError(fmt::format(
      "{}: the values are in brackets, which the commas would cut apart (a task would get --{}={}). Give "
      "them bare, separated by commas: --sweep {}={}",
      what(text, source), name, util::trim(pieces.front()), name, bare));
}

std::vector<std::string> sweep_values(const std::string& list, const std::string& text,
                                      const std::string& source) {
  std::vector<std::string> values;
  for (const std::string& raw : util::split(list, ',')) {
    std::string value(util::trim(raw));
    if (value.empty())
      throw util::InputError(fmt::format(
          "{}: a value is empty. Give NAME=V1,V2,... with one value or more between the commas, {}",
          what(text, source), kExample));
    if (std::find(values.begin(), values.end(), value) != values.end())
      throw util::InputError(fmt::format(
          "{}: the value '{}' is given twice; it would run the same task twice. Give each value once",
          what(text, source), value));
    values.push_back(std::move(value));
  }
  return values;
}

}  // namespace

SweepAxis parse_sweep_axis(const std::string& text, const std::string& source) {
  std::size_t equals = text.find('=');
  if (equals == std::string::npos)
    throw util::InputError(fmt::format("{}: expected NAME=V1,V2,... (the values are comma-separated), {}",
                                       what(text, source), kExample));
  SweepAxis axis;
  axis.name = std::string(util::trim(text.substr(0, equals)));
  if (!is_sweep_name(axis.name))
    throw util::InputError(fmt::format(
        "{}: '{}' is no sweep name. The program gets --NAME=VALUE, so NAME must start with a letter "
        "or '_' and hold only letters, digits, '_' and '-', {}",
        what(text, source), axis.name, kExample));
  refuse_misplaced_separator(axis.name, text.substr(equals + 1), text, source);
  refuse_bracketed_list(axis.name, text.substr(equals + 1), text, source);
  axis.values = sweep_values(text.substr(equals + 1), text, source);
  return axis;
}

std::vector<SweepAxis> parse_sweep(const std::vector<std::string>& texts, const std::string& source) {
  std::vector<SweepAxis> axes;
  std::int64_t tasks = 1;
  for (const std::string& text : texts) {
    SweepAxis axis = parse_sweep_axis(text, source);
    for (const SweepAxis& earlier : axes) {
      if (earlier.name == axis.name)
        throw util::InputError(fmt::format(
            "{}: '{}' is swept twice (from {}). Give all its values in one --sweep {}=V1,V2,...",
            what(text, source), axis.name, source, axis.name));
    }
    tasks *= static_cast<std::int64_t>(axis.values.size());
    if (tasks > kMaxArrayTasks)
      throw util::InputError(fmt::format(
          "sweep (from {}) makes more than {} tasks with '{}' (every combination of the values is "
          "a task). Sweep fewer values, or split the sweep into several submissions",
          source, kMaxArrayTasks, text));
    axes.push_back(std::move(axis));
  }
  return axes;
}

void refuse_split_sweep(const std::vector<std::string>& sweeps, const std::vector<std::string>& command) {
  if (sweeps.empty() || command.empty() || !is_split_off_value(command.front())) return;
  // The words the shell split off: every value before the real program.
  std::vector<std::string> values{std::string(without_commas(sweeps.back()))};
  for (std::size_t i = 0; i < command.size() && is_split_off_value(command[i]); ++i) {
    if (!without_commas(command[i]).empty()) values.emplace_back(without_commas(command[i]));
  }
  throw util::UsageError(fmt::format(
      "--sweep {} is followed by '{}', which would be the program to run: the values of a --sweep are "
      "one word, separated by commas with no space. Give --sweep {}",
      sweeps.back(), command.front(), util::join(values, ",")));
}

std::vector<SweepTask> sweep_tasks(const std::vector<SweepAxis>& axes) {
  std::vector<SweepTask> tasks(1);
  for (const SweepAxis& axis : axes) {
    std::vector<SweepTask> product;
    product.reserve(tasks.size() * axis.values.size());
    for (const SweepTask& task : tasks) {
      for (const std::string& value : axis.values) {
        SweepTask longer = task;
        longer.values.emplace_back(axis.name, value);
        longer.args.push_back(fmt::format("--{}={}", axis.name, value));
        product.push_back(std::move(longer));
      }
    }
    tasks = std::move(product);
  }
  for (std::size_t i = 0; i < tasks.size(); ++i) tasks[i].index = static_cast<std::int64_t>(i);
  return tasks;
}

std::string describe_values(const SweepTask& task) {
  std::string text;
  for (const auto& [name, value] : task.values) text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, value);
  return text;
}

}  // namespace dlaunch::submit
