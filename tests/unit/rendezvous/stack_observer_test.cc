// `dlaunch stacks` against a running job's rendezvous: the observer joins
// as an observer (never a node) with the token's proof, takes each node's
// Stacks until StacksEnd and node 0's headline, keeps its link alive with
// heartbeats while the capture runs, and names the address in every error:
// nobody there, a refusal, a close before the report was complete, no
// report in time. A stop signal ends the wait. Node 0 is a fake on a
// thread (test_support/fake_node0.h).
#include "rendezvous/stack_observer.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "../test_support/fake_node0.h"
#include "../test_support/text.h"
#include "forensics/stack_sample.h"
#include "process/signal_channel.h"
#include "util/error.h"
#include "util/socket.h"
#include "wire/protocol.h"
#include "wire/session.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

using namespace std::chrono_literals;
using ::dlaunch::test_support::contains;
using test_support::FakeNode0;
using test_support::send_bytes;

// Node 0's end of one connection: its frame reader lives as long as the
// connection, so frames that arrive together are all taken.
class Node0End {
 public:
  explicit Node0End(util::Fd& fd) : fd_(fd) {}

  // The next whole frame within LIMIT; nullopt when it closed or timed out.
  std::optional<Frame> read(std::chrono::milliseconds limit = 2s) {
    for (auto give_up = util::Clock::now() + limit;;) {
      if (auto frame = reader_.next()) return frame;
      if (util::Clock::now() >= give_up) return std::nullopt;
      pollfd readable{fd_.get(), POLLIN, 0};
      if (::poll(&readable, 1, 20) <= 0) continue;
      char buffer[4096];
      ssize_t got = ::recv(fd_.get(), buffer, sizeof(buffer), 0);
      if (got <= 0) return std::nullopt;
      reader_.append(std::string_view(buffer, static_cast<std::size_t>(got)));
    }
  }

