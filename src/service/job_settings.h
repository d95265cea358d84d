// The settings of a job that every launcher and node 0's service share,
// declared once: the command line sets them (a row each in
// launch/job_options.cc; launch/launch_config adds the topology's sizes),
// a launcher's coordinator keeps them (rendezvous/rendezvous_coordinator.h)
// and hands them whole to the service it hosts (service/rendezvous_server.h).
// A new option node 0's service uses is a row there, a field here and the
// code that uses it: no copy between settings structs.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "hang/hang_watch.h"
#include "service/gate_step.h"
#include "service/waiting_status.h"
#include "wire/protocol.h"

namespace dlaunch::rendezvous {

struct JobSettings {
  int nnodes = 1;  // the training size
  // Launchers beyond nnodes that stand by to take a lost node's place.
  int spare_nodes = 0;
  // The fewest nodes the job goes on with once no spare is left
  // (--min-nodes; 0: nnodes, wire/world.h effective_min_nodes).
  int min_nodes = 0;
  // A node whose workers fail first this many rounds in a row is benched
  // when another can take its place (0: never).
  int node_fail_limit = 2;
  int max_restarts = 0;
  // Stop, with util::kExitDeterministic, when an attempt's root failure
  // repeats the previous attempt's with no progress (doctor/repeat_guard.h);
  // false (--retry-repeated-failures): torchrun's plain count.
  bool stop_repeated_failures = true;
  std::string run_id;
  // Probe and choose each host's interface before a round with new hosts.
  bool survey_network = true;
  GateSettings gate;  // node 0's --gate holds for the job
  // How long the nodes may take to join a round (--rdzv-timeout).
  std::chrono::milliseconds join_timeout{300'000};
  std::optional<std::string> token;  // the job's rendezvous secret; nullopt: any launcher may join
  // Node 0's value is the job's: the others adopt it from the challenge.
  std::chrono::milliseconds heartbeat_timeout{kDefaultHeartbeatTimeout};
  // How long each end waits for the other's next handshake message.
  std::chrono::milliseconds handshake_timeout{kDefaultHandshakeTimeout};
  // --hang-timeout, --straggler-lag (node 0's service judges; every
  // launcher reports its progress while they are set), stack captures.
  ForensicsSettings forensics;
  // Where each slot's launcher is expected (Slurm's node list), so the
  // lines said while nodes are missing can name their hosts; empty: unknown.
  std::vector<std::string> expected_hosts;
  // How often a waiting launcher says so: node 0 naming whom it waits for,
  // the others while they cannot reach node 0.
  WaitingSchedule waiting_lines;
  // --health-check: the command each launcher runs before it joins a round
  // after the first (launch/health_check), and how long it may take. Node
  // 0's service only hears the result (JoinMessage::health_error).
  std::optional<std::string> health_check;
  std::chrono::milliseconds health_check_timeout{60'000};
};

}  // namespace dlaunch::rendezvous
