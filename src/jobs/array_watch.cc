#include "jobs/array_watch.h"

#include <algorithm>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include "slurm/array_spec.h"
#include "slurm/job_query.h"
#include "submit/array_folders.h"
#include "util/error.h"

namespace dlaunch::jobs {
namespace {

// A task Slurm stopped showing this many polls in a row ended unseen:
// Slurm forgets an ended job after MinJobAge (5 s on the test cluster).
constexpr int kForgottenAfterPolls = 3;

// On a terminal, more tasks than this are shown as one line of counts.
constexpr std::size_t kMaxLiveLines = 20;

std::string first_word(const std::string& state) { return state.substr(0, state.find(' ')); }

bool completed_with_zero(const TaskStatus& status) {
  return status.ended && first_word(status.state) == "COMPLETED" && status.exit_code == 0;
}

TaskStatus status_of(const slurm::JobInfo& record) {
  TaskStatus status;
  status.state = record.state();
  status.reason = record.field("Reason");
  status.seconds = slurm::parse_duration(record.field("RunTime")).value_or(0);
  status.ended = slurm::is_final_state(status.state);
  if (status.ended) status.exit_code = slurm::end_exit_code(record);
  return status;
}

std::string exit_code_text(const TaskStatus& status) {
  if (!status.ended) return "-";
  return status.exit_code ? std::to_string(*status.exit_code) : "unknown";
}

// What changes a task's line in a log: not the seconds that tick.
std::string change_key(const TaskStatus& status) {
  const std::string reason = slurm::is_queued_state(status.state) ? status.reason : "";
  return fmt::format("{}|{}|{}", status.state, reason, exit_code_text(status));
}

// "4 tasks: 1 PENDING, 2 RUNNING, 1 COMPLETED" for a terminal with many tasks.
std::string counts_line(const std::vector<TaskStatus>& statuses) {
  std::vector<std::pair<std::string, int>> counts;
  for (const TaskStatus& status : statuses) {
    std::string state = status.state.empty() ? "not shown yet" : first_word(status.state);
    auto found = std::find_if(counts.begin(), counts.end(), [&](const auto& entry) { return entry.first == state; });
    if (found == counts.end()) counts.emplace_back(state, 1);
    else ++found->second;
  }
  std::string text = fmt::format("{} tasks:", statuses.size());
  for (std::size_t i = 0; i < counts.size(); ++i)
    text += fmt::format("{} {} {}", i == 0 ? "" : ",", counts[i].second, counts[i].first);
  return text;
}

// The task lines on stderr: on a terminal redrawn in place, in a log one
// line each time a task's state changes.
class TaskBoard {
 public:
  explicit TaskBoard(bool terminal) : terminal_(terminal) {}

  void show(const submit::JobArray& array, const std::vector<TaskStatus>& statuses) {
    if (terminal_) redraw(live_lines(array, statuses));
    else print_changes(array, statuses);
  }

 private:
  static std::vector<std::string> live_lines(const submit::JobArray& array, const std::vector<TaskStatus>& statuses) {
    if (statuses.size() > kMaxLiveLines) return {counts_line(statuses)};
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < statuses.size(); ++i) lines.push_back(task_line(array.tasks[i], statuses[i]));
    return lines;
  }

  void redraw(const std::vector<std::string>& lines) {
    std::string text = drawn_ > 0 ? fmt::format("\033[{}A", drawn_) : "";
    for (const std::string& line : lines) text += "\r\033[K" + line + "\n";
    fmt::print(stderr, "{}", text);
    std::fflush(stderr);
    drawn_ = lines.size();
  }

  void print_changes(const submit::JobArray& array, const std::vector<TaskStatus>& statuses) {
    last_keys_.resize(statuses.size());
    for (std::size_t i = 0; i < statuses.size(); ++i) {
      std::string key = change_key(statuses[i]);
      if (key == last_keys_[i]) continue;
      fmt::print(stderr, "dlaunch: {}\n", task_line(array.tasks[i], statuses[i]));
      last_keys_[i] = std::move(key);
    }
  }

  bool terminal_;
  std::size_t drawn_ = 0;
  std::vector<std::string> last_keys_;
};

// Updates STATUS of a task from what Slurm SHOWS now (nullptr: not shown).
void update(TaskStatus& status, const TaskStatus* shows, int& unseen_polls, bool array_forgotten,
            long long waited_seconds) {
  if (status.ended) return;
  if (shows != nullptr) {
    status = *shows;
    if (slurm::is_queued_state(status.state)) status.seconds = waited_seconds;
    unseen_polls = 0;
    return;
  }
  if (!array_forgotten && ++unseen_polls < kForgottenAfterPolls) return;
  status.ended = true;
  status.state = "UNKNOWN";
  status.exit_code = std::nullopt;
}

void pause_for(std::chrono::milliseconds interval) { ::poll(nullptr, 0, static_cast<int>(interval.count())); }

}  // namespace

