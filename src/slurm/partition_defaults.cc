// A partition's DefCpuPerGPU (partition_defaults.h).
#include "slurm/partition_defaults.h"

#include <algorithm>
#include <vector>

#include "slurm/job_info.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace dlaunch::slurm {
namespace {

// JobDefaults=DefCpuPerGPU=8,DefMemPerGPU=1024 (or "(null)").
std::optional<int> cpus_per_gpu_in(const JobInfo& partition) {
  for (const auto& entry : util::split(partition.field("JobDefaults"), ',')) {
    if (!entry.starts_with("DefCpuPerGPU=")) continue;
    auto value = util::parse_int(entry.substr(entry.find('=') + 1));
    if (value && *value >= 1 && *value <= 4096) return static_cast<int>(*value);
  }
  return std::nullopt;
}

// The records of the partitions NAMES names; the default partition's when empty.
std::vector<const JobInfo*> chosen(const std::vector<JobInfo>& records, const std::vector<std::string>& names) {
  std::vector<const JobInfo*> found;
  for (const auto& record : records) {
    const std::string name = record.field("PartitionName");
    bool wanted = names.empty() ? record.field("Default") == "YES"
                                : std::find(names.begin(), names.end(), name) != names.end();
    if (wanted) found.push_back(&record);
  }
  return found;
}

}  // namespace

std::optional<int> default_cpus_per_gpu(std::string_view output, const std::string& partitions) {
  // scontrol's partition records are NAME=VALUE fields like its job records.
  const std::vector<JobInfo> records = parse_job_records(output);
  std::vector<std::string> names;
  for (const auto& name : util::split(partitions, ','))
    if (!util::trim(name).empty()) names.emplace_back(util::trim(name));
  auto partitions_found = chosen(records, names);
  if (partitions_found.empty() || (!names.empty() && partitions_found.size() < names.size())) return std::nullopt;
  std::optional<int> smallest;
  for (const JobInfo* partition : partitions_found) {
    auto cpus = cpus_per_gpu_in(*partition);
    if (!cpus) return std::nullopt;
    smallest = std::min(smallest.value_or(*cpus), *cpus);
  }
  return smallest;
}

std::optional<int> query_default_cpus_per_gpu(const std::string& partitions, std::chrono::seconds patience) {
  try {
    util::CapturedRun show = util::run_captured(
        {"timeout", "--kill-after=2", std::to_string(patience.count()), "scontrol", "show", "partition", "-o"});
    if (show.exit_code != 0) return std::nullopt;
    return default_cpus_per_gpu(show.out, partitions);
  } catch (const std::exception&) {
    return std::nullopt;  // no coreutils timeout here: no answer
  }
}

}  // namespace dlaunch::slurm
