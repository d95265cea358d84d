#include "jobs/job_status.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>

#include "jobs/run_folder.h"
#include "slurm/job_id.h"
#include "slurm/job_query.h"
#include "util/error.h"
#include "util/local_time.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace dlaunch::jobs {
namespace {

namespace fs = std::filesystem;

std::string without_who(const std::string& state) { return state.substr(0, state.find(' ')); }

std::string slurm_reason(const slurm::JobInfo& info) {
  std::string reason = info.field("Reason");
  return reason == "None" || reason == "(null)" ? "" : reason;
}

std::string node_list_of(const slurm::JobInfo& info) {
  std::string nodes = info.field("NodeList");
  return nodes == "(null)" ? "" : nodes;
}

void fill_from_slurm(ArrayTask& task, const slurm::JobInfo& info) {
  task.id = info.display_id();
  task.state = without_who(info.state());
  task.reason = slurm_reason(info);
  if (slurm::is_final_state(task.state)) task.exit_code = slurm::parse_exit_code(info.field("ExitCode"));
  task.elapsed = info.field("RunTime");
}

// Where a recorded end came from, for a job (JOB_ID) Slurm no longer shows.
std::string recorded_source(const RecordedEnd& end, const std::string& job_id) {
  return job_id.empty() ? end.source
                        : fmt::format("recorded by {}; Slurm no longer knows job {}", end.source, job_id);
}

bool fill_from_record(ArrayTask& task, const std::string& folder, const std::string& job_id) {
  auto end = recorded_end(folder);
  if (!end) return false;
  task.state = end->state;
  task.exit_code = end->exit_code;
  task.elapsed = end->elapsed;
  task.reason = recorded_source(*end, job_id);
  return true;
}

// Whether INDEX is among an ArrayTaskId run such as "2-3%2", "4,6-8", "0-15:2".
bool task_run_holds(const std::string& run, int index) {
  std::string list = run.substr(0, run.find('%'));
  for (const auto& part : util::split(list, ',')) {
    std::string range = part, step_text = "1";
    if (auto colon = part.find(':'); colon != std::string::npos) {
      range = part.substr(0, colon);
      step_text = part.substr(colon + 1);
    }
    auto dash = range.find('-');
    auto first = util::parse_int(range.substr(0, dash));
    auto last = dash == std::string::npos ? first : util::parse_int(range.substr(dash + 1));
    auto step = util::parse_int(step_text);
    if (!first || !last || !step || *step < 1) continue;
    if (index >= *first && index <= *last && (index - *first) % *step == 0) return true;
  }
  return false;
}

const slurm::JobInfo* slurm_task(const std::vector<slurm::JobInfo>& records, int index) {
  const std::string wanted = std::to_string(index);
  for (const auto& info : records)
    if (info.field("ArrayTaskId") == wanted) return &info;
  for (const auto& info : records)
    if (task_run_holds(info.field("ArrayTaskId"), index)) return &info;
  return nullptr;
}

const ArrayTask* accounted_task(const std::vector<ArrayTask>& accounted, const std::string& id) {
  for (const auto& task : accounted)
    if (task.id == id) return &task;
  return nullptr;
}

ArrayTask task_status(const SubmissionRecord& record, const TaskRecord& task,
                       const std::vector<slurm::JobInfo>& records, const std::vector<ArrayTask>& accounted) {
  ArrayTask status;
  status.index = task.index;
  status.id = fmt::format("{}_{}", record.job_id, task.index);
  status.folder = task.folder;
  status.values = task.values;
  if (const auto* info = slurm_task(records, task.index)) {
    fill_from_slurm(status, *info);
    status.id = fmt::format("{}_{}", record.job_id, task.index);
  } else if (const auto* found = accounted_task(accounted, status.id)) {
    status.state = found->state;
    status.exit_code = found->exit_code;
    status.elapsed = found->elapsed;
    status.reason = "from sacct";
  } else if (!fill_from_record(status, task.folder, record.job_id)) {
    status.state = "UNKNOWN";
    status.reason = fmt::format("Slurm no longer knows task {} and nothing was recorded", status.id);
  }
  return status;
}

// An array's state: RUNNING while a task runs, PENDING while one waits and
// none runs, COMPLETED when all did, else the first other final state.
void summarise_tasks(JobStatus& status) {
  bool running = false, pending = false, all_completed = true;
  std::string other;
  std::optional<int> code = 0;
  for (const auto& task : status.tasks) {
    if (task.state == "RUNNING" || task.state == "COMPLETING") running = true;
    else if (!slurm::is_final_state(task.state)) pending = true;
    if (task.state != "COMPLETED") all_completed = false;
    if (slurm::is_final_state(task.state) && task.state != "COMPLETED" && other.empty()) other = task.state;
    if (task.exit_code && *task.exit_code != 0 && code == 0) code = task.exit_code;
  }
  status.state = running ? "RUNNING" : pending ? "PENDING" : all_completed ? "COMPLETED" : other.empty() ? "UNKNOWN" : other;
  if (slurm::is_final_state(status.state)) status.exit_code = all_completed ? code : code.value_or(1) == 0 ? 1 : code;
}

// dlaunch run's restarts so far: the attempt folders of the last run.
int attempts_seen(const std::string& folder) {
  auto attempts = numbered_folders(last_run_folder(folder), "attempt_");
  return attempts.empty() ? 0 : attempts.back();
}

// Seconds from FROM to TO, both local times as "2026-12-03T14:05:09".
std::optional<long long> seconds_between(const std::string& from, const std::string& to) {
  auto parse = [](const std::string& text) -> std::optional<std::time_t> {
    std::tm parts{};
    const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &parts);
    if (end == nullptr || *end != '\0') return std::nullopt;
    parts.tm_isdst = -1;
    return std::mktime(&parts);
  };
  auto start = parse(from), stop = parse(to);
  if (!start || !stop || *stop < *start) return std::nullopt;
  return static_cast<long long>(*stop - *start);
}

