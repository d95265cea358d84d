#include "submit/submit_settings.h"

#include <fmt/format.h>

#include "launch/launch_site.h"
#include "util/error.h"

namespace dlaunch::submit {
namespace {

// The bounds of the integer settings: what Slurm and dlaunch run take,
// checked once where a value enters (a flag or dlaunch.toml), so that a
// value out of range gets one message however it was given.
// The launchers one job may have (nodes and spares), as dlaunch run on the
// nodes bounds them (launch/launch_site.h says why).
constexpr std::int64_t kMaxNodes = launch::kMostLaunchers;
constexpr std::int64_t kMaxGpusPerNode = 1'024;
constexpr std::int64_t kMaxCpusPerGpu = 4'096;
constexpr std::int64_t kMaxCount = 1'000'000;
constexpr std::int64_t kMaxParallel = 10'000;  // submit/job_array.cc says why
constexpr std::int64_t kWeek = 7 * 24 * 3600;
constexpr std::int64_t kMaxSteps = 1'000'000'000'000;

}  // namespace

const std::vector<Key>& submit_keys() {
  static const std::vector<Key> keys = {
      {"nodes", ValueKind::kInteger, "Number of nodes that train (sbatch --nodes, plus any spares)",
       "Topology", "N", {1, kMaxNodes}},
      {"spare-nodes", ValueKind::kInteger,
       "Hot spare nodes: allocated with the job, they stand by and take a lost node's place without "
       "requeueing (uses a restart of --max-restarts; --launch node only)", "Reliability", "N", {0, kMaxNodes}},
      {"min-nodes", ValueKind::kInteger,
       "Once no spare is left, go on after a lost node with fewer nodes, down to this many (dlaunch "
       "run --min-nodes)", "Reliability", "N", {1, kMaxNodes}},
      {"node-fail-limit", ValueKind::kInteger,
       "Bench a node whose workers fail first this many rounds in a row, for a spare (dlaunch run "
       "--node-fail-limit; default 2)", "Reliability", "N", {0, kMaxCount}},
      {"gate", ValueKind::kBool,
       "Before the first attempt, check every node, spares included (a verified all-reduce, then "
       "node-pair bandwidth); bench the bad ones, start on the healthy ones, and write the benched "
       "hosts to <submission folder>/benched-hosts for --exclude (dlaunch run --gate; --launch node "
       "only)", "Reliability"},
      {"gate-timeout", ValueKind::kInteger,
       "With gate: seconds the launchers may take to arrive, then the gate's check (dlaunch run "
       "--gate-timeout; default 60)", "Reliability", "SECONDS", {1, kWeek}},
      {"hang-timeout", ValueKind::kInteger,
       "Seconds without progress on any rank after which the job is hung: every worker's stack is "
       "captured into the submission folder, then the job stops (exit code 124; dlaunch run "
       "--hang-timeout; --launch node only)", "Hangs and stacks", "SECONDS", {0, kWeek}},
      {"startup-timeout", ValueKind::kInteger,
       "With hang-timeout: until any rank reports its first step, the job is not hung before this many "
       "seconds after its start (dlaunch run --startup-timeout; longer than hang-timeout)",
       "Hangs and stacks", "SECONDS", {1, kWeek}},
      {"straggler-lag", ValueKind::kInteger,
       "Name ranks more than this many progress steps behind the median while the job runs (dlaunch "
       "run --straggler-lag)", "Hangs and stacks", "STEPS", {0, kMaxSteps}},
      {"stack-timeout", ValueKind::kInteger, "dlaunch run --stack-timeout on every node",
       "Hangs and stacks", "SECONDS", {1, kWeek}},
      {"gpus-per-node", ValueKind::kInteger,
       "GPUs per node; one worker per GPU (sbatch --gpus-per-node; a GPU request in --sbatch-arg, e.g. "
       "--sbatch-arg=--gres=gpu:8, replaces it)",
       "Topology", "N", {0, kMaxGpusPerNode}},
      {"gpus", ValueKind::kInteger,
       "The training nodes' GPUs together, as sbatch's -G counts them: the same number on every node, "
       "N / nodes (instead of --gpus-per-node)",
       "Topology", "N", {0, kMaxGpusPerNode * kMaxNodes}},
      {"cpus-per-gpu", ValueKind::kInteger,
       "CPUs per GPU, that is per worker: a node's task gets this x GPUs (sbatch --cpus-per-task; --launch "
       "task: this per task). Default: the partition's DefCpuPerGPU when scontrol shows one, else 1; none "
       "with --exclusive or when an --sbatch-arg asks for CPUs",
       "Topology", "N", {1, kMaxCpusPerGpu}},
      {"partition", ValueKind::kString, "Partition (sbatch --partition)", "Slurm", "NAME"},
      {"job-name", ValueKind::kString,
       "Job name (sbatch --job-name; default: the script or module the command runs, e.g. train for "
       "train.py, mypkg.train for python3 -m mypkg.train)",
       "Slurm", "NAME"},
      {"time", ValueKind::kString, "Time limit, e.g. 1-00:00:00 (sbatch --time)", "Slurm", "TIME"},
      {"account", ValueKind::kString, "Account to charge (sbatch --account)", "Slurm", "NAME"},
      {"qos", ValueKind::kString, "Quality of service (sbatch --qos)", "Slurm", "NAME"},
      {"constraint", ValueKind::kString, "Node features required (sbatch --constraint)",
       "Slurm", "FEATURES"},
      {"exclusive", ValueKind::kBool, "Whole nodes only (sbatch --exclusive)", "Slurm"},
      {"mem", ValueKind::kString, "Memory per node, e.g. 64G (sbatch --mem)", "Slurm", "SIZE"},
      {"sbatch-arg", ValueKind::kStringList, "Any other sbatch option, passed through (repeatable)",
       "Slurm", "ARG"},
      {"srun-arg", ValueKind::kStringList,
       "An option for the srun that starts the job step, e.g. --srun-arg=--export=ALL or pyxis's "
       "--srun-arg=--container-mounts=/data:/data (repeatable; in the job script and with --srun)", "Slurm", "ARG"},
      {"container-image", ValueKind::kString,
       "Run the job step in this container image with pyxis (srun --container-image; an "
       "--srun-arg=--container-image=IMAGE is read as this). The nodes run --container-dlaunch there, else this "
       "machine's dlaunch mounted read-only as /opt/dlaunch/bin/dlaunch; the submission folder is mounted at its "
       "own path, and any --srun-arg=--container-mounts joins the same option", "Containers", "IMAGE"},
      {"container-dlaunch", ValueKind::kString,
       "With container-image: the dlaunch installed in the image (an absolute path there), which the nodes run "
       "instead of this machine's mounted one; best the same version", "Containers", "PATH"},
      {"setup", ValueKind::kStringList,
       "A shell line the job script runs before srun starts the step, e.g. --setup 'module load cuda' "
       "or --setup 'source venv/bin/activate' (repeatable). It runs on the batch host (with --srun: "
       "here), and srun passes the environment it leaves on to every node", "Job", "LINE"},
      {"sweep", ValueKind::kStringList,
       "NAME=V1,V2,...: submit one job array over every combination of the values (repeatable); each "
       "task gets --NAME=VALUE after the program's arguments and its own folder task_<i>/", "Sweeps",
       "NAME=V1,V2"},
      {"max-parallel", ValueKind::kInteger,
       "At most this many tasks of the sweep (or --array) run at once (sbatch --array=...%N)", "Sweeps", "N", {1, kMaxParallel}},
      {"signal", ValueKind::kString,
       "[R:]SIG@SECONDS: Slurm sends SIG (USR1 or USR2) to every node's dlaunch run SECONDS "
       "(0-65535, default 60) before the time limit, and dlaunch forwards it to the workers so they "
       "can checkpoint; Slurm may send it up to 60 s earlier than that (sbatch --signal, without B:)",
       "Reliability", "[R:]SIG@SECONDS"},
      {"requeue", ValueKind::kBool,
       "After the --signal, once the workers exited, node 0 requeues the job (sbatch --requeue; "
       "needs --signal; not with --srun or --launch task)", "Reliability"},
      {"output-dir", ValueKind::kString, "Where submission folders are made (default slurm-outputs)",
       "Output", "DIR"},
      {"launch", ValueKind::kString, "node: one dlaunch run per node; task: srun starts one task per GPU",
       "Job", "node|task"},
      {"resv-ports", ValueKind::kBool,
       "Ask srun to reserve a port per node (--resv-ports=1; needs MpiParams=ports=...) and use it",
       "Slurm"},
      {"srun", ValueKind::kBool, "Run in the foreground with srun instead of submitting with sbatch",
       "Job"},
      {"wait", ValueKind::kBool,
       "sbatch mode: wait for the job, stream its log, exit with its code (a job array: one line per "
       "task, then a table; 0 only if every task completed with 0)", "Job"},
      {"python", ValueKind::kString, "Interpreter for .py programs on the nodes", "Job", "FILE"},
      {"max-restarts", ValueKind::kInteger, "dlaunch run --max-restarts on every node",
       "Reliability", "N", {0, kMaxCount}},
      {"retry-repeated-failures", ValueKind::kBool,
       "Spend every restart even on a failure that repeats the previous attempt's (dlaunch run "
       "--retry-repeated-failures; needs max-restarts)", "Reliability"},
      {"shutdown-timeout", ValueKind::kInteger, "dlaunch run --shutdown-timeout on every node",
       "Reliability", "SECONDS", {0, kWeek}},
      {"rdzv-timeout", ValueKind::kInteger, "dlaunch run --rdzv-timeout on every node",
       "Reliability", "SECONDS", {0, kWeek}},
      {"heartbeat-timeout", ValueKind::kInteger,
       "Seconds of silence after which a node (frozen, cut off, powered off) counts as lost: the job "
       "stops, or a spare takes its place (dlaunch run --heartbeat-timeout; default 30)",
       "Reliability", "SECONDS", {1, kWeek}},
      {"health-check", ValueKind::kString,
       "Before each restart every node runs CMD; a node whose check fails is benched for a spare, or "
       "the job stops naming it (dlaunch run --health-check)", "Reliability", "CMD"},
      {"health-check-timeout", ValueKind::kInteger,
       "Seconds health-check may run before it is killed and fails (dlaunch run --health-check-timeout; "
       "default 60)", "Reliability", "SECONDS", {1, kWeek}},
      {"tee", ValueKind::kString, "dlaunch run --tee on every node", "Output", "0|1|2|3|MAP"},
      {"redirects", ValueKind::kString, "dlaunch run --redirects on every node",
       "Output", "0|1|2|3|MAP"},
      {"prefix", ValueKind::kString, "dlaunch run --prefix on every node", "Output", "TEMPLATE"},
      {"run-arg", ValueKind::kStringList, "Any other dlaunch run option for the nodes (repeatable)",
       "Job", "ARG"},
  };
  return keys;
}

const Key* find_key(const std::string& name) {
  std::string dashed = name;
  for (char& c : dashed) c = (c == '_') ? '-' : c;
  if (dashed == "sbatch-args") dashed = "sbatch-arg";
  if (dashed == "run-args") dashed = "run-arg";
  if (dashed == "srun-args") dashed = "srun-arg";
  for (const auto& key : submit_keys()) {
    if (dashed == key.name) return &key;
  }
  return nullptr;
}

const char* placeholder_of(const Key& key) {
  if (key.placeholder != nullptr) return key.placeholder;
  switch (key.kind) {
    case ValueKind::kInteger: return "N";
    case ValueKind::kStringList: return "ARG";
    default: return "VALUE";
  }
}

const char* kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kInteger: return "an integer";
    case ValueKind::kBool: return "true or false";
    case ValueKind::kString: return "a string";
    case ValueKind::kStringList: return "a list of strings";
  }
  return "a value";
}

