#include <algorithm>
#include <optional>
#include <vector>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include "collective/communicator.h"
#include "collective/pair_mesh.h"
#include "collective/tcp_store.h"
#include "net/interfaces.h"
#include "util/error.h"

namespace dlaunch::collective {
namespace {

// gloo reports failures with its own exception types (gloo::IoException,
// gloo::EnforceNotMet); the rest of dlaunch speaks SystemError.
template <typename Operation>
void guarded(const std::string& what, Operation operation) {
  try {
    operation();
  } catch (const util::SystemError&) {
    throw;
  } catch (const std::exception& error) {
    throw util::SystemError(fmt::format("{} failed: {}", what, error.what()));
  }
}

// Every rank checks in before gloo connects, so a rank that never comes is
// named ("rank 2 did not arrive") instead of surfacing as a gloo timeout.
// Rank 0 waits for all and publishes the outcome; the others wait for that.
void await_every_rank(TcpStore& store, const WorkerIdentity& identity,
                      std::chrono::milliseconds timeout) {
  const std::string done = "arrival/outcome";
  store.set("arrival/" + std::to_string(identity.rank),
            std::vector<char>(identity.host.begin(), identity.host.end()));
  if (identity.rank != 0) {
    // A margin beyond rank 0's own deadline, so its verdict arrives first.
    auto outcome = store.get(done, timeout + std::chrono::seconds(10));
    if (!outcome.empty()) throw util::SystemError(std::string(outcome.begin(), outcome.end()));
    return;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  try {
    for (int rank = 1; rank < identity.world_size; ++rank) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      store.wait({"arrival/" + std::to_string(rank)}, std::max(left, std::chrono::milliseconds(1)));
    }
  } catch (const util::SystemError&) {
    std::vector<std::string> missing;
    for (int rank = 1; rank < identity.world_size; ++rank) {
      if (!store.contains("arrival/" + std::to_string(rank))) missing.push_back(std::to_string(rank));
    }
    std::string message = fmt::format(
        "rank(s) {} did not arrive within {} s ({}/{} arrived); start every rank, or check "
        "WORLD_SIZE, MASTER_ADDR and MASTER_PORT",
        fmt::join(missing, ", "), timeout.count() / 1000, identity.world_size - static_cast<int>(missing.size()),
        identity.world_size);
    store.set(done, std::vector<char>(message.begin(), message.end()));
    throw util::SystemError(message);
  }
  store.set(done, {});
}

class GlooCommunicator : public Communicator {
 public:
  // PARTNERS: nullopt for gloo's full mesh, else the ranks this one sends
  // to and receives from beside those of the all-reduce and the barrier.
  GlooCommunicator(const WorkerIdentity& identity, std::chrono::milliseconds timeout,
                   const std::optional<std::vector<int>>& partners)
      : timeout_(timeout) {
    // Rank 0 serves the store before anyone needs it; the others retry until it does.
    if (identity.rank == 0) server_ = std::make_unique<TcpStoreServer>(identity.master_port, identity.store_secret);
    store_ = std::make_unique<TcpStore>(identity.master_addr, identity.master_port, timeout, identity.store_secret);
    await_every_rank(*store_, identity, timeout);
    create_device(identity);
    gloo::rendezvous::PrefixStore prefixed("dlaunch-check", *store_);
    if (partners) {
      peers_ = peers_with(identity, *partners);
      guarded("connecting the ranks' pairs",
              [&] { context_ = connect_pairs(identity.rank, identity.world_size, *peers_, prefixed, device_, timeout); });
      return;
    }
    auto context = std::make_shared<gloo::rendezvous::Context>(identity.rank, identity.world_size);
    context->setTimeout(timeout);
    guarded("connecting the ranks", [&] { context->connectFullMesh(prefixed, device_); });
    context_ = context;
  }

  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }

  void allreduce_sum(std::int64_t* data, std::size_t count) override { allreduce(data, count); }
  void allreduce_sum(float* data, std::size_t count) override { allreduce(data, count); }

  void broadcast(std::int64_t* data, std::size_t count, int root) override {
    if (peers_) throw util::SystemError("broadcast needs every pair connected: this group connected only some");
    guarded("broadcast", [&] {
      gloo::BroadcastOptions options(context_);
      options.setOutput(data, count);
      options.setRoot(root);
      options.setTimeout(timeout_);
      gloo::broadcast(options);
    });
  }

  void barrier() override {
    guarded("barrier", [&] {
      gloo::BarrierOptions options(context_);
      options.setTimeout(timeout_);
      gloo::barrier(options);
    });
  }

  void send(const void* data, std::size_t bytes, int peer) override {
    require_connected(peer);
    guarded("send", [&] {
      auto buffer = context_->createUnboundBuffer(const_cast<void*>(data), bytes);
      buffer->send(peer, kPointToPointSlot);
      buffer->waitSend(timeout_);
    });
  }

  void recv(void* data, std::size_t bytes, int peer) override {
    require_connected(peer);
    guarded("receive", [&] {
      auto buffer = context_->createUnboundBuffer(data, bytes);
      buffer->recv(peer, kPointToPointSlot);
      buffer->waitRecv(timeout_);
    });
  }

 private:
  static constexpr std::uint64_t kPointToPointSlot = 0x646c61756e6368;  // "dlaunch"

