#include "slurm/slurm_context.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>

#include "slurm/hostlist.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::slurm {
namespace {

std::optional<util::Sourced<std::string>> first_set(const util::Environment& environment,
                                              std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (auto value = environment.get(name)) return util::Sourced<std::string>{*value, name};
  }
  return std::nullopt;
}

std::optional<util::Sourced<int>> first_int(const util::Environment& environment,
                                      std::initializer_list<const char*> names, int low) {
  auto found = first_set(environment, names);
  if (!found) return std::nullopt;
  auto value = util::parse_int_in_range(found->value, low, 1 << 30, found->source);
  return util::Sourced<int>{static_cast<int>(value), found->source};
}

std::optional<util::Sourced<int>> gpus_on_node(const util::Environment& environment) {
  if (auto declared = first_int(environment, {"SLURM_GPUS_ON_NODE"}, 0)) return declared;
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
    if (auto list = environment.get(name)) {
      int count = count_device_list(*list);
      if (count > 0) return util::Sourced<int>{count, name};
    }
  }
  return std::nullopt;
}

// SLURM_STEP_ID, else SLURM_STEPID (the older name srun still sets).
std::optional<util::Sourced<std::string>> step_variable(const util::Environment& environment) {
  return first_set(environment, {"SLURM_STEP_ID", "SLURM_STEPID"});
}

// The id of the srun step STEP names; nullopt for a step Slurm runs itself,
// named by a number above kMaxNormalStepId or by the word Slurm shows for
// it in a step's name (123.batch). Throws InputError for anything else.
std::optional<std::uint64_t> srun_step_id(const util::Sourced<std::string>& step) {
  static constexpr std::array<std::string_view, 3> kOwnSteps = {"batch", "extern", "interactive"};
  if (std::find(kOwnSteps.begin(), kOwnSteps.end(), step.value) != kOwnSteps.end()) return std::nullopt;
  auto id = static_cast<std::uint64_t>(util::parse_int_in_range(step.value, 0, 0xffffffff, step.source));
  if (id > kMaxNormalStepId) return std::nullopt;
  return id;
}

}  // namespace

std::optional<OutsideStep> outside_step_of_multinode_job(const util::Environment& environment) {
  auto job_id = environment.get("SLURM_JOB_ID");
  if (!job_id) return std::nullopt;
  auto nodes = first_int(environment, {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"}, 1);
  if (!nodes || nodes->value < 2) return std::nullopt;
  auto step = step_variable(environment);
  if (step && srun_step_id(*step)) return std::nullopt;
  std::string why = step ? fmt::format("{}={} is a step Slurm runs itself (the batch script, extern or "
                                       "interactive step), not one srun started",
                                       step->source, step->value)
                         : std::string("SLURM_STEP_ID is unset");
  return OutsideStep{*job_id, *nodes, std::move(why)};
}

int count_device_list(const std::string& list) {
  std::string_view trimmed = util::trim(list);
  if (trimmed.empty() || trimmed == "NoDevFiles") return 0;
  int count = 0;
  for (const auto& item : util::split(trimmed, ',')) {
    if (!util::trim(item).empty()) ++count;
  }
  return count;
}

std::optional<SlurmContext> read_slurm_context(const util::Environment& environment) {
  auto job_id = environment.get("SLURM_JOB_ID");
  if (!job_id || !environment.has("SLURM_NODEID")) return std::nullopt;

  SlurmContext context;
  context.job_id = *job_id;
  if (auto step = step_variable(environment)) context.step_id = srun_step_id(*step);
  context.num_nodes =
      first_int(environment, {"SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES", "SLURM_NNODES"}, 1);
  context.node_id = first_int(environment, {"SLURM_NODEID"}, 0);
  context.nodelist =
      first_set(environment, {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"});
  context.gpus_on_node = gpus_on_node(environment);
  if (auto ports = environment.get("SLURM_STEP_RESV_PORTS")) {
    std::string first = util::split(util::split(*ports, ',')[0], '-')[0];
    context.reserved_port =
        static_cast<int>(util::parse_int_in_range(first, 1, 65535, "SLURM_STEP_RESV_PORTS"));
  }
  return context;
}

std::optional<util::Sourced<std::string>> first_node(const SlurmContext& context) {
  if (!context.nodelist) return std::nullopt;
  try {
    return util::Sourced<std::string>{first_host(context.nodelist->value),
                                "first host of " + context.nodelist->source};
  } catch (const util::InputError& error) {
    throw util::InputError(fmt::format("{} is not a valid Slurm hostlist: {}", context.nodelist->source,
                                 error.what()));
  }
}

}  // namespace dlaunch::slurm
