#include "collective/pair_mesh.h"

#include <algorithm>
#include <set>
#include <string>

#include <gloo/transport/context.h>
#include <gloo/transport/pair.h>

namespace dlaunch::collective {
namespace {

// gloo::Context keeps its transport context protected: a subclass sets it,
// as gloo's own rendezvous::Context does after connecting its full mesh.
class PairContext : public gloo::Context {
 public:
  using gloo::Context::Context;

  void connect(const std::vector<int>& peers, gloo::rendezvous::Store& store,
               const std::shared_ptr<gloo::transport::Device>& device) {
    auto transport = device->createContext(rank, size);
    transport->setTimeout(getTimeout());
    for (int peer : peers) store.set(key(rank, peer), transport->createPair(peer)->address().bytes());
    // In increasing order on every rank: the lowest pair not yet connected
    // always has both ends at it, so the blocking connects never deadlock.
    for (int peer : peers) {
      store.wait({key(peer, rank)}, getTimeout());
      transport->getPair(peer)->connect(store.get(key(peer, rank)));
    }
    device_ = device;
    transportContext_ = std::move(transport);
  }

 private:
  // FROM's address for its pair with TO.
  static std::string key(int from, int to) { return "pair/" + std::to_string(from) + "/" + std::to_string(to); }
};

}  // namespace

std::vector<int> collective_peers(int rank, int size) {
  std::set<int> peers;
  for (int step = 1; step < size; step *= 2) {
    peers.insert((rank + step) % size);
    peers.insert(((rank - step) % size + size) % size);
  }
  peers.erase(rank);
  return {peers.begin(), peers.end()};
}

std::shared_ptr<gloo::Context> connect_pairs(int rank, int size, const std::vector<int>& peers,
                                             gloo::rendezvous::Store& store,
                                             const std::shared_ptr<gloo::transport::Device>& device,
                                             std::chrono::milliseconds timeout) {
  auto context = std::make_shared<PairContext>(rank, size);
  context->setTimeout(timeout);
  context->connect(peers, store, device);
  return context;
}

}  // namespace dlaunch::collective
