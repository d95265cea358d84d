// Node 0's rendezvous service, driven by raw protocol clients over loopback.
#include "service/rendezvous_server.h"

#include <functional>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <csignal>
#include <poll.h>
#include <thread>
#include <sys/socket.h>

#include "util/error.h"
#include "util/exit_codes.h"
#include "util/socket.h"
#include "wire/protocol.h"
#include "wire/session.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

// A client writing to a connection the service closed (it dropped a silent
// launcher) gets EPIPE, as a launcher does, not a signal that ends the test.
const bool kWritesToAClosedSocketFail = [] {
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}();

class Client {
 public:
  // Connects and takes the service's challenge, as a launcher does.
  explicit Client(int port, std::optional<std::string> token = std::nullopt)
      : token_(std::move(token)) {
    fd_ = util::try_connect_tcp("127.0.0.1", port, util::Clock::now() + std::chrono::seconds(5));
    EXPECT_TRUE(fd_.valid());
    auto greeting = receive();
    if (greeting && greeting->type == MessageType::kChallenge) challenge_ = decode_challenge(greeting->payload);
  }
  ~Client() { stop_beating(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  // Sealed once joined with a token, as a launcher's frames are.
  // In this client's generation: the round it joined last, as a launcher's.
  void send(MessageType type, const std::string& payload) { send_as_of(generation_, type, payload); }
  // As a launcher of round GENERATION would: a stale one, for the tests of fencing.
  void send_as_of(std::uint32_t generation, MessageType type, const std::string& payload) {
    std::lock_guard lock(send_mutex_);
    util::write_all(fd_.get(), session_.frame(type, payload, generation));
  }
  // Heartbeats every INTERVAL from a thread of their own, whatever the test
  // waits for, as a launcher's event loop keeps them up.
  void beat_in_background(std::chrono::milliseconds interval) {
    beating_ = std::thread([this, interval] {
      std::unique_lock lock(beat_mutex_);
      while (!beat_changed_.wait_for(lock, interval, [&] { return stop_beating_; })) send(MessageType::kHeartbeat, "");
    });
  }
  void stop_beating() {
    if (!beating_.joinable()) return;
    {
      std::lock_guard lock(beat_mutex_);
      stop_beating_ = true;
    }
    beat_changed_.notify_all();
    beating_.join();
  }
  void send_raw(const std::string& bytes) { util::write_all(fd_.get(), bytes); }
  JoinMessage join_message(const std::string& run_id, int rank, int nnodes, int nproc, int round = 0) {
    JoinMessage join;
    join.run_id = run_id;
    join.round = static_cast<std::uint32_t>(round);
    join.node_rank = rank < 0 ? kAnySlot : static_cast<std::uint32_t>(rank);  // -1: by arrival
    join.nnodes = static_cast<std::uint32_t>(nnodes);
    join.nproc = static_cast<std::uint32_t>(nproc);
    join.host = "host" + std::to_string(rank);
    join.dlaunch_version = DLAUNCH_VERSION;
    return join;
  }
  // The first Join carries the nonce and proof; later ones (new rounds) are sealed.
  void send_join(JoinMessage join) {
    join.nonce = nonce_;
    if (token_) join.proof = join_proof(*token_, challenge_.nonce, nonce_, signed_part(join));
    generation_ = join.round;
    if (joined_) return send(MessageType::kJoin, encode(join));
    joined_ = true;
    if (!token_) {
      util::write_all(fd_.get(), encode_frame(MessageType::kJoin, encode(join), join.round));
      return;
    }
    session_ = Session(*token_, challenge_.nonce, nonce_, End::kLauncher);
    SealedJoinMessage sealed{nonce_, join.node_rank, session_.seal(MessageType::kSealedJoin, encode(join), join.round)};
    util::write_all(fd_.get(), encode_frame(MessageType::kSealedJoin, encode(sealed), join.round));
  }
  void join(const std::string& run_id, int rank, int nnodes, int nproc, int round = 0) {
    send_join(join_message(run_id, rank, nnodes, nproc, round));
  }
  // Waits until node 0's Welcome has arrived: the Join was accepted.
  void await_welcome() {
    awaiting_welcome_ = true;
    while (!welcome_) {
      auto frame = receive();
      if (frame) pending_.push_back(*frame);
      else if (!welcome_) throw std::runtime_error("closed before the welcome");
    }
    awaiting_welcome_ = false;
  }
  // While waiting in receive(), send heartbeats as a launcher does.
  void keep_heartbeat(bool on) { heartbeat_ = on; }
  // The next frame other than a heartbeat or the Welcome, unsealed; nullopt
  // when the service closed the connection. A refusal the service could not
  // seal (this client's token is wrong) is returned as it came.
  std::optional<Frame> receive() {
    if (!pending_.empty()) {
      Frame frame = pending_.front();
      pending_.erase(pending_.begin());
      return frame;
    }
    auto give_up = util::Clock::now() + std::chrono::seconds(10);
    for (;;) {
      while (auto frame = reader_.next()) {
        if (!open(*frame)) return frame;
        if (frame->type == MessageType::kWelcome) {
          welcome_ = decode_welcome(frame->payload);
          if (awaiting_welcome_) return std::nullopt;
        } else if (frame->type != MessageType::kHeartbeat) {
          return frame;
        }
      }
      if (util::Clock::now() >= give_up) throw std::runtime_error("no answer within 10 s");
      if (heartbeat_) send(MessageType::kHeartbeat, "");
      pollfd readable{fd_.get(), POLLIN, 0};
      if (::poll(&readable, 1, 50) == 0) continue;
      char buffer[4096];
      ssize_t got = ::recv(fd_.get(), buffer, sizeof(buffer), 0);
      if (got <= 0) return std::nullopt;
      reader_.append(std::string_view(buffer, static_cast<std::size_t>(got)));
    }
  }
  const ChallengeMessage& challenge() const { return challenge_; }
  // The Welcome received, if any: node 0's proof when sealed.
  const std::optional<WelcomeMessage>& welcome() const { return welcome_; }
  bool sealed() const { return session_.sealed(); }

 private:
  // Checks and strips FRAME's seal. False (FRAME untouched) when it has
  // none that this client's session accepts.
  bool open(Frame& frame) {
    try {
      frame.payload = session_.open(frame);
      return true;
    } catch (const ProtocolError&) {
      return false;
    }
  }

  util::Fd fd_;
  FrameReader reader_;
  // Read by the heartbeat thread (beat_in_background) while a test joins a new round.
  std::atomic<std::uint32_t> generation_ = 0;
  std::optional<std::string> token_;
  ChallengeMessage challenge_;
  std::string nonce_ = random_bytes(kChallengeSize);
  Session session_;
  bool joined_ = false;
  std::optional<WelcomeMessage> welcome_;
  std::vector<Frame> pending_;  // received while awaiting the welcome
  bool awaiting_welcome_ = false;
  bool heartbeat_ = false;
  std::mutex send_mutex_;  // the background heartbeat sends too
  std::thread beating_;
  std::mutex beat_mutex_;
  std::condition_variable beat_changed_;
  bool stop_beating_ = false;
};

struct Service {
  explicit Service(int nnodes, int max_restarts = 0,
                   std::chrono::milliseconds timeout = std::chrono::seconds(30),
                   std::function<void(ServerSettings&)> adjust = nullptr) {
    util::Fd listener = util::listen_tcp(0);
    port = util::bound_port(listener.get());
    ServerSettings settings;
    settings.job.nnodes = nnodes;
    settings.job.run_id = "job";
    settings.worker_master_addr = "127.0.0.1";
    settings.job.max_restarts = max_restarts;
    settings.job.join_timeout = timeout;
    settings.log = [this](const std::string& line) {
      std::lock_guard lock(mutex);
      log.push_back(line);
      logged.notify_all();
    };
    if (adjust) adjust(settings);
    server = std::make_unique<RendezvousServer>(std::move(listener), settings);
  }
  std::string joined_log() {
    std::lock_guard lock(mutex);
    std::string all;
    for (const auto& line : log) all += line + "\n";
    return all;
  }
  // Waits (10 s at most) until the service has logged a line holding TEXT.
  bool await_log(const std::string& text) {
    std::unique_lock lock(mutex);
    return logged.wait_for(lock, std::chrono::seconds(10), [&] {
      return std::any_of(log.begin(), log.end(),
                         [&](const std::string& line) { return line.find(text) != std::string::npos; });
    });
  }
  int port = 0;
  std::mutex mutex;
  std::condition_variable logged;
  std::vector<std::string> log;
  std::unique_ptr<RendezvousServer> server;
};

std::string reason_of(const std::optional<Frame>& frame) {
  if (!frame) return "<connection closed>";
  if (frame->type != MessageType::kAbort && frame->type != MessageType::kStop) return "<not a text message>";
  return decode_text(frame->payload).reason;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

Failure worker_failure(int node, int rank, int code) {
  Failure failure;
  failure.node_rank = node;
  failure.global_rank = rank;
  failure.local_rank = 0;
  failure.host = "host" + std::to_string(node);
  failure.exit_code = code;
  return failure;
}

TEST(RendezvousServer, PublishesTheWorldWhenEveryNodeJoined) {
  Service service(2);
  Client node1(service.port), node0(service.port);
  JoinMessage second = node1.join_message("job", 1, 2, 3);
  JoinMessage first = node0.join_message("job", 0, 2, 2);
  first.allow_uneven = second.allow_uneven = true;
  node1.send_join(second);
  node0.send_join(first);
  for (Client* client : {&node0, &node1}) {
    auto frame = client->receive();
    ASSERT_TRUE(frame);
    ASSERT_EQ(frame->type, MessageType::kWorld);
    World world = decode_world(frame->payload);
    EXPECT_EQ(world.nproc_per_node, (std::vector<int>{2, 3}));
    EXPECT_GT(world.worker_master_port, 0);
    EXPECT_EQ(world.run_id, "job");
  }
}

TEST(RendezvousServer, TimeoutNamesTheMissingNodes) {
  Service service(3, 0, std::chrono::milliseconds(300));
  Client node0(service.port);
  node0.join("job", 0, 3, 1);
  auto frame = node0.receive();
  ASSERT_TRUE(frame);
  ASSERT_EQ(frame->type, MessageType::kAbort);
  std::string reason = decode_text(frame->payload).reason;
  EXPECT_NE(reason.find("1/3 nodes joined"), std::string::npos) << reason;
  EXPECT_NE(reason.find("missing node rank(s): 1, 2"), std::string::npos) << reason;
}

TEST(RendezvousServer, WhileNodesAreMissingItSaysWhichAndWhereEveryFewSeconds) {
  Service service(3, 0, std::chrono::seconds(30), [](ServerSettings& settings) {
    settings.job.expected_hosts = {"n0", "n1", "n2"};
    settings.job.waiting_lines = WaitingSchedule{std::chrono::milliseconds(50), std::chrono::seconds(60),
                                             std::chrono::milliseconds(50), std::chrono::seconds(60),
                                             std::chrono::milliseconds(50)};
  });
  Client node0(service.port), node1(service.port), node2(service.port);
  node0.join("job", 0, 3, 1);
  EXPECT_TRUE(service.await_log("waiting for node rank(s) 1 at n1, 2 at n2 (1/3 joined, ")) << service.joined_log();
  EXPECT_TRUE(service.await_log(" s of 30 s)")) << service.joined_log();
  node1.join("job", 1, 3, 1);
  EXPECT_TRUE(service.await_log("waiting for node rank(s) 2 at n2 (2/3 joined, ")) << service.joined_log();
  node2.join("job", 2, 3, 1);
  EXPECT_EQ(node2.receive()->type, MessageType::kWorld);
}

TEST(RendezvousServer, GreetsEveryConnectionWithAFreshChallenge) {
  Service service(2, 0, std::chrono::seconds(30),
                  [](ServerSettings& settings) { settings.job.heartbeat_timeout = std::chrono::seconds(7); });
  Client first(service.port), second(service.port);
  EXPECT_EQ(first.challenge().nonce.size(), kChallengeSize);
  EXPECT_NE(first.challenge().nonce, second.challenge().nonce);
  EXPECT_FALSE(first.challenge().token_required);
  EXPECT_EQ(first.challenge().heartbeat_timeout_ms, 7000u);
}

TEST(RendezvousServer, RefusesStrangersAndGarbageButKeepsServing) {
  Service service(2);
  Client stranger(service.port), garbage(service.port), old_version(service.port);
  stranger.join("other-job", 1, 2, 1);
  EXPECT_TRUE(contains(reason_of(stranger.receive()), "other-job"));
  EXPECT_FALSE(stranger.receive());  // and closed

  garbage.send_raw("\x01\x02garbage that is not a frame at all");
  EXPECT_TRUE(contains(reason_of(garbage.receive()), "not a dlaunch rendezvous peer"));
  EXPECT_FALSE(garbage.receive());

  std::string version_one = encode_frame(MessageType::kJoin, "");
  version_one[5] = 1;
  old_version.send_raw(version_one);
  EXPECT_TRUE(contains(reason_of(old_version.receive()), "version 1"));

  // The legitimate launchers still meet.
  Client node0(service.port), node1(service.port);
  node0.join("job", 0, 2, 1);
  node1.join("job", 1, 2, 1);
  EXPECT_EQ(node0.receive()->type, MessageType::kWorld);
  EXPECT_EQ(node1.receive()->type, MessageType::kWorld);
  std::string log = service.joined_log();
  EXPECT_TRUE(contains(log, "other-job")) << log;
  EXPECT_TRUE(contains(log, "version 1")) << log;
}

TEST(RendezvousServer, WithATokenOnlyLaunchersThatProveItJoin) {
  const std::string token = generate_token();
  Service service(2, 0, std::chrono::seconds(30),
                  [&](ServerSettings& settings) { settings.job.token = token; });
  Client no_token(service.port), wrong_token(service.port, generate_token());
  EXPECT_TRUE(no_token.challenge().token_required);
  no_token.join("job", 1, 2, 1);
  EXPECT_TRUE(contains(reason_of(no_token.receive()), "presented no rendezvous token"));
  wrong_token.join("job", 1, 2, 1);
  EXPECT_TRUE(contains(reason_of(wrong_token.receive()), "token is wrong"));

  // A Join sealed for another connection's challenge is worthless here.
  Client eavesdropped(service.port, token), replayer(service.port);
  JoinMessage join = eavesdropped.join_message("job", 1, 2, 1);
  join.nonce = random_bytes(kChallengeSize);
  join.proof = join_proof(token, eavesdropped.challenge().nonce, join.nonce, signed_part(join));
  Session recorded(token, eavesdropped.challenge().nonce, join.nonce, End::kLauncher);
  SealedJoinMessage sealed_join{join.nonce, 1, recorded.seal(MessageType::kSealedJoin, encode(join), 0)};
  replayer.send_raw(encode_frame(MessageType::kSealedJoin, encode(sealed_join)));
  EXPECT_TRUE(contains(reason_of(replayer.receive()), "token is wrong"));

  // A Join in clear, even with a proof for this connection, is refused: a
  // holder of the token seals it, so nothing of it shows on the path.
  Client in_clear(service.port);
  JoinMessage clear = in_clear.join_message("job", 1, 2, 1);
  clear.nonce = random_bytes(kChallengeSize);
  clear.proof = join_proof(token, in_clear.challenge().nonce, clear.nonce, signed_part(clear));
  in_clear.send_raw(encode_frame(MessageType::kJoin, encode(clear)));
  EXPECT_TRUE(contains(reason_of(in_clear.receive()), "sent in clear"));

  Client node0(service.port, token), node1(service.port, token);
  node0.join("job", 0, 2, 1);
  node1.join("job", 1, 2, 1);
  EXPECT_EQ(node0.receive()->type, MessageType::kWorld);
  EXPECT_EQ(node1.receive()->type, MessageType::kWorld);
  EXPECT_TRUE(contains(service.joined_log(), "presented no rendezvous token"));
}

// A stranger refused for its token cannot forge lines of node 0's log, nor
// drive its terminal: what it sent is logged with control characters
// escaped, on the one line of its refusal.
TEST(RendezvousServer, WhatAStrangerSentCannotForgeLogLines) {
  Service service(2, 0, std::chrono::seconds(30),
                  [](ServerSettings& settings) { settings.job.token = generate_token(); });
  Client stranger(service.port);
  JoinMessage join = stranger.join_message("job", 1, 2, 1);
  join.host = "evil\ndlaunch: rendezvous: node 1 (n1) joined\x1b[2K\r";
  stranger.send_join(join);
  stranger.receive();
  ASSERT_TRUE(service.await_log("refused evil")) << service.joined_log();
  std::string log = service.joined_log();
  EXPECT_TRUE(contains(log, "evil\\ndlaunch: rendezvous: node 1 (n1) joined\\x1b[2K\\r")) << log;
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << log;
  EXPECT_EQ(log.find("\ndlaunch: rendezvous: node 1 (n1) joined"), std::string::npos) << log;
}

TEST(RendezvousServer, ATimeoutNamesRefusedClaimants) {
  Service service(2, 0, std::chrono::milliseconds(500),
                  [](ServerSettings& settings) { settings.job.token = generate_token(); });
  Client impostor(service.port, generate_token());
  impostor.join("job", 1, 2, 1);
  impostor.receive();
  std::string log;
  for (int i = 0; i < 200 && !contains(log, "timed out"); ++i) {
    ::poll(nullptr, 0, 20);
    log = service.joined_log();
  }
  EXPECT_TRUE(contains(log, "missing node rank(s): 0, 1")) << log;
  EXPECT_TRUE(contains(log, "claiming node 1")) << log;
}

TEST(RendezvousServer, AConnectionThatStallsMidMessageIsDroppedWithoutBlockingOthers) {
  // The others must join within the same deadline: long enough that a
  // loaded machine cannot make them miss it (issue 28).
  Service service(2, 0, std::chrono::seconds(30), [](ServerSettings& settings) {
    settings.job.handshake_timeout = std::chrono::seconds(2);
  });
  Client staller(service.port);
  std::string frame = encode_frame(MessageType::kJoin, encode(staller.join_message("job", 1, 2, 1)));
  staller.send_raw(frame.substr(0, frame.size() / 2));
  // While it stalls, the others meet.
  Client node0(service.port), node1(service.port);
  node0.join("job", 0, 2, 1);
  node1.join("job", 1, 2, 1);
  EXPECT_EQ(node0.receive()->type, MessageType::kWorld);
  EXPECT_EQ(node1.receive()->type, MessageType::kWorld);
  EXPECT_FALSE(staller.receive());  // dropped at the handshake timeout
  EXPECT_TRUE(contains(service.joined_log(), "stopped mid-message")) << service.joined_log();
}

TEST(RendezvousServer, ANodeThatDisagreesAbortsTheJobAtOnce) {
  struct Case {
    const char* what;
    std::function<void(JoinMessage&)> change;
    const char* expected;
  };
  std::vector<Case> cases = {
      {"preflight", [](JoinMessage& join) { join.preflight_error = "cannot run 'train.py'"; },
       "node 1 (host1) failed its preflight: cannot run 'train.py'"},
      {"version", [](JoinMessage& join) { join.dlaunch_version = "0.0.1"; },
       "node 1 (host1) runs dlaunch 0.0.1 but node 0 runs"},
      {"nnodes", [](JoinMessage& join) { join.nnodes = 3; }, "expects 3 nodes but node 0 expects 2"},
      {"uneven", [](JoinMessage& join) { join.nproc = 4; },
       "node 1 (host1) runs 4 workers but node 0 (host0) runs 2"},
  };
  for (const auto& c : cases) {
    Service service(2);
    Client node0(service.port), node1(service.port);
    node0.join("job", 0, 2, 2);
    JoinMessage join = node1.join_message("job", 1, 2, 2);
    c.change(join);
    node1.send_join(join);
    EXPECT_TRUE(contains(reason_of(node0.receive()), c.expected)) << c.what;
    EXPECT_TRUE(contains(reason_of(node1.receive()), c.expected)) << c.what;
    // A node that comes later is told too.
    Client late(service.port);
    late.join("job", 1, 2, 2);
    EXPECT_TRUE(contains(reason_of(late.receive()), c.expected)) << c.what;
  }
}

TEST(RendezvousServer, UnevenWorkerCountsNeedEveryNodesConsent) {
  Service service(2);
  Client node0(service.port), node1(service.port);
  JoinMessage first = node0.join_message("job", 0, 2, 1);
  JoinMessage second = node1.join_message("job", 1, 2, 3);
  first.allow_uneven = second.allow_uneven = true;
  node0.send_join(first);
  node1.send_join(second);
  auto world = node0.receive();
  ASSERT_EQ(world->type, MessageType::kWorld);
  EXPECT_EQ(decode_world(world->payload).nproc_per_node, (std::vector<int>{1, 3}));
}

TEST(RendezvousServer, AbortedJobTellsEveryNodeBeforeItsHostExits) {
  Service service(3);
  Client node0(service.port);
  JoinMessage failing = node0.join_message("job", 0, 3, 1);
  failing.preflight_error = "no such program";
  node0.send_join(failing);
  node0.receive();
  EXPECT_FALSE(service.server->wait_until_all_told(util::Clock::now() + std::chrono::milliseconds(50)));
  Client node1(service.port), node2(service.port);
  node1.join("job", 1, 3, 1);
  node2.join("job", 2, 3, 1);
  EXPECT_TRUE(contains(reason_of(node1.receive()), "no such program"));
  EXPECT_TRUE(contains(reason_of(node2.receive()), "no such program"));
  EXPECT_TRUE(service.server->wait_until_all_told(util::Clock::now() + std::chrono::seconds(5)));
}

TEST(RendezvousServer, ASilentNodeIsLostAtTheHeartbeatTimeout) {
  // node 0's heartbeats come from a thread of this test: the timeout is
  // long enough that a loaded machine cannot starve them past it.
  Service service(2, 0, std::chrono::seconds(30), [](ServerSettings& settings) {
    settings.job.heartbeat_timeout = std::chrono::seconds(2);
  });
  Client node0(service.port), node1(service.port);
  node0.keep_heartbeat(true);
  node0.join("job", 0, 2, 1);
  node1.join("job", 1, 2, 1);
  ASSERT_EQ(node1.receive()->type, MessageType::kWorld);
  ASSERT_EQ(node0.receive()->type, MessageType::kWorld);
  // node 1 now goes silent, as a frozen launcher or a cut network would.
  auto start = util::Clock::now();
  std::string reason = reason_of(node0.receive());
  EXPECT_TRUE(contains(reason, "node 1 (host1) sent nothing for")) << reason;
  EXPECT_GE(util::Clock::now() - start, std::chrono::milliseconds(200));
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  auto verdict = decode_verdict(node0.receive()->payload).verdict;
  EXPECT_EQ(verdict.kind, Verdict::Kind::kFailed);
  ASSERT_TRUE(verdict.failure);
  EXPECT_EQ(verdict.failure->node_rank, 1);
}

TEST(RendezvousServer, SendsHeartbeatsToJoinedNodes) {
  Service service(1, 0, std::chrono::seconds(30), [](ServerSettings& settings) {
    settings.job.heartbeat_timeout = std::chrono::seconds(1);
  });
  util::Fd socket =
      util::try_connect_tcp("127.0.0.1", service.port, util::Clock::now() + std::chrono::seconds(5));
  FrameReader reader;
  auto next = [&]() -> Frame {
    for (;;) {
      if (auto frame = reader.next()) return *frame;
      pollfd readable{socket.get(), POLLIN, 0};
      if (::poll(&readable, 1, 10'000) <= 0) throw std::runtime_error("no answer within 10 s");
      char buffer[4096];
      ssize_t got = ::recv(socket.get(), buffer, sizeof(buffer), 0);
      if (got <= 0) throw std::runtime_error("closed; log: " + service.joined_log());
      reader.append(std::string_view(buffer, static_cast<std::size_t>(got)));
    }
  };
  EXPECT_EQ(next().type, MessageType::kChallenge);
  JoinMessage join;
  join.run_id = "job";
  join.nnodes = 1;
  join.nproc = 1;
  join.host = "solo";
  join.dlaunch_version = DLAUNCH_VERSION;
  join.nonce = random_bytes(kChallengeSize);
  util::write_all(socket.get(), encode_frame(MessageType::kJoin, encode(join)));
  EXPECT_EQ(next().type, MessageType::kWelcome);
  EXPECT_EQ(next().type, MessageType::kWorld);
  util::write_all(socket.get(), encode_frame(MessageType::kHeartbeat, ""));
  EXPECT_EQ(next().type, MessageType::kHeartbeat);
}

TEST(RendezvousServer, DuplicateNodeRankAbortsTheJob) {
  Service service(2);
  Client first(service.port), second(service.port);
  first.join("job", 1, 2, 1);
  second.join("job", 1, 2, 1);
  std::string reason = reason_of(second.receive());
  EXPECT_TRUE(contains(reason, "node rank 1 joined twice")) << reason;
  EXPECT_TRUE(contains(reason_of(first.receive()), "joined twice"));
}

// Node ranks by arrival (torchrun's c10d without --node-rank): a Join for
// any slot gets the first free one in its Welcome, never node 0's own.
TEST(RendezvousServer, LaunchersWithoutANodeRankGetTheFirstFreeSlotsInOrderOfArrival) {
  Service service(3);
  Client first(service.port), second(service.port), node0(service.port);
  first.send_join(first.join_message("job", -1, 3, 1));
  first.await_welcome();
  second.send_join(second.join_message("job", -1, 3, 1));
  second.await_welcome();
  ASSERT_TRUE(first.welcome() && second.welcome());
  EXPECT_EQ(first.welcome()->slot, 1u) << "slot 0 is the serving launcher's";
  EXPECT_EQ(second.welcome()->slot, 2u);
  node0.join("job", 0, 3, 1);
  for (Client* client : {&node0, &first, &second}) {
    auto frame = client->receive();
    ASSERT_TRUE(frame);
    ASSERT_EQ(frame->type, MessageType::kWorld);
    EXPECT_EQ(decode_world(frame->payload).node_slots, (std::vector<int>{0, 1, 2}));
  }
  EXPECT_TRUE(contains(service.joined_log(), "it takes slot 1, the first free one")) << service.joined_log();
}

TEST(RendezvousServer, ALauncherWithoutANodeRankBeyondTheJobsSizeIsRefusedAndTheJobGoesOn) {
  Service service(2);
  Client node0(service.port), given(service.port), extra(service.port);
  node0.join("job", 0, 2, 1);
  given.send_join(given.join_message("job", -1, 2, 1));
  given.await_welcome();
  extra.send_join(extra.join_message("job", -1, 2, 1));
  std::string reason = reason_of(extra.receive());
  EXPECT_TRUE(contains(reason, "already has all 2 launchers of the job (--nnodes 2)")) << reason;
  EXPECT_TRUE(contains(reason, "one too many")) << reason;
  for (Client* client : {&node0, &given}) {
    auto frame = client->receive();
    ASSERT_TRUE(frame);
    EXPECT_EQ(frame->type, MessageType::kWorld) << "the job the extra launcher could not join goes on";
  }
}

TEST(RendezvousServer, ASlotGivenToALauncherThatLeftBeforeTheWorldIsGivenAgain) {
  Service service(3);
  Client node0(service.port);
  node0.join("job", 0, 3, 1);
  {
    Client gone(service.port);
    gone.send_join(gone.join_message("job", -1, 3, 1));
    gone.await_welcome();
    ASSERT_EQ(gone.welcome()->slot, 1u);
  }
  ASSERT_TRUE(service.await_log("lost contact"));
  Client again(service.port);
  again.send_join(again.join_message("job", -1, 3, 1));
  again.await_welcome();
  EXPECT_EQ(again.welcome()->slot, 1u);
}

TEST(RendezvousServer, AWelcomeNamesTheSlotAJoinAskedFor) {
  Service service(2);
  Client node1(service.port);
  node1.join("job", 1, 2, 1);
  node1.await_welcome();
  ASSERT_TRUE(node1.welcome());
  EXPECT_EQ(node1.welcome()->slot, 1u);
}

TEST(RendezvousServer, FirstFailureStopsTheOthersAndEveryoneGetsTheSameVerdict) {
  Service service(3);
  Client node0(service.port), node1(service.port), node2(service.port);
  node0.join("job", 0, 3, 1);
  node1.join("job", 1, 3, 1);
  node2.join("job", 2, 3, 1);
  for (Client* client : {&node0, &node1, &node2}) ASSERT_EQ(client->receive()->type, MessageType::kWorld);

  node2.send(MessageType::kFailure, encode(worker_failure(2, 2, 3)));
  for (Client* client : {&node0, &node1}) {
    auto stop = client->receive();
    ASSERT_TRUE(stop);
    ASSERT_EQ(stop->type, MessageType::kStop);
    EXPECT_NE(decode_text(stop->payload).reason.find("rank 2"), std::string::npos);
  }
  NodeOutcome stopped;  // nodes 0 and 1 were stopped, not failed
  Failure detailed = worker_failure(2, 2, 3);
  detailed.last_lines = {"Traceback", "ValueError"};
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, stopped}));
  node1.send(MessageType::kOutcome, encode(OutcomeMessage{0, stopped}));
  node2.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{false, detailed, 0, false, 0, std::nullopt}}));
  for (Client* client : {&node0, &node1, &node2}) {
    auto frame = client->receive();
    ASSERT_TRUE(frame);
    ASSERT_EQ(frame->type, MessageType::kVerdict);
    Verdict verdict = decode_verdict(frame->payload).verdict;
    EXPECT_EQ(verdict.kind, Verdict::Kind::kFailed);
    EXPECT_EQ(verdict.exit_code, 3);
    ASSERT_TRUE(verdict.failure);
    EXPECT_EQ(verdict.failure->global_rank, 2);
    EXPECT_EQ(verdict.failure->last_lines, detailed.last_lines);
  }
}

