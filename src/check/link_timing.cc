#include "check/link_timing.h"

#include <algorithm>
#include <chrono>

namespace dlaunch::check {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kAnotherFollows = 1;
constexpr char kDone = 0;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

LinkFigure measure_link(collective::Communicator& communicator, std::vector<char>& payload, int peer,
                        const LinkTiming& timing) {
  char byte = 0;
  const bool lower = communicator.rank() < peer;
  // PAYLOAD out, then the peer's byte back: the figure of this end's send.
  auto timed_send = [&] {
    auto start = Clock::now();
    communicator.send(payload.data(), payload.size(), peer);
    communicator.recv(&byte, 1, peer);
    return seconds_since(start);
  };
  auto acknowledged_receive = [&](char acknowledgement) {
    communicator.recv(payload.data(), payload.size(), peer);
    communicator.send(&acknowledgement, 1, peer);
  };
  if (lower) {
    communicator.send(&byte, 1, peer);
    communicator.recv(&byte, 1, peer);
  } else {
    communicator.recv(&byte, 1, peer);
    communicator.send(&byte, 1, peer);
  }
  LinkFigure figure;
  for (bool again = timing.transfers > 0; again;) {
    ++figure.transfers;
    if (lower) {
      double seconds = timed_send();
      figure.gbps = std::max(figure.gbps, gigabits_per_second(payload.size(), seconds));
      again = figure.transfers < timing.transfers && seconds < timing.long_enough_s;
      acknowledged_receive(again ? kAnotherFollows : kDone);
    } else {
      acknowledged_receive(kDone);
      double seconds = timed_send();  // its acknowledgement is the lower rank's word
      figure.gbps = std::max(figure.gbps, gigabits_per_second(payload.size(), seconds));
      again = byte == kAnotherFollows;
    }
  }
  return figure;
}

double gigabits_per_second(std::uint64_t bytes, double seconds) {
  if (seconds <= 0) return 0;
  return static_cast<double>(bytes) * 8.0 / seconds / 1e9;
}

}  // namespace dlaunch::check