void add_run_result(JobStatus& status, const std::string& folder) {
  status.restarts = attempts_seen(folder);
  auto result = run_result(folder);
  if (!result) return;
  auto text = [&](const char* key) {
    auto found = result->find(key);
    return found != result->end() && found->is_string() ? found->get<std::string>() : std::string();
  };
  if (result->contains("restarts") && (*result)["restarts"].is_number_integer())
    status.restarts = (*result)["restarts"].get<int>();
  status.verdict = run_verdict(folder);
  status.failure = text("failure");
  status.failure_summary = text("failure_summary");
  if (auto root = result->find("root"); root != result->end() && root->is_object()) status.root = *root;
  if (auto seconds = seconds_between(text("started"), text("ended"))) status.elapsed = slurm::format_duration(*seconds);
}

// dlaunch cancelled the Slurm job itself (its batch host was lost, so its
// batch script could not end it): Slurm's CANCELLED is how the allocation
// ended, the verdict how the job did.
void prefer_a_verdict_dlaunch_enforced(JobStatus& status) {
  if (!status.verdict || status.verdict->slurm_end.empty() || !slurm::is_final_state(status.state)) return;
  status.slurm_state = status.state;
  status.slurm_exit_code = status.exit_code;
  status.reason = fmt::format("Slurm records {}: {}", status.state, status.verdict->slurm_end);
  status.state = status.verdict->state;
  status.exit_code = status.verdict->exit_code;
}

// sbatch refused the job: there is no Slurm job, and never will be
// (never_submitted.h). sbatch exiting 0 without a job id leaves it unknown.
JobStatus never_submitted_status(const NeverSubmitted& why) {
  JobStatus status;
  status.state = why.may_be_queued ? "UNKNOWN" : kNotSubmittedState;
  status.reason = never_submitted_summary(why);
  status.source = fmt::format("dlaunch submit at {}: {} said: {}", why.recorded, why.program,
                              never_submitted_message(why));
  return status;
}

}  // namespace

