// A communicator for one rank of a group that exists only in the test: what
// the other ranks contribute to each all-reduce, and what the root
// broadcasts, is given in advance. Enough for the parts of dlaunch check
// that only combine values; the real transport is tested with gloo.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "collective/communicator.h"

namespace dlaunch::test_support {

class FakeCommunicator : public collective::Communicator {
 public:
  FakeCommunicator(int rank, int size) : rank_(rank), size_(size) {}

  // What the other ranks add to each integer all-reduce, in turn; once
  // none is left they add nothing.
  std::deque<std::vector<std::int64_t>> others_add;
  // What the root sends to each broadcast this rank receives, in turn.
  std::deque<std::int64_t> root_sends;
  int allreduces = 0;
  int broadcasts = 0;
  int barriers = 0;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(std::int64_t* data, std::size_t count) override {
    ++allreduces;
    if (others_add.empty()) return;
    std::vector<std::int64_t> added = others_add.front();
    others_add.pop_front();
    for (std::size_t i = 0; i < count && i < added.size(); ++i) data[i] += added[i];
  }
  void allreduce_sum(float*, std::size_t) override { ++allreduces; }
  void broadcast(std::int64_t* data, std::size_t count, int root) override {
    ++broadcasts;
    if (rank_ == root || root_sends.empty()) return;
    for (std::size_t i = 0; i < count; ++i) data[i] = root_sends.front();
    root_sends.pop_front();
  }
  void barrier() override { ++barriers; }
  void send(const void*, std::size_t, int) override {}
  void recv(void*, std::size_t, int) override {}

 private:
  int rank_;
  int size_;
};

}  // namespace dlaunch::test_support