TEST(RendezvousServer, RestartsOpenANewRound) {
  Service service(2, /*max_restarts=*/1);
  Client node0(service.port), node1(service.port);
  node0.join("job", 0, 2, 1);
  node1.join("job", 1, 2, 1);
  node0.receive();
  node1.receive();
  node1.send(MessageType::kFailure, encode(worker_failure(1, 1, 1)));
  node0.receive();  // stop
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  node1.send(MessageType::kOutcome,
             encode(OutcomeMessage{0, NodeOutcome{false, worker_failure(1, 1, 1), 0, false, 0, std::nullopt}}));
  for (Client* client : {&node0, &node1}) {
    auto verdict = decode_verdict(client->receive()->payload).verdict;
    EXPECT_EQ(verdict.kind, Verdict::Kind::kRestart);
  }
  node0.join("job", 0, 2, 1, /*round=*/1);
  node1.join("job", 1, 2, 1, /*round=*/1);
  EXPECT_EQ(decode_world(node0.receive()->payload).round, 1);
  EXPECT_EQ(decode_world(node1.receive()->payload).round, 1);
  NodeOutcome success;
  success.succeeded = true;
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{1, success}));
  node1.send(MessageType::kOutcome, encode(OutcomeMessage{1, success}));
  EXPECT_EQ(decode_verdict(node0.receive()->payload).verdict.kind, Verdict::Kind::kSucceeded);
}