  // The Challenge (with a token: required), then the observer's Join,
  // opened with TOKEN when it came sealed. Nullopt when none came.
  std::optional<JoinMessage> greet(const std::optional<std::string>& token) {
    std::string challenge = random_bytes(kChallengeSize);
    send_bytes(fd_, encode_frame(MessageType::kChallenge,
                                 encode(ChallengeMessage{challenge, token.has_value(), 30'000})));
    auto frame = read();
    if (!frame) return std::nullopt;
    if (frame->type == MessageType::kJoin) return decode_join(frame->payload);
    if (frame->type != MessageType::kSealedJoin || !token) return std::nullopt;
    SealedJoinMessage sealed = decode_sealed_join(frame->payload);
    session = Session(*token, challenge, sealed.nonce, End::kService);
    JoinMessage join = decode_join(session.open(frame->type, frame->generation, sealed.sealed));
    proof_holds = proofs_match(join_proof(*token, challenge, join.nonce, signed_part(join)), join.proof);
    return join;
  }

  void send(MessageType type, const std::string& payload) { send_bytes(fd_, session.frame(type, payload)); }

  Session session;  // unsealed until a sealed Join arrived
  bool proof_holds = false;

 private:
  util::Fd& fd_;
  FrameReader reader_;
};

forensics::WorkerStacks worker(int rank, int node_rank, const std::string& host) {
  forensics::WorkerStacks result;
  result.rank = rank;
  result.local_rank = rank % 2;
  result.node_rank = node_rank;
  result.host = host;
  result.pid = 1000 + rank;
  result.problems = {"not a Python worker"};
  return result;
}

std::string stacks(std::uint32_t id, const std::vector<forensics::WorkerStacks>& workers) {
  return encode(StacksMessage{id, forensics::encode_worker_stacks(workers)});
}

std::string text(const std::string& reason) { return encode(TextMessage{0, reason}); }

class StackObserverTest : public ::testing::Test {
 protected:
  static ObserveSettings settings(int port, std::optional<std::string> token,
                                  std::chrono::milliseconds timeout = 20s) {
    ObserveSettings result;
    result.master_addr = "127.0.0.1";
    result.port = port;
    result.token = std::move(token);
    result.run_id = "job";
    result.timeout = timeout;
    return result;
  }

  // The error observe_stacks ends with, of type ERROR.
  template <typename Error>
  std::string observe_error(const ObserveSettings& observe) {
    try {
      observe_stacks(observe, signals_);
    } catch (const Error& error) {
      return error.what();
    }
    ADD_FAILURE() << "observe_stacks() did not throw the error expected";
    return "";
  }

  static std::string where(const FakeNode0& node0) { return "127.0.0.1:" + std::to_string(node0.port()); }

  process::SignalChannel signals_;  // before the fake's thread, which inherits its mask
  std::mutex mutex_;
  std::optional<JoinMessage> join_;  // what node 0 got
  bool proof_holds_ = false;

  void record(const std::optional<JoinMessage>& join, bool proof_holds) {
    std::lock_guard lock(mutex_);
    join_ = join;
    proof_holds_ = proof_holds;
  }
};

TEST_F(StackObserverTest, ItTakesEveryNodesStacksAndNode0sHeadline) {
  const std::string token = generate_token();
  FakeNode0 node0([&](util::Fd& fd, int) {
    Node0End end(fd);
    auto join = end.greet(token);
    record(join, end.proof_holds);
    if (!join) return;
    end.send(MessageType::kWelcome, encode(WelcomeMessage{30'000}));
    end.send(MessageType::kCapture, encode(CaptureMessage{0, 1, false}));  // not for an observer: ignored
    end.send(MessageType::kStacks, stacks(1, {worker(0, 0, "node-a"), worker(1, 0, "node-a")}));
    end.send(MessageType::kStacks, stacks(1, {worker(2, 1, "node-b")}));
    end.send(MessageType::kStacksEnd, text("live capture of round 0, asked for by dlaunch stacks"));
  });
  Observed observed = observe_stacks(settings(node0.port(), token), signals_);
  EXPECT_EQ(observed.headline, "live capture of round 0, asked for by dlaunch stacks");
  ASSERT_EQ(observed.workers.size(), 3u);
  EXPECT_EQ(observed.workers[0].rank, 0);
  EXPECT_EQ(observed.workers[0].host, "node-a");
  EXPECT_EQ(observed.workers[1].rank, 1);
  EXPECT_EQ(observed.workers[2].rank, 2);
  EXPECT_EQ(observed.workers[2].node_rank, 1);
  EXPECT_EQ(observed.workers[2].host, "node-b");
  EXPECT_EQ(observed.workers[2].pid, 1002);
  EXPECT_EQ(observed.workers[2].problems, std::vector<std::string>{"not a Python worker"});

  // It came sealed, as an observer of this job, with the token's proof.
  node0.stop();
  std::lock_guard lock(mutex_);
  ASSERT_TRUE(join_);
  EXPECT_TRUE(join_->observer);
  EXPECT_EQ(join_->run_id, "job");
  EXPECT_TRUE(proof_holds_);
}

TEST_F(StackObserverTest, WithoutATokenPlainFramesAreTaken) {
  FakeNode0 node0([&](util::Fd& fd, int) {
    Node0End end(fd);
    auto join = end.greet(std::nullopt);
    record(join, false);
    if (!join) return;
    end.send(MessageType::kWelcome, encode(WelcomeMessage{30'000}));
    end.send(MessageType::kStacks, stacks(4, {worker(0, 0, "solo")}));
    end.send(MessageType::kStacksEnd, text("live capture"));
  });
  Observed observed = observe_stacks(settings(node0.port(), std::nullopt), signals_);
  EXPECT_EQ(observed.headline, "live capture");
  ASSERT_EQ(observed.workers.size(), 1u);
  EXPECT_EQ(observed.workers[0].host, "solo");
  node0.stop();
  std::lock_guard lock(mutex_);
  ASSERT_TRUE(join_);
  EXPECT_TRUE(join_->observer);
  EXPECT_EQ(join_->proof, "");
}

TEST_F(StackObserverTest, AJobWithoutRunningWorkersSaysSoWithNoStacks) {
  const std::string token = generate_token();
  FakeNode0 node0([&](util::Fd& fd, int) {
    Node0End end(fd);
    if (!end.greet(token)) return;
    end.send(MessageType::kWelcome, encode(WelcomeMessage{30'000}));
    end.send(MessageType::kStacksEnd, text("no workers run now: the job is gathering"));
  });
  Observed observed = observe_stacks(settings(node0.port(), token), signals_);
  EXPECT_EQ(observed.headline, "no workers run now: the job is gathering");
  EXPECT_TRUE(observed.workers.empty());
}

TEST_F(StackObserverTest, ARefusalAfterTheWelcomeIsNamedWithTheAddress) {
  const std::string token = generate_token();
  FakeNode0 node0([&](util::Fd& fd, int) {
    Node0End end(fd);
    if (!end.greet(token)) return;
    // What node 0 does for an observer of another job: welcome, refuse, close.
    end.send(MessageType::kWelcome, encode(WelcomeMessage{30'000}));
    end.send(MessageType::kAbort, text("this rendezvous serves job 'other', not 'job'"));
    ::shutdown(fd.get(), SHUT_RDWR);
  });
  EXPECT_EQ(observe_error<util::SystemError>(settings(node0.port(), token)),
            "node 0 (" + where(node0) + ") refused: this rendezvous serves job 'other', not 'job'");
}

TEST_F(StackObserverTest, AWrongTokenIsNamedAsNoRendezvousAnswering) {
  // Node 0 refuses without proving itself (it cannot: the tokens differ);
  // the dial goes on until its deadline and the observer names the address.
  FakeNode0 node0([&](util::Fd& fd, int) {
    Node0End end(fd);
    std::string challenge = random_bytes(kChallengeSize);
    send_bytes(fd, encode_frame(MessageType::kChallenge, encode(ChallengeMessage{challenge, true, 30'000})));
    if (!end.read()) return;
    send_bytes(fd, encode_frame(MessageType::kAbort, text("node 0 refused this launcher: its rendezvous token is wrong")));
  });
  std::string error = observe_error<util::SystemError>(settings(node0.port(), generate_token(), 1500ms));
  EXPECT_TRUE(contains(error, "no rendezvous answered at " + where(node0) + ": ")) << error;
  EXPECT_TRUE(contains(error, "its rendezvous token is wrong")) << error;
  EXPECT_TRUE(contains(error, "Is the job still running?")) << error;
}

TEST_F(StackObserverTest, ATokenNode0RequiresAndTheObserverLacksIsTheUsersToGive) {
  FakeNode0 node0([&](util::Fd& fd, int) {
    Node0End end(fd);
    std::string challenge = random_bytes(kChallengeSize);
    send_bytes(fd, encode_frame(MessageType::kChallenge, encode(ChallengeMessage{challenge, true, 30'000})));
    end.read();
  });
  std::string error = observe_error<util::InputError>(settings(node0.port(), std::nullopt));
  EXPECT_TRUE(contains(error, "requires a token")) << error;
}

TEST_F(StackObserverTest, NobodyListeningIsNamedWithTheAddress) {
  util::Fd listener = util::listen_tcp(0);
  int port = util::bound_port(listener.get());
  listener.reset();  // bound, then closed: nobody answers there
  std::string error = observe_error<util::SystemError>(settings(port, std::nullopt, 300ms));
  EXPECT_TRUE(contains(error, "no rendezvous answered at 127.0.0.1:" + std::to_string(port) + ": ")) << error;
  EXPECT_TRUE(contains(error, "Is the job still running?")) << error;
}

TEST_F(StackObserverTest, Node0ClosingBeforeStacksEndIsNamed) {
  const std::string token = generate_token();
  FakeNode0 node0([&](util::Fd& fd, int) {
    Node0End end(fd);
    if (!end.greet(token)) return;
    end.send(MessageType::kWelcome, encode(WelcomeMessage{30'000}));
    end.send(MessageType::kStacks, stacks(1, {worker(0, 0, "node-a")}));
    ::shutdown(fd.get(), SHUT_RDWR);  // node 0's launcher ended meanwhile
  });
  EXPECT_EQ(observe_error<util::SystemError>(settings(node0.port(), token)),
            "node 0 (" + where(node0) + ") closed the connection before the report was complete");
}

TEST_F(StackObserverTest, WhileTheCaptureRunsItSendsHeartbeatsAndGivesUpAtItsTimeout) {
  const std::string token = generate_token();
  std::atomic<int> heartbeats{0};
  FakeNode0 node0([&](util::Fd& fd, int) {
    Node0End end(fd);
    if (!end.greet(token)) return;
    // A 200 ms heartbeat timeout: a beat every 50 ms, sealed like the rest.
    end.send(MessageType::kWelcome, encode(WelcomeMessage{200}));
    while (auto frame = end.read(3s)) {
      if (frame->type == MessageType::kHeartbeat && end.session.open(*frame).empty()) ++heartbeats;
    }
  });
  auto started = util::Clock::now();
  std::string error = observe_error<util::SystemError>(settings(node0.port(), token, 1500ms));
  EXPECT_EQ(error, "node 0 (" + where(node0) + ") sent no complete report within 1 s");
  EXPECT_GE(util::Clock::now() - started, 1400ms);
  node0.stop();  // waits for node 0 to see the observer close
  // About 25 in 1.3 s; a node 0 that counts silence would have dropped it at 4.
  EXPECT_GE(heartbeats.load(), 8);
}

TEST_F(StackObserverTest, AStopSignalEndsTheWaitAndOthersDoNot) {
  const std::string token = generate_token();
  FakeNode0 node0([&](util::Fd& fd, int) {
    Node0End end(fd);
    if (!end.greet(token)) return;
    end.send(MessageType::kWelcome, encode(WelcomeMessage{200}));
    // Its first heartbeat shows it waits for the report: now the signals.
    auto frame = end.read(5s);
    if (!frame || frame->type != MessageType::kHeartbeat) return;
    ::kill(::getpid(), SIGUSR1);  // forwarded to workers by a launcher; nothing to an observer
    ::kill(::getpid(), SIGTERM);
    while (end.read(3s)) {
    }
  });
  try {
    observe_stacks(settings(node0.port(), token), signals_);
    FAIL() << "observe_stacks() returned";
  } catch (const util::Interrupted& stopped) {
    EXPECT_EQ(stopped.signal, SIGTERM);
  }
}

TEST_F(StackObserverTest, StacksThatDoNotDecodeAreAProtocolError) {
  const std::string token = generate_token();
  FakeNode0 node0([&](util::Fd& fd, int) {
    Node0End end(fd);
    if (!end.greet(token)) return;
    end.send(MessageType::kWelcome, encode(WelcomeMessage{30'000}));
    end.send(MessageType::kStacks, encode(StacksMessage{1, "{not a list of workers"}));
    end.send(MessageType::kStacksEnd, text("live capture"));
  });
  observe_error<util::ProtocolError>(settings(node0.port(), token));
}

}  // namespace
}  // namespace dlaunch::rendezvous
