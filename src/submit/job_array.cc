#include "submit/job_array.h"

#include <fmt/format.h>

#include "slurm/array_spec.h"
#include "util/error.h"

namespace dlaunch::submit {
namespace {

struct RawArray {
  std::string spec;
  std::string option;  // as the user wrote it, for messages
};

// Whether WORD is sbatch's long --array option or an abbreviation that
// getopt_long would take for it ("--arr=0-3").
bool is_long_array_option(const std::string& word) {
  std::string name = word.substr(0, word.find('='));
  return name.size() >= 4 && std::string_view("--array").starts_with(name);
}

// Takes an --array option out of ARGS. Throws InputError for one without
// its spec and for two of them.
std::optional<RawArray> take_array_option(std::vector<std::string>& args, const std::string& source) {
  std::optional<RawArray> found;
  for (std::size_t i = 0; i < args.size();) {
    const std::string word = args[i];
    bool long_form = is_long_array_option(word);
    bool short_form = word.starts_with("-a") && !word.starts_with("--");
    if (!long_form && !short_form) {
      ++i;
      continue;
    }
    if (found)
      throw util::InputError(fmt::format("sbatch-arg (from {}) holds --array twice ('{}' and '{}'); give one",
                                         source, found->option, word));
    std::size_t taken = 1;
    RawArray raw{"", word};
    if (long_form && word.find('=') != std::string::npos) raw.spec = word.substr(word.find('=') + 1);
    else if (short_form && word.size() > 2) raw.spec = word.substr(2);
    else if (i + 1 < args.size()) {
      raw.spec = args[i + 1];
      raw.option = word + " " + raw.spec;
      taken = 2;
    } else {
      throw util::InputError(fmt::format(
          "sbatch-arg '{}' (from {}) needs the array's indices, e.g. --sbatch-arg=--array=0-3", word, source));
    }
    found = raw;
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i + taken));
  }
  return found;
}

std::optional<int> max_parallel_of(const SubmitSettings& settings) {
  auto value = settings.integer("max-parallel");
  if (!value) return std::nullopt;
  if (*value < 1 || *value > kMaxArrayTasks)
    throw util::InputError(fmt::format("max-parallel must be from 1 to {}, got {} (from {})", kMaxArrayTasks,
                                       *value, settings.find("max-parallel")->source));
  return static_cast<int>(*value);
}

JobArray swept_array(const SubmitSettings& settings, std::optional<int> max_parallel) {
  JobArray array;
  array.tasks = sweep_tasks(parse_sweep(settings.list("sweep"), settings.find("sweep")->source));
  array.swept = true;
  array.max_parallel = max_parallel;
  array.spec = fmt::format("0-{}", array.tasks.size() - 1);
  if (max_parallel) array.spec += fmt::format("%{}", *max_parallel);
  return array;
}

JobArray raw_array(const RawArray& raw, const std::string& source, std::optional<int> max_parallel,
                   const SubmitSettings& settings) {
  const std::string what = fmt::format("--array '{}' (from sbatch-arg '{}', {})", raw.spec, raw.option, source);
  slurm::ArraySpec spec = slurm::parse_array_spec(raw.spec, what);
  if (spec.named_count() > kMaxArrayTasks)
    throw util::InputError(fmt::format(
        "{}: names {} tasks; dlaunch submit makes a folder for each and takes at most {}. Split the "
        "array into several submissions",
        what, spec.named_count(), kMaxArrayTasks));
  if (max_parallel && spec.max_parallel)
    throw util::InputError(fmt::format(
        "max-parallel (from {}) and the '%{}' of {} both limit the tasks running at once; give one",
        settings.find("max-parallel")->source, *spec.max_parallel, what));
  JobArray array;
  array.spec = raw.spec;
  array.max_parallel = spec.max_parallel;
  if (max_parallel) {
    array.max_parallel = max_parallel;
    array.spec += fmt::format("%{}", *max_parallel);
  }
  for (std::int64_t id : spec.task_ids()) array.tasks.push_back(SweepTask{id, {}, {}});
  return array;
}

void refuse_with_srun(const SubmitSettings& settings, const std::string& what) {
  if (!settings.flag("srun")) return;
  throw util::InputError(fmt::format(
      "{} cannot be used with --srun (from {}): a job array is a set of batch jobs, and --srun runs one "
      "step in the foreground. Drop --srun to submit the array with sbatch (add --wait to follow every "
      "task)",
      what, settings.find("srun")->source));
}

}  // namespace

std::string task_folder_name(std::int64_t index) { return fmt::format("task_{}", index); }

std::optional<JobArray> job_array_of(const SubmitSettings& settings, std::vector<std::string>& sbatch_args) {
  const auto* sbatch_setting = settings.find("sbatch-arg");
  const std::string sbatch_source = sbatch_setting ? sbatch_setting->source : "--sbatch-arg";
  std::optional<RawArray> raw = take_array_option(sbatch_args, sbatch_source);
  std::optional<int> max_parallel = max_parallel_of(settings);
  const bool swept = !settings.list("sweep").empty();
  if (swept && raw)
    throw util::InputError(fmt::format(
        "sweep (from {}) and sbatch-arg '{}' (from {}) both make a job array; a sweep writes its own "
        "--array. Drop the --array option",
        settings.find("sweep")->source, raw->option, sbatch_source));
  if (!swept && !raw) {
    if (max_parallel)
      throw util::InputError(fmt::format(
          "max-parallel (from {}) limits the tasks of a job array running at once, but this job is no "
          "array. Add --sweep NAME=V1,V2,... (or --sbatch-arg=--array=SPEC), or drop --max-parallel",
          settings.find("max-parallel")->source));
    return std::nullopt;
  }
  if (swept) {
    refuse_with_srun(settings, fmt::format("sweep (from {})", settings.find("sweep")->source));
    return swept_array(settings, max_parallel);
  }
  refuse_with_srun(settings, fmt::format("sbatch-arg '{}' (from {})", raw->option, sbatch_source));
  return raw_array(*raw, sbatch_source, max_parallel, settings);
}

}  // namespace dlaunch::submit
