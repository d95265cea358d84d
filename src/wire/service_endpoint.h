// Where a running job's rendezvous service answers, written beside its
// logs by the launcher that hosts it, so `dlaunch stacks FOLDER` can reach
// it from a login node without knowing the port rule.
//
// A taken-over service (node 0 lost) writes its own file in its log folder;
// the newest one under a submission folder is the live one.
#pragma once

#include <optional>
#include <string>

namespace dlaunch::rendezvous {

inline constexpr const char* kEndpointFile = "rendezvous.json";

struct ServiceEndpoint {
  std::string address;  // what the launchers dial (--master-addr)
  // The address as node 0 resolved it ("10.0.0.1"): for a login node whose
  // resolver does not know the compute nodes' names. "" when unknown.
  std::string ip;
  int port = 0;
  std::string run_id;
  std::string host;  // the host the service runs on
};

// ADDRESS's first numeric address, as this host resolves it ("" when it
// does not resolve).
std::string numeric_address(const std::string& address, int port);

// Writes FOLDER/rendezvous.json (atomically). Best effort: false when it
// could not be written (the job does not need it).
bool write_endpoint(const std::string& folder, const ServiceEndpoint& endpoint);

// The newest rendezvous.json in FOLDER, FOLDER/logs or FOLDER/logs/*/
// (a requeued job logs to logs/requeue_N). nullopt when there is none.
// Throws InputError naming the file when it is not an endpoint.
std::optional<ServiceEndpoint> find_endpoint(const std::string& folder);

}  // namespace dlaunch::rendezvous
