// The coordinator of a multi-node job: a client of node 0's rendezvous
// service (and, on node 0, the host of that service too).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "process/signal_channel.h"
#include "rendezvous/coordinator.h"
#include "service/rendezvous_server.h"
#include "service/waiting_status.h"

namespace dlaunch::rendezvous {

// Where a launcher stands in the job, for the job's shared records.
struct LauncherPlace {
  std::string incarnation;       // the job's (World::incarnation)
  int round = 0;                 // the last round this launcher was in
  std::optional<int> node_rank;  // its node rank in that round; nullopt: it stood by
  int slot = 0;
  std::string host;
};

// Asked by a launcher that lost node 0 before it acts for the job again
// (takes the rendezvous over, decides alone): do the job's records (in the
// shared log folder, launch/run_record.h) show that the job went on
// without it, or was decided? Returns the one line that says so, or
// nullopt. Must return within a few seconds, whatever the file system.
using JobRecordsCheck = std::function<std::optional<std::string>(const LauncherPlace& place)>;

struct RendezvousSettings {
  JobSettings job;  // what every launcher of the job was given, node 0's service included
  std::string master_addr;
  int port = 0;
  // This launcher's slot: 0 to nnodes + spare_nodes - 1 (its node rank
  // comes with each World); -1: none, node ranks come by arrival. Then the
  // first launcher on MASTER_ADDR's host to bind PORT serves the rendezvous
  // as node 0, and node 0's service gives each other launcher a free slot.
  int node_rank = 0;
  int nproc = 1;
  std::string host;
  bool allow_uneven = false;
  // Where a launcher says what it met while dialling node 0 (a silent
  // listener, a peer that did not prove the token) and that it still
  // waits; default: stderr.
  std::function<void(const std::string&)> notice;
  // The job's records, read before a launcher that lost node 0 acts for
  // the job again; null: none are kept (no shared log folder).
  JobRecordsCheck records_check;
};

// On node 0, binds SETTINGS.port first (throws SystemError naming the port
// when it is taken) and starts the service. SIGNALS lets waits end early
// when the launcher is told to stop. With a token, node 0 must prove it
// holds it before the launcher believes anything it says
// (rendezvous/service_dialer.h), and every World is checked against these
// settings before a worker starts (rendezvous/world_check.h).
std::unique_ptr<Coordinator> make_rendezvous_coordinator(const RendezvousSettings& settings,
                                                         process::SignalChannel& signals);

}  // namespace dlaunch::rendezvous
