// The pre-start gate as node 0's service runs it (--gate): before round 0,
// every launcher that came (spares included) runs dlaunch-check's gate mode
// as one gate rank; this part tells each its rank, gathers their reports,
// judges them (gate/gate_verdict.h) and saves the report in the log folder.
// The service's loop decides when the gate starts and applies its result
// (benches nodes, or stops the job when too few healthy ones are left).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gate/gate_verdict.h"
#include "service/service_peer.h"
#include "survey/network_survey.h"
#include "wire/protocol.h"

namespace dlaunch::rendezvous {

struct GateSettings {
  bool enabled = false;
  // How long launchers may take to arrive, and then the check to end.
  std::chrono::milliseconds timeout{60'000};
  std::uint32_t pair_bytes = 4u << 20;  // each direction of each node pair
};

// What the gate needs of the loop that holds the launchers.
class GateStepHost {
 public:
  virtual ~GateStepHost() = default;
  virtual void send(Peer& peer, MessageType type, const std::string& payload) = 0;
  virtual void log(const std::string& line) = 0;
  // SLOT's connected launcher, or null.
  virtual Peer* launcher(int slot) = 0;
  // SLOT's host as its Join named it, else as expected ("" unknown).
  virtual std::string host_of(int slot) = 0;
};

// What the gate found, judged, and where its report was saved ("": not saved).
struct GateFinding {
  GateResult result;
  std::string summary;
  std::string saved;
};

class GateStep {
 public:
  // REPORT_FOLDER: the run's log folder ("": the report is not saved).
  GateStep(GateSettings settings, std::string report_folder, GateStepHost& host);

  // Round 0 still has to pass the gate.
  bool pending() const { return settings_.enabled && !done_; }

  // Starts the check on SLOTS (node 0's first) in round ROUND, its store at
  // MASTER:PORT, each rank on the interface SURVEY chose for its host.
  void start(std::vector<int> slots, const std::string& master, int port, const NetworkSurvey& survey, int round);
  // SLOT's report; true once every gate rank reported.
  bool take_report(int slot, const GateReportMessage& report);
  // Judges the reports of LAUNCHERS slots (those that never came or never
  // reported are judged so) and saves the report with NETWORK_LINES, the
  // survey's choices. The gate is then done.
  GateFinding finish(int launchers, const std::vector<std::string>& network_lines);

 private:
  std::vector<GateNodeReport> node_reports(int launchers);
  std::string save_report(const GateResult& result, const std::vector<std::string>& network_lines);
  int timeout_seconds() const;

  GateSettings settings_;
  std::string report_folder_;
  GateStepHost& host_;
  bool done_ = false;
  std::vector<int> slots_;  // by gate rank
  std::map<int, GateReportMessage> reports_;
};

}  // namespace dlaunch::rendezvous
