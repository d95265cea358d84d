// The GPUs and CPUs a job asks for (resource_request.h).
#include "submit/resource_request.h"

#include <fmt/format.h>
#include <string_view>

#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::submit {
namespace {

// An sbatch option: its long name and its one-letter form ('\0': none).
// Abbreviations of long options are not recognized: the full names are
// what sites document and users copy.
struct OptionName {
  std::string_view long_name;
  char short_name = '\0';
};

constexpr OptionName kGpuOptions[] = {{"--gres"},          {"--gpus", 'G'},     {"--gpus-per-node"},
                                      {"--gpus-per-task"}, {"--gpus-per-socket"}, {"--tres-per-task"}};
constexpr OptionName kCpuOptions[] = {{"--cpus-per-task", 'c'}, {"--cpus-per-gpu"}, {"--mincpus"}};
constexpr OptionName kPartitionOption[] = {{"--partition", 'p'}};
// What dlaunch sets itself on sbatch's and srun's command line: the node
// count (nodes and spares) and the tasks on each node (one dlaunch run per
// node, or one task per GPU). Given again, the later one wins on one of the
// two command lines and the job's shape breaks.
constexpr OptionName kNodeCountOption[] = {{"--nodes", 'N'}};
constexpr OptionName kTaskLayoutOptions[] = {{"--ntasks-per-node"}, {"--ntasks", 'n'}};

// "gpu", "gpu:8", "gpu:a100:8", "gres/gpu:2": one entry of a --gres list
// that asks for GPUs (not "none", not "shard:2").
bool is_gpu_gres(const std::string& entry) {
  std::string name = entry.substr(0, entry.find(':'));
  if (name.starts_with("gres/")) name = name.substr(5);
  return name == "gpu";
}

// The GPU entry of a --gres value, if it has one.
std::optional<std::string> gpu_gres_entry(const std::string& value) {
  for (const auto& entry : util::split(value, ','))
    if (is_gpu_gres(entry)) return entry;
  return std::nullopt;
}

// Whether VALUE of option NAME asks for what the option list is about:
// --gres and --tres-per-task only when they name GPUs.
bool asks_for_gpus(std::string_view name, const std::string& value) {
  if (name == "--gres") return gpu_gres_entry(value).has_value();
  if (name == "--tres-per-task") return value.find("gres/gpu") != std::string::npos;
  return true;
}

// The count at the end of "[type:]N" ("a100:8" → 8, "16" → 16).
std::optional<int> trailing_count(const std::string& value) {
  auto parts = util::split(value, ':');
  auto count = util::parse_int(parts.back());
  if (!count || *count < 0 || *count > (1 << 20)) return std::nullopt;
  return static_cast<int>(*count);
}

// The number a request holds: a --gres entry without a count asks for one.
std::optional<int> count_of(std::string_view name, const std::string& value) {
  if (name == "--tres-per-task") return std::nullopt;
  if (name != "--gres") return trailing_count(value);
  std::string entry = *gpu_gres_entry(value);
  if (entry.find(':') == std::string::npos) return 1;
  return trailing_count(entry).value_or(1);  // "gpu:a100": a type, one GPU
}

// The value of OPTION at ARGS[I] when ARGS[I] is it: "--gres=gpu:8",
// "--gres" "gpu:8", "-G8", "-G" "8". TAKEN: how many words it used.
std::optional<std::string> value_at(const std::vector<std::string>& args, std::size_t i, const OptionName& option,
                                    std::size_t& taken) {
  const std::string& word = args[i];
  const std::string long_name(option.long_name);
  const std::string short_name = option.short_name ? std::string{'-', option.short_name} : std::string();
  taken = 1;
  if (word.starts_with(long_name + "=")) return word.substr(long_name.size() + 1);
  if (!short_name.empty() && word.starts_with(short_name) && word.size() > 2 && !word.starts_with("--"))
    return word.substr(2);
  if (word != long_name && (short_name.empty() || word != short_name)) return std::nullopt;
  if (i + 1 >= args.size()) return std::nullopt;
  taken = 2;
  return args[i + 1];
}

template <std::size_t N>
std::optional<SbatchArgRequest> request_in(const std::vector<std::string>& args, const OptionName (&options)[N],
                                           bool gpus) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    for (const OptionName& option : options) {
      std::size_t taken = 1;
      auto value = value_at(args, i, option, taken);
      if (!value || (gpus && !asks_for_gpus(option.long_name, *value))) continue;
      std::string written = taken == 2 ? args[i] + " " + *value : args[i];
      return SbatchArgRequest{written, std::string(option.long_name), *value, count_of(option.long_name, *value)};
    }
  }
  return std::nullopt;
}