void SubmitSettings::set(const std::string& name, Value value, std::string source) {
  values_[name] = util::Sourced<Value>{std::move(value), std::move(source)};
}

const util::Sourced<Value>* SubmitSettings::find(const std::string& name) const {
  auto found = values_.find(name);
  return found == values_.end() ? nullptr : &found->second;
}

std::optional<std::int64_t> SubmitSettings::integer(const std::string& name) const {
  const auto* found = find(name);
  if (found == nullptr) return std::nullopt;
  return std::get<std::int64_t>(found->value);
}

std::int64_t check_integer_range(const Key& key, std::int64_t value, const std::string& source) {
  if (value < key.range.low || value > key.range.high)
    throw util::InputError(fmt::format("{} must be an integer from {} to {}, got {}", source, key.range.low,
                                       key.range.high, value));
  return value;
}

std::optional<int> SubmitSettings::bounded_integer(const std::string& name, int low, int high) const {
  auto value = integer(name);
  if (!value) return std::nullopt;
  if (*value < low || *value > high)
    throw util::InputError(fmt::format("{} must be from {} to {}, got {} (from {})", name, low, high, *value,
                                       find(name)->source));
  return static_cast<int>(*value);
}

std::optional<int> SubmitSettings::bounded_integer(const std::string& name) const {
  const Key* key = find_key(name);
  DLAUNCH_ASSERT(key != nullptr && key->kind == ValueKind::kInteger && key->range.high <= INT32_MAX);
  return bounded_integer(name, static_cast<int>(key->range.low), static_cast<int>(key->range.high));
}

