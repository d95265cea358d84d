#include "forensics/stack_report.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace dlaunch::forensics {
namespace {

// Python frames are named with their file's last component, so two
// functions of one name in different files are told apart.
std::string step_name(const StackFrame& frame, bool python) {
  if (!python) {
    if (!frame.function.empty()) return frame.function;
    auto slash = frame.file.rfind('/');
    std::string module = slash == std::string::npos ? frame.file : frame.file.substr(slash + 1);
    return module.empty() ? "??" : "?? (" + module + ")";
  }
  return frame.function.empty() ? "??" : frame.function;
}

const ThreadStack* main_of(const std::vector<ThreadStack>& threads) {
  for (const auto& thread : threads) {
    if (thread.main_thread && !thread.frames.empty()) return &thread;
  }
  return nullptr;
}

// The stack a rank is grouped by: its main thread's Python frames, else its
// main thread's native frames.
std::pair<std::vector<PathStep>, bool> key_path(const WorkerStacks& worker) {
  bool python = true;
  const ThreadStack* thread = main_of(worker.python_threads);
  if (thread == nullptr) {
    python = false;
    thread = main_of(worker.native_threads);
  }
  std::vector<PathStep> path;
  if (thread == nullptr) return {path, false};
  for (const auto& frame : thread->frames) {
    std::string name = step_name(frame, python);
    if (!path.empty() && path.back().name == name) ++path.back().repeats;
    else path.push_back({name, 1});
  }
  return {path, python};
}

std::string step_text(const PathStep& step) {
  return step.repeats > 1 ? fmt::format("{} x{}", step.name, step.repeats) : step.name;
}

std::string hosts_text(const std::vector<std::string>& hosts) {
  constexpr std::size_t kShown = 3;
  std::string text;
  for (std::size_t i = 0; i < hosts.size() && i < kShown; ++i) text += (i ? "," : "") + hosts[i];
  if (hosts.size() > kShown) text += fmt::format(" and {} more", hosts.size() - kShown);
  return text;
}

std::string ranks_word(std::size_t count) { return count == 1 ? "rank" : "ranks"; }

// The merged tree: every rank's key path, common prefixes shared.
struct TreeNode {
  std::string name;
  std::vector<int> ranks;
  std::vector<TreeNode> children;
};

void insert_path(TreeNode& root, const std::vector<PathStep>& path, int rank) {
  TreeNode* node = &root;
  node->ranks.push_back(rank);
  for (const auto& step : path) {
    std::string name = step_text(step);
    auto child = std::find_if(node->children.begin(), node->children.end(),
                              [&](const TreeNode& candidate) { return candidate.name == name; });
    if (child == node->children.end()) {
      node->children.push_back({name, {}, {}});
      child = node->children.end() - 1;
    }
    node = &*child;
    node->ranks.push_back(rank);
  }
}

// A chain of nodes that all ranks pass through alike is drawn one per line
// with an indent per level; the depth is bounded by the frame bound.
void draw_tree(const TreeNode& node, int depth, std::string& out) {
  for (const auto& child : node.children) {
    out += fmt::format("{:{}}{} [{} {}]\n", "", 2 * depth + 2, child.name, ranks_word(child.ranks.size()),
                       compress_ranks(child.ranks));
    draw_tree(child, depth + 1, out);
  }
}

void draw_threads(const char* kind, const std::vector<ThreadStack>& threads, bool python, std::string& out) {
  for (const auto& thread : threads) {
    out += fmt::format("  {} thread {}{}{}:\n", kind, thread.thread, thread.main_thread ? " (main)" : "",
                       thread.truncated ? " (outer frames left out)" : "");
    // Innermost first, as Python and gdb print them.
    for (auto frame = thread.frames.rbegin(); frame != thread.frames.rend(); ++frame) {
      if (python) out += fmt::format("    File \"{}\", line {}, in {}\n", frame->file, frame->line, frame->function);
      else out += fmt::format("    {} {}{}\n", frame->address, frame->function.empty() ? "??" : frame->function,
                              frame->file.empty() ? "" : "  (" + frame->file + ")");
    }
  }
}

}  // namespace

