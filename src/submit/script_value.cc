#include "submit/script_value.h"

#include <array>
#include <fmt/format.h>

#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::submit {
namespace {

bool is_control(char c) {
  auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

// "a newline (\n)", "a NUL byte (\0)", "the control character \x1b".
std::string describe(char c) {
  switch (c) {
    case '\n': return "a newline (\\n)";
    case '\r': return "a carriage return (\\r)";
    case '\t': return "a tab (\\t)";
    case '\0': return "a NUL byte (\\0)";
    default: return fmt::format("the control character \\x{:02x}", static_cast<unsigned char>(c));
  }
}

using util::escaped;

// setup lines are shell text of the script itself; srun-args and sweep
// values are quoted there (on the srun line and in the array's case block),
// but no srun option or program argument a sweep names has a use for a
// control character, and one line each keeps --dry-run readable.
constexpr std::array<std::string_view, 15> kScriptTextSettings = {
    "job-name", "partition", "account", "qos", "time",  "constraint", "mem",
    "sbatch-arg", "output-dir", "signal", "setup", "srun-arg", "sweep",
    "container-image", "container-dlaunch"};

// Why an empty item of the list NAME is refused, and what to give instead;
// "" when an empty item is harmless (an empty setup line).
std::string empty_item_problem(std::string_view name) {
  if (name == "sbatch-arg")
    return "sbatch would read it as the end of its #SBATCH line. Give each an sbatch option, e.g. "
           "--sbatch-arg=--reservation=r1, or remove the empty one";
  if (name == "srun-arg")
    return "srun would take it for the program to run. Give each an srun option, e.g. "
           "--srun-arg=--container-image=IMAGE, or remove the empty one";
  return "";
}

}  // namespace

bool reaches_script_text(std::string_view name) {
  for (std::string_view setting : kScriptTextSettings) {
    if (name == setting) return true;
  }
  return false;
}

void check_script_text(std::string_view what, std::string_view value, std::string_view source,
                       std::string_view remedy) {
  std::size_t at = 0;
  while (at < value.size() && !is_control(value[at])) ++at;
  if (at == value.size()) return;
  std::string todo = remedy.empty() ? fmt::format("Remove it from {} and submit again", source)
                                    : std::string(remedy);
  throw util::InputError(fmt::format(
      "{} (from {}) contains {} at character {}: '{}'. Every value that goes into the job script "
      "must be printable text on one line: a control character would end its #SBATCH line and run "
      "the rest as a shell command. {}",
      what, source, describe(value[at]), at + 1, escaped(value), todo));
}

void check_script_setting(std::string_view name, const Value& value, std::string_view source) {
  if (!reaches_script_text(name)) return;
  if (const auto* text = std::get_if<std::string>(&value)) {
    check_script_text(name, *text, source);
    return;
  }
  const auto* items = std::get_if<std::vector<std::string>>(&value);
  if (items == nullptr) return;
  for (const std::string& item : *items) {
    if (std::string problem = empty_item_problem(name); item.empty() && !problem.empty())
      throw util::InputError(fmt::format("{} (from {}) holds an empty value; {}", name, source, problem));
    check_script_text(name, item, source);
  }
}

}  // namespace dlaunch::submit