std::optional<std::string> SubmitSettings::string(const std::string& name) const {
  const auto* found = find(name);
  if (found == nullptr) return std::nullopt;
  return std::get<std::string>(found->value);
}

bool SubmitSettings::flag(const std::string& name) const {
  const auto* found = find(name);
  return found != nullptr && std::get<bool>(found->value);
}

std::vector<std::string> SubmitSettings::list(const std::string& name) const {
  const auto* found = find(name);
  if (found == nullptr) return {};
  return std::get<std::vector<std::string>>(found->value);
}

SubmitSettings default_submit_settings() {
  SubmitSettings defaults;
  defaults.set("nodes", std::int64_t{1}, kBuiltInSource);
  defaults.set("gpus-per-node", std::int64_t{1}, kBuiltInSource);
  // One CPU per worker (resource_request.h): never several workers on one.
  defaults.set("cpus-per-gpu", std::int64_t{1}, kBuiltInSource);
  defaults.set("output-dir", std::string("slurm-outputs"), kBuiltInSource);
  defaults.set("launch", std::string("node"), kBuiltInSource);
  return defaults;
}

std::string format_value(const Value& value) {
  struct Formatter {
    std::string operator()(std::int64_t number) const { return std::to_string(number); }
    std::string operator()(bool flag) const { return flag ? "true" : "false"; }
    std::string operator()(const std::string& text) const { return fmt::format("'{}'", text); }
    std::string operator()(const std::vector<std::string>& items) const {
      std::string joined;
      for (const auto& item : items) joined += (joined.empty() ? "" : ", ") + fmt::format("'{}'", item);
      return "[" + joined + "]";
    }
  };
  return std::visit(Formatter{}, value);
}

}  // namespace dlaunch::submit