std::vector<ArrayTask> parse_sacct(const std::string& output) {
  std::vector<ArrayTask> tasks;
  for (const auto& line : util::split(output, '\n')) {
    auto fields = util::split(line, '|');
    if (fields.size() < 5 || fields[0].empty()) continue;
    ArrayTask task;
    task.id = fields[0];
    task.state = without_who(fields[1]);
    task.exit_code = slurm::parse_exit_code(fields[2]);
    task.elapsed = fields[3];
    tasks.push_back(std::move(task));
    if (tasks.size() >= slurm::kMaxRecords) break;
  }
  return tasks;
}

std::vector<ArrayTask> query_sacct(const std::string& job_id) {
  try {
    // sacct takes the id as --jobs's value, which is never read as an
    // option; the check keeps anything but an id from it (slurm/job_id.h).
    const std::string jobs = fmt::format("--jobs={}", slurm::checked_job_id(job_id, "the job id given to sacct"));
    util::CapturedRun run =
        util::run_captured({"sacct", jobs, "-X", "-n", "-P", "-o", "JobID,State,ExitCode,Elapsed,NodeList"});
    if (run.exit_code != 0) return {};  // no accounting on this cluster
    return parse_sacct(run.out);
  } catch (const util::SystemError&) {
    return {};  // no sacct here
  }
}

JobStatus job_status(const SubmissionRecord& record, const std::vector<slurm::JobInfo>& records,
                     const std::vector<ArrayTask>& accounted) {
  if (record.never_submitted) return never_submitted_status(*record.never_submitted);
  JobStatus status;
  add_run_result(status, record.folder);
  if (!record.tasks.empty()) {
    for (const auto& task : record.tasks) status.tasks.push_back(task_status(record, task, records, accounted));
    summarise_tasks(status);
    status.source = records.empty() ? "the tasks' records" : "Slurm";
    return status;
  }
  const slurm::JobInfo* info = nullptr;
  for (const auto& candidate : records)
    if (candidate.job_id() == record.job_id || info == nullptr) info = &candidate;
  if (info != nullptr) {
    ArrayTask live;
    fill_from_slurm(live, *info);
    status.state = live.state;
    status.reason = live.reason;
    status.exit_code = live.exit_code;
    status.elapsed = live.elapsed;
    status.time_limit = info->field("TimeLimit");
    status.node_list = node_list_of(*info);
    status.requeues = static_cast<int>(util::parse_int(info->field("Restarts")).value_or(0));
    status.source = "Slurm";
    prefer_a_verdict_dlaunch_enforced(status);
  } else if (const auto* found = accounted_task(accounted, record.job_id)) {
    status.state = found->state;
    status.exit_code = found->exit_code;
    status.elapsed = found->elapsed;
    status.source = "sacct";
    prefer_a_verdict_dlaunch_enforced(status);
  } else if (auto end = recorded_end(record.folder)) {
    status.state = end->state;
    status.exit_code = end->exit_code;
    if (!end->elapsed.empty()) status.elapsed = end->elapsed;  // else the run's own, from result.json
    status.node_list = end->nodes;
    status.source = recorded_source(*end, record.job_id);
    if (end->source.starts_with("Slurm")) prefer_a_verdict_dlaunch_enforced(status);
  } else {
    status.source = record.job_id.empty()
                        ? "nothing recorded (run with --srun, and it left no result)"
                        : fmt::format("Slurm no longer knows job {} and nothing was recorded", record.job_id);
  }
  return status;
}

