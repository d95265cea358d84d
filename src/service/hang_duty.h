// Hang forensics as node 0's service runs them: the hang rule over every
// node's progress, the straggler lines, and the one stack capture under way
// across the job (for a hang, or for `dlaunch stacks` observers).
//
// Every launcher reports how long its workers have been idle; the job is
// hung when all have been for --hang-timeout (hang/hang_watch.h). Then, and
// when `dlaunch stacks` asks, every node with workers captures their stacks
// and sends them here; they are merged into one report. The service's loop
// owns the connections and the round; this part owns what it watches and
// gathers, and asks the loop (HangDutyHost) to send, log and fail the job.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hang/hang_watch.h"
#include "hang/stack_collection.h"
#include "service/service_peer.h"
#include "util/socket.h"
#include "wire/protocol.h"
#include "wire/world.h"

namespace dlaunch::rendezvous {

// A node of the running round as a capture asks it: where it is and which
// ranks it runs, or why it cannot answer ("node 2 was lost").
struct CaptureNode {
  AskedNode asked;
  std::string absent;  // "": it is asked
};

// What the hang duty needs of the loop that holds the launchers.
class HangDutyHost {
 public:
  virtual ~HangDutyHost() = default;
  virtual void send(Peer& peer, MessageType type, const std::string& payload) = 0;
  // To every launcher with workers in this round.
  virtual void broadcast_to_members(MessageType type, const std::string& payload) = 0;
  virtual void log(const std::string& line) = 0;
  virtual void add_to_timeline(const std::string& event) = 0;
  // The round's nodes, by node rank, for a new capture.
  virtual std::map<int, CaptureNode> capture_nodes() = 0;
  // The hang ends the job with FAILURE, unless it already failed or ended.
  virtual void fail_for_hang(const Failure& failure) = 0;
};

class HangDuty {
 public:
  HangDuty(ForensicsSettings settings, std::chrono::milliseconds heartbeat_timeout, HangDutyHost& host);

  // Round ROUND's workers start on NODES nodes: the hang rule watches them
  // from NOW. end_round() when its verdict is made.
  void begin_round(int round, int nodes, util::Clock::time_point now);
  void end_round();

  // Node NODE_RANK (on HOST) reports its workers' progress; only its own
  // ranks (WORLD's) count.
  void on_progress(int node_rank, const std::string& host, const World& world, const ProgressMessage& message);
  // Node NODE_RANK's stacks for the capture under way.
  void on_stacks(int node_rank, const StacksMessage& message);
  // Node NODE_RANK will not answer a capture (lost, or its workers exited).
  void node_gone(int node_rank, const std::string& why);
  // On each tick: a capture past its deadline ends; while WATCHING (the
  // round runs and has not failed) stragglers are named and a hang declared.
  void check(util::Clock::time_point now, bool watching);

  // `dlaunch stacks` on PEER, proved, while the round runs: a capture
  // starts (or the one under way is shared) and PEER gets its stacks.
  void observe(Peer& peer);
  // PEER closed: it waits for nothing any more.
  void forget(Peer* peer) { observers_.erase(peer); }

 private:
  void start_capture(bool hang, std::string headline);
  void finish_capture();
  void answer_observers(const StackCollection& done);

  ForensicsSettings settings_;
  std::chrono::milliseconds heartbeat_timeout_;
  HangDutyHost& host_;
  int round_ = 0;
  std::optional<HangWatch> hang_watch_;  // this round's
  util::Clock::time_point next_straggler_check_;
  std::string hang_headline_;
  std::optional<StackCollection> capture_;  // the one capture under way
  std::uint32_t capture_ids_ = 0;
  std::map<Peer*, std::uint32_t> observers_;  // `dlaunch stacks` connections, by the capture they wait for
};

}  // namespace dlaunch::rendezvous
