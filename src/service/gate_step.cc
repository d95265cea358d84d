#include "service/gate_step.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/trusted_folder.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {

GateStep::GateStep(GateSettings settings, std::string report_folder, GateStepHost& host)
    : settings_(settings), report_folder_(std::move(report_folder)), host_(host) {}

int GateStep::timeout_seconds() const {
  return static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(settings_.timeout).count());
}

void GateStep::start(std::vector<int> slots, const std::string& master, int port, const NetworkSurvey& survey,
                     int round) {
  slots_ = std::move(slots);
  reports_.clear();
  auto size = static_cast<std::uint32_t>(slots_.size());
  host_.log(fmt::format("gate: checking {} node{} before the first attempt (a verified all-reduce, then "
                        "node-pair bandwidth); --gate-timeout {} s",
                        size, size == 1 ? "" : "s", timeout_seconds()));
  // The check's store proves this secret to every rank, and they to it.
  const std::string store_secret = random_bytes(kChallengeSize);
  for (std::uint32_t rank = 0; rank < size; ++rank) {
    int slot = slots_[rank];
    const auto* choice = survey.choice(slot);
    GateMessage message{static_cast<std::uint32_t>(round), rank, size, master, static_cast<std::uint32_t>(port),
                        settings_.pair_bytes, static_cast<std::uint32_t>(settings_.timeout.count()),
                        choice ? choice->ifname : "", store_secret};
    if (Peer* peer = host_.launcher(slot)) host_.send(*peer, MessageType::kGate, encode(message));
  }
}

bool GateStep::take_report(int slot, const GateReportMessage& report) {
  if (std::find(slots_.begin(), slots_.end(), slot) == slots_.end()) return false;
  reports_[slot] = report;
  return reports_.size() == slots_.size();
}

GateFinding GateStep::finish(int launchers, const std::vector<std::string>& network_lines) {
  done_ = true;
  GateFinding finding;
  finding.result = judge_gate(slots_, node_reports(launchers), timeout_seconds());
  finding.saved = save_report(finding.result, network_lines);
  finding.summary = gate_summary(finding.result);
  return finding;
}

std::vector<GateNodeReport> GateStep::node_reports(int launchers) {
  std::vector<GateNodeReport> reports;
  for (int slot = 0; slot < launchers; ++slot) {
    GateNodeReport report;
    report.slot = slot;
    report.host = host_.host_of(slot);
    report.arrived = std::find(slots_.begin(), slots_.end(), slot) != slots_.end();
    auto answered = reports_.find(slot);
    if (answered != reports_.end()) {
      report.reported = true;
      report.line = answered->second.line;
      report.exit_code = answered->second.exit_code;
      report.launcher_error = answered->second.error;
    } else if (report.arrived) {
      report.launcher_error = host_.launcher(slot) != nullptr
                                  ? "its launcher sent no gate report within --gate-timeout"
                                  : "its launcher was lost during the gate";
    }
    reports.push_back(std::move(report));
  }
  return reports;
}

// gate/report.txt, gate/report.json and gate/benched-hosts in the log
// folder; returns the text report's path ("" when there is no folder or it
// cannot be written, which the log then says).
std::string GateStep::save_report(const GateResult& result, const std::vector<std::string>& network_lines) {
  if (report_folder_.empty()) return "";
  auto folder = std::filesystem::path(report_folder_) / "gate";
  try {
    util::make_own_folders(folder.string(), 1);  // new, or ours and no planted link
    auto json = gate_report_json(result);
    json["network"] = network_lines;
    util::write_file_atomically((folder / "report.json").string(), json.dump(2) + "\n");
    util::write_file_atomically((folder / "report.txt").string(), gate_report_text(result));
    std::string benched = fmt::format("{}", fmt::join(result.benched_hosts, ","));
    util::write_file_atomically((folder / "benched-hosts").string(), benched + "\n");
    return (folder / "report.txt").string();
  } catch (const std::exception& error) {
    host_.log(fmt::format("gate: cannot save the report in {}: {}", folder.string(), error.what()));
    return "";
  }
}

}  // namespace dlaunch::rendezvous
