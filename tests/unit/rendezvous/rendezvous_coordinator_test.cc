// A launcher's side of the rendezvous (rendezvous/rendezvous_coordinator.h,
// rendezvous/service_dialer.h), against real node 0 services and against
// fake ones written here: a stranger on node 0's port that does not hold the
// token, a silent listener, a node 0 that closes the first connection, and
// peers that send malformed or unfitting Worlds.
#include "rendezvous/rendezvous_coordinator.h"

#include <atomic>
#include <functional>
#include <future>
#include <gtest/gtest.h>
#include <mutex>
#include <poll.h>
#include <sys/socket.h>
#include <thread>

#include "../test_support/text.h"
#include "../test_support/fake_node0.h"
#include "util/error.h"
#include "util/socket.h"
#include "wire/protocol.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

using namespace std::chrono_literals;
using rendezvous::Frame;
using rendezvous::MessageType;
using ::dlaunch::test_support::contains;
using test_support::FakeNode0;
using test_support::read_frame;
using test_support::send_frame;

World world_of(std::vector<int> nproc_per_node) {
  World world;
  world.nproc_per_node = std::move(nproc_per_node);
  for (int slot = 0; slot < world.nnodes(); ++slot) world.node_slots.push_back(slot);
  world.worker_master_addr = "127.0.0.1";
  world.worker_master_port = 31000;
  world.run_id = "job";
  world.heartbeat_timeout_ms = 30'000;
  return world;
}

