// The signature rows, cascades first: a rank that lost its peer also
// prints the generic gloo or NCCL error text, so the consequence row must
// be tried before the row of its family.
#include "doctor/failure_signature.h"

namespace dlaunch::doctor {

namespace {

using enum FailureKind;

constexpr Signature kSignatures[] = {
    // ---- consequences: another rank failed first
    {kGlooError, true, "Connection closed by peer", kAnyExit,
     "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
     "[10.1.4.7]:23456"},
    {kGlooError, true, "Connection reset by peer", kAnyExit,
     "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:575] Read error [10.1.4.7]:6331: "
     "Connection reset by peer"},
    {kNcclError, true, "remote process exited or there was a network error", kAnyExit,
     "RuntimeError: NCCL communicator was aborted on rank 3.  Original reason for failure was: NCCL "
     "error: remote process exited or there was a network error, NCCL version 2.14.3"},
    {kNcclError, true, "Watchdog caught collective operation timeout", kAnyExit,
     "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=118, OpType=ALLREDUCE, "
     "Timeout(ms)=1800000) ran for 1800459 milliseconds before timing out."},
    {kStoreTimeout, true, "Timed out initializing process group in store based barrier", kAnyExit,
     "RuntimeError: Timed out initializing process group in store based barrier on rank: 1, for key: "
     "store_based_barrier_key:1 (world_size=4, worker_count=3, timeout=0:30:00)"},
    {kStoreTimeout, true, "Socket Timeout", kAnyExit, "RuntimeError: Socket Timeout"},
    {kStoreTimeout, true, "Stop_waiting response is expected", kAnyExit,
     "RuntimeError: Stop_waiting response is expected"},
    // ---- causes read from the text; the GPU's hardware first, as NCCL
    // and CUDA wrap its errors in their own
    {kGpuHardware, false, "uncorrectable ECC error encountered", kAnyExit,
     "RuntimeError: CUDA error: uncorrectable ECC error encountered"},
    {kGpuHardware, false, "GPU has fallen off the bus", kAnyExit,
     "NVRM: Xid (PCI:0000:3b:00): 79, pid=4711, name=python3, GPU has fallen off the bus."},
    {kGpuHardware, false, "health check 'gpu-errors' failed", kAnyExit,
     "health check 'gpu-errors' failed on node7: the NVIDIA driver reported Xid 79 (the GPU has fallen off "
     "the bus) on PCI:0000:3b:00 (...)"},
    {kHealthCheck, false, "health check '", kAnyExit,
     "health check 'disk' failed on node7: the file system of the log folder /logs has 0.2 GiB free of "
     "100.0 GiB, ..."},
    {kGpuHardware, false, "NVRM: Xid", kAnyExit,
     "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to "
     "activate."},
    {kCudaOutOfMemory, false, "CUDA out of memory", kAnyExit,
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 39.59 GiB "
     "total capacity; 36.71 GiB already allocated; 1.15 GiB free; 37.02 GiB reserved in total by "
     "PyTorch)"},
    {kHostOutOfMemory, false, "oom-kill", kAnyExit,
     "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4711.0. Some of your processes may "
     "have been killed by the cgroup out-of-memory handler."},
    {kHostOutOfMemory, false, "killed by the kernel's OOM killer", kAnyExit,
     "dlaunch: this worker was killed by the kernel's OOM killer: the memory cgroup counted 1 OOM kill "
     "during the round (/sys/fs/cgroup/system.slice/job.scope/memory.events)"},
    {kHostOutOfMemory, false, "is killed by signal: Killed", kAnyExit,
     "RuntimeError: DataLoader worker (pid 4711) is killed by signal: Killed. "},
    {kHostOutOfMemory, false, "Out of memory: Killed process", kAnyExit,
     "Out of memory: Killed process 81234 (python3) total-vm:91234567kB, anon-rss:81234567kB"},
    {kNanOrInf, false, "returned nan values", kAnyExit,
     "RuntimeError: Function 'MulBackward0' returned nan values in its 0th output."},
    {kNanOrInf, false, "loss is nan", kAnyExit, "ValueError: loss is nan at step 1200"},
    {kNanOrInf, false, "loss is inf", kAnyExit, "ValueError: loss is inf at step 1200"},
    {kNcclError, false, "NCCL error", kAnyExit,
     "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled "
     "system error, NCCL version 2.14.3"},
    {kGlooError, false, "gloo/transport", kAnyExit,
     "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [10.1.4.7]:41417: "
     "Connection refused"},
    {kSignal, false, "which dlaunch did not send", kAnyExit,
     "dlaunch: this worker got SIGKILL, which dlaunch did not send (a person, a script, the batch system, "
     "or an OOM killer dlaunch cannot see)"},
    // ---- causes read from the exit code alone
    {kHang, false, "", 124, "dlaunch: hang: no rank made progress for 600 s"},
    {kSignal, false, "", 139, "Fatal Python error: Segmentation fault"},
    {kStoppedByLauncher, true, "", 143, "the SIGTERM dlaunch sends every other worker after a failure"},
    {kStoppedByLauncher, true, "", 137, "the SIGKILL after --shutdown-timeout, with no OOM evidence"},
};

}  // namespace

std::span<const Signature> signature_table() { return kSignatures; }

std::string_view kind_name(FailureKind kind) {
  switch (kind) {
    case kPythonException: return "Python exception";
    case kCudaOutOfMemory: return "CUDA out of memory";
    case kHostOutOfMemory: return "host out of memory (OOM kill)";
    case kGpuHardware: return "GPU hardware error";
    case kNcclError: return "NCCL error";
    case kGlooError: return "gloo error";
    case kStoreTimeout: return "store timeout";
    case kNanOrInf: return "NaN or Inf";
    case kSignal: return "killed by a signal";
    case kStoppedByLauncher: return "stopped by dlaunch";
    case kHang: return "hang";
    case kLostNode: return "lost node";
    case kLauncher: return "launcher stopped";
    case kHealthCheck: return "failed health check";
    case kExitCode: return "exit code";
  }
  return "exit code";
}

std::string_view kind_id(FailureKind kind) {
  switch (kind) {
    case kPythonException: return "python_exception";
    case kCudaOutOfMemory: return "cuda_oom";
    case kHostOutOfMemory: return "host_oom";
    case kGpuHardware: return "gpu_hardware";
    case kNcclError: return "nccl";
    case kGlooError: return "gloo";
    case kStoreTimeout: return "store_timeout";
    case kNanOrInf: return "nan_inf";
    case kSignal: return "signal";
    case kStoppedByLauncher: return "stopped";
    case kHang: return "hang";
    case kLostNode: return "lost_node";
    case kLauncher: return "launcher";
    case kHealthCheck: return "health_check";
    case kExitCode: return "exit_code";
  }
  return "exit_code";
}

bool is_transient(FailureKind kind) { return kind == kLostNode || kind == kHang || kind == kLauncher; }

bool is_hardware(FailureKind kind) { return kind == kGpuHardware; }

}  // namespace dlaunch::doctor