TEST(RendezvousServer, AJobWarnedOfPreemptionIsNotRestarted) {
  Service service(2, /*max_restarts=*/3);
  Client node0(service.port), node1(service.port);
  node0.join("job", 0, 2, 1);
  node1.join("job", 1, 2, 1);
  node0.receive();
  node1.receive();
  NodeOutcome warned;  // the workers exited non-zero after the preemption signal
  warned.failure = worker_failure(0, 0, 1);
  warned.preempted = true;
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, warned}));
  node1.receive();  // stop
  node1.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  for (Client* client : {&node0, &node1})
    EXPECT_EQ(decode_verdict(client->receive()->payload).verdict.kind, Verdict::Kind::kFailed);
}

TEST(RendezvousServer, LostNodeFailsTheJob) {
  Service service(2);
  Client node0(service.port);
  {
    Client node1(service.port);
    node0.join("job", 0, 2, 1);
    node1.join("job", 1, 2, 1);
    node0.receive();
    node1.receive();
  }  // node 1's launcher vanishes
  auto stop = node0.receive();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->type, MessageType::kStop);
  EXPECT_NE(decode_text(stop->payload).reason.find("lost contact with the launcher of node 1"),
            std::string::npos);
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  auto verdict = decode_verdict(node0.receive()->payload).verdict;
  EXPECT_EQ(verdict.kind, Verdict::Kind::kFailed);
  EXPECT_NE(verdict.exit_code, 0);
}

