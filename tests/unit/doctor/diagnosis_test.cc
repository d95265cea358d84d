// diagnose() and choose_root(): each kind of failure from real-looking
// worker output, and the root of an attempt among its cascade.
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

namespace dlaunch::doctor {
namespace {

using rendezvous::Failure;

Failure worker(int rank, int code, std::vector<std::string> lines, int signal = 0) {
  Failure failure;
  failure.global_rank = rank;
  failure.local_rank = rank;
  failure.node_rank = 0;
  failure.exit_code = code;
  failure.signal = signal;
  failure.last_lines = std::move(lines);
  return failure;
}

std::vector<std::string> traceback(int line, const std::string& exception) {
  return {"Traceback (most recent call last):", "  File \"/w/train.py\", line 40, in <module>", "    main()",
          "  File \"/w/train.py\", line " + std::to_string(line) + ", in load_config", "    raise", exception};
}

struct Case {
  const char* what;
  Failure failure;
  FailureKind kind;
  bool consequence;
};

TEST(Diagnosis, EveryKindFromRealText) {
  const std::vector<Case> cases = {
      {"python exception", worker(2, 1, traceback(12, "ValueError: bad config")), FailureKind::kPythonException,
       false},
      {"CUDA OOM",
       worker(0, 1, traceback(80, "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB "
                                  "(GPU 0; 39.59 GiB total capacity; 36.71 GiB already allocated)")),
       FailureKind::kCudaOutOfMemory, false},
      {"host OOM",
       worker(1, 137, {"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4711.0. Some of your "
                       "processes may have been killed by the cgroup out-of-memory handler."}, 9),
       FailureKind::kHostOutOfMemory, false},
      {"NCCL error",
       worker(3, 1, traceback(50, "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/"
                                  "ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3")),
       FailureKind::kNcclError, false},
      {"NCCL peer gone",
       worker(3, 1, {"RuntimeError: NCCL communicator was aborted on rank 3.  Original reason for failure "
                     "was: NCCL error: remote process exited or there was a network error, NCCL version 2.14.3"}),
       FailureKind::kNcclError, true},
      {"gloo peer gone",
       worker(1, 1, traceback(44, "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] "
                                  "Connection closed by peer [10.0.0.2]:4001")),
       FailureKind::kGlooError, true},
      {"gloo connect refused",
       worker(1, 1, {"RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect "
                     "[10.1.4.7]:41417: Connection refused"}),
       FailureKind::kGlooError, false},
      {"store timeout",
       worker(1, 1, {"RuntimeError: Timed out initializing process group in store based barrier on rank: 1, "
                     "for key: store_based_barrier_key:1 (world_size=4, worker_count=3, timeout=0:30:00)"}),
       FailureKind::kStoreTimeout, true},
      {"segfault", worker(0, 139, {"Fatal Python error: Segmentation fault"}, 11), FailureKind::kSignal, false},
      {"abort", worker(0, 134, {}, 6), FailureKind::kSignal, false},
      {"SIGTERM from dlaunch", worker(1, 143, {"step 12"}, 15), FailureKind::kStoppedByLauncher, true},
      {"NaN", worker(0, 1, {"RuntimeError: Function 'MulBackward0' returned nan values in its 0th output."}),
       FailureKind::kNanOrInf, false},
      {"plain exit", worker(0, 3, {"giving up"}), FailureKind::kExitCode, false},
      {"host OOM, dlaunch's evidence",
       worker(2, 137, {"step 7", "dlaunch: this worker was killed by the kernel's OOM killer: the memory cgroup "
                                 "counted 1 OOM kill(s) during the round (/sys/fs/cgroup/x/memory.events)"}, 9),
       FailureKind::kHostOutOfMemory, false},
      {"SIGKILL without OOM evidence", worker(2, 137, {"step 7"}, 9), FailureKind::kStoppedByLauncher, true},
      {"ECC under NCCL's words",
       worker(0, 1, {"NCCL WARN Cuda failure 'uncorrectable ECC error encountered'",
                     "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled cuda error"}),
       FailureKind::kGpuHardware, false},
      {"ECC from CUDA", worker(0, 1, traceback(30, "RuntimeError: CUDA error: uncorrectable ECC error encountered")),
       FailureKind::kGpuHardware, false},
      {"a single node's failed health check",
       [] {
         Failure failure;
         failure.node_rank = 0;
         failure.description = "health check 'disk' failed on node7: the file system of the log folder /logs has "
                               "0.2 GiB free of 100.0 GiB. The job stops instead of starting restart 1 of 3";
         return failure;
       }(),
       FailureKind::kHealthCheck, false},
      {"fallen off the bus",
       worker(0, 1, {"NVRM: Xid (PCI:0000:3b:00): 79, pid=4711, name=python3, GPU has fallen off the bus."}),
       FailureKind::kGpuHardware, false},
  };
  for (const Case& c : cases) {
    Diagnosis diagnosis = diagnose(c.failure);
    EXPECT_EQ(diagnosis.kind, c.kind) << c.what << ": " << kind_name(diagnosis.kind);
    EXPECT_EQ(diagnosis.consequence, c.consequence) << c.what;
  }
}

TEST(Diagnosis, AnExceptionBeatsTheStopThatFollowedIt) {
  // Raised, printed its traceback, then got dlaunch's SIGTERM while it tore down.
  Diagnosis diagnosis = diagnose(worker(0, 143, traceback(12, "ValueError: bad config"), 15));
  EXPECT_EQ(diagnosis.kind, FailureKind::kPythonException);
  EXPECT_FALSE(diagnosis.consequence);
}

TEST(Diagnosis, HangAndLostNodeAreTheJobs) {
  Failure hang;
  hang.exit_code = 124;
  hang.description = "hang: no rank made progress for 60 s";
  EXPECT_EQ(diagnose(hang).kind, FailureKind::kHang);
  Failure lost;
  lost.node_rank = 1;
  lost.description = "lost contact with the launcher of node 1 (n2): it exited or was killed";
  EXPECT_EQ(diagnose(lost).kind, FailureKind::kLostNode);
}

TEST(Diagnosis, NamesTheUsersLine) {
  Diagnosis diagnosis = diagnose(worker(2, 1, traceback(12, "ValueError: bad config")));
  EXPECT_EQ(diagnosis.exception_type, "ValueError");
  EXPECT_EQ(diagnosis.exception_message, "bad config");
  EXPECT_EQ(short_name(diagnosis), "ValueError at /w/train.py:12");
  EXPECT_EQ(diagnosis.signature, "python_exception ValueError /w/train.py:12");
  EXPECT_EQ(diagnosis.traceback.size(), 6u);
}

TEST(Diagnosis, ErrorFileMessageWithoutTraceback) {
  Failure failure = worker(0, 1, {});
  failure.error_message = "KeyError: 'lr'";
  Diagnosis diagnosis = diagnose(failure);
  EXPECT_EQ(diagnosis.kind, FailureKind::kPythonException);
  EXPECT_EQ(diagnosis.exception_type, "KeyError");
}

TEST(Diagnosis, SignatureIsTheSameOnEveryRank) {
  auto a = diagnose(worker(1, 1, {"error on rank 1 (pid 4242) at 0x7f00dead from 10.0.0.1:29500"}));
  auto b = diagnose(worker(5, 1, {"error on rank 5 (pid 777) at 0x7f00beef from 10.0.0.3:41000"}));
  EXPECT_EQ(a.signature, b.signature);
  EXPECT_EQ(without_numbers("rank 12 pid 0xffA0"), "rank N pid 0xN");
}

TEST(Diagnosis, RootIsTheFirstThatIsNoCascade) {
  std::vector<Failure> failures = {
      worker(1, 1, {"RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by "
                    "peer [127.0.0.1]:4001"}),
      worker(0, 1, traceback(12, "ValueError: bad config")),
      worker(2, 143, {}, 15),
      worker(3, 143, {}, 15),
  };
  auto choice = choose_root(failures);
  EXPECT_EQ(choice.root, 1u);
  EXPECT_EQ(choice.consequences, 3);
  failures.erase(failures.begin() + 1);
  EXPECT_EQ(choose_root(failures).root, 0u);  // only cascades: the first
}

}  // namespace
}  // namespace dlaunch::doctor
