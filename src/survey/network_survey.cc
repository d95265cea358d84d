#include "survey/network_survey.h"

#include <algorithm>

namespace dlaunch::rendezvous {

void NetworkSurvey::add_host(int slot, const std::string& host, const std::vector<net::Interface>& interfaces,
                             std::uint32_t probe_port) {
  hosts_[slot] = Host{host, interfaces, probe_port};
}

std::vector<int> NetworkSurvey::unsurveyed(const std::vector<int>& joined) const {
  std::vector<int> slots;
  for (int slot : joined) {
    if (chosen_.count(slot) == 0 && hosts_.count(slot) > 0) slots.push_back(slot);
  }
  return slots;
}

std::map<int, ProbeMessage> NetworkSurvey::ask(const std::vector<int>& joined, const std::vector<int>& targets,
                                               int round) {
  std::map<int, ProbeMessage> requests;
  for (int target : targets) {
    const Host& host = hosts_.at(target);
    if (host.probe_port == 0) continue;  // it could not listen: nobody can reach it by probe
    for (int prober : net::probers_of(target, joined)) {
      ProbeMessage& request = requests[prober];
      request.round = static_cast<std::uint32_t>(round);
      for (const auto& interface : host.interfaces) {
        if (!interface.excluded.empty()) continue;
        for (const auto& address : interface.addresses)
          request.targets.push_back({static_cast<std::uint32_t>(target), address, host.probe_port});
      }
    }
  }
  for (auto it = requests.begin(); it != requests.end();) {
    if (it->second.targets.empty()) it = requests.erase(it);
    else asked_.insert((it++)->first);
  }
  return requests;
}

void NetworkSurvey::take_report(int slot, const ProbeReportMessage& report) {
  if (asked_.erase(slot) == 0) return;
  for (const auto& outcome : report.outcomes)
    results_.push_back({slot, static_cast<int>(outcome.slot), outcome.address, outcome.reached});
}

std::vector<std::string> NetworkSurvey::settle(const std::vector<int>& targets) {
  std::vector<net::HostInterfaces> hosts;
  for (int slot : targets) {
    auto found = hosts_.find(slot);
    if (found != hosts_.end()) hosts.push_back({slot, found->second.name, found->second.interfaces});
  }
  std::vector<std::string> lines;
  for (auto& choice : net::choose_interfaces(hosts, results_)) {
    lines.push_back(choice.why);
    chosen_[choice.slot] = std::move(choice);
  }
  asked_.clear();
  return lines;
}

const net::InterfaceChoice* NetworkSurvey::choice(int slot) const {
  auto found = chosen_.find(slot);
  return found == chosen_.end() || found->second.ifname.empty() ? nullptr : &found->second;
}

}  // namespace dlaunch::rendezvous