TEST(RendezvousServer, NodeZeroProvesTheTokenInASealedWelcome) {
  const std::string token = generate_token();
  Service service(2, 0, std::chrono::seconds(30), [&](ServerSettings& settings) {
    settings.job.token = token;
    settings.job.heartbeat_timeout = std::chrono::seconds(9);
  });
  Client node0(service.port, token), node1(service.port, token);
  node0.join("job", 0, 2, 1);
  node1.join("job", 1, 2, 1);
  auto world = node0.receive();  // opened with node 0's session keys: proved
  ASSERT_TRUE(world);
  EXPECT_EQ(world->type, MessageType::kWorld);
  ASSERT_TRUE(node0.welcome());
  EXPECT_EQ(node0.welcome()->heartbeat_timeout_ms, 9000u);
  EXPECT_TRUE(node0.sealed());
}

TEST(RendezvousServer, AWrongTokensRefusalCannotBeSealed) {
  Service service(2, 0, std::chrono::seconds(30),
                  [](ServerSettings& settings) { settings.job.token = generate_token(); });
  Client impostor(service.port, generate_token());
  impostor.join("job", 1, 2, 1);
  auto refusal = impostor.receive();  // returned as it came: the client could not open it
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->type, MessageType::kAbort);
  EXPECT_FALSE(impostor.welcome());
}

TEST(RendezvousServer, AFloodOfUnprovenConnectionsNeverShutsOutALauncher) {
  const std::string token = generate_token();
  Service service(2, 0, std::chrono::seconds(30), [&](ServerSettings& settings) {
    settings.job.token = token;
    settings.max_unproven = 8;
  });
  Client node0(service.port, token);
  node0.join("job", 0, 2, 1);
  node0.await_welcome();  // proved before the flood: never closed to make room
  std::vector<util::Fd> flood;
  for (int i = 0; i < 50; ++i)
    flood.push_back(
        util::try_connect_tcp("127.0.0.1", service.port, util::Clock::now() + std::chrono::seconds(5)));
  Client node1(service.port, token);  // newest: the oldest strangers made room for it
  node1.join("job", 1, 2, 1);
  EXPECT_EQ(node0.receive()->type, MessageType::kWorld);
  EXPECT_EQ(node1.receive()->type, MessageType::kWorld);
  std::string log = service.joined_log();
  EXPECT_TRUE(contains(log, "to make room")) << log;
  EXPECT_TRUE(contains(log, "at most 8 are held")) << log;
}

TEST(RendezvousServer, BeforeItsJoinAPeerMaySendNeitherMuchNorAnythingElse) {
  Service service(2);
  Client big(service.port);
  std::string header = encode_frame(MessageType::kJoin, std::string(kMaxHandshakePayload + 1, 'j'));
  big.send_raw(header.substr(0, kHeaderSize));  // announces 16 KiB + 1, sends none of it
  EXPECT_TRUE(contains(reason_of(big.receive()), "too long"));
  Client early(service.port);
  early.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  EXPECT_TRUE(contains(reason_of(early.receive()), "before joining"));
  std::string log = service.joined_log();
  EXPECT_TRUE(contains(log, "too long")) << log;
}

TEST(RendezvousServer, AForgedFrameOnAProvedConnectionLosesTheNode) {
  const std::string token = generate_token();
  Service service(2, 0, std::chrono::seconds(30), [&](ServerSettings& settings) { settings.job.token = token; });
  Client node0(service.port, token), node1(service.port, token);
  node0.join("job", 0, 2, 1);
  node1.join("job", 1, 2, 1);
  ASSERT_EQ(node0.receive()->type, MessageType::kWorld);
  ASSERT_EQ(node1.receive()->type, MessageType::kWorld);
  // Bytes injected into node 1's stream, as by someone on the path: no tag.
  node1.send_raw(encode_frame(MessageType::kFailure, encode(worker_failure(1, 1, 9))));
  auto stop = node0.receive();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->type, MessageType::kStop);
  EXPECT_TRUE(contains(service.joined_log(), "failed authentication")) << service.joined_log();
}