std::map<std::int64_t, TaskStatus> task_statuses(const std::vector<slurm::JobInfo>& records) {
  std::map<std::int64_t, TaskStatus> statuses;
  for (const slurm::JobInfo& record : records) {
    std::string ids = record.field("ArrayTaskId");
    if (ids.empty()) continue;
    slurm::ArraySpec spec;
    try {
      spec = slurm::parse_array_spec(ids, "scontrol's ArrayTaskId");
    } catch (const util::InputError&) {
      continue;
    }
    if (spec.named_count() > submit::kMaxArrayTasks) continue;  // no array of ours
    TaskStatus status = status_of(record);
    for (std::int64_t id : spec.task_ids()) statuses[id] = status;
  }
  return statuses;
}

std::string task_label(const submit::SweepTask& task) {
  std::string values = submit::describe_values(task);
  return values.empty() ? fmt::format("task {}", task.index) : fmt::format("task {} ({})", task.index, values);
}

std::string task_line(const submit::SweepTask& task, const TaskStatus& status) {
  const std::string label = task_label(task);
  if (status.state.empty()) return fmt::format("{}: not shown by Slurm yet", label);
  if (status.ended && !status.exit_code)
    return fmt::format("{}: ended unseen (Slurm forgot it before dlaunch saw its end); exit code unknown", label);
  if (status.ended) return fmt::format("{}: {} with exit code {}", label, status.state, *status.exit_code);
  bool says_why = slurm::is_queued_state(status.state) && !status.reason.empty() && status.reason != "None";
  return fmt::format("{}: {}{}, {} s", label, status.state, says_why ? fmt::format(" ({})", status.reason) : "",
                     status.seconds);
}

std::string array_table(const submit::JobArray& array, const std::vector<TaskStatus>& statuses,
                        const std::string& submission_dir) {
  std::vector<std::vector<std::string>> rows = {{"task", "values", "state", "exit code", "folder"}};
  for (std::size_t i = 0; i < array.tasks.size(); ++i) {
    const submit::SweepTask& task = array.tasks[i];
    std::string values = submit::describe_values(task);
    rows.push_back({std::to_string(task.index), values.empty() ? "-" : values,
                    statuses[i].state.empty() ? "-" : statuses[i].state, exit_code_text(statuses[i]),
                    submission_dir + "/" + submit::task_folder_name(task.index)});
  }
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c + 1 < row.size(); ++c) line += fmt::format("{:<{}}  ", row[c], widths[c]);
    text += line + row.back() + "\n";
  }
  return text;
}

std::vector<std::string> failed_task_lines(const submit::JobArray& array, const std::vector<TaskStatus>& statuses,
                                           const std::string& submission_dir, const std::string& array_job_id) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < array.tasks.size(); ++i) {
    const TaskStatus& status = statuses[i];
    if (completed_with_zero(status)) continue;
    const submit::SweepTask& task = array.tasks[i];
    std::string log = submit::task_log_path(submission_dir, array_job_id, task.index);
    if (status.exit_code)
      lines.push_back(fmt::format("{} {} with exit code {}; log: {}", task_label(task), status.state,
                                  *status.exit_code, log));
    else
      lines.push_back(fmt::format("{} ended, exit code unknown (Slurm forgot it before dlaunch saw its end); "
                                  "log: {}",
                                  task_label(task), log));
  }
  return lines;
}

int array_exit_code(const std::vector<TaskStatus>& statuses) {
  for (const TaskStatus& status : statuses) {
    if (completed_with_zero(status)) continue;
    return status.exit_code && *status.exit_code != 0 ? *status.exit_code : 1;
  }
  return 0;
}

std::vector<TaskStatus> follow_array(const std::string& array_job_id, const submit::JobArray& array,
                                     std::chrono::milliseconds poll_interval) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<TaskStatus> statuses(array.tasks.size());
  std::vector<int> unseen_polls(array.tasks.size(), 0);
  TaskBoard board(::isatty(STDERR_FILENO) != 0);
  for (;;) {
    std::vector<slurm::JobInfo> records = slurm::show_job(array_job_id);
    // Once every task ended and MinJobAge passed, Slurm knows no part of the array.
    bool forgotten = records.empty();
    auto shown = task_statuses(records);
    auto waited = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started);
    for (std::size_t i = 0; i < statuses.size(); ++i) {
      auto found = shown.find(array.tasks[i].index);
      update(statuses[i], found == shown.end() ? nullptr : &found->second, unseen_polls[i], forgotten,
             waited.count());
    }
    board.show(array, statuses);
    if (std::all_of(statuses.begin(), statuses.end(), [](const TaskStatus& s) { return s.ended; })) return statuses;
    pause_for(poll_interval);
  }
}

}  // namespace dlaunch::jobs