std::string source_of(const SubmitSettings& settings, const char* name) {
  const auto* found = settings.find(name);
  return found == nullptr ? std::string("--") + name : found->source;
}

// GPUs per node from --gpus-per-node, or from --gpus (sbatch's -G: the
// job's GPUs), which must split evenly: every node runs as many workers.
int own_gpus_per_node(const SubmitSettings& settings, int nodes) {
  const int per_node = settings.bounded_integer("gpus-per-node").value_or(1);
  auto total = settings.bounded_integer("gpus");
  if (!total) return per_node;
  if (given_by_user(settings, "gpus-per-node"))
    throw util::InputError(fmt::format("gpus (from {}) and gpus-per-node (from {}) both say how many GPUs the "
                                       "job gets; give one of them",
                                       source_of(settings, "gpus"), source_of(settings, "gpus-per-node")));
  if (*total % nodes != 0 || *total / nodes > 1024)
    throw util::InputError(fmt::format(
        "gpus {} (from {}) must split evenly over the {} training node(s), at most 1024 each: dlaunch runs "
        "the same number of workers on every node. Give a multiple of {}, or --gpus-per-node",
        *total, source_of(settings, "gpus"), nodes, nodes));
  return *total / nodes;
}

// What the user's GPU REQUEST gives each node; nullopt when it cannot be
// said (per socket, per task with one task per GPU, --tres-per-task).
std::optional<int> gpus_per_node_of(const SbatchArgRequest& request, int nodes, bool one_task_per_gpu,
                                    const std::string& source) {
  if (!request.count || request.name == "--gpus-per-socket") return std::nullopt;
  if (request.name == "--gpus-per-task") return one_task_per_gpu ? std::nullopt : request.count;
  if (request.name != "--gpus") return request.count;
  if (*request.count % nodes != 0)
    throw util::InputError(fmt::format(
        "sbatch-arg '{}' (from {}) must split evenly over the {} training node(s): dlaunch runs the same "
        "number of workers on every node. Give a multiple of {}, or --gpus-per-node",
        request.option, source, nodes, nodes));
  return *request.count / nodes;
}

// The user's GPU REQUEST replaces dlaunch's own; a --gpus-per-node or
// --gpus the user gave too must agree with it.
void take_gpu_request(Resources& resources, const SubmitSettings& settings, const SbatchArgRequest& request,
                      int nodes, bool one_task_per_gpu) {
  const std::string source = source_of(settings, "sbatch-arg");
  const bool user_count = given_by_user(settings, "gpus-per-node") || given_by_user(settings, "gpus");
  const char* count_setting = given_by_user(settings, "gpus") ? "gpus" : "gpus-per-node";
  auto derived = gpus_per_node_of(request, nodes, one_task_per_gpu, source);
  if (derived && user_count && *derived != resources.gpus_per_node)
    throw util::InputError(fmt::format(
        "sbatch-arg '{}' (from {}) gives each node {} GPU(s), but {} (from {}) says {}; give the GPUs once "
        "(the sbatch-arg replaces dlaunch's own request)",
        request.option, source, *derived, count_setting, source_of(settings, count_setting),
        resources.gpus_per_node));
  if (!derived && !user_count && one_task_per_gpu)
    throw util::InputError(fmt::format(
        "--launch task starts one task per GPU, but how many GPUs each node gets cannot be read from "
        "sbatch-arg '{}' (from {}); give --gpus-per-node N too",
        request.option, source));
  resources.own_gpu_request = false;
  if (derived) resources.gpus_per_node = *derived;
}