// Spare nodes (--spare-nodes): launchers beyond the training size.

// A job of NNODES training nodes and SPARES spares, with MAX_RESTARTS.
Service spare_service(int nnodes, int spares, int max_restarts,
                      std::function<void(ServerSettings&)> adjust = nullptr) {
  return Service(nnodes, max_restarts, std::chrono::seconds(30), [=](ServerSettings& settings) {
    settings.job.spare_nodes = spares;
    if (adjust) adjust(settings);
  });
}

void join_with_spares(Client& client, int slot, int nnodes, int spares, int round = 0) {
  JoinMessage join = client.join_message("job", slot, nnodes, 1, round);
  join.spare_nodes = static_cast<std::uint32_t>(spares);
  client.send_join(join);
}

World receive_world(Client& client) {
  auto frame = client.receive();
  if (!frame || frame->type != MessageType::kWorld) throw std::runtime_error("expected a World");
  return decode_world(frame->payload);
}

Verdict receive_verdict(Client& client) {
  for (;;) {
    auto frame = client.receive();
    if (!frame) throw std::runtime_error("closed before the verdict");
    if (frame->type == MessageType::kVerdict) return decode_verdict(frame->payload).verdict;
  }
}

NodeOutcome outcome_of(std::optional<Failure> failure) {
  NodeOutcome outcome;
  outcome.succeeded = !failure;
  outcome.failure = std::move(failure);
  return outcome;
}

TEST(RendezvousServer, ASpareStandsByAndTakesALostNodesPlace) {
  Service service = spare_service(2, 1, /*max_restarts=*/1);
  Client node0(service.port), spare(service.port);
  {
    Client node1(service.port);
    join_with_spares(node0, 0, 2, 1);
    join_with_spares(node1, 1, 2, 1);
    World first = receive_world(node0);
    EXPECT_EQ(first.node_slots, (std::vector<int>{0, 1}));
    receive_world(node1);
    join_with_spares(spare, 2, 2, 1);  // joins while round 0 runs
    World standing = receive_world(spare);
    EXPECT_EQ(standing.round, 0);
    EXPECT_EQ(standing.spare_slots, (std::vector<int>{2}));
    EXPECT_FALSE(standing.node_rank_of(2));
  }  // node 1's launcher vanishes
  ASSERT_EQ(node0.receive()->type, MessageType::kStop);
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  EXPECT_EQ(receive_verdict(spare).kind, Verdict::Kind::kRestart) << "the spare hears the verdict too";
  EXPECT_EQ(receive_verdict(node0).kind, Verdict::Kind::kRestart);
  join_with_spares(node0, 0, 2, 1, 1);
  join_with_spares(spare, 2, 2, 1, 1);
  World second = receive_world(node0);
  EXPECT_EQ(second.node_slots, (std::vector<int>{0, 2})) << "the spare holds node rank 1";
  EXPECT_EQ(second.addresses, (std::vector<std::string>{"127.0.0.1", "127.0.0.1", "127.0.0.1"}))
      << "where each launcher is, should node 0 be lost";
  EXPECT_TRUE(second.spare_slots.empty());
  EXPECT_EQ(receive_world(spare).node_rank_of(2), 1);
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{1, outcome_of(std::nullopt)}));
  spare.send(MessageType::kOutcome, encode(OutcomeMessage{1, outcome_of(std::nullopt)}));
  Verdict done = receive_verdict(node0);
  EXPECT_EQ(done.kind, Verdict::Kind::kSucceeded);
  ASSERT_EQ(done.timeline.size(), 2u);
  EXPECT_TRUE(contains(done.timeline[0], "lost contact with the launcher of node 1 (host1)")) << done.timeline[0];
  EXPECT_TRUE(contains(done.timeline[1], "round 1: host2 (spare) takes node rank 1; restart 1/1"))
      << done.timeline[1];
}

// Node 0 and node 1 (no spare) join round 0; node 1's launcher vanishes,
// and node 0, told to stop, reports its workers stopped.
void lose_node1_of_two(Service& service, Client& node0) {
  {
    Client node1(service.port);
    join_with_spares(node0, 0, 2, 0);
    join_with_spares(node1, 1, 2, 0);
    receive_world(node0);
    receive_world(node1);
  }
  auto stop = node0.receive();
  ASSERT_TRUE(stop);
  ASSERT_EQ(stop->type, MessageType::kStop);
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
}

TEST(RendezvousServer, WithoutASpareTheJobShrinksToMinNodes) {
  Service service = spare_service(2, 0, 1, [](ServerSettings& settings) { settings.job.min_nodes = 1; });
  Client node0(service.port);
  ASSERT_NO_FATAL_FAILURE(lose_node1_of_two(service, node0));
  EXPECT_EQ(receive_verdict(node0).kind, Verdict::Kind::kRestart);
  join_with_spares(node0, 0, 2, 0, 1);
  World alone = receive_world(node0);
  EXPECT_EQ(alone.nproc_per_node, (std::vector<int>{1}));
  EXPECT_EQ(alone.node_slots, (std::vector<int>{0}));
  // Said once the round's workers run, with the time the job was down.
  node0.send(MessageType::kStarted, "");
  EXPECT_TRUE(service.await_log("the job goes on with 1 of 2 nodes (--min-nodes 1); restart 1/1; the job was down"))
      << service.joined_log();
}

TEST(RendezvousServer, ALostNodeWithoutASpareEndsTheJobSayingWhy) {
  Service service = spare_service(2, 0, /*max_restarts=*/3);
  Client node0(service.port);
  ASSERT_NO_FATAL_FAILURE(lose_node1_of_two(service, node0));
  Verdict verdict = receive_verdict(node0);
  EXPECT_EQ(verdict.kind, Verdict::Kind::kFailed);
  EXPECT_TRUE(contains(verdict.not_restarted, "no spare left: 1 node remains")) << verdict.not_restarted;
}

TEST(RendezvousServer, ANodeThatFailsFirstRoundAfterRoundIsBenchedForASpare) {
  Service service = spare_service(2, 1, 3, [](ServerSettings& settings) { settings.job.node_fail_limit = 2; });
  Client node0(service.port), node1(service.port), spare(service.port);
  join_with_spares(node0, 0, 2, 1);
  join_with_spares(node1, 1, 2, 1);
  join_with_spares(spare, 2, 2, 1);
  for (int round = 0; round < 2; ++round) {
    World world = receive_world(node0);
    ASSERT_EQ(world.node_slots, (std::vector<int>{0, 1})) << "round " << round;
    receive_world(node1);
    receive_world(spare);
    auto r = static_cast<std::uint32_t>(round);
    node1.send(MessageType::kOutcome, encode(OutcomeMessage{r, outcome_of(worker_failure(1, 1, 1))}));
    ASSERT_EQ(node0.receive()->type, MessageType::kStop);
    node0.send(MessageType::kOutcome, encode(OutcomeMessage{r, NodeOutcome{}}));
    for (Client* client : {&node0, &node1, &spare}) EXPECT_EQ(receive_verdict(*client).kind, Verdict::Kind::kRestart);
    for (auto [client, slot] : {std::pair{&node0, 0}, {&node1, 1}, {&spare, 2}})
      join_with_spares(*client, slot, 2, 1, round + 1);
  }
  World third = receive_world(node0);
  EXPECT_EQ(third.node_slots, (std::vector<int>{0, 2}));
  EXPECT_EQ(third.benched_slots, (std::vector<int>{1}));
  EXPECT_TRUE(contains(service.joined_log(), "node 1 (host1) failed 2 rounds in a row (--node-fail-limit 2)"))
      << service.joined_log();
}

// The spare's srun task started late: after round 1 node 1 has failed twice
// and only a spare on its way can take its place. It is benched all the
// same (not stopped as a repeat of the same failure), and round 2 waits
// for the spare.
TEST(RendezvousServer, ARepeatFailerIsBenchedForASpareThatHasNotJoinedYet) {
  Service service = spare_service(2, 1, 3, [](ServerSettings& settings) { settings.job.node_fail_limit = 2; });
  Client node0(service.port), node1(service.port);
  join_with_spares(node0, 0, 2, 1);
  join_with_spares(node1, 1, 2, 1);
  for (int round = 0; round < 2; ++round) {
    receive_world(node0);
    receive_world(node1);
    auto r = static_cast<std::uint32_t>(round);
    node1.send(MessageType::kOutcome, encode(OutcomeMessage{r, outcome_of(worker_failure(1, 1, 1))}));
    ASSERT_EQ(node0.receive()->type, MessageType::kStop);
    node0.send(MessageType::kOutcome, encode(OutcomeMessage{r, NodeOutcome{}}));
    Verdict verdict = receive_verdict(node0);
    ASSERT_EQ(verdict.kind, Verdict::Kind::kRestart) << "round " << round << ": " << verdict.not_restarted;
    receive_verdict(node1);
    join_with_spares(node0, 0, 2, 1, round + 1);
    join_with_spares(node1, 1, 2, 1, round + 1);
  }
  EXPECT_TRUE(contains(service.joined_log(),
                       "node 1 (host1) failed 2 rounds in a row (--node-fail-limit 2): it is benched; the round "
                       "waits up to 30 s for a spare that has not joined yet (1 of --spare-nodes 1)"))
      << service.joined_log();
  Client spare(service.port);
  join_with_spares(spare, 2, 2, 1);
  World third = receive_world(node0);
  EXPECT_EQ(third.round, 2);
  EXPECT_EQ(third.node_slots, (std::vector<int>{0, 2}));
  EXPECT_EQ(third.benched_slots, (std::vector<int>{1}));
}

