#include "submit/sweep.h"

#include <algorithm>
#include <fmt/format.h>

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