// Refuses an option of LIST (SETTING's: sbatch-arg or srun-arg) that sets
// what dlaunch sets itself, naming both and what to keep.
void refuse_own_options(const SubmitSettings& settings, const char* setting) {
  const std::vector<std::string> args = settings.list(setting);
  if (auto nodes = request_in(args, kNodeCountOption, false)) {
    const std::int64_t own = settings.integer("nodes").value_or(1) + settings.integer("spare-nodes").value_or(0);
    throw util::InputError(fmt::format(
        "{} '{}' (from {}) contradicts dlaunch's own --nodes={} (nodes (from {}) plus spare-nodes), which "
        "its srun starts on; keep dlaunch's: give --nodes N (and --spare-nodes) instead of the {}",
        setting, nodes->option, source_of(settings, setting), own, source_of(settings, "nodes"), setting));
  }
  if (auto tasks = request_in(args, kTaskLayoutOptions, false))
    throw util::InputError(fmt::format(
        "{} '{}' (from {}) contradicts dlaunch's own --ntasks-per-node (one dlaunch run per node with "
        "--launch node, one task per GPU with --launch task); keep dlaunch's: drop the {}, and give "
        "--gpus-per-node N for the workers of each node",
        setting, tasks->option, source_of(settings, setting), setting));
}

}  // namespace

void refuse_contradicting_layout(const SubmitSettings& settings) {
  refuse_own_options(settings, "sbatch-arg");
  refuse_own_options(settings, "srun-arg");
}

std::optional<SbatchArgRequest> gpu_request_in(const std::vector<std::string>& sbatch_args) {
  return request_in(sbatch_args, kGpuOptions, true);
}

std::optional<SbatchArgRequest> cpu_request_in(const std::vector<std::string>& sbatch_args) {
  return request_in(sbatch_args, kCpuOptions, false);
}

std::optional<std::string> partition_in(const std::vector<std::string>& sbatch_args) {
  auto found = request_in(sbatch_args, kPartitionOption, false);
  if (!found) return std::nullopt;
  return found->value;
}

bool given_by_user(const SubmitSettings& settings, const std::string& name) {
  const auto* found = settings.find(name);
  return found != nullptr && found->source != kBuiltInSource &&
         !found->source.starts_with(kPartitionDefaultSource);
}

Resources resources_of(const SubmitSettings& settings, const std::vector<std::string>& sbatch_args, int nodes,
                       bool one_task_per_gpu) {
  Resources resources;
  resources.gpus_per_node = own_gpus_per_node(settings, nodes);
  if (auto gpus = gpu_request_in(sbatch_args)) take_gpu_request(resources, settings, *gpus, nodes, one_task_per_gpu);
  auto cpus_per_gpu = settings.bounded_integer("cpus-per-gpu");
  if (auto cpus = cpu_request_in(sbatch_args)) {
    if (given_by_user(settings, "cpus-per-gpu"))
      throw util::InputError(fmt::format(
          "sbatch-arg '{}' (from {}) and cpus-per-gpu (from {}) both ask for CPUs; give one of them (the "
          "sbatch-arg replaces dlaunch's own request)",
          cpus->option, source_of(settings, "sbatch-arg"), source_of(settings, "cpus-per-gpu")));
    if (cpus->name == "--cpus-per-task") resources.step_cpus_per_task = cpus->count;
    return resources;
  }
  // --exclusive: every CPU of the nodes is the job's; a count would only narrow what the step may use.
  if (settings.flag("exclusive") && !given_by_user(settings, "cpus-per-gpu")) return resources;
  resources.cpus_per_worker = cpus_per_gpu.value_or(kDefaultCpusPerWorker);
  return resources;
}

bool wants_partition_cpu_default(const SubmitSettings& settings) {
  return !given_by_user(settings, "cpus-per-gpu") && !settings.flag("exclusive") &&
         !cpu_request_in(settings.list("sbatch-arg"));
}

}  // namespace dlaunch::submit
