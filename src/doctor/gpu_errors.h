// The GPU hardware errors a node can show between rounds: the NVIDIA
// driver's Xid events in the kernel log and uncorrected ECC errors as
// nvidia-smi counts them. A node that shows one is benched rather than
// given the next attempt (launch/health_check.h, service's bench).
//
// Pure: the measuring (util/kernel_log, nvidia-smi) is the caller's, so
// the judgements are unit-tested without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlaunch::doctor {

// One "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has
// fallen off the bus." line of the kernel log.
struct XidEvent {
  std::string device;  // "PCI:0000:3b:00"
  int code = 0;
  std::string text;    // what follows the code
};

// LINE read as an Xid event; nullopt when it is not one.
std::optional<XidEvent> read_xid(std::string_view line);

// What an Xid code says of the hardware, for the Xids that mean the GPU,
// its memory or its links failed (48 a double-bit ECC error, 79 fallen off
// the bus, ...); nullopt for the codes a program's own bug raises (13, 31,
// 43, 45: an illegal address, a fault, a stopped channel), which a restart
// on the same GPU can survive.
std::optional<std::string_view> hardware_xid_meaning(int code);

// A reason when LINES (the kernel's messages since the last check) hold a
// hardware Xid: names HOST, the device, the code and its meaning.
std::optional<std::string> xid_problem(const std::vector<std::string>& lines, const std::string& host);

// What one GPU's ECC reading shows wrong, one phrase each: "GPU 1: 2
// uncorrected ECC errors", "GPU 1: retired pages pending"; none when
// nothing is (nullopt UNCORRECTED: no ECC on it). The pre-start gate
// (check/gate_check) and the health check between rounds judge alike.
std::vector<std::string> ecc_findings(std::int64_t gpu, std::optional<std::int64_t> uncorrected,
                                      std::string_view retired_pending);

// The arguments after "nvidia-smi" that ecc_problem reads.
std::vector<std::string> ecc_query();

// nvidia-smi's answer to ecc_query() (CSV: index, uncorrected volatile ECC
// errors, retired pages pending): a reason when a GPU counts uncorrected
// errors or has pages waiting to be retired (both need a GPU reset).
// Lines it cannot read and "[N/A]" (no ECC) are skipped.
std::optional<std::string> ecc_problem(std::string_view nvidia_smi_output, const std::string& host);

}  // namespace dlaunch::doctor