TEST(RendezvousServer, ANodeWhoseGpuFailedIsBenchedAtOnceForASpare) {
  // --node-fail-limit 5: only the hardware kind can bench node 1 after one round.
  Service service = spare_service(2, 1, 3, [](ServerSettings& settings) { settings.job.node_fail_limit = 5; });
  Client node0(service.port), node1(service.port), spare(service.port);
  join_with_spares(node0, 0, 2, 1);
  join_with_spares(node1, 1, 2, 1);
  join_with_spares(spare, 2, 2, 1);
  for (Client* client : {&node0, &node1, &spare}) receive_world(*client);
  Failure ecc = worker_failure(1, 1, 1);
  ecc.last_lines = {"RuntimeError: CUDA error: uncorrectable ECC error encountered"};
  node1.send(MessageType::kOutcome, encode(OutcomeMessage{0, outcome_of(ecc)}));
  ASSERT_EQ(node0.receive()->type, MessageType::kStop);
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  for (Client* client : {&node0, &node1, &spare}) EXPECT_EQ(receive_verdict(*client).kind, Verdict::Kind::kRestart);
  for (auto [client, slot] : {std::pair{&node0, 0}, {&node1, 1}, {&spare, 2}}) join_with_spares(*client, slot, 2, 1, 1);
  World second = receive_world(node0);
  EXPECT_EQ(second.node_slots, (std::vector<int>{0, 2}));
  EXPECT_EQ(second.benched_slots, (std::vector<int>{1}));
  EXPECT_TRUE(contains(service.joined_log(), "node 1 (host1) had a GPU hardware error")) << service.joined_log();
}

TEST(RendezvousServer, AGpuErrorWithoutASpareKeepsTheNodeAndRestarts) {
  Service service = spare_service(2, 0, 3);
  Client node0(service.port), node1(service.port);
  join_with_spares(node0, 0, 2, 0);
  join_with_spares(node1, 1, 2, 0);
  for (Client* client : {&node0, &node1}) receive_world(*client);
  Failure xid = worker_failure(1, 1, 1);
  xid.last_lines = {"NVRM: Xid (PCI:0000:3b:00): 79, pid=4711, name=python3, GPU has fallen off the bus."};
  node1.send(MessageType::kOutcome, encode(OutcomeMessage{0, outcome_of(xid)}));
  ASSERT_EQ(node0.receive()->type, MessageType::kStop);
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  EXPECT_EQ(receive_verdict(node0).kind, Verdict::Kind::kRestart);
  EXPECT_FALSE(contains(service.joined_log(), "benched")) << service.joined_log();
}

TEST(RendezvousServer, ANodeLostTwiceIsBenchedWhenItsLauncherComesBack) {
  Service service = spare_service(2, 1, 4, [](ServerSettings& settings) { settings.job.node_fail_limit = 0; });
  Client node0(service.port), spare(service.port);
  // Node 1's launcher is lost in round 0 and again in round 1; each time a
  // new one in its slot (started again on its host) joins the next round
  // first, so it trains in round 1 and is benched in round 2.
  auto node1 = std::make_unique<Client>(service.port);
  join_with_spares(*node1, 1, 2, 1);
  join_with_spares(node0, 0, 2, 1);
  join_with_spares(spare, 2, 2, 1);
  for (int round = 0; round < 2; ++round) {
    World world = receive_world(node0);
    ASSERT_EQ(world.node_slots, (std::vector<int>{0, 1})) << "round " << round;
    receive_world(spare);
    receive_world(*node1);
    node1.reset();  // lost
    auto r = static_cast<std::uint32_t>(round);
    ASSERT_EQ(node0.receive()->type, MessageType::kStop);
    node0.send(MessageType::kOutcome, encode(OutcomeMessage{r, NodeOutcome{}}));
    for (Client* client : {&node0, &spare}) ASSERT_EQ(receive_verdict(*client).kind, Verdict::Kind::kRestart);
    node1 = std::make_unique<Client>(service.port);
    join_with_spares(*node1, 1, 2, 1, round + 1);
    join_with_spares(node0, 0, 2, 1, round + 1);
    join_with_spares(spare, 2, 2, 1, round + 1);
  }
  World third = receive_world(node0);
  EXPECT_EQ(third.node_slots, (std::vector<int>{0, 2}));
  EXPECT_EQ(third.benched_slots, (std::vector<int>{1}));
  EXPECT_TRUE(contains(service.joined_log(), "node 1 (host1) was lost 2 times in this job; it is benched"))
      << service.joined_log();
}

// Round 0 of nodes 0 and 1 (SPARES stand by) fails on node 1; every
// launcher hears the restart verdict.
void fail_round_zero(Client& node0, Client& node1, Client* spare, int spares) {
  join_with_spares(node0, 0, 2, spares);
  join_with_spares(node1, 1, 2, spares);
  if (spare) join_with_spares(*spare, 2, 2, spares);
  receive_world(node0);
  receive_world(node1);
  if (spare) receive_world(*spare);
  node1.send(MessageType::kOutcome, encode(OutcomeMessage{0, outcome_of(worker_failure(1, 1, 1))}));
  ASSERT_EQ(node0.receive()->type, MessageType::kStop);
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  EXPECT_EQ(receive_verdict(node0).kind, Verdict::Kind::kRestart);
  EXPECT_EQ(receive_verdict(node1).kind, Verdict::Kind::kRestart);
  if (spare) {
    EXPECT_EQ(receive_verdict(*spare).kind, Verdict::Kind::kRestart);
  }
}

TEST(RendezvousServer, ARepeatedFailureAfterMoreStepsIsRestartedAndWithoutIsNot) {
  Service service(2, /*max_restarts=*/5);
  Client node0(service.port), node1(service.port);
  // The same failure every round, at once: only the steps tell progress.
  const std::int64_t steps[] = {5, 50, 50};
  for (int round = 0; round < 3; ++round) {
    node0.join("job", 0, 2, 1, round);
    node1.join("job", 1, 2, 1, round);
    receive_world(node0);
    receive_world(node1);
    NodeOutcome failed = outcome_of(worker_failure(1, 1, 1));
    failed.top_step = steps[round];
    auto r = static_cast<std::uint32_t>(round);
    node1.send(MessageType::kOutcome, encode(OutcomeMessage{r, failed}));
    ASSERT_EQ(node0.receive()->type, MessageType::kStop);
    node0.send(MessageType::kOutcome, encode(OutcomeMessage{r, NodeOutcome{}}));
    Verdict verdict = receive_verdict(node0);
    receive_verdict(node1);
    if (round < 2) {
      ASSERT_EQ(verdict.kind, Verdict::Kind::kRestart) << "round " << round << ": got further in steps";
      continue;
    }
    EXPECT_EQ(verdict.kind, Verdict::Kind::kFailed);
    EXPECT_EQ(verdict.exit_code, util::kExitDeterministic);
    EXPECT_TRUE(contains(verdict.not_restarted, "not retrying")) << verdict.not_restarted;
  }
}

void join_unhealthy(Client& client, int slot, int spares, const std::string& why) {
  JoinMessage join = client.join_message("job", slot, 2, 1, 1);
  join.spare_nodes = static_cast<std::uint32_t>(spares);
  join.health_error = why;
  client.send_join(join);
}

TEST(RendezvousServer, ANodeThatFailsItsHealthCheckBetweenRoundsIsBenchedForASpare) {
  Service service = spare_service(2, 1, 2);
  Client node0(service.port), node1(service.port), spare(service.port);
  ASSERT_NO_FATAL_FAILURE(fail_round_zero(node0, node1, &spare, 1));
  join_with_spares(node0, 0, 2, 1, 1);
  join_unhealthy(node1, 1, 1, "health check 'disk' failed on host1: full");
  join_with_spares(spare, 2, 2, 1, 1);
  World second = receive_world(node0);
  EXPECT_EQ(second.node_slots, (std::vector<int>{0, 2})) << "the spare holds node rank 1";
  EXPECT_EQ(second.benched_slots, (std::vector<int>{1}));
  World benched = receive_world(node1);
  EXPECT_FALSE(benched.node_rank_of(1)) << "the unhealthy node stands by, benched";
  EXPECT_TRUE(contains(service.joined_log(),
                       "node 1 (host1) failed its health check before round 1: health check 'disk' failed on "
                       "host1: full; it is benched"))
      << service.joined_log();
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{1, outcome_of(std::nullopt)}));
  receive_world(spare);
  spare.send(MessageType::kOutcome, encode(OutcomeMessage{1, outcome_of(std::nullopt)}));
  Verdict done = receive_verdict(node0);
  EXPECT_EQ(done.kind, Verdict::Kind::kSucceeded);
  bool named = false;
  for (const auto& event : done.timeline) named |= contains(event, "health check: host1 (slot 1) benched");
  EXPECT_TRUE(named) << "the timeline names the benched node";
}

