// The collective operations `dlaunch check` needs, behind one interface so
// that another transport (NCCL for GPUs) can be added beside gloo's TCP.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dlaunch::collective {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Each throws SystemError when a peer fails or the timeout passes.
  virtual void allreduce_sum(std::int64_t* data, std::size_t count) = 0;
  virtual void allreduce_sum(float* data, std::size_t count) = 0;
  virtual void broadcast(std::int64_t* data, std::size_t count, int root) = 0;
  virtual void barrier() = 0;
  virtual void send(const void* data, std::size_t bytes, int peer) = 0;
  virtual void recv(void* data, std::size_t bytes, int peer) = 0;
};

// Where this process sits in the job, from the launcher's environment.
struct WorkerIdentity {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string host;
  std::string master_addr;
  int master_port = 0;
  // GLOO_SOCKET_IFNAME as the launcher set it (the interface it chose for
  // this host, or several, comma-separated); empty: bind on the host name.
  std::string socket_ifname;
  // The store's secret, when the launcher that started this rank gave one
  // (the pre-start gate's: collective/store_secret.h): rank 0's store then
  // serves only ranks that prove it.
  std::optional<std::string> store_secret;
};

// Forms a gloo group over TCP (ring algorithms): rank 0 hosts the store on
// MASTER_PORT, every rank binds gloo's device on its own host name, or on
// the first interface of socket_ifname when that is set. Throws SystemError
// naming what is missing when a rank does not arrive in TIMEOUT, and naming
// the interface when gloo cannot use it.
// The interface gloo binds on: the first of GLOO_SOCKET_IFNAME's
// comma-separated names, trimmed; empty when none is named.
std::string first_interface(const std::string& socket_ifname);

std::unique_ptr<Communicator> connect_gloo(const WorkerIdentity& identity,
                                           std::chrono::milliseconds timeout);

// The same group, with only the pairs it uses connected (collective/
// pair_mesh): the all-reduce's ring, the barrier's, and PARTNERS, the ranks
// this one will send to and receive from (every partner must name this rank
// in turn). O(N log N) store traffic instead of the full mesh's O(N^3);
// allreduce_sum always runs on the ring; broadcast is refused, as is a send
// or receive to a rank not connected.
std::unique_ptr<Communicator> connect_gloo_pairs(const WorkerIdentity& identity, std::chrono::milliseconds timeout,
                                                 const std::vector<int>& partners);

}  // namespace dlaunch::collective
