#include "survey/network_survey.h"

#include <algorithm>
#include <fmt/format.h>

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

std::string NetworkSurvey::machine_key(int slot) const {
  const Host& host = hosts_.at(slot);
  std::string key = host.name;
  for (const auto& interface : host.interfaces) {
    key += '\n' + interface.name;
    for (const auto& address : interface.addresses) key += ' ' + address;
  }
  return key;
}

std::vector<NetworkSurvey::Machine> NetworkSurvey::machines_of(const std::vector<int>& slots) const {
  std::vector<Machine> machines;
  std::map<std::string, std::size_t> index;
  for (int slot : slots) {
    if (hosts_.count(slot) == 0) continue;
    std::string key = machine_key(slot);
    auto [at, added] = index.emplace(key, machines.size());
    if (added) machines.push_back({std::move(key), {slot}});
    else machines[at->second].slots.push_back(slot);
  }
  return machines;
}

std::vector<int> NetworkSurvey::probers_for(const Machine& target_machine, const std::vector<Machine>& joined) const {
  const int target = target_machine.slots.front();
  std::vector<int> others{target};  // probers_of needs the target among the slots, and leaves it out
  std::vector<int> own_machine;
  for (const auto& machine : joined) {
    if (machine.key != target_machine.key) {
      others.push_back(machine.slots.front());
      continue;
    }
    for (int slot : machine.slots)
      if (slot != target) own_machine.push_back(slot);
  }
  std::sort(others.begin(), others.end());
  auto probers = net::probers_of(target, others);
  if (probers.empty() && !own_machine.empty()) probers.push_back(own_machine.front());
  return probers;
}

std::map<int, ProbeMessage> NetworkSurvey::ask(const std::vector<int>& joined, const std::vector<int>& targets,
                                               int round) {
  std::map<int, ProbeMessage> requests;
  const auto joined_machines = machines_of(joined);
  for (const auto& machine : machines_of(targets)) {
    int target = machine.slots.front();
    const Host& host = hosts_.at(target);
    if (host.probe_port == 0) continue;  // it could not listen: nobody can reach it by probe
    for (int prober : probers_for(machine, joined_machines)) {
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
  // Each machine's slots, by the slot that speaks for it.
  std::map<int, std::vector<int>> machines;
  std::vector<net::HostInterfaces> hosts;
  for (auto& machine : machines_of(targets)) {
    const Host& host = hosts_.at(machine.slots.front());
    hosts.push_back({machine.slots.front(), host.name, host.interfaces});
    machines[machine.slots.front()] = std::move(machine.slots);
  }
  std::vector<std::string> lines;
  for (auto& choice : net::choose_interfaces(hosts, results_)) {
    const std::vector<int>& slots = machines.at(choice.slot);
    lines.push_back(slots.size() == 1 ? choice.why
                                      : fmt::format("{} (for its {} launchers)", choice.why, slots.size()));
    for (int slot : slots) {
      net::InterfaceChoice shared = choice;
      shared.slot = slot;
      chosen_[slot] = std::move(shared);
    }
  }
  asked_.clear();
  return lines;
}

const net::InterfaceChoice* NetworkSurvey::choice(int slot) const {
  auto found = chosen_.find(slot);
  return found == chosen_.end() || found->second.ifname.empty() ? nullptr : &found->second;
}

}  // namespace dlaunch::rendezvous
