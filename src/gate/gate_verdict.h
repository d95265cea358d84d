// The pre-start gate's verdict: which nodes node 0 benches before a job's
// first attempt, from the one JSON line each node's `dlaunch check --gate`
// printed (check/gate_check.h writes it), and the reports people read.
// Pure: no I/O. The lines come from other machines and are validated here.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dlaunch::rendezvous {

// What one launcher sent node 0.
struct GateNodeReport {
  int slot = 0;
  std::string host;
  bool arrived = false;   // joined within --gate-timeout
  bool reported = false;  // its gate process ended with a line
  std::string line;       // the JSON line, as received (untrusted: validated, bounded)
  int exit_code = 0;
  std::string launcher_error;  // e.g. "dlaunch-check timed out after 30 s"
};

struct GateNodeVerdict {
  int slot = 0;
  std::string host;
  int gate_rank = -1;  // -1: not in the gate (did not join)
  bool benched = false;
  // Failed as every other node did, with nobody to blame: not benched, and
  // the job stops with GateResult::problem.
  bool failed = false;
  std::string why;         // why it was benched or failed; empty when it passed
  double link_gbps = 0;    // the node's typical link: the upper median of its links' Gb/s; 0 unknown
};

struct GateResult {
  std::vector<GateNodeVerdict> nodes;     // by slot
  std::vector<std::string> hosts;         // [gate rank]
  std::vector<std::vector<double>> gbps;  // [gate rank][gate rank]: the lower of both ends' figures, 0 unknown
  double median_gbps = 0;                 // the upper median over passing nodes of link_gbps
  std::vector<std::string> benched_hosts;
  std::string gpu_note;  // GPU checks skipped or not answered, and where
  // Set when the check failed on every node and no node can be blamed:
  // then none is benched, and the caller decides (the fault is likely not
  // any one node's: a wrong interface, a firewall, a missing dlaunch-check).
  std::string problem;
};

// The most of a line judge_gate reads; a longer one is refused.
constexpr std::size_t kMaxGateLineBytes = 256 * 1024;

// GATE_SLOTS: the slots in the gate, in gate-rank order; REPORTS: one per
// slot of the job (those not in the gate too). GATE_TIMEOUT_S: the
// --gate-timeout named in the reason of a node that did not join (0: not
// named). The rules:
//  - not in the gate (did not join): benched;
//  - no line, a malformed or oversized line, or a line with an error:
//    benched with the reason; but when the check failed on every node,
//    only the ranks a majority of the nodes with a line name as suspects
//    are benched, with the nodes that ended without a line while others
//    wrote one; when that names none, none is benched and `problem` says so;
//  - a node's link figure is the upper median of its links' Gb/s (each link
//    the lower of both ends' figures); a node under half the upper median of
//    the passing nodes' figures is benched;
//  - a GPU problem (uncorrected ECC errors, retired pages pending, a hung
//    nvidia-smi) benches the node.
GateResult judge_gate(const std::vector<int>& gate_slots, const std::vector<GateNodeReport>& reports,
                      int gate_timeout_s = 0);

// The short form for the console: a line per benched node, the problem if
// any, then "N of M nodes passed ...".
std::string gate_summary(const GateResult& result);

// The full text: each node's verdict, the Gb/s matrix with host names, why
// each benched node was benched, the GPU note and the problem.
std::string gate_report_text(const GateResult& result);

// The result as JSON: nodes, hosts, gbps, median_gbps, benched_hosts,
// gpu_note, problem.
nlohmann::json gate_report_json(const GateResult& result);

}  // namespace dlaunch::rendezvous
