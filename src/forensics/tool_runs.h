// Helper programs (eu-stack, gdb) run side by side, each within a deadline
// and with its output capped.
//
// A stack tool attaches to a worker with ptrace; one that hangs (a worker
// in an uninterruptible sleep, a slow file system under its symbols) must
// cost the capture its deadline and no more, and a tool that prints without
// end must not fill the launcher's memory. util/subprocess runs Slurm's
// commands to completion, which is what they need; these need a clock.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace dlaunch::forensics {

struct ToolResult {
  std::string output;      // stdout and stderr together, at most the cap (KeptOutput)
  int exit_code = -1;      // 128+N when killed by signal N; -1 when not known
  bool timed_out = false;  // killed at its deadline
  bool truncated = false;  // printed more than the cap
};

struct ToolRequest {
  std::vector<std::string> argv;  // argv[0] is an absolute path
  std::vector<std::string> environment;  // NAME=VALUE entries
  std::chrono::milliseconds timeout{5000};
  // Called when the request ends, with its result; may add requests (the
  // next tool for the same worker) through the ToolRuns it is given.
  std::function<void(const ToolResult&)> on_done;
};

// Which part of a tool's output is kept past the cap: a stack tool's first
// lines are the stacks, a check's last lines say why it failed.
enum class KeptOutput { kHead, kTail };

class ToolRuns {
 public:
  static constexpr std::size_t kOutputCap = 512 * 1024;

  // At most MAX_RUNNING tools at once (0: one per core); the rest wait
  // their turn. More tools than cores only stretch each one, and a tool
  // holds its worker stopped while it works. KEPT: each tool's output past
  // the cap.
  explicit ToolRuns(std::size_t max_running = 0, KeptOutput kept = KeptOutput::kHead);
  // Tools still running (a TICK threw: the launcher was told to stop) are
  // killed with their process groups and reaped: none outlives its runner.
  ~ToolRuns();
  ToolRuns(const ToolRuns&) = delete;
  ToolRuns& operator=(const ToolRuns&) = delete;

  // Starts REQUEST now, or when a running tool ends. A program that cannot
  // be started ends at once with exit code 127 and the reason as its
  // output. Its timeout counts from its start.
  void start(ToolRequest request);
  // Until every request (and every one added meanwhile) has ended. TICK,
  // when given, is called at least every kTickEvery meanwhile (a launcher
  // between rounds keeps its link to node 0 alive with it, and throws when
  // told to stop: what runs is then killed with this object).
  void run(const std::function<void()>& tick = {});
  static constexpr std::chrono::milliseconds kTickEvery{250};

 private:
  struct Running {
    ToolRequest request;
    pid_t pid = 0;
    int pipe = -1;
    std::chrono::steady_clock::time_point deadline;
    ToolResult result;
  };
  // EXIT_CODE: how it ended; nullopt: it is past its deadline and is killed.
  void finish(std::size_t index, std::optional<int> exit_code);
  void read_some(Running& running);
  void launch(ToolRequest request);

  std::size_t max_running_;
  KeptOutput kept_;
  std::vector<Running> running_;
  std::deque<ToolRequest> waiting_;
};

}  // namespace dlaunch::forensics