TEST(RendezvousServer, WithoutASpareAFailedHealthCheckStopsTheJobNamingTheNode) {
  Service service = spare_service(2, 0, 2);
  Client node0(service.port), node1(service.port);
  ASSERT_NO_FATAL_FAILURE(fail_round_zero(node0, node1, nullptr, 0));
  join_with_spares(node0, 0, 2, 0, 1);
  join_unhealthy(node1, 1, 0, "health check 'gpu-memory' failed on host1: GPU 0: 40000 MiB");
  const std::string expected =
      "node 1 (host1) failed its health check before round 1: health check 'gpu-memory' failed on host1";
  std::string told0 = reason_of(node0.receive());
  EXPECT_TRUE(contains(told0, expected)) << told0;
  EXPECT_TRUE(contains(told0, "No spare is left")) << told0;
  EXPECT_TRUE(contains(reason_of(node1.receive()), expected));
}

// On a loaded cluster the spare's srun task may start after round 0 has
// run and failed: a node benched by its health check then waits for it.
TEST(RendezvousServer, ASpareThatComesBetweenRoundsTakesTheUnhealthyNodesPlace) {
  Service service = spare_service(2, 1, 2);
  Client node0(service.port), node1(service.port);
  ASSERT_NO_FATAL_FAILURE(fail_round_zero(node0, node1, nullptr, 1));
  join_with_spares(node0, 0, 2, 1, 1);
  join_unhealthy(node1, 1, 1, "health check 'disk' failed on host1: full");
  ASSERT_TRUE(service.await_log("the round waits up to")) << service.joined_log();
  EXPECT_TRUE(contains(service.joined_log(), "for a spare that has not joined yet (1 of --spare-nodes 1)"))
      << service.joined_log();
  Client spare(service.port);
  join_with_spares(spare, 2, 2, 1);  // its first Join: round 0
  World second = receive_world(spare);
  EXPECT_EQ(second.round, 1) << "the late spare joins the round the others gather for";
  EXPECT_EQ(second.node_rank_of(2), 1);
  EXPECT_EQ(receive_world(node0).node_slots, (std::vector<int>{0, 2}));
  EXPECT_EQ(receive_world(node1).benched_slots, (std::vector<int>{1}));
}

TEST(RendezvousServer, ASpareThatNeverComesStopsTheJobAtTheJoinDeadlineNamingTheHealthCheck) {
  Service service = spare_service(2, 1, 2, [](ServerSettings& settings) {
    settings.job.join_timeout = std::chrono::seconds(3);
  });
  Client node0(service.port), node1(service.port);
  ASSERT_NO_FATAL_FAILURE(fail_round_zero(node0, node1, nullptr, 1));
  join_with_spares(node0, 0, 2, 1, 1);
  join_unhealthy(node1, 1, 1, "health check 'disk' failed on host1: full");
  std::string told0 = reason_of(node0.receive());
  EXPECT_TRUE(contains(told0, "node 1 (host1) failed its health check before round 1: health check 'disk'"))
      << told0;
  EXPECT_TRUE(contains(told0, "No spare took its place within 3 s (--rdzv-timeout; slot(s) 2 never joined)"))
      << told0;
  EXPECT_TRUE(contains(reason_of(node1.receive()), "No spare took its place")) << "the benched node hears why";
}

TEST(RendezvousServer, ANodeLostBeforeTheSpareCameIsReplacedWhenItComes) {
  Service service = spare_service(2, 1, 1);
  Client node0(service.port);
  {
    Client node1(service.port);
    join_with_spares(node0, 0, 2, 1);
    join_with_spares(node1, 1, 2, 1);
    receive_world(node0);
    receive_world(node1);
  }  // node 1's launcher vanishes before the spare's has joined
  ASSERT_EQ(node0.receive()->type, MessageType::kStop);
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  Verdict verdict = receive_verdict(node0);
  ASSERT_EQ(verdict.kind, Verdict::Kind::kRestart) << verdict.not_restarted;
  join_with_spares(node0, 0, 2, 1, 1);
  Client spare(service.port);
  join_with_spares(spare, 2, 2, 1);
  World second = receive_world(node0);
  EXPECT_EQ(second.round, 1);
  EXPECT_EQ(second.node_slots, (std::vector<int>{0, 2}));
  EXPECT_EQ(receive_world(spare).node_rank_of(2), 1);
}

TEST(RendezvousServer, LaunchersMustAgreeOnTheSpareCount) {
  Service service = spare_service(2, 1, 0);
  Client node0(service.port), node1(service.port);
  join_with_spares(node0, 0, 2, 1);
  join_with_spares(node1, 1, 2, 0);
  EXPECT_TRUE(contains(reason_of(node1.receive()), "expects 0 spare nodes but node 0 expects 1"));
}

// A service that took over from a lost node 0 (slot 1 hosts it): it waits
// for the other launchers of the last World, and alone past its grace it
// stops, since it may be the one cut off.
TEST(RendezvousServer, AServiceThatTookOverWaitsForTheOthersAndAloneItStops) {
  auto took_over = [](ServerSettings& settings) {
    settings.service_slot = 1;
    settings.first_round = 1;
    settings.previous_members = {0, 1};
    settings.expected = {1, 2};
    settings.gather_grace = std::chrono::milliseconds(300);
    settings.timeline = {"t0 node 0 was lost"};
  };
  {
    Service service = spare_service(2, 1, 2, took_over);
    Client host(service.port), spare(service.port);
    join_with_spares(host, 1, 2, 1, 1);
    join_with_spares(spare, 2, 2, 1, 1);
    World world = receive_world(host);
    EXPECT_EQ(world.round, 1);
    EXPECT_EQ(world.node_slots, (std::vector<int>{1, 2})) << "the new host holds node rank 0";
    receive_world(spare);
    host.send(MessageType::kStarted, "");
    spare.send(MessageType::kStarted, "");
    EXPECT_TRUE(service.await_log("round 1: host1 moves from node rank 1 to 0; host2 (spare) takes node rank 1"))
        << service.joined_log();
  }
  Service alone = spare_service(2, 1, 2, took_over);
  Client host(alone.port);
  join_with_spares(host, 1, 2, 1, 1);
  std::string reason = reason_of(host.receive());
  EXPECT_TRUE(contains(reason, "1 of the 2 launchers left reached this node's rendezvous")) << reason;
  EXPECT_TRUE(contains(reason, "this node may be the one cut off")) << reason;
}

// A spare that is lost while the others train stops nobody: the round ends
// as it would have, and the timeline says the spare went.
TEST(RendezvousServer, ALostSpareStopsNobody) {
  Service service = spare_service(2, 1, /*max_restarts=*/1);
  Client node0(service.port), node1(service.port);
  join_with_spares(node0, 0, 2, 1);
  join_with_spares(node1, 1, 2, 1);
  receive_world(node0);
  receive_world(node1);
  {
    Client spare(service.port);
    join_with_spares(spare, 2, 2, 1);
    EXPECT_EQ(receive_world(spare).spare_slots, (std::vector<int>{2}));
  }  // the spare's launcher vanishes
  ASSERT_TRUE(service.await_log("lost contact with the launcher of spare slot 2")) << service.joined_log();
  NodeOutcome succeeded;
  succeeded.succeeded = true;
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, succeeded}));
  node1.send(MessageType::kOutcome, encode(OutcomeMessage{0, succeeded}));
  auto first = node0.receive();
  ASSERT_TRUE(first);
  ASSERT_EQ(first->type, MessageType::kVerdict) << "no Stop for a lost spare";
  Verdict verdict = decode_verdict(first->payload).verdict;
  EXPECT_EQ(verdict.kind, Verdict::Kind::kSucceeded);
  ASSERT_EQ(verdict.timeline.size(), 1u);
  EXPECT_TRUE(contains(verdict.timeline[0], "lost contact with the launcher of spare slot 2 (host2)"))
      << verdict.timeline[0];
}

}  // namespace
}  // namespace dlaunch::rendezvous

// ---- fencing (protocol 7): a launcher the job left behind never acts for it again

