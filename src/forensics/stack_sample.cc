#include "forensics/stack_sample.h"

#include <fmt/format.h>

#include "util/bounded_json.h"
#include "util/error.h"

namespace dlaunch::forensics {
namespace {

using nlohmann::json;

json frame_json(const StackFrame& frame) {
  json out = json::object();
  if (!frame.function.empty()) out["function"] = frame.function;
  if (!frame.file.empty()) out["file"] = frame.file;
  if (frame.line > 0) out["line"] = frame.line;
  if (!frame.address.empty()) out["address"] = frame.address;
  return out;
}

json thread_json(const ThreadStack& thread) {
  json frames = json::array();
  for (const auto& frame : thread.frames) frames.push_back(frame_json(frame));
  json out = {{"thread", thread.thread}, {"main", thread.main_thread}, {"frames", frames}};
  if (thread.truncated) out["truncated"] = true;
  return out;
}

json threads_json(const std::vector<ThreadStack>& threads) {
  json out = json::array();
  for (const auto& thread : threads) out.push_back(thread_json(thread));
  return out;
}

// Readers that refuse what the bounds do not allow; WHAT names the field.
const json& member(const json& object, const char* name) {
  static const json kNull;
  if (!object.is_object()) throw util::ProtocolError(fmt::format("stacks: expected an object around '{}'", name));
  auto found = object.find(name);
  return found == object.end() ? kNull : *found;
}

std::string text_of(const json& object, const char* name) {
  const json& value = member(object, name);
  if (value.is_null()) return "";
  if (!value.is_string()) throw util::ProtocolError(fmt::format("stacks: '{}' must be a string", name));
  const auto& text = value.get_ref<const std::string&>();
  if (text.size() > kMaxFieldLength)
    throw util::ProtocolError(fmt::format("stacks: '{}' is longer than {} characters", name, kMaxFieldLength));
  return text;
}

long long number_of(const json& object, const char* name, long long fallback) {
  const json& value = member(object, name);
  if (value.is_null()) return fallback;
  if (!value.is_number_integer()) throw util::ProtocolError(fmt::format("stacks: '{}' must be a whole number", name));
  return value.get<long long>();
}

int int_of(const json& object, const char* name, int fallback) {
  long long value = number_of(object, name, fallback);
  if (value < -1 || value > (1LL << 30)) throw util::ProtocolError(fmt::format("stacks: '{}' is out of range", name));
  return static_cast<int>(value);
}

const json& array_of(const json& object, const char* name, std::size_t most) {
  static const json kEmpty = json::array();
  const json& value = member(object, name);
  if (value.is_null()) return kEmpty;
  if (!value.is_array()) throw util::ProtocolError(fmt::format("stacks: '{}' must be a list", name));
  if (value.size() > most)
    throw util::ProtocolError(fmt::format("stacks: '{}' has {} entries, more than {}", name, value.size(), most));
  return value;
}

StackFrame frame_from_json(const json& object) {
  StackFrame frame;
  frame.function = text_of(object, "function");
  frame.file = text_of(object, "file");
  frame.line = int_of(object, "line", 0);
  frame.address = text_of(object, "address");
  return frame;
}

std::vector<ThreadStack> threads_from_json(const json& object, const char* name) {
  std::vector<ThreadStack> threads;
  for (const auto& entry : array_of(object, name, kMaxThreadsPerWorker)) {
    ThreadStack thread;
    thread.thread = text_of(entry, "thread");
    const json& main = member(entry, "main");
    thread.main_thread = main.is_boolean() && main.get<bool>();
    const json& truncated = member(entry, "truncated");
    thread.truncated = truncated.is_boolean() && truncated.get<bool>();
    for (const auto& frame : array_of(entry, "frames", kMaxFramesPerThread))
      thread.frames.push_back(frame_from_json(frame));
    threads.push_back(std::move(thread));
  }
  return threads;
}

}  // namespace

std::string frame_name(const StackFrame& frame) {
  if (!frame.function.empty()) return frame.function;
  std::string where = frame.file.empty() ? frame.address : frame.file + " " + frame.address;
  return where.empty() ? "??" : "?? (" + where + ")";
}

nlohmann::json to_json(const WorkerStacks& stacks) {
  json out = {{"rank", stacks.rank},       {"local_rank", stacks.local_rank},
              {"node_rank", stacks.node_rank}, {"host", stacks.host},
              {"pid", stacks.pid},         {"python_threads", threads_json(stacks.python_threads)},
              {"native_threads", threads_json(stacks.native_threads)},
              {"problems", stacks.problems}};
  return out;
}

WorkerStacks worker_stacks_from_json(const nlohmann::json& object) {
  WorkerStacks stacks;
  stacks.rank = int_of(object, "rank", -1);
  stacks.local_rank = int_of(object, "local_rank", -1);
  stacks.node_rank = int_of(object, "node_rank", -1);
  stacks.host = text_of(object, "host");
  stacks.pid = static_cast<pid_t>(int_of(object, "pid", 0));
  stacks.python_threads = threads_from_json(object, "python_threads");
  stacks.native_threads = threads_from_json(object, "native_threads");
  for (const auto& problem : array_of(object, "problems", kMaxProblems)) {
    if (!problem.is_string() || problem.get_ref<const std::string&>().size() > kMaxFieldLength)
      throw util::ProtocolError("stacks: 'problems' must hold short strings");
    stacks.problems.push_back(problem.get<std::string>());
  }
  return stacks;
}

std::string encode_worker_stacks(const std::vector<WorkerStacks>& workers) {
  json list = json::array();
  for (const auto& worker : workers) list.push_back(to_json(worker));
  // Replaces invalid UTF-8 (a tool's raw bytes) rather than throwing.
  return list.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

void keep_main_threads(std::vector<ThreadStack>& threads) {
  std::erase_if(threads, [](const ThreadStack& thread) { return !thread.main_thread; });
}

void keep_innermost(std::vector<ThreadStack>& threads, std::size_t frames) {
  for (auto& thread : threads) {
    if (thread.frames.size() <= frames) continue;
    thread.frames.erase(thread.frames.begin(), thread.frames.end() - static_cast<std::ptrdiff_t>(frames));
    thread.truncated = true;
  }
}

void note_cut(WorkerStacks& worker, const char* what) {
  if (worker.problems.size() < kMaxProblems)
    worker.problems.push_back(fmt::format("{} left out to fit the node's report in one message", what));
}

}  // namespace

std::string encode_worker_stacks_within(std::vector<WorkerStacks> workers, std::size_t limit) {
  std::string text = encode_worker_stacks(workers);
  if (text.size() <= limit) return text;
  for (auto& worker : workers) {
    keep_main_threads(worker.native_threads);
    note_cut(worker, "native threads other than the main one were");
  }
  if ((text = encode_worker_stacks(workers)).size() <= limit) return text;
  for (auto& worker : workers) {
    keep_main_threads(worker.python_threads);
    note_cut(worker, "Python threads other than the main one were");
  }
  if ((text = encode_worker_stacks(workers)).size() <= limit) return text;
  for (auto& worker : workers) {
    keep_innermost(worker.python_threads, 16);
    keep_innermost(worker.native_threads, 16);
    note_cut(worker, "frames beyond the innermost 16 were");
  }
  if ((text = encode_worker_stacks(workers)).size() <= limit) return text;
  return "[]";  // cannot happen within the bounds of a node's workers; nothing rather than garbage
}

std::vector<WorkerStacks> decode_worker_stacks(std::string_view text) {
  // A peer's bytes: nested at most util::kMaxJsonDepth (a report is 5 deep).
  std::string why;
  json list = util::parse_json_bounded(text, &why);
  if (list.is_discarded()) throw util::ProtocolError(fmt::format("stacks: not valid JSON ({})", why));
  if (!list.is_array()) throw util::ProtocolError("stacks: expected a list of workers");
  if (list.size() > kMaxWorkers) throw util::ProtocolError("stacks: too many workers");
  std::vector<WorkerStacks> workers;
  workers.reserve(list.size());
  for (const auto& entry : list) workers.push_back(worker_stacks_from_json(entry));
  return workers;
}

}  // namespace dlaunch::forensics
