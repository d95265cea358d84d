// The table of failure signatures: which kind of failure a worker's last
// words show, and whether that kind is a consequence of another rank's
// failure (a cascade) rather than a cause.
//
// One row per signature, first match wins, each with the real message it
// was taken from, so a new signature is one row and its example. The rows
// are matched by doctor/diagnosis.h against a Failure's error message and
// last lines (case-insensitively) and its exit code.
#pragma once

#include <span>
#include <string_view>

namespace dlaunch::doctor {

enum class FailureKind {
  kPythonException,     // an exception the user's code raised
  kCudaOutOfMemory,     // torch's allocator ran out of GPU memory
  kHostOutOfMemory,     // killed by the kernel's or the cgroup's OOM killer
  kGpuHardware,         // the GPU failed: an Xid, an uncorrectable ECC error, off the bus
  kNcclError,           // NCCL failed, or its watchdog timed out
  kGlooError,           // gloo's TCP transport failed
  kStoreTimeout,        // the rendezvous store (TCPStore) timed out
  kNanOrInf,            // the program said a value became NaN or Inf
  kSignal,              // killed by a signal (SIGSEGV, SIGABRT, SIGBUS, ...)
  kStoppedByLauncher,   // SIGTERM or SIGKILL, as dlaunch stops the other ranks
  kHang,                // dlaunch's hang rule stopped the job (exit 124)
  kLostNode,            // a node's launcher was lost
  kLauncher,            // the launcher itself was stopped (Ctrl-C, scancel)
  kHealthCheck,         // a node failed its health check before a restart
  kExitCode,            // a plain non-zero exit with nothing more to go on
};

// Any exit code, in a row that only looks at text.
inline constexpr int kAnyExit = -1;

struct Signature {
  FailureKind kind;
  // A cascade: what a rank says when another rank failed first.
  bool consequence;
  // Text in the error message or the last lines, matched case-insensitively;
  // empty: the row matches on the exit code alone.
  std::string_view needle;
  int exit_code;  // the exit code the row needs; kAnyExit: any
  // The real message the needle was taken from (PyTorch 1.13, gloo, NCCL,
  // the kernel, Slurm), for whoever adds the next row.
  std::string_view example;
};

// Every row, in the order they are tried.
std::span<const Signature> signature_table();

// "python exception", "CUDA out of memory", ... for the summary.
std::string_view kind_name(FailureKind kind);

// The same as one word for signatures and JSON: "python_exception".
std::string_view kind_id(FailureKind kind);

// Kinds worth another attempt even when they repeat: a lost node, a hang,
// a launcher that was stopped. A network error is transient only after
// progress, which the restart rule (doctor/repeat_guard.h) weighs itself.
bool is_transient(FailureKind kind);

// Kinds that say the node's hardware failed: the node is benched at once
// (when another can take its place), not given a second attempt.
bool is_hardware(FailureKind kind);

}  // namespace dlaunch::doctor