JobStatus current_status(const SubmissionRecord& record) {
  // A --log-dir: no Slurm to ask; its result, or what runs on this host.
  if (record.run_log_dir) return run_status(record, find_live_workers(record.folder));
  std::vector<slurm::JobInfo> records;
  std::string unanswered;
  try {
    if (!record.job_id.empty()) records = slurm::show_job(record.job_id);
  } catch (const util::SystemError& error) {
    unanswered = error.what();  // no Slurm here, or its controller is down: what the folder says
  }
  std::vector<ArrayTask> accounted;
  if (records.empty() && unanswered.empty() && !record.job_id.empty() && !recorded_end(record.folder))
    accounted = query_sacct(record.job_id);
  JobStatus status = job_status(record, records, accounted);
  status.slurm_answered = unanswered.empty();
  if (!unanswered.empty() && status.state == "UNKNOWN")
    status.source = fmt::format("Slurm could not be asked: {}", unanswered);
  else if (!unanswered.empty())
    status.source = fmt::format("{}; Slurm could not be asked: {}", status.source, unanswered);
  if (records.empty()) return status;
  // Remember what Slurm said at the end: it forgets the job MinJobAge later.
  auto remember = [&](const std::string& folder, const std::string& state, std::optional<int> code,
                      const std::string& elapsed, const std::string& nodes) {
    if (!slurm::is_final_state(state)) return;
    if (auto end = recorded_end(folder); end && end->state == state && end->source.starts_with("Slurm")) return;
    (void)save_recorded_end(folder, {state, code, fmt::format("Slurm, seen at {}", util::local_time_now()),
                                     elapsed, nodes});
  };
  // Slurm's own words: what it shows, not the verdict that overrides it.
  if (record.tasks.empty())
    remember(record.folder, status.slurm_state.empty() ? status.state : status.slurm_state,
             status.slurm_state.empty() ? status.exit_code : status.slurm_exit_code, status.elapsed, status.node_list);
  for (const auto& task : status.tasks)
    if (task.reason.empty() || !task.reason.starts_with("recorded"))
      remember(task.folder, task.state, task.exit_code, task.elapsed, "");
  return status;
}

bool has_ended(const JobStatus& status, std::optional<int> task) {
  std::string state = status.state;
  for (const auto& each : status.tasks)
    if (task && each.index == *task) state = each.state;
  return slurm::is_final_state(state) || state == kNotSubmittedState ||
         (state == "UNKNOWN" && status.slurm_answered);
}

std::string state_text(const JobStatus& status) {
  if (!status.tasks.empty() && !slurm::is_final_state(status.state)) {
    std::map<std::string, int> counts;
    for (const auto& task : status.tasks) counts[task.state]++;
    std::vector<std::string> parts;
    for (const auto& [state, count] : counts) parts.push_back(fmt::format("{} {}", count, state));
    return util::join(parts, ", ");
  }
  std::string text = status.state;
  if (status.exit_code && (*status.exit_code != 0 || status.state != "COMPLETED"))
    text += fmt::format(" (exit {})", *status.exit_code);
  else if (!status.reason.empty() && !slurm::is_final_state(status.state))
    text += fmt::format(" ({})", status.reason);
  return text;
}

nlohmann::json status_json(const SubmissionRecord& record, const JobStatus& status) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& task : status.tasks) {
    nlohmann::json entry = {{"index", task.index}, {"id", task.id},         {"state", task.state},
                            {"reason", task.reason}, {"elapsed", task.elapsed}, {"folder", task.folder},
                            {"values", task.values}};
    entry["exit_code"] = task.exit_code ? nlohmann::json(*task.exit_code) : nlohmann::json();
    tasks.push_back(std::move(entry));
  }
  nlohmann::json document = {
      {"job_id", record.job_id},       {"name", record.name},
      {"state", status.state},         {"reason", status.reason},
      {"source", status.source},       {"elapsed", status.elapsed},
      {"time_limit", status.time_limit}, {"nodes", record.nodes},
      {"gpus_per_node", record.gpus_per_node}, {"node_list", status.node_list},
      {"restarts", status.restarts},   {"requeues", status.requeues},
      {"submitted", record.submitted}, {"folder", record.folder},
      {"command", record.command},     {"failure", status.failure},
      {"failure_summary", status.failure_summary}, {"tasks", tasks},
  };
  document["exit_code"] = status.exit_code ? nlohmann::json(*status.exit_code) : nlohmann::json();
  document["root"] = status.root;
  document["run_log_dir"] = record.run_log_dir;
  document["verdict"] = nlohmann::json();
  document["timeline"] = nlohmann::json::array();
  if (status.verdict) {
    document["verdict"] = {{"state", status.verdict->state},
                           {"exit_code", status.verdict->exit_code},
                           {"written_by", status.verdict->written_by},
                           {"slurm_end", status.verdict->slurm_end},
                           {"also_seen", status.verdict->also_seen}};
    document["timeline"] = status.verdict->timeline;
  }
  return document;
}

}  // namespace dlaunch::jobs
