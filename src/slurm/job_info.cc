#include "slurm/job_info.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <fmt/format.h>

#include "util/exit_codes.h"
#include "util/strings.h"

namespace dlaunch::slurm {
namespace {

// A field's name: letters, digits and a few marks (scontrol has
// "MCS_label", "Socks/Node", "NtasksPerN:B:S:C", "TRES").
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '/' || c == ':' ||
         c == '.' || c == '-';
}

// The length of NAME in a word "NAME=VALUE", else 0.
std::size_t name_length(std::string_view word) {
  std::size_t equals = word.find('=');
  if (equals == 0 || equals == std::string_view::npos) return 0;
  if (std::isalpha(static_cast<unsigned char>(word[0])) == 0) return 0;
  for (std::size_t i = 0; i < equals; ++i) {
    if (!is_name_char(word[i])) return 0;
  }
  return equals;
}

JobInfo parse_record(std::string_view line) {
  JobInfo record;
  std::string name, value;
  bool open = false;
  std::size_t at = 0;
  while (at < line.size()) {
    std::size_t end = line.find(' ', at);
    if (end == std::string_view::npos) end = line.size();
    std::string_view word = line.substr(at, end - at);
    at = end + 1;
    if (word.empty()) {
      if (open) value += ' ';
      continue;
    }
    if (std::size_t length = name_length(word); length > 0) {
      if (open) record.add(std::move(name), std::string(util::trim(value)));
      name = std::string(word.substr(0, length));
      value = std::string(word.substr(length + 1));
      open = true;
    } else if (open) {
      value += ' ';
      value += word;
    }
  }
  if (open) record.add(std::move(name), std::string(util::trim(value)));
  return record;
}

// "CANCELLED" of "CANCELLED by 0": sacct names who cancelled it after a space.
std::string_view state_word(std::string_view state) { return state.substr(0, state.find(' ')); }

bool is_one_of(std::string_view state, std::initializer_list<std::string_view> states) {
  return std::find(states.begin(), states.end(), state_word(state)) != states.end();
}

}  // namespace

std::string JobInfo::field(std::string_view name) const {
  for (const auto& [key, value] : fields_) {
    if (key == name) return value;
  }
  return "";
}

bool JobInfo::has(std::string_view name) const {
  return std::any_of(fields_.begin(), fields_.end(), [&](const auto& entry) { return entry.first == name; });
}

void JobInfo::add(std::string name, std::string value) { fields_.emplace_back(std::move(name), std::move(value)); }

std::string JobInfo::display_id() const {
  std::string array = field("ArrayJobId");
  std::string task = field("ArrayTaskId");
  if (array.empty() || task.empty()) return job_id();
  if (task.find_first_not_of("0123456789") == std::string::npos) return fmt::format("{}_{}", array, task);
  return fmt::format("{}_[{}]", array, task);
}

std::vector<JobInfo> parse_job_records(std::string_view output) {
  std::vector<JobInfo> records;
  std::size_t at = 0;
  while (at < output.size() && records.size() < kMaxRecords) {
    std::size_t end = output.find('\n', at);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(at, std::min(end - at, kMaxRecordBytes));
    at = end + 1;
    if (util::trim(line).empty()) continue;
    JobInfo record = parse_record(line);
    if (!record.fields().empty()) records.push_back(std::move(record));
  }
  return records;
}

std::optional<long long> parse_duration(std::string_view text) {
  long long days = 0;
  if (auto dash = text.find('-'); dash != std::string_view::npos) {
    auto parsed = util::parse_int(std::string(text.substr(0, dash)));
    if (!parsed || *parsed < 0 || *parsed > 100000) return std::nullopt;
    days = *parsed;
    text = text.substr(dash + 1);
  }
  auto parts = util::split(std::string(text), ':');
  if (parts.empty() || parts.size() > 3) return std::nullopt;
  long long seconds = 0;
  for (const auto& part : parts) {
    auto value = util::parse_int(part);
    if (!value || *value < 0 || *value > 1000000) return std::nullopt;
    seconds = seconds * 60 + *value;
  }
  // "MM" alone is minutes for sbatch --time, but scontrol never prints it.
  if (parts.size() == 1) return std::nullopt;
  return days * 86400 + seconds;
}

std::string format_duration(long long seconds) {
  if (seconds < 0) seconds = 0;
  long long days = seconds / 86400, hours = seconds / 3600 % 24, minutes = seconds / 60 % 60;
  long long rest = seconds % 60;
  if (days > 0) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, rest);
  if (hours > 0) return fmt::format("{:02}:{:02}:{:02}", hours, minutes, rest);
  return fmt::format("{:02}:{:02}", minutes, rest);
}

bool is_final_state(std::string_view state) {
  return is_one_of(state, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
                           "DEADLINE", "OUT_OF_MEMORY", "REVOKED"});
}

bool is_queued_state(std::string_view state) {
  return is_one_of(state, {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SPECIAL_EXIT",
                           "RESV_DEL_HOLD"});
}

std::optional<int> parse_exit_code(std::string_view text) {
  auto parts = util::split(std::string(text), ':');
  if (parts.size() != 2) return std::nullopt;
  auto code = util::parse_int(parts[0]);
  auto signal = util::parse_int(parts[1]);
  if (!code || !signal || *code < 0 || *code > 255 || *signal < 0 || *signal > 127) return std::nullopt;
  return *signal != 0 ? util::exit_code_of_signal(static_cast<int>(*signal)) : static_cast<int>(*code);
}

int end_exit_code(const JobInfo& info) {
  int code = parse_exit_code(info.field("ExitCode")).value_or(1);
  return code == 0 && state_word(info.state()) != "COMPLETED" ? 1 : code;
}

}  // namespace dlaunch::slurm