  // The ring sends 2(n-1) messages per all-reduce: best for bandwidth, slow
  // for small messages, where bcube's log(n) rounds win (measured on this
  // gloo: 1 KiB with 2 ranks, 353 us ring against 138 us bcube). Bcube
  // allocates a scratch buffer of the message's size per call, so large
  // messages stay on the ring, in 4 MiB segments, which measured 8-44%
  // faster than gloo's default from 16 MiB up.
  // A group of chosen pairs has the ring's pairs, not bcube's.
  void choose_algorithm(gloo::AllreduceOptions& options, std::size_t bytes) const {
    if (bytes <= kSmallMessage && !peers_) {
      options.setAlgorithm(gloo::AllreduceOptions::Algorithm::BCUBE);
      return;
    }
    options.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    if (bytes >= kLargeMessage) options.setMaxSegmentSize(kLargeSegment);
  }

  static constexpr std::size_t kSmallMessage = 256 << 10;
  static constexpr std::size_t kLargeMessage = 16 << 20;
  static constexpr std::size_t kLargeSegment = 4 << 20;

  template <typename T>
  void allreduce(T* data, std::size_t count) {
    guarded("all-reduce", [&] {
      gloo::AllreduceOptions options(context_);
      options.setOutput(data, count);
      choose_algorithm(options, count * sizeof(T));
      void (*sum)(void*, const void*, const void*, size_t) = &gloo::sum<T>;
      options.setReduceFunction(sum);
      options.setTimeout(timeout_);
      gloo::allreduce(options);
    });
  }

  // On the launcher's interface when it named one (GLOO_SOCKET_IFNAME, as
  // torch reads it), so the check measures the network the job will use.
  void create_device(const WorkerIdentity& identity) {
    gloo::transport::tcp::attr attr;
    std::string iface = first_interface(identity.socket_ifname);
    if (iface.empty()) {
      attr.hostname = identity.host;
      guarded("creating gloo's TCP device", [&] { device_ = gloo::transport::tcp::CreateDevice(attr); });
      return;
    }
    require_interface_with_address(iface, identity.socket_ifname);
    attr.iface = iface;
    guarded(fmt::format("creating gloo's TCP device on interface {} (GLOO_SOCKET_IFNAME={})", iface,
                        identity.socket_ifname),
            [&] { device_ = gloo::transport::tcp::CreateDevice(attr); });
  }

  // The pairs a group of chosen pairs connects: the all-reduce's and the
  // barrier's, and PARTNERS (within the group, not this rank).
  static std::vector<int> peers_with(const WorkerIdentity& identity, const std::vector<int>& partners) {
    std::vector<int> peers = collective_peers(identity.rank, identity.world_size);
    for (int partner : partners)
      if (partner >= 0 && partner < identity.world_size && partner != identity.rank) peers.push_back(partner);
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    return peers;
  }

  // gloo dereferences an unconnected pair without a check.
  void require_connected(int peer) const {
    if (peer < 0 || peer >= context_->size || peer == context_->rank)
      throw util::SystemError(fmt::format("rank {} is not a peer of rank {} in a group of {}", peer, context_->rank,
                                          context_->size));
    if (peers_ && !std::binary_search(peers_->begin(), peers_->end(), peer))
      throw util::SystemError(fmt::format("rank {} is not connected to rank {}: this group connected only the "
                                          "pairs it was asked for",
                                          peer, context_->rank));
  }

  // gloo looks the interface up itself, but throws past its own getifaddrs
  // list when the name has no address (a leak each time, and a terse
  // message): a missing or address-less interface is refused here first.
  static void require_interface_with_address(const std::string& iface, const std::string& socket_ifname) {
    auto interfaces = net::list_interfaces();
    auto found = std::find_if(interfaces.begin(), interfaces.end(),
                              [&](const net::Interface& candidate) { return candidate.name == iface; });
    if (found != interfaces.end() && !found->addresses.empty()) return;
    throw util::SystemError(fmt::format(
        "creating gloo's TCP device on interface {} (GLOO_SOCKET_IFNAME={}) failed: {} on this host; it has: {}. "
        "Name an interface that is up with an IPv4 address, or unset GLOO_SOCKET_IFNAME",
        iface, socket_ifname, found == interfaces.end() ? "there is no such interface" : "it has no IPv4 address",
        net::describe_interfaces(interfaces)));
  }

  std::chrono::milliseconds timeout_;
  std::unique_ptr<TcpStoreServer> server_;
  std::unique_ptr<TcpStore> store_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
  std::optional<std::vector<int>> peers_;  // the connected pairs; nullopt: all (gloo's full mesh)
};

}  // namespace

std::string first_interface(const std::string& socket_ifname) {
  std::string first = socket_ifname.substr(0, socket_ifname.find(','));
  auto begin = first.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return first.substr(begin, first.find_last_not_of(" \t") + 1 - begin);
}

std::unique_ptr<Communicator> connect_gloo(const WorkerIdentity& identity,
                                           std::chrono::milliseconds timeout) {
  return std::make_unique<GlooCommunicator>(identity, timeout, std::nullopt);
}

std::unique_ptr<Communicator> connect_gloo_pairs(const WorkerIdentity& identity, std::chrono::milliseconds timeout,
                                                 const std::vector<int>& partners) {
  return std::make_unique<GlooCommunicator>(identity, timeout, partners);
}

}  // namespace dlaunch::collective
