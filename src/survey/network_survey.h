// Node 0's record of every launcher's network interfaces, the probes it
// asks for, and each host's interface once chosen (issue: a wrong interface
// is the commonest reason a multi-node job hangs from its first step).
//
// Each Join reports its host's interfaces and probe port. Before a round
// starts with hosts not yet surveyed, every launcher is asked to probe the
// addresses of those hosts it is a prober of (net::probers_of: all others up
// to 33 hosts, then 32 each, so the probes stay O(N) per host). From the
// reports, net::choose_interfaces picks each host's interface. A host keeps
// its choice for the job's life.
//
// The survey is of machines, not launchers: launchers that report the same
// host name and the same interfaces are one machine (several launchers per
// host, or a whole job on one). Only the lowest slot of each is probed, from
// other machines (from one launcher of its own when there is no other), and
// the others share its choice and its one line. 1,024 launchers on one
// machine made 32,768 probes before, and one now (docs/BENCHMARKS.md).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "net/interface_choice.h"
#include "wire/protocol.h"

namespace dlaunch::rendezvous {

class NetworkSurvey {
 public:
  // What the launcher in SLOT reported in its Join (again on a re-join).
  void add_host(int slot, const std::string& host, const std::vector<net::Interface>& interfaces,
                std::uint32_t probe_port);

  // The slots of JOINED whose interface is not chosen yet.
  std::vector<int> unsurveyed(const std::vector<int>& joined) const;

  // For each slot of JOINED, what it must probe so that every slot of
  // TARGETS gets probed by its probers; slots with nothing to probe are left
  // out. Remembers who was asked, for complete().
  std::map<int, ProbeMessage> ask(const std::vector<int>& joined, const std::vector<int>& targets, int round);
  // A report from SLOT; reports from slots not asked are ignored.
  void take_report(int slot, const ProbeReportMessage& report);
  // A slot asked that will never answer (lost).
  void forget(int slot) { asked_.erase(slot); }
  bool complete() const { return asked_.empty(); }

  // Chooses the interface of every slot of TARGETS from the reports taken
  // (a slot nobody reached keeps its best candidate, and its line says so)
  // and returns one line per slot, "node2: eth1 (...); eth0 skipped: ...".
  std::vector<std::string> settle(const std::vector<int>& targets);

  // The chosen interface of SLOT; null when none was chosen.
  const net::InterfaceChoice* choice(int slot) const;

 private:
  struct Host {
    std::string name;
    std::vector<net::Interface> interfaces;
    std::uint32_t probe_port = 0;
  };
  // Launchers on one machine; the first of SLOTS speaks for it.
  struct Machine {
    std::string key;  // machine_key of its slots
    std::vector<int> slots;
  };
  // What makes SLOT's machine: its host name and every interface's name and
  // addresses, as its Join reported them.
  std::string machine_key(int slot) const;
  // The known slots of SLOTS grouped by machine, each group in slot order.
  std::vector<Machine> machines_of(const std::vector<int>& slots) const;
  // Who probes TARGET's first slot: probers_of over one launcher per other
  // machine of JOINED, or one other launcher of its own when there is none.
  std::vector<int> probers_for(const Machine& target, const std::vector<Machine>& joined) const;

  std::map<int, Host> hosts_;
  std::set<int> asked_;
  std::vector<net::ProbeResult> results_;
  std::map<int, net::InterfaceChoice> chosen_;
};

}  // namespace dlaunch::rendezvous
