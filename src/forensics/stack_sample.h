// What one capture found in one worker: its threads' stacks, Python and
// native, and what could not be captured and why.
//
// Plain values. They travel as JSON (the capture's output, node 0's
// report), so from_json bounds everything it reads: a stack comes from a
// tool's text or from another node, and neither is trusted to be small.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <sys/types.h>
#include <vector>

namespace dlaunch::forensics {

struct StackFrame {
  std::string function;  // "" when the tool had no name for it (then `address` says where)
  std::string file;      // Python: the source file; native: the module, when known
  int line = 0;          // Python only; 0: unknown
  std::string address;   // native only: "0x..." as the tool printed it
};

struct ThreadStack {
  std::string thread;               // "0x7f..." (Python) or the thread id (native)
  bool main_thread = false;         // the process's first thread
  std::vector<StackFrame> frames;   // outermost first
  bool truncated = false;           // frames beyond the bounds were left out
};

// One worker's stacks, as captured on its node.
struct WorkerStacks {
  int rank = -1;
  int local_rank = -1;
  int node_rank = -1;
  std::string host;
  pid_t pid = 0;
  std::vector<ThreadStack> python_threads;  // empty: not a Python worker, or not captured
  std::vector<ThreadStack> native_threads;
  std::vector<std::string> problems;        // what could not be captured, and why
};

// Bounds on what a capture keeps and what from_json accepts.
inline constexpr std::size_t kMaxFramesPerThread = 128;
inline constexpr std::size_t kMaxThreadsPerWorker = 256;
inline constexpr std::size_t kMaxFieldLength = 512;
inline constexpr std::size_t kMaxProblems = 16;
inline constexpr std::size_t kMaxWorkers = 1 << 16;

// The frame as a short name: "load_batch", or "?? (libc.so.6 0x7f...)".
std::string frame_name(const StackFrame& frame);

nlohmann::json to_json(const WorkerStacks& stacks);
// Throws ProtocolError (util/error.h) naming what is wrong: a field of the
// wrong type, or more frames, threads or characters than the bounds allow.
WorkerStacks worker_stacks_from_json(const nlohmann::json& json);

std::string encode_worker_stacks(const std::vector<WorkerStacks>& workers);
// The same, within LIMIT bytes: when the whole does not fit, the native
// frames of threads other than the main one go first, then every thread
// but the main ones, then the frames beyond the innermost few; each worker
// so cut says so in its problems.
std::string encode_worker_stacks_within(std::vector<WorkerStacks> workers, std::size_t limit);
// Throws ProtocolError for text that is not such a list.
std::vector<WorkerStacks> decode_worker_stacks(std::string_view text);

}  // namespace dlaunch::forensics