StackReport merge_stacks(std::vector<WorkerStacks> workers) {
  std::sort(workers.begin(), workers.end(),
            [](const WorkerStacks& a, const WorkerStacks& b) { return a.rank < b.rank; });
  StackReport report;
  for (const auto& worker : workers) {
    auto [path, python] = key_path(worker);
    auto group = std::find_if(report.groups.begin(), report.groups.end(), [&](const StackGroup& candidate) {
      return candidate.path == path && candidate.python == python;
    });
    if (group == report.groups.end()) {
      report.groups.push_back({{}, {}, path, python});
      group = report.groups.end() - 1;
    }
    group->ranks.push_back(worker.rank);
    if (std::find(group->hosts.begin(), group->hosts.end(), worker.host) == group->hosts.end())
      group->hosts.push_back(worker.host);
  }
  std::stable_sort(report.groups.begin(), report.groups.end(), [](const StackGroup& a, const StackGroup& b) {
    return a.ranks.size() < b.ranks.size();
  });
  report.workers = std::move(workers);
  return report;
}

std::string compress_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t end = i;
    while (end + 1 < ranks.size() && ranks[end + 1] == ranks[end] + 1) ++end;
    if (!text.empty()) text += ",";
    text += end == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[end]);
    i = end + 1;
  }
  return text;
}

std::string path_text(const std::vector<PathStep>& path, std::size_t max_steps) {
  if (path.empty()) return "(no stack captured)";
  std::vector<std::string> shown;
  const std::size_t head = 2;
  bool cut = path.size() > max_steps && max_steps > head + 1;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (cut && i == head) {
      shown.push_back("...");
      i = path.size() - (max_steps - head - 1);
    }
    shown.push_back(step_text(path[i]));
  }
  std::string text;
  for (std::size_t i = 0; i < shown.size(); ++i) text += (i ? " > " : "") + shown[i];
  return text;
}

std::string group_line(const StackGroup& group) {
  return fmt::format("{} {} ({}) on {}: {}", ranks_word(group.ranks.size()), compress_ranks(group.ranks),
                     group.ranks.size(), hosts_text(group.hosts), path_text(group.path));
}

std::string outlier_summary(const StackReport& report) {
  std::size_t total = report.workers.size();
  if (report.groups.size() <= 1)
    return fmt::format("all {} {} are in the same place", total, ranks_word(total));
  const StackGroup& smallest = report.groups.front();
  if (smallest.ranks.size() == report.groups.back().ranks.size())
    return fmt::format("the {} ranks are split into {} groups of equal size", total, report.groups.size());
  return fmt::format("{} {} on {} {}", ranks_word(smallest.ranks.size()), compress_ranks(smallest.ranks),
                     hosts_text(smallest.hosts), smallest.ranks.size() == 1 ? "differs" : "differ");
}

std::vector<std::string> short_report(const StackReport& report) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("stacks of {} {} in {} {} (outliers first):", report.workers.size(),
                              ranks_word(report.workers.size()), report.groups.size(),
                              report.groups.size() == 1 ? "group" : "groups"));
  for (const auto& group : report.groups) lines.push_back("  " + group_line(group));
  std::size_t incomplete = 0;
  for (const auto& worker : report.workers) incomplete += worker.problems.empty() ? 0 : 1;
  if (incomplete > 0)
    lines.push_back(fmt::format("  ({} {} not captured in full: see the report file)", incomplete,
                                ranks_word(incomplete)));
  return lines;
}

std::string full_report_text(const StackReport& report, const std::string& headline) {
  std::string out = headline + "\n\n";
  for (const auto& line : short_report(report)) out += line + "\n";
  out += "\nmerged tree of every rank's main thread (Python frames where there are any):\n";
  TreeNode root;
  for (const auto& worker : report.workers) insert_path(root, key_path(worker).first, worker.rank);
  draw_tree(root, 0, out);
  for (const auto& worker : report.workers) {
    out += fmt::format("\nrank {} (local rank {}, node {} {}, pid {}):\n", worker.rank, worker.local_rank,
                       worker.node_rank, worker.host, worker.pid);
    for (const auto& problem : worker.problems) out += "  not captured: " + problem + "\n";
    draw_threads("Python", worker.python_threads, true, out);
    draw_threads("native", worker.native_threads, false, out);
  }
  return out;
}

nlohmann::json report_json(const StackReport& report, const std::string& headline) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& group : report.groups) {
    nlohmann::json path = nlohmann::json::array();
    for (const auto& step : group.path) path.push_back({{"frame", step.name}, {"repeats", step.repeats}});
    groups.push_back({{"ranks", group.ranks}, {"ranks_text", compress_ranks(group.ranks)},
                      {"count", group.ranks.size()}, {"hosts", group.hosts},
                      {"python", group.python}, {"path", path}});
  }
  nlohmann::json workers = nlohmann::json::array();
  for (const auto& worker : report.workers) workers.push_back(to_json(worker));
  return {{"headline", headline}, {"summary", outlier_summary(report)}, {"groups", groups},
          {"workers", workers}};
}

}  // namespace dlaunch::forensics
