#include "launch/worker_python.h"

#include <filesystem>
#include <fmt/format.h>
#include <regex>

#include "process/worker_process.h"
#include "util/error.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace dlaunch::launch {
namespace {

// How long one interpreter may take to answer whether it has a module:
// a cold start on a shared file system can take seconds, a hung one must
// not hold up the failure report for long.
constexpr const char* kProbeSeconds = "5";

// find_spec locates the module without running it (an import of torch
// takes seconds and may touch GPUs).
constexpr const char* kProbeCode =
    "import importlib.util, sys\n"
    "sys.exit(0 if importlib.util.find_spec(sys.argv[1]) is not None else 3)\n";

std::string real_path(const std::string& path) {
  std::error_code error;
  auto canonical = std::filesystem::canonical(path, error);
  return error ? path : canonical.string();
}

bool is_executable(const std::string& path) {
  return process::find_executable(path, util::Environment()).has_value();
}

}  // namespace

std::string WorkerPython::describe() const {
  if (path) return fmt::format("{} ({})", *path, source);
  return fmt::format("{} ({}; not found in the workers' PATH)", name, source);
}

WorkerPython name_worker_python(const RunOptions& options, const util::Environment& environment) {
  WorkerPython python;
  if (options.python) {
    python.name = options.python->value;
    python.source = options.python->source;
  } else if (auto exec = environment.get("PYTHON_EXEC")) {
    python.name = *exec;
    python.source = "$PYTHON_EXEC";
  } else {
    python.name = "python3";
    python.source = "python3 in PATH";
  }
  return python;
}

WorkerPython choose_worker_python(const RunOptions& options, const util::Environment& environment) {
  WorkerPython python = name_worker_python(options, environment);
  python.path = process::find_executable(python.name, environment);
  return python;
}

std::optional<std::string> missing_module(const std::vector<std::string>& lines) {
  // Python 3's wording, and Python 2's "ImportError: No module named torch".
  static const std::regex missing(R"((ModuleNotFoundError|ImportError): No module named '?([A-Za-z_][A-Za-z0-9_.]*)'?)");
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    std::smatch match;
    if (std::regex_search(*line, match, missing)) {
      std::string module = match[2].str();
      return module.substr(0, module.find('.'));
    }
  }
  return std::nullopt;
}

std::vector<std::string> other_pythons(const WorkerPython& used, const util::Environment& environment) {
  std::vector<std::string> seen;
  if (used.path) seen.push_back(real_path(*used.path));
  std::vector<std::string> candidates;
  auto consider = [&](const std::string& path) {
    if (!is_executable(path)) return;
    std::string real = real_path(path);
    if (std::find(seen.begin(), seen.end(), real) != seen.end()) return;
    seen.push_back(real);
    candidates.push_back(path);
  };
  for (const auto& folder : util::split(environment.get("PATH").value_or(""), ':')) {
    if (!folder.empty()) consider(folder + "/python3");
  }
  consider("/usr/bin/python3");
  consider("/usr/local/bin/python3");
  return candidates;
}

std::optional<std::string> python_with_module(const std::string& module, const std::vector<std::string>& candidates) {
  for (const auto& python : candidates) {
    try {
      // timeout(1) bounds the probe: run_captured itself waits for the end.
      auto run = util::run_captured({"timeout", "-s", "KILL", kProbeSeconds, python, "-c", kProbeCode, module});
      if (run.exit_code == 0) return python;
    } catch (const util::SystemError&) {
      return std::nullopt;  // no timeout(1) here: better no hint than an unbounded wait
    }
  }
  return std::nullopt;
}

std::optional<std::string> import_hint(const std::vector<std::string>& lines, const WorkerPython& used,
                                       const util::Environment& environment) {
  auto module = missing_module(lines);
  if (!module) return std::nullopt;
  std::string text = fmt::format("dlaunch: the workers ran {}, which has no module '{}'", used.describe(), *module);
  auto other = python_with_module(*module, other_pythons(used, environment));
  if (other)
    return text + fmt::format("; {} on this node has it: give --python {} (or set $PYTHON_EXEC)", *other, *other);
  return text + "; no other python3 in PATH, /usr/bin or /usr/local/bin on this node has it either";
}

}  // namespace dlaunch::launch