// A peer that speaks the protocol but holds no token: it greets, asks for a
// token it cannot check (TOKEN_REQUIRED), ignores the proof, and sends an
// unsealed Welcome and WORLD.
FakeNode0::Script impostor(bool token_required, World world) {
  return [token_required, world](util::Fd& fd) {
    rendezvous::ChallengeMessage challenge{rendezvous::random_bytes(rendezvous::kChallengeSize),
                                           token_required, 30'000};
    send_frame(fd, MessageType::kChallenge, rendezvous::encode(challenge));
    if (!read_frame(fd)) return;  // the Join, whatever its proof
    send_frame(fd, MessageType::kWelcome, rendezvous::encode(rendezvous::WelcomeMessage{30'000, 1}));
    send_frame(fd, MessageType::kWorld, rendezvous::encode(world));
  };
}

class RendezvousCoordinatorTest : public ::testing::Test {
 protected:
  // Node NODE_RANK of 2 with one worker, dialling PORT; what it notices is kept.
  RendezvousSettings settings(int port, int node_rank = 1) {
    RendezvousSettings result;
    result.master_addr = "127.0.0.1";
    result.port = port;
    result.node_rank = node_rank;
    result.job.nnodes = 2;
    result.nproc = 1;
    result.host = "host" + std::to_string(node_rank);
    result.job.run_id = "job";
    // Far beyond what a loaded machine needs to answer: a test must not
    // fail because a thread was not scheduled in time (issue 28). A test
    // whose scenario ends on a deadline sets a short one itself.
    result.job.join_timeout = 120s;
    result.job.handshake_timeout = 60s;
    result.job.heartbeat_timeout = 5s;
    result.notice = [this](const std::string& line) {
      std::lock_guard lock(mutex_);
      notices_.push_back(line);
    };
    return result;
  }

  std::string notices() {
    std::lock_guard lock(mutex_);
    std::string all;
    for (const auto& line : notices_) all += line + "\n";
    return all;
  }

  // The error join() ends with.
  std::string join_error(const RendezvousSettings& node) {
    auto coordinator = make_rendezvous_coordinator(node, signals_);
    try {
      coordinator->join(0);
    } catch (const util::SystemError& error) {
      return error.what();
    }
    ADD_FAILURE() << "join() returned a World";
    return "";
  }

  process::SignalChannel signals_;
  std::mutex mutex_;
  std::vector<std::string> notices_;
};

TEST_F(RendezvousCoordinatorTest, ATokenHolderBelievesNoPeerThatCannotProveTheToken) {
  // Its World would start 200 workers on this one-worker node.
  FakeNode0 stranger(impostor(true, world_of({1, 200})));
  RendezvousSettings node = settings(stranger.port());
  node.job.join_timeout = 1500ms;  // it dials again until the join's deadline ends it
  node.job.token = rendezvous::generate_token();
  std::string error = join_error(node);
  std::string address = "127.0.0.1:" + std::to_string(stranger.port());
  EXPECT_TRUE(contains(error, "could not join the rendezvous at " + address)) << error;
  EXPECT_TRUE(contains(error, "did not prove it holds the job's token")) << error;
  std::string seen = notices();
  EXPECT_TRUE(contains(seen, address + " did not prove it holds the job's token")) << seen;
  // Said once, though it dialled again and again.
  EXPECT_EQ(std::count(seen.begin(), seen.end(), '\n'), 1) << seen;
}

TEST_F(RendezvousCoordinatorTest, APeerThatRequiresNoTokenCannotBeNodeZeroForATokenHolder) {
  FakeNode0 stranger(impostor(false, world_of({1, 1})));
  RendezvousSettings node = settings(stranger.port());
  node.job.join_timeout = 1500ms;  // it dials again until the join's deadline ends it
  node.job.token = rendezvous::generate_token();
  std::string error = join_error(node);
  EXPECT_TRUE(contains(error, "requires no rendezvous token, so it cannot prove it holds this job's")) << error;
}

TEST_F(RendezvousCoordinatorTest, ASilentListenerIsNamedWithinTheHandshakeDeadline) {
  util::Fd silent = util::listen_tcp(0);  // the kernel completes connections; nobody ever speaks
  RendezvousSettings node = settings(util::bound_port(silent.get()));
  node.job.token = rendezvous::generate_token();
  // The notice names the handshake's deadline (300 ms): the join's own (3 s)
  // would end with another message. Nothing here is timed, so a loaded
  // machine only makes it slower.
  node.job.handshake_timeout = 300ms;
  node.job.join_timeout = 3s;
  auto start = util::Clock::now();
  auto done = std::async(std::launch::async, [&] { return join_error(node); });
  std::string seen;
  while (!contains(seen = notices(), "not a dlaunch rendezvous") && util::Clock::now() - start < 20s)
    std::this_thread::sleep_for(10ms);  // polling a condition, bounded: nothing tells us
  EXPECT_TRUE(contains(seen, "127.0.0.1:" + std::to_string(util::bound_port(silent.get())) +
                                 " answered but is not a dlaunch rendezvous (no greeting within 300 ms)"))
      << seen;
  EXPECT_TRUE(contains(done.get(), "answered but is not a dlaunch rendezvous"));
}

TEST_F(RendezvousCoordinatorTest, WithoutATokenAWorldThatDoesNotFitIsAProtocolErrorNotAnAssertion) {
  struct Case {
    std::vector<int> nproc_per_node;
    const char* expected;
  };
  for (const Case& c : {Case{{1, 200}, "200 workers for this node (node 1), which runs 1"},
                        Case{{1}, "1 nodes, but this node was started with 2 (--nnodes)"}}) {
    FakeNode0 peer(impostor(false, world_of(c.nproc_per_node)));
    std::string error = join_error(settings(peer.port()));
    EXPECT_TRUE(contains(error, "protocol error")) << error;
    EXPECT_TRUE(contains(error, c.expected)) << error;
  }
}

// Node 0 without a token that gives a launcher asking for any slot SLOT in
// its Welcome, then sends WORLD.
FakeNode0::Script giving_slot(std::uint32_t slot, World world) {
  return [slot, world](util::Fd& fd) {
    rendezvous::ChallengeMessage challenge{rendezvous::random_bytes(rendezvous::kChallengeSize), false, 0};
    send_frame(fd, MessageType::kChallenge, rendezvous::encode(challenge));
    auto join = read_frame(fd);
    if (!join || rendezvous::decode_join(join->payload).node_rank != rendezvous::kAnySlot) return;
    send_frame(fd, MessageType::kWelcome, rendezvous::encode(rendezvous::WelcomeMessage{30'000, slot}));
    send_frame(fd, MessageType::kWorld, rendezvous::encode(world));
  };
}

TEST_F(RendezvousCoordinatorTest, ALauncherWithoutANodeRankTakesTheSlotNodeZeroGives) {
  FakeNode0 peer(giving_slot(1, world_of({1, 1})));  // it holds the port: this launcher cannot serve
  auto coordinator = make_rendezvous_coordinator(settings(peer.port(), -1), signals_);
  EXPECT_EQ(coordinator->slot(), -1) << "no slot before the Welcome";
  World world = coordinator->join(0);
  EXPECT_EQ(coordinator->slot(), 1);
  EXPECT_EQ(world.node_rank_of(coordinator->slot()), 1);
}

TEST_F(RendezvousCoordinatorTest, ASlotOutsideTheJobFromNodeZeroIsNotTaken) {
  FakeNode0 peer(giving_slot(99, world_of({1, 1})));
  std::string error = join_error(settings(peer.port(), -1));
  EXPECT_TRUE(contains(error, "node 0 gave this launcher slot 99, outside 0..1")) << error;
}

TEST_F(RendezvousCoordinatorTest, AMalformedWorldIsAProtocolErrorNamingNodeZero) {
  FakeNode0 peer([](util::Fd& fd) {
    rendezvous::ChallengeMessage challenge{rendezvous::random_bytes(rendezvous::kChallengeSize), false, 0};
    send_frame(fd, MessageType::kChallenge, rendezvous::encode(challenge));
    if (!read_frame(fd)) return;
    send_frame(fd, MessageType::kWelcome, rendezvous::encode(rendezvous::WelcomeMessage{30'000, 1}));
    send_frame(fd, MessageType::kWorld, "\x01truncated");
  });
  RendezvousSettings node = settings(peer.port());
  node.job.join_timeout = 1500ms;  // it dials again until the join's deadline ends it
  std::string error = join_error(node);
  EXPECT_TRUE(contains(error, "protocol error: node 0 (127.0.0.1:" + std::to_string(peer.port()) +
                                  ") sent a malformed message"))
      << error;
}

TEST_F(RendezvousCoordinatorTest, AConnectionClosedBeforeTheHandshakeIsDialledAgain) {
  auto fake = std::make_unique<FakeNode0>([](util::Fd& fd) { fd.reset(); });
  int port = fake->port();
  RendezvousSettings node1 = settings(port, 1);
  node1.job.join_timeout = 10s;
  std::string token = rendezvous::generate_token();
  node1.job.token = token;
  auto joined = std::async(std::launch::async, [&] {
    auto coordinator = make_rendezvous_coordinator(node1, signals_);
    return coordinator->join(0);
  });
  while (!contains(notices(), "closed the connection before the handshake")) std::this_thread::sleep_for(10ms);
  fake.reset();  // the port is free again: node 0 takes it
  RendezvousSettings node0 = settings(port, 0);
  node0.job.token = token;
  node0.job.join_timeout = 10s;
  auto coordinator0 = make_rendezvous_coordinator(node0, signals_);
  World world0 = coordinator0->join(0);
  World world1 = joined.get();
  EXPECT_EQ(world1.nproc_per_node, (std::vector<int>{1, 1}));
  EXPECT_EQ(world1.worker_master_port, world0.worker_master_port);
}

TEST_F(RendezvousCoordinatorTest, AMalformedFrameWhileWorkersRunStopsThemAndTheNodeDecidesAlone) {
  FakeNode0 peer([](util::Fd& fd) {
    rendezvous::ChallengeMessage challenge{rendezvous::random_bytes(rendezvous::kChallengeSize), false, 0};
    send_frame(fd, MessageType::kChallenge, rendezvous::encode(challenge));
    if (!read_frame(fd)) return;
    send_frame(fd, MessageType::kWelcome, rendezvous::encode(rendezvous::WelcomeMessage{30'000, 1}));
    send_frame(fd, MessageType::kWorld, rendezvous::encode(world_of({1, 1})));
    send_frame(fd, MessageType::kStop, "\x00\x00");  // a Stop too short to decode
  });
  auto coordinator = make_rendezvous_coordinator(settings(peer.port()), signals_);
  coordinator->join(0);
  std::optional<std::string> reason;
  for (auto give_up = util::Clock::now() + 5s; !reason && util::Clock::now() < give_up;) {
    pollfd readable{coordinator->event_fd(), POLLIN, 0};
    ::poll(&readable, 1, 50);
    reason = coordinator->poll_stop_request();
  }
  ASSERT_TRUE(reason);
  EXPECT_TRUE(contains(*reason, "protocol error: node 0")) << *reason;
  EXPECT_TRUE(contains(*reason, "malformed")) << *reason;
  NodeOutcome stopped;  // the workers were stopped, none failed
  Verdict verdict = coordinator->finish(stopped);
  EXPECT_EQ(verdict.kind, Verdict::Kind::kFailed);
  EXPECT_EQ(verdict.exit_code, 1);
  ASSERT_TRUE(verdict.failure);
  EXPECT_TRUE(contains(verdict.failure->description, "malformed")) << verdict.failure->description;
}

// Node 0 without a token that sends one malformed message at a given point:
// every decoder a launcher runs on node 0's words, fed garbage.
enum class Garbled { kChallenge, kWelcome, kWorld, kAbortWhileJoining, kStopWhileRunning, kVerdict };

FakeNode0::Script garbling(Garbled which) {
  return [which](util::Fd& fd) {
    const std::string garbage = "\x01\x02";  // too short for any message
    if (which == Garbled::kChallenge) return send_frame(fd, MessageType::kChallenge, garbage);
    rendezvous::ChallengeMessage challenge{rendezvous::random_bytes(rendezvous::kChallengeSize), false, 0};
    send_frame(fd, MessageType::kChallenge, rendezvous::encode(challenge));
    if (!read_frame(fd)) return;  // the Join
    if (which == Garbled::kWelcome) return send_frame(fd, MessageType::kWelcome, garbage);
    send_frame(fd, MessageType::kWelcome, rendezvous::encode(rendezvous::WelcomeMessage{30'000, 1}));
    if (which == Garbled::kWorld) return send_frame(fd, MessageType::kWorld, garbage);
    if (which == Garbled::kAbortWhileJoining) return send_frame(fd, MessageType::kAbort, garbage);
    send_frame(fd, MessageType::kWorld, rendezvous::encode(world_of({1, 1})));
    if (which == Garbled::kStopWhileRunning) return send_frame(fd, MessageType::kStop, garbage);
    if (read_frame(fd)) send_frame(fd, MessageType::kVerdict, garbage);  // answers the Outcome
  };
}

TEST_F(RendezvousCoordinatorTest, EveryDecoderErrorIsAOneLineReasonAndNodeZeroCountsAsLost) {
  struct Case {
    Garbled which;
    const char* expected;  // in join()'s error, or in the verdict's failure
  };
  const std::vector<Case> while_joining = {
      {Garbled::kChallenge, "answered but is not a dlaunch rendezvous (message is truncated"},
      {Garbled::kWelcome, "answered the join with"},
      {Garbled::kWorld, "protocol error: node 0 (127.0.0.1:"},
      {Garbled::kAbortWhileJoining, "sent a malformed message"},
  };
  for (const Case& c : while_joining) {
    FakeNode0 peer(garbling(c.which));
    RendezvousSettings node = settings(peer.port());
    // Deadlines a loaded machine cannot miss. Some of these answers are
    // retried until the join timeout: the dialer's first "trying again"
    // notice, which names what it saw, ends the join here instead, so the
    // test waits for what node 0 said and never for a clock.
    node.job.join_timeout = 120s;
    node.job.handshake_timeout = 60s;
    node.notice = [](const std::string& line) {
      if (line.find("trying again") != std::string::npos) throw util::SystemError(line);
    };
    std::string error = join_error(node);
    EXPECT_TRUE(contains(error, c.expected)) << static_cast<int>(c.which) << ": " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << "one line: " << error;
  }
  for (Garbled which : {Garbled::kStopWhileRunning, Garbled::kVerdict}) {
    FakeNode0 peer(garbling(which));
    auto coordinator = make_rendezvous_coordinator(settings(peer.port()), signals_);
    coordinator->join(0);
    NodeOutcome done;
    done.succeeded = true;  // this node's workers all succeeded
    if (which == Garbled::kStopWhileRunning) {
      std::optional<std::string> reason;
      for (auto give_up = util::Clock::now() + 5s; !reason && util::Clock::now() < give_up;) {
        pollfd readable{coordinator->event_fd(), POLLIN, 0};
        ::poll(&readable, 1, 50);
        reason = coordinator->poll_stop_request();
      }
      ASSERT_TRUE(reason);
      EXPECT_TRUE(contains(*reason, "malformed")) << *reason;
      done.succeeded = false;  // stopped on node 0's (garbled) word
    }
    // Node 0 said something unreadable: this node decides alone, and the
    // job fails even though its own workers succeeded.
    Verdict verdict = coordinator->finish(done);
    EXPECT_EQ(verdict.kind, Verdict::Kind::kFailed) << static_cast<int>(which);
    EXPECT_EQ(verdict.exit_code, 1);
    ASSERT_TRUE(verdict.failure);
    EXPECT_TRUE(contains(verdict.failure->description, "protocol error: node 0"))
        << verdict.failure->description;
  }
}

TEST_F(RendezvousCoordinatorTest, TwoRealNodesWithATokenAgreeOnOneWorld) {
  std::string token = rendezvous::generate_token();
  int port = [] {
    util::Fd probe = util::listen_tcp(0);
    return util::bound_port(probe.get());
  }();
  RendezvousSettings node0 = settings(port, 0), node1 = settings(port, 1);
  node0.job.token = node1.job.token = token;
  node0.job.join_timeout = node1.job.join_timeout = 10s;
  auto coordinator0 = make_rendezvous_coordinator(node0, signals_);
  auto joined1 = std::async(std::launch::async, [&] {
    auto coordinator1 = make_rendezvous_coordinator(node1, signals_);
    return coordinator1->join(0);
  });
  World world0 = coordinator0->join(0);
  World world1 = joined1.get();
  EXPECT_EQ(world0.worker_master_port, world1.worker_master_port);
  EXPECT_EQ(world1.run_id, "job");
  EXPECT_EQ(notices(), "");  // nothing odd met on the way
}

// Node 0's launcher is lost with a spare standing by: node 1's launcher
// takes over the rendezvous on the same port, as node rank 0, and the spare
// takes node rank 1; the restart counts against --max-restarts.
TEST_F(RendezvousCoordinatorTest, WhenNodeZeroIsLostTheNextLauncherTakesOverTheRendezvous) {
  std::string token = rendezvous::generate_token();
  int port = [] {
    util::Fd probe = util::listen_tcp(0);
    return util::bound_port(probe.get());
  }();
  auto launcher = [&](int slot) {
    RendezvousSettings node = settings(port, slot);
    node.job.token = token;
    node.job.spare_nodes = 1;
    node.job.max_restarts = 1;
    node.job.join_timeout = 10s;
    node.job.heartbeat_timeout = 2s;
    return make_rendezvous_coordinator(node, signals_);
  };
  auto node0 = launcher(0);
  auto node1 = launcher(1);
  auto spare = launcher(2);
  // The first two to join train: node 0 and node 1; the spare joins after them.
  auto joined1 = std::async(std::launch::async, [&] { return node1->join(0); });
  World first = node0->join(0);
  EXPECT_EQ(joined1.get().node_rank_of(1), 1);
  EXPECT_FALSE(spare->join(0).node_rank_of(2)) << "slot 2 stands by";
  EXPECT_EQ(first.addresses.size(), 3u);

  node0.reset();  // node 0's launcher and its service are gone
  auto stood_by = std::async(std::launch::async, [&] { return spare->stand_by(); });
  NodeOutcome stopped;
  Verdict verdict = node1->finish(stopped);
  EXPECT_EQ(verdict.kind, Verdict::Kind::kRestart);
  ASSERT_TRUE(verdict.failure);
  EXPECT_TRUE(contains(verdict.failure->description, "lost contact with the rendezvous on node 0"))
      << verdict.failure->description;
  EXPECT_EQ(stood_by.get().kind, Verdict::Kind::kRestart);

  auto rejoined = std::async(std::launch::async, [&] { return spare->join(1); });
  World second = node1->join(1);
  EXPECT_EQ(second.round, 1);
  EXPECT_EQ(second.node_slots, (std::vector<int>{1, 2})) << "node 1 holds rank 0, the spare rank 1";
  EXPECT_EQ(rejoined.get().node_rank_of(2), 1);
  EXPECT_TRUE(contains(notices(), "the rendezvous moves to host1")) << notices();

  // With the last restart spent, a second loss is not taken over.
  NodeOutcome succeeded;
  succeeded.succeeded = true;
  auto done = std::async(std::launch::async, [&] { return spare->finish(succeeded); });
  EXPECT_EQ(node1->finish(succeeded).kind, Verdict::Kind::kSucceeded);
  Verdict final_verdict = done.get();
  EXPECT_EQ(final_verdict.kind, Verdict::Kind::kSucceeded);
  ASSERT_FALSE(final_verdict.timeline.empty());
  EXPECT_TRUE(contains(final_verdict.timeline.front(), "node 0 was lost")) << final_verdict.timeline.front();
}

// ---- fencing: a launcher the job left behind stops, it never takes over

// Node 0 without a token: greets, welcomes, sends WORLD (in its round), then
// runs AFTER on the connection.
FakeNode0::Script node0_then(World world, std::function<void(util::Fd&)> after) {
  return [world, after](util::Fd& fd) {
    rendezvous::ChallengeMessage challenge{rendezvous::random_bytes(rendezvous::kChallengeSize), false, 0};
    send_frame(fd, MessageType::kChallenge, rendezvous::encode(challenge));
    if (!read_frame(fd)) return;
    auto generation = static_cast<std::uint32_t>(world.round);
    send_frame(fd, MessageType::kWelcome, rendezvous::encode(rendezvous::WelcomeMessage{30'000, 1}), generation);
    send_frame(fd, MessageType::kWorld, rendezvous::encode(world), generation);
    after(fd);
  };
}

// Polls COORDINATOR as the supervisor does until it asks for a stop.
std::optional<std::string> stop_request(Coordinator& coordinator) {
  std::optional<std::string> reason;
  for (auto give_up = util::Clock::now() + 5s; !reason && util::Clock::now() < give_up;) {
    pollfd readable{coordinator.event_fd(), POLLIN, 0};
    ::poll(&readable, 1, 50);
    reason = coordinator.poll_stop_request();
  }
  return reason;
}

// The reason finish() is fenced with; "" when it returned a verdict.
std::string fenced_reason(Coordinator& coordinator) {
  try {
    coordinator.finish(NodeOutcome{});
  } catch (const Fenced& fenced) {
    return fenced.what();
  }
  return "";
}

TEST_F(RendezvousCoordinatorTest, NodeZeroDroppingThisLauncherFencesItWhateverItCouldTakeOver) {
  FakeNode0 node0(node0_then(world_of({1, 1}), [](util::Fd& fd) {
    send_frame(fd, MessageType::kFenced,
               rendezvous::encode(rendezvous::TextMessage{
                   0, "node 0 dropped this launcher in round 0 (it sent nothing for 5 s); the job goes on without it"}));
  }));
  RendezvousSettings node = settings(node0.port());
  node.job.spare_nodes = 1;  // a take-over would be allowed
  node.job.max_restarts = 3;
  auto coordinator = make_rendezvous_coordinator(node, signals_);
  coordinator->join(0);
  auto reason = stop_request(*coordinator);
  ASSERT_TRUE(reason);
  EXPECT_TRUE(contains(*reason, "node 0 dropped this launcher in round 0")) << *reason;
  EXPECT_TRUE(coordinator->fenced()) << "the supervisor kills the workers at once";
  EXPECT_TRUE(contains(fenced_reason(*coordinator), "the job goes on without it"));
  EXPECT_FALSE(contains(notices(), "the rendezvous moves to")) << notices();
}

TEST_F(RendezvousCoordinatorTest, AFrameOfAnOlderRoundIsARendezvousLeftBehind) {
  World round1 = world_of({1, 1});
  round1.round = 1;
  FakeNode0 node0(node0_then(round1, [](util::Fd& fd) {
    send_frame(fd, MessageType::kStop, rendezvous::encode(rendezvous::TextMessage{0, "stop"}), 0);
  }));
  auto coordinator = make_rendezvous_coordinator(settings(node0.port()), signals_);
  coordinator->join(1);
  auto reason = stop_request(*coordinator);
  ASSERT_TRUE(reason);
  EXPECT_TRUE(contains(*reason, "speaks for round 0, but this launcher is in round 1: a rendezvous the job has left behind"))
      << *reason;
}

// Node 0 closes the link; the job's records say the job went on without
// this node: no take-over, one line naming who took its place.
TEST_F(RendezvousCoordinatorTest, RecordsOfALaterRoundFenceALauncherThatLostNodeZero) {
  World world = world_of({1, 1});
  world.incarnation = "0123456789abcdef";
  FakeNode0 node0(node0_then(world, [](util::Fd& fd) { fd.reset(); }));  // then closes the connection
  std::optional<LauncherPlace> asked;
  RendezvousSettings node = settings(node0.port());
  node.job.spare_nodes = 1;
  node.job.max_restarts = 3;
  node.records_check = [&asked](const LauncherPlace& place) -> std::optional<std::string> {
    asked = place;
    return "this node (host1, node rank 1) was replaced by host2 (slot 2) in round 1 while it was unreachable";
  };
  auto coordinator = make_rendezvous_coordinator(node, signals_);
  coordinator->join(0);
  ASSERT_TRUE(stop_request(*coordinator));
  EXPECT_EQ(fenced_reason(*coordinator),
            "this node (host1, node rank 1) was replaced by host2 (slot 2) in round 1 while it was unreachable");
  ASSERT_TRUE(asked);
  EXPECT_EQ(asked->incarnation, "0123456789abcdef");
  EXPECT_EQ(asked->round, 0);
  EXPECT_EQ(asked->node_rank, 1);
  EXPECT_EQ(asked->slot, 1);
  EXPECT_FALSE(contains(notices(), "the rendezvous moves to")) << notices();
}

// The same loss without such records is node 0's loss: the launcher takes
// the rendezvous over as before (the records were asked).
TEST_F(RendezvousCoordinatorTest, WithoutSuchRecordsALauncherThatLostNodeZeroTakesOver) {
  World world = world_of({1, 1});
  world.incarnation = "0123456789abcdef";
  FakeNode0 node0(node0_then(world, [](util::Fd& fd) { fd.reset(); }));
  bool asked = false;
  RendezvousSettings node = settings(node0.port());
  node.job.spare_nodes = 1;
  node.job.max_restarts = 3;
  node.records_check = [&asked](const LauncherPlace&) -> std::optional<std::string> {
    asked = true;
    return std::nullopt;
  };
  auto coordinator = make_rendezvous_coordinator(node, signals_);
  coordinator->join(0);
  ASSERT_TRUE(stop_request(*coordinator));
  EXPECT_FALSE(coordinator->fenced());
  EXPECT_EQ(coordinator->finish(NodeOutcome{}).kind, Verdict::Kind::kRestart);
  EXPECT_TRUE(asked);
}

// How node 0 was lost decides whether a Slurm job's batch host may still
// end the job (launch/launcher.cc): a connection that closed is a host that
// answered; silence is a host frozen, cut off or powered off.
TEST_F(RendezvousCoordinatorTest, ANodeZeroWhoseConnectionClosedWasLostClosed) {
  FakeNode0 node0(node0_then(world_of({1, 1}), [](util::Fd& fd) { fd.reset(); }));
  auto coordinator = make_rendezvous_coordinator(settings(node0.port()), signals_);
  coordinator->join(0);
  EXPECT_EQ(coordinator->first_node0_loss(), std::nullopt) << "not lost yet";
  ASSERT_TRUE(stop_request(*coordinator));
  EXPECT_EQ(coordinator->first_node0_loss(), NodeZeroLoss::kClosed);
}

TEST_F(RendezvousCoordinatorTest, ANodeZeroThatFellSilentWasLostSilent) {
  World world = world_of({1, 1});
  world.heartbeat_timeout_ms = 1'000;
  FakeNode0 node0([world](util::Fd& fd) {
    rendezvous::ChallengeMessage challenge{rendezvous::random_bytes(rendezvous::kChallengeSize), false, 1'000};
    send_frame(fd, MessageType::kChallenge, rendezvous::encode(challenge));
    if (!read_frame(fd)) return;
    send_frame(fd, MessageType::kWelcome, rendezvous::encode(rendezvous::WelcomeMessage{1'000, 1}));
    send_frame(fd, MessageType::kWorld, rendezvous::encode(world));
    // Then nothing, with the connection held open: a frozen or cut-off host.
  });
  RendezvousSettings node = settings(node0.port());
  node.job.heartbeat_timeout = 1s;
  auto coordinator = make_rendezvous_coordinator(node, signals_);
  coordinator->join(0);
  auto reason = stop_request(*coordinator);
  ASSERT_TRUE(reason);
  EXPECT_TRUE(contains(*reason, "sent nothing for 1 s")) << *reason;
  EXPECT_EQ(coordinator->first_node0_loss(), NodeZeroLoss::kSilent);
}

}  // namespace
}  // namespace dlaunch::rendezvous
