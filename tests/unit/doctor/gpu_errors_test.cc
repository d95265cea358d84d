// The GPU hardware errors read between rounds: the kernel's Xid lines as
// NVIDIA's driver writes them (with and without "PCI:"), which codes are
// hardware, and nvidia-smi's ECC answer.
#include "doctor/gpu_errors.h"

#include <gtest/gtest.h>

namespace dlaunch::doctor {
namespace {

bool has(const std::optional<std::string>& text, const std::string& part) {
  return text && text->find(part) != std::string::npos;
}

TEST(GpuErrors, ReadsAnXidLineOfEitherFormat) {
  auto event = read_xid("NVRM: Xid (PCI:0000:3b:00): 79, pid=4711, name=python3, GPU has fallen off the bus.");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->device, "PCI:0000:3b:00");
  EXPECT_EQ(event->code, 79);
  EXPECT_EQ(event->text, "pid=4711, name=python3, GPU has fallen off the bus.");
  auto old = read_xid("[  966.503025] NVRM: Xid (0000:01:00): 31, Ch 0000000b, engmask 00000120");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->code, 31);
  EXPECT_FALSE(read_xid("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03"));
  EXPECT_FALSE(read_xid("NVRM: Xid (PCI:0000:3b:00): many, pid=1"));
  EXPECT_FALSE(read_xid("NVRM: Xid (PCI:0000:3b:00"));
}

TEST(GpuErrors, OnlyHardwareXidsAreProblems) {
  EXPECT_TRUE(hardware_xid_meaning(48));
  EXPECT_TRUE(hardware_xid_meaning(79));
  EXPECT_TRUE(hardware_xid_meaning(95));
  // A program's own illegal address or fault: a restart may pass.
  EXPECT_FALSE(hardware_xid_meaning(13));
  EXPECT_FALSE(hardware_xid_meaning(31));
  EXPECT_FALSE(hardware_xid_meaning(43));
  EXPECT_FALSE(xid_problem({"NVRM: Xid (PCI:0000:3b:00): 13, Graphics Exception"}, "node3"));
  auto problem = xid_problem({"eth0: link up", "NVRM: Xid (PCI:0000:3b:00): 13, Graphics Exception",
                              "NVRM: Xid (PCI:0000:3b:00): 48, pid=7, An uncorrectable double bit error"},
                             "node3");
  EXPECT_TRUE(has(problem, "health check 'gpu-errors' failed on node3")) << problem.value_or("");
  EXPECT_TRUE(has(problem, "Xid 48 (a double-bit ECC error) on PCI:0000:3b:00")) << problem.value_or("");
}

TEST(GpuErrors, EccCountsAndRetiredPagesAreProblems) {
  EXPECT_FALSE(ecc_problem("0, 0, No\n1, 0, No\n", "node3"));
  EXPECT_FALSE(ecc_problem("0, [N/A], [N/A]\n", "node3")) << "no ECC on this GPU";
  EXPECT_FALSE(ecc_problem("garbage\n\n", "node3"));
  auto problem = ecc_problem("0, 0, No\n1, 2, No\n2, 0, Yes\n", "node3");
  EXPECT_TRUE(has(problem, "GPU 1: 2 uncorrected ECC errors, GPU 2: retired pages pending")) << problem.value_or("");
  EXPECT_TRUE(has(problem, "on node3")) << problem.value_or("");
}

}  // namespace
}  // namespace dlaunch::doctor
