// A gloo group that connects only the pairs it uses, so the gate stays
// cheap at a thousand nodes.
//
// gloo's connectFullMesh (Debian's 0.0~git20220518) has every rank publish
// one store key holding an address, 192 bytes, for every rank, and read
// every other rank's key: N x (N-1) x N x 192 bytes through rank 0's store,
// 206 GB at 1024 ranks, and N-1 sockets per rank. The gate needs only the
// pairs of the ring all-reduce, of gloo's dissemination barrier, and of its
// few tournament partners: each pair's two addresses go under keys of their
// own. gloo has no call for that, so this file makes one from its transport
// API (the pairs of a transport context, connected as connectFullMesh does).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include <gloo/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/device.h>

namespace dlaunch::collective {

// The peers RANK of SIZE needs for gloo's ring all-reduce (rank - 1 and
// rank + 1) and its dissemination barrier (rank - 2^k and rank + 2^k for
// every 2^k below SIZE), modulo SIZE, without RANK: sorted, each once. The
// relation is symmetric. Pure.
std::vector<int> collective_peers(int rank, int size);

// Connects RANK of SIZE to each of PEERS (sorted, without RANK; every peer
// must list RANK in turn) through STORE, and returns the context: its pairs
// to other ranks stay unconnected (null). Throws what gloo or the store throw.
std::shared_ptr<gloo::Context> connect_pairs(int rank, int size, const std::vector<int>& peers,
                                             gloo::rendezvous::Store& store,
                                             const std::shared_ptr<gloo::transport::Device>& device,
                                             std::chrono::milliseconds timeout);

}  // namespace dlaunch::collective
