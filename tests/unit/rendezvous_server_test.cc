// Node 0's rendezvous service, driven by raw protocol clients over loopback.
#include "rendezvous/rendezvous_server.h"

#include <gtest/gtest.h>
#include <mutex>
#include <poll.h>
#include <sys/socket.h>

#include "rendezvous/protocol.h"
#include "util/error.h"
#include "util/socket.h"

namespace dlaunch::rendezvous {
namespace {

class Client {
 public:
  explicit Client(int port) {
    fd_ = try_connect_tcp("127.0.0.1", port, Clock::now() + std::chrono::seconds(5));
    EXPECT_TRUE(fd_.valid());
  }
  void send(MessageType type, const std::string& payload) {
    write_all(fd_.get(), encode_frame(type, payload));
  }
  void send_raw(const std::string& bytes) { write_all(fd_.get(), bytes); }
  void join(const std::string& run_id, int rank, int nnodes, int nproc, int round = 0) {
    send(MessageType::kJoin,
         encode(JoinMessage{run_id, static_cast<std::uint32_t>(round),
                            static_cast<std::uint32_t>(rank), static_cast<std::uint32_t>(nnodes),
                            static_cast<std::uint32_t>(nproc), "host" + std::to_string(rank)}));
  }
  // The next frame; nullopt when the service closed the connection.
  std::optional<Frame> receive() {
    for (;;) {
      if (auto frame = reader_.next()) return frame;
      pollfd readable{fd_.get(), POLLIN, 0};
      if (::poll(&readable, 1, 10'000) <= 0) throw std::runtime_error("no answer within 10 s");
      char buffer[4096];
      ssize_t got = ::recv(fd_.get(), buffer, sizeof(buffer), 0);
      if (got <= 0) return std::nullopt;
      reader_.append(std::string_view(buffer, static_cast<std::size_t>(got)));
    }
  }

 private:
  Fd fd_;
  FrameReader reader_;
};

struct Service {
  explicit Service(int nnodes, int max_restarts = 0,
                   std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    Fd listener = listen_tcp(0);
    port = bound_port(listener.get());
    ServerSettings settings;
    settings.nnodes = nnodes;
    settings.run_id = "job";
    settings.worker_master_addr = "127.0.0.1";
    settings.max_restarts = max_restarts;
    settings.join_timeout = timeout;
    settings.log = [this](const std::string& line) {
      std::lock_guard lock(mutex);
      log.push_back(line);
    };
    server = std::make_unique<RendezvousServer>(std::move(listener), settings);
  }
  std::string joined_log() {
    std::lock_guard lock(mutex);
    std::string all;
    for (const auto& line : log) all += line + "\n";
    return all;
  }
  int port = 0;
  std::mutex mutex;
  std::vector<std::string> log;
  std::unique_ptr<RendezvousServer> server;
};

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
  node1.join("job", 1, 2, 3);
  node0.join("job", 0, 2, 2);
  for (Client* client : {&node0, &node1}) {
    auto frame = client->receive();
    ASSERT_TRUE(frame);
    ASSERT_EQ(frame->type, MessageType::kWorld);
    World world = decode_world(frame->payload);
    EXPECT_EQ(world.nproc_per_node, (std::vector<int>{2, 3}));
    EXPECT_EQ(world.hosts, (std::vector<std::string>{"host0", "host1"}));
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

TEST(RendezvousServer, RefusesAnotherJobAndWrongSizesButKeepsServing) {
  Service service(2);
  Client stranger(service.port), wrong_size(service.port), garbage(service.port);
  stranger.join("other-job", 1, 2, 1);
  auto refused = stranger.receive();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->type, MessageType::kAbort);
  EXPECT_NE(decode_text(refused->payload).reason.find("other-job"), std::string::npos);
  EXPECT_FALSE(stranger.receive());  // and closed

  wrong_size.join("job", 1, 3, 1);
  auto size_refused = wrong_size.receive();
  ASSERT_TRUE(size_refused);
  EXPECT_NE(decode_text(size_refused->payload).reason.find("--nnodes"), std::string::npos);

  garbage.send_raw("\x01\x02garbage that is not a frame at all");
  auto dropped = garbage.receive();
  ASSERT_TRUE(dropped);
  EXPECT_EQ(dropped->type, MessageType::kAbort);
  EXPECT_FALSE(garbage.receive());

  // The legitimate launchers still meet.
  Client node0(service.port), node1(service.port);
  node0.join("job", 0, 2, 1);
  node1.join("job", 1, 2, 1);
  EXPECT_EQ(node0.receive()->type, MessageType::kWorld);
  EXPECT_EQ(node1.receive()->type, MessageType::kWorld);
  EXPECT_NE(service.joined_log().find("other-job"), std::string::npos);
}

TEST(RendezvousServer, DuplicateNodeRankIsRefused) {
  Service service(2);
  Client first(service.port), second(service.port);
  first.join("job", 1, 2, 1);
  second.join("job", 1, 2, 1);
  auto frame = second.receive();
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->type, MessageType::kAbort);
  EXPECT_NE(decode_text(frame->payload).reason.find("already joined"), std::string::npos);
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
  node2.send(MessageType::kOutcome, encode(OutcomeMessage{0, NodeOutcome{false, detailed, 0}}));
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
             encode(OutcomeMessage{0, NodeOutcome{false, worker_failure(1, 1, 1), 0}}));
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

}  // namespace
}  // namespace dlaunch::rendezvous
