// Which Python the workers run, said where a user looks for it: a
// `dlaunch run train.py` takes `python3` from PATH, which on a cluster is
// often a pyenv, conda or module interpreter without torch, and the only
// sign was `ModuleNotFoundError: No module named 'torch'`. So the
// interpreter's full path and where it came from are shown by `dlaunch
// env`, at the start of a run and in the failure summary, and a worker
// that failed at import on this node is checked against the node's other
// interpreters, to name one that has the module.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launch/run_options.h"
#include "util/environment.h"

namespace dlaunch::launch {

struct WorkerPython {
  std::string name;    // as the workers' argv has it: "python3", "/opt/py/bin/python"
  std::string source;  // "--python", "$PYTHON_EXEC", "python3 in PATH"
  std::optional<std::string> path;  // NAME found in the workers' PATH; nullopt: not found

  // "/usr/bin/python3 (python3 in PATH)", or the name and why it was not found.
  std::string describe() const;
};

// The interpreter OPTIONS run PROGRAM with (--python, else $PYTHON_EXEC,
// else python3), looked up in ENVIRONMENT's PATH as the workers' exec will.
WorkerPython choose_worker_python(const RunOptions& options, const util::Environment& environment);

// The same choice without the lookup (path stays nullopt), for a check made
// on another machine than the node's: this PATH says nothing of the node's.
WorkerPython name_worker_python(const RunOptions& options, const util::Environment& environment);

// The top-level module a Python traceback's LINES say is missing
// ("ModuleNotFoundError: No module named 'torch.cuda'" gives "torch");
// nullopt when they say no such thing.
std::optional<std::string> missing_module(const std::vector<std::string>& lines);

// Interpreters on this node other than USED that may hold a module: every
// python3 in ENVIRONMENT's PATH, /usr/bin/python3 and /usr/local/bin/python3,
// each once (by real path).
std::vector<std::string> other_pythons(const WorkerPython& used, const util::Environment& environment);

// The first of CANDIDATES that can import MODULE, each asked with
// importlib's find_spec (which does not run the module) for at most a few
// seconds; nullopt when none can.
std::optional<std::string> python_with_module(const std::string& module, const std::vector<std::string>& candidates);

// What to tell the user when a worker on this node failed because USED
// lacks a module (LINES: its last lines); nullopt when that is not why.
std::optional<std::string> import_hint(const std::vector<std::string>& lines, const WorkerPython& used,
                                       const util::Environment& environment);

}  // namespace dlaunch::launch