namespace dlaunch::rendezvous {
namespace {

Service fencing_service(int spares, int max_restarts, std::function<void(ServerSettings&)> adjust = nullptr) {
  // The live launchers' heartbeats come from threads of the test: a
  // timeout a loaded machine cannot starve them past (issue 28).
  return spare_service(2, spares, max_restarts, [=](ServerSettings& settings) {
    settings.job.heartbeat_timeout = std::chrono::seconds(2);
    if (adjust) adjust(settings);
  });
}

// A launcher that went silent (frozen, or cut off) is told, before its
// connection closes, that the job goes on without it: it reads this when it
// wakes. The same slot coming back with its old round is refused; a launcher
// started afresh there (round 0) may still stand by.
TEST(RendezvousServerFencing, ASilentLauncherIsToldItWasDroppedAndItsStaleJoinIsRefused) {
  Service service = fencing_service(1, 2);
  Client node0(service.port), node1(service.port), spare(service.port);
  join_with_spares(node0, 0, 2, 1);
  join_with_spares(node1, 1, 2, 1);
  join_with_spares(spare, 2, 2, 1);
  receive_world(node0);
  receive_world(node1);
  receive_world(spare);
  node0.beat_in_background(std::chrono::milliseconds(50));
  spare.beat_in_background(std::chrono::milliseconds(50));
  // node 1 now says nothing: the service drops it at the heartbeat timeout.
  auto fenced = node1.receive();
  ASSERT_TRUE(fenced);
  ASSERT_EQ(fenced->type, MessageType::kFenced);
  std::string told = decode_text(fenced->payload).reason;
  EXPECT_TRUE(contains(told, "node 0 dropped this launcher in round 0 (node 1 (host1) sent nothing for")) << told;
  EXPECT_TRUE(contains(told, "the job goes on without it")) << told;
  EXPECT_EQ(fenced->generation, 0u);
  EXPECT_FALSE(node1.receive()) << "then its connection closes";

  ASSERT_EQ(node0.receive()->type, MessageType::kStop);
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  EXPECT_EQ(receive_verdict(node0).kind, Verdict::Kind::kRestart);
  join_with_spares(node0, 0, 2, 1, 1);
  join_with_spares(spare, 2, 2, 1, 1);
  EXPECT_EQ(receive_world(node0).node_slots, (std::vector<int>{0, 2}));

  Client stale(service.port);
  join_with_spares(stale, 1, 2, 1, /*round=*/1);
  auto refused = stale.receive();
  ASSERT_TRUE(refused);
  ASSERT_EQ(refused->type, MessageType::kFenced);
  std::string reason = decode_text(refused->payload).reason;
  EXPECT_TRUE(contains(reason, "this launcher (slot 1) is out of the job: node 0 dropped it in round 0")) << reason;
  EXPECT_TRUE(contains(reason, "the job is in round 1 without it")) << reason;

  Client fresh(service.port);
  join_with_spares(fresh, 1, 2, 1, /*round=*/0);
  World standing = receive_world(fresh);
  EXPECT_EQ(standing.round, 1);
  EXPECT_FALSE(standing.node_rank_of(1)) << "a launcher started afresh stands by";
}

// What a launcher reports of a round belongs to that round: a Failure sent
// in round 0 (it crossed the verdict, or came from a launcher left behind)
// does not stop round 1.
TEST(RendezvousServerFencing, AReportOfAnEarlierRoundIsDropped) {
  Service service(2, /*max_restarts=*/1);
  Client node0(service.port), node1(service.port);
  node0.join("job", 0, 2, 1);
  node1.join("job", 1, 2, 1);
  node0.receive();
  node1.receive();
  node1.send(MessageType::kFailure, encode(worker_failure(1, 1, 1)));
  node0.receive();  // stop
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  node1.send(MessageType::kOutcome, encode(OutcomeMessage{0, outcome_of(worker_failure(1, 1, 1))}));
  receive_verdict(node0);
  receive_verdict(node1);
  node0.join("job", 0, 2, 1, 1);
  node1.join("job", 1, 2, 1, 1);
  receive_world(node0);
  receive_world(node1);
  node1.send_as_of(0, MessageType::kFailure, encode(worker_failure(1, 1, 3)));
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{1, outcome_of(std::nullopt)}));
  node1.send(MessageType::kOutcome, encode(OutcomeMessage{1, outcome_of(std::nullopt)}));
  auto next = node0.receive();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->type, MessageType::kVerdict) << "no Stop: the stale failure was dropped";
  EXPECT_EQ(decode_verdict(next->payload).verdict.kind, Verdict::Kind::kSucceeded);
}

// A Join's frame carries the round it joins; one that says otherwise is
// not a launcher of this protocol.
TEST(RendezvousServerFencing, AJoinWhoseFrameNamesAnotherGenerationIsRefused) {
  Service service(2);
  Client odd(service.port);
  JoinMessage join = odd.join_message("job", 1, 2, 1, 0);
  join.nonce = std::string(kChallengeSize, 'n');
  odd.send_raw(encode_frame(MessageType::kJoin, encode(join), 5));
  std::string reason = reason_of(odd.receive());
  EXPECT_TRUE(contains(reason, "a Join for round 0 in a frame of generation 5")) << reason;
}

// The service's frames carry its round, so a launcher can tell a stale
// service from the one the job is with.
TEST(RendezvousServerFencing, TheServicesFramesCarryItsRound) {
  Service service(2, /*max_restarts=*/1);
  Client node0(service.port), node1(service.port);
  node0.join("job", 0, 2, 1);
  node1.join("job", 1, 2, 1);
  EXPECT_EQ(node0.receive()->generation, 0u);
  node1.receive();
  node1.send(MessageType::kOutcome, encode(OutcomeMessage{0, outcome_of(worker_failure(1, 1, 1))}));
  node0.receive();  // stop
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  receive_verdict(node0);
  node0.join("job", 0, 2, 1, 1);
  node1.join("job", 1, 2, 1, 1);
  auto world = node0.receive();
  ASSERT_TRUE(world);
  EXPECT_EQ(world->generation, 1u);
}

// With --min-nodes a side that lost most of its launchers to silence at
// once could go on, but the other side may be the one that goes on: it
// stops, and says it steps aside, so its launchers write none of the job's
// records.
TEST(RendezvousServerFencing, AMinoritySideStepsAside) {
  Service service = fencing_service(1, 2, [](ServerSettings& settings) { settings.job.min_nodes = 1; });
  Client node0(service.port), node1(service.port), spare(service.port);
  join_with_spares(node0, 0, 2, 1);
  join_with_spares(node1, 1, 2, 1);
  join_with_spares(spare, 2, 2, 1);
  receive_world(node0);
  node0.beat_in_background(std::chrono::milliseconds(50));
  // node 1 and the spare fall silent together, as the far side of a cut.
  ASSERT_EQ(node0.receive()->type, MessageType::kStop);
  // The spare joined last, so its silence may be counted a moment after
  // node 1's (much later on a slow machine): node 0 answers once both are,
  // as it would at the end of a real cut, where its own outcome takes
  // longer than that moment to come.
  ASSERT_TRUE(service.await_log("spare slot 2 (host2) sent nothing for")) << service.joined_log();
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  Verdict verdict = receive_verdict(node0);
  EXPECT_EQ(verdict.kind, Verdict::Kind::kFailed);
  EXPECT_TRUE(verdict.stepped_aside);
  EXPECT_TRUE(contains(verdict.not_restarted, "this node may be the one cut off")) << verdict.not_restarted;
}

// The far side of a cut goes on only where the job replaces lost nodes:
// a node 0 that lost its one other node to silence, in a job that has no
// spare, speaks for the job's end (the other side cannot go on either).
TEST(RendezvousServerFencing, WithoutASpareNoSideStepsAside) {
  Service service = fencing_service(0, 2);
  Client node0(service.port), node1(service.port);
  join_with_spares(node0, 0, 2, 0);
  join_with_spares(node1, 1, 2, 0);
  receive_world(node0);
  node0.beat_in_background(std::chrono::milliseconds(50));
  ASSERT_EQ(node0.receive()->type, MessageType::kStop);  // node 1 went silent
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  Verdict verdict = receive_verdict(node0);
  EXPECT_EQ(verdict.kind, Verdict::Kind::kFailed);
  EXPECT_FALSE(verdict.stepped_aside);
}

// The replacement line is said once every worker of the new round runs:
// the job was down from the lost node's last sign of life until then.
TEST(RendezvousServerFencing, TheDownTimeRunsFromTheLastSignOfLifeToEveryWorkerRunning) {
  Service service = fencing_service(1, 2);
  Client node0(service.port), node1(service.port), spare(service.port);
  join_with_spares(node0, 0, 2, 1);
  join_with_spares(node1, 1, 2, 1);
  join_with_spares(spare, 2, 2, 1);
  receive_world(node0);
  receive_world(spare);
  node0.beat_in_background(std::chrono::milliseconds(50));
  spare.beat_in_background(std::chrono::milliseconds(50));
  ASSERT_EQ(node0.receive()->type, MessageType::kStop);  // node 1 went silent
  node0.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{}}));
  receive_verdict(node0);
  receive_verdict(spare);
  join_with_spares(node0, 0, 2, 1, 1);
  join_with_spares(spare, 2, 2, 1, 1);
  receive_world(node0);
  receive_world(spare);
  EXPECT_FALSE(contains(service.joined_log(), "takes node rank 1")) << "not before the workers run";
  node0.send(MessageType::kStarted, "");
  spare.send(MessageType::kStarted, "");
  ASSERT_TRUE(service.await_log("round 1: host2 (spare) takes node rank 1; restart 1/2; the job was down"))
      << service.joined_log();
  std::string log = service.joined_log();
  EXPECT_TRUE(contains(log, "s of it before the loss was noticed)")) << log;
}

}  // namespace
}  // namespace dlaunch::rendezvous
