#include "doctor/gpu_errors.h"

#include <fmt/format.h>

#include "util/strings.h"

namespace dlaunch::doctor {
namespace {

struct HardwareXid {
  int code;
  std::string_view meaning;
};

// From NVIDIA's Xid catalogue (docs.nvidia.com, "Xid Errors"): the codes
// whose entry names a hardware cause, for which it advises a GPU reset, a
// node drain or the field diagnostic.
constexpr HardwareXid kHardwareXids[] = {
    {48, "a double-bit ECC error"},
    {61, "an internal micro-controller breakpoint"},
    {62, "an internal micro-controller halt"},
    {63, "ECC page retirement or row remapping"},
    {64, "a row remapping failure"},
    {74, "an NVLink error"},
    {79, "the GPU has fallen off the bus"},
    {92, "a high single-bit ECC error rate"},
    {94, "a contained ECC error"},
    {95, "an uncontained ECC error"},
    {119, "a GSP RPC timeout"},
    {120, "a GSP error"},
    {140, "an unrecovered ECC error"},
};

}  // namespace

std::optional<XidEvent> read_xid(std::string_view line) {
  constexpr std::string_view kMarker = "NVRM: Xid (";
  const std::size_t at = line.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + kMarker.size());
  const std::size_t close = rest.find("): ");
  if (close == std::string_view::npos) return std::nullopt;
  XidEvent event;
  event.device = std::string(rest.substr(0, close));
  rest.remove_prefix(close + 3);
  const std::size_t comma = rest.find(',');
  auto code = util::parse_int(util::trim(rest.substr(0, comma)));
  if (!code || *code < 0 || *code > 100000) return std::nullopt;
  event.code = static_cast<int>(*code);
  if (comma != std::string_view::npos) event.text = std::string(util::trim(rest.substr(comma + 1)));
  return event;
}

std::optional<std::string_view> hardware_xid_meaning(int code) {
  for (const auto& xid : kHardwareXids) {
    if (xid.code == code) return xid.meaning;
  }
  return std::nullopt;
}

std::optional<std::string> xid_problem(const std::vector<std::string>& lines, const std::string& host) {
  for (const auto& line : lines) {
    auto event = read_xid(line);
    if (!event) continue;
    auto meaning = hardware_xid_meaning(event->code);
    if (!meaning) continue;
    return fmt::format("health check 'gpu-errors' failed on {}: the NVIDIA driver reported Xid {} ({}) on {} "
                       "({}); the GPU needs a reset or a repair: drain the node and run the field diagnostic",
                       host, event->code, *meaning, event->device, util::escaped(event->text.substr(0, 160)));
  }
  return std::nullopt;
}

std::vector<std::string> ecc_findings(std::int64_t gpu, std::optional<std::int64_t> uncorrected,
                                      std::string_view retired_pending) {
  std::vector<std::string> findings;
  if (uncorrected.value_or(0) > 0)
    findings.push_back(fmt::format("GPU {}: {} uncorrected ECC errors", gpu, *uncorrected));
  if (retired_pending == "Yes") findings.push_back(fmt::format("GPU {}: retired pages pending", gpu));
  return findings;
}

std::vector<std::string> ecc_query() {
  return {"--query-gpu=index,ecc.errors.uncorrected.volatile.total,retired_pages.pending", "--format=csv,noheader"};
}

std::optional<std::string> ecc_problem(std::string_view nvidia_smi_output, const std::string& host) {
  std::vector<std::string> problems;
  for (const auto& row : util::split(nvidia_smi_output, '\n')) {
    auto fields = util::split(row, ',');
    if (fields.size() != 3) continue;
    auto index = util::parse_int(util::trim(fields[0]));
    if (!index) continue;
    for (auto& finding : ecc_findings(*index, util::parse_int(util::trim(fields[1])), util::trim(fields[2])))
      problems.push_back(std::move(finding));
  }
  if (problems.empty()) return std::nullopt;
  return fmt::format("health check 'gpu-errors' failed on {}: {}; the GPU needs a reset (nvidia-smi -r) or a "
                     "repair before it trains again",
                     host, util::join(problems, ", "));
}

}  // namespace dlaunch::doctor
