// Dialling node 0: the Join carries a proof of the token, and a node 0 that
// proves itself (a sealed Welcome) yields a sealed link and its heartbeat
// timeout; a proved refusal ends the dial, an unproved one is noticed (once)
// and the dial tries again until its deadline, then names it; a launcher
// without the token node 0 requires is told what to do; a stop signal ends
// the wait. Node 0 is a fake on a thread (fake_node0.h).
#include "rendezvous/service_dialer.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../test_support/text.h"
#include "../test_support/fake_node0.h"
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
using test_support::read_frame;
using test_support::send_bytes;

// What node 0 saw of a connection's Join.
struct SeenJoin {
  JoinMessage join;
  std::string challenge;
  bool sealed = false;  // it came as a SealedJoin
  Session session;      // node 0's end, with the SealedJoin opened
};

class ServiceDialerTest : public ::testing::Test {
 protected:
  DialSettings settings(int port, std::optional<std::string> token) {
    DialSettings result;
    result.master_addr = "127.0.0.1";
    result.port = port;
    result.node_rank = 3;
    result.token = std::move(token);
    // Far beyond what a loaded machine needs (issue 28); a test that ends
    // on the handshake's deadline sets a short one itself.
    result.handshake_timeout = 60s;
    result.rendezvous_timeout = 60s;
    result.notice = [this](const std::string& line) {
      std::lock_guard lock(mutex_);
      notices_.push_back(line);
    };
    return result;
  }

  static JoinMessage join() {
    JoinMessage message;
    message.run_id = "job";
    message.node_rank = 3;
    message.nnodes = 4;
    message.nproc = 2;
    message.host = "host3";
    message.dlaunch_version = "test";
    return message;
  }

  std::vector<std::string> notices() {
    std::lock_guard lock(mutex_);
    return notices_;
  }

  // Node 0's greeting, then the Join it got back (recorded in joins_),
  // opened with TOKEN when sealed (without it, only its nonce is known).
  std::optional<SeenJoin> greet(util::Fd& fd, bool token_required,
                                const std::optional<std::string>& token = std::nullopt) {
    SeenJoin seen;
    seen.challenge = random_bytes(kChallengeSize);
    send_bytes(fd, encode_frame(MessageType::kChallenge,
                                encode(ChallengeMessage{seen.challenge, token_required, 30'000})));
    auto frame = read_frame(fd);
    if (!frame) return std::nullopt;
    if (frame->type == MessageType::kSealedJoin) {
      seen.sealed = true;
      SealedJoinMessage sealed = decode_sealed_join(frame->payload);
      seen.join.nonce = sealed.nonce;
      seen.join.node_rank = sealed.slot;
      if (token) {
        seen.session = Session(*token, seen.challenge, seen.join.nonce, End::kService);
        seen.join = decode_join(seen.session.open(frame->type, frame->generation, sealed.sealed));
      }
    } else if (frame->type == MessageType::kJoin) {
      seen.join = decode_join(frame->payload);
    } else {
      return std::nullopt;
    }
    std::lock_guard lock(mutex_);
    joins_.push_back(seen);
    return seen;
  }

  std::vector<SeenJoin> joins() {
    std::lock_guard lock(mutex_);
    return joins_;
  }

  // The error DIAL ends with, of type ERROR.
  template <typename Error>
  std::string dial_error(ServiceDialer& dialer, std::chrono::milliseconds limit) {
    try {
      dialer.dial(join(), util::Clock::now() + limit);
    } catch (const Error& error) {
      return error.what();
    }
    ADD_FAILURE() << "dial() did not throw the error expected";
    return "";
  }

  process::SignalChannel signals_;  // before the fake's thread, which inherits its mask
  std::mutex mutex_;
  std::vector<std::string> notices_;
  std::vector<SeenJoin> joins_;
};

TEST_F(ServiceDialerTest, ANode0ThatProvesTheTokenGivesASealedLink) {
  const std::string token = generate_token();
  std::string opened_by_node0;
  FakeNode0 node0([&](util::Fd& fd, int) {
    auto seen = greet(fd, true, token);
    if (!seen) return;
    Session& session = seen->session;
    std::string frames = session.frame(MessageType::kWelcome, encode(WelcomeMessage{1234, 3}));
    frames += session.frame(MessageType::kStop, "after the welcome");
    send_bytes(fd, frames);
    if (auto frame = read_frame(fd)) opened_by_node0 = session.open(*frame);
  });
  ServiceDialer dialer(settings(node0.port(), token), signals_);
  Dialed dialed = dialer.dial(join(), util::Clock::now() + 10s);
  EXPECT_EQ(dialed.heartbeat_timeout, 1234ms);
  EXPECT_EQ(dialed.link.address(), "127.0.0.1:" + std::to_string(node0.port()));

  // The Join node 0 got came sealed, with this launcher's nonce and a proof
  // of the token.
  auto seen = joins();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0].sealed);
  EXPECT_EQ(seen[0].join.run_id, "job");
  EXPECT_EQ(seen[0].join.node_rank, 3u);
  EXPECT_EQ(seen[0].join.nonce.size(), kChallengeSize);
  std::string expected = join_proof(token, seen[0].challenge, seen[0].join.nonce, signed_part(seen[0].join));
  EXPECT_TRUE(proofs_match(expected, seen[0].join.proof));

  // The link goes on with the same session, both ways.
  std::optional<Frame> stop;
  auto give_up = util::Clock::now() + 5s;
  while (!(stop = dialed.link.next()) && util::Clock::now() < give_up) {
    pollfd readable{dialed.link.fd(), POLLIN, 0};
    if (::poll(&readable, 1, 20) > 0) {
      ASSERT_TRUE(dialed.link.receive());
    }
  }
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->type, MessageType::kStop);
  EXPECT_EQ(stop->payload, "after the welcome");
  ASSERT_TRUE(dialed.link.send(MessageType::kOutcome, "from the launcher"));
  node0.stop();  // waits for node 0 to read it
  EXPECT_EQ(opened_by_node0, "from the launcher");
  EXPECT_TRUE(notices().empty());
}

TEST_F(ServiceDialerTest, WithoutATokenAPlainWelcomeIsTaken) {
  FakeNode0 node0([&](util::Fd& fd, int) {
    if (!greet(fd, false)) return;
    send_bytes(fd, encode_frame(MessageType::kWelcome, encode(WelcomeMessage{777, 3})));
  });
  ServiceDialer dialer(settings(node0.port(), std::nullopt), signals_);
  Dialed dialed = dialer.dial(join(), util::Clock::now() + 10s);
  EXPECT_EQ(dialed.heartbeat_timeout, 777ms);
  auto seen = joins();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].join.proof, "");
}

TEST_F(ServiceDialerTest, AWelcomeToAnotherSlotThanTheJoinNamedIsNotTaken) {
  FakeNode0 node0([&](util::Fd& fd, int) {
    if (!greet(fd, false)) return;
    send_bytes(fd, encode_frame(MessageType::kWelcome, encode(WelcomeMessage{777, 0})));
  });
  DialSettings dial = settings(node0.port(), std::nullopt);
  dial.rendezvous_timeout = 1s;
  ServiceDialer dialer(dial, signals_);
  std::string error = dial_error<util::SystemError>(dialer, 1s);
  EXPECT_TRUE(contains(error, "a welcome to slot 0, but this launcher is node 3")) << error;
}

TEST_F(ServiceDialerTest, ALauncherWithoutANodeRankTakesTheSlotTheWelcomeGives) {
  FakeNode0 node0([&](util::Fd& fd, int) {
    if (!greet(fd, false)) return;
    send_bytes(fd, encode_frame(MessageType::kWelcome, encode(WelcomeMessage{777, 2})));
  });
  DialSettings dial = settings(node0.port(), std::nullopt);
  dial.node_rank = -1;
  ServiceDialer dialer(dial, signals_);
  JoinMessage any = join();
  any.node_rank = kAnySlot;
  Dialed dialed = dialer.dial(any, util::Clock::now() + 10s);
  EXPECT_EQ(dialed.slot, 2);
  ASSERT_EQ(joins().size(), 1u);
  EXPECT_EQ(joins()[0].join.node_rank, kAnySlot);
}

TEST_F(ServiceDialerTest, ALauncherWithoutTheTokenNode0RequiresIsToldWhatToDo) {
  FakeNode0 node0([&](util::Fd& fd, int) { greet(fd, true); });
  ServiceDialer dialer(settings(node0.port(), std::nullopt), signals_);
  std::string error = dial_error<util::InputError>(dialer, 10s);
  EXPECT_TRUE(contains(error, "node 0's rendezvous requires a token and node 3 has none")) << error;
  EXPECT_TRUE(contains(error, "DLAUNCH_RDZV_TOKEN")) << error;
  node0.stop();
  // Node 0 still got the Join, so it can name the refusal at its timeout.
  EXPECT_EQ(joins().size(), 1u);
}

TEST_F(ServiceDialerTest, AProvedRefusalEndsTheDial) {
  const std::string token = generate_token();
  FakeNode0 node0([&](util::Fd& fd, int) {
    auto seen = greet(fd, true, token);
    if (!seen) return;
    send_bytes(fd, seen->session.frame(MessageType::kAbort, encode(TextMessage{0, "node 2 has 3 GPUs, not 2"})));
  });
  ServiceDialer dialer(settings(node0.port(), token), signals_);
  EXPECT_EQ(dial_error<util::SystemError>(dialer, 10s), "node 2 has 3 GPUs, not 2");
}

TEST_F(ServiceDialerTest, AnUnprovedRefusalIsNoticedOnceAndNamedAtTheDeadline) {
  FakeNode0 stranger([&](util::Fd& fd, int) {
    if (!greet(fd, true)) return;
    // Without the token: an unsealed Abort.
    send_bytes(fd, encode_frame(MessageType::kAbort, encode(TextMessage{0, "go away"})));
  });
  ServiceDialer dialer(settings(stranger.port(), generate_token()), signals_);
  std::string error = dial_error<util::SystemError>(dialer, 1500ms);
  EXPECT_TRUE(contains(error, "node 3 could not join the rendezvous at 127.0.0.1:" +
                                  std::to_string(stranger.port())))
      << error;
  EXPECT_TRUE(contains(error, "refused this launcher without proving it holds the job's token: \"go away\""))
      << error;
  EXPECT_TRUE(contains(error, "and the same rendezvous token")) << error;
  stranger.stop();
  // Dialled again and again until the deadline, but noticed once.
  EXPECT_GE(joins().size(), 2u);
  auto seen = notices();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(contains(seen[0], "node 3: 127.0.0.1:")) << seen[0];
  EXPECT_TRUE(contains(seen[0], "trying again until --rdzv-timeout (60 s)")) << seen[0];
}

TEST_F(ServiceDialerTest, WithoutATokenARefusalIsTakenAtItsWord) {
  FakeNode0 node0([&](util::Fd& fd, int) {
    send_bytes(fd, encode_frame(MessageType::kAbort, encode(TextMessage{0, "round 4 is over"})));
  });
  ServiceDialer dialer(settings(node0.port(), std::nullopt), signals_);
  EXPECT_EQ(dial_error<util::SystemError>(dialer, 10s), "round 4 is over");
}

TEST_F(ServiceDialerTest, ANode0WithoutATokenIsToldOfTheMismatchAndNotBelieved) {
  FakeNode0 node0([&](util::Fd& fd, int) {
    if (!greet(fd, false)) return;
    send_bytes(fd, encode_frame(MessageType::kWelcome, encode(WelcomeMessage{30'000, 3})));
  });
  ServiceDialer dialer(settings(node0.port(), generate_token()), signals_);
  std::string error = dial_error<util::SystemError>(dialer, 400ms);
  EXPECT_TRUE(contains(error, "requires no rendezvous token, so it cannot prove it holds this job's"))
      << error;
  node0.stop();
  auto seen = joins();
  ASSERT_FALSE(seen.empty());
  // The Join tells node 0 (if it is node 0) why the job cannot start.
  EXPECT_TRUE(contains(seen[0].join.preflight_error, "has a rendezvous token but node 0 has none"))
      << seen[0].join.preflight_error;
}

TEST_F(ServiceDialerTest, AFirstFrameThatIsNoChallengeIsNamed) {
  FakeNode0 other([&](util::Fd& fd, int) {
    send_bytes(fd, encode_frame(MessageType::kWelcome, encode(WelcomeMessage{30'000, 3})));
  });
  ServiceDialer dialer(settings(other.port(), generate_token()), signals_);
  std::string error = dial_error<util::SystemError>(dialer, 400ms);
  EXPECT_TRUE(contains(error, "answered but is not a dlaunch rendezvous "
                              "(a Welcome first instead of a challenge)"))
      << error;
}

TEST_F(ServiceDialerTest, GarbageIsNamed) {
  FakeNode0 web_server([&](util::Fd& fd, int) { send_bytes(fd, "HTTP/1.1 400 Bad Request\r\n\r\n"); });
  ServiceDialer dialer(settings(web_server.port(), generate_token()), signals_);
  std::string error = dial_error<util::SystemError>(dialer, 400ms);
  EXPECT_TRUE(contains(error, "127.0.0.1:" + std::to_string(web_server.port()) +
                                  " answered but is not a dlaunch rendezvous ("))
      << error;
}

// A port nobody listens on (bound, then closed).
int closed_port() {
  util::Fd listener = util::listen_tcp(0);
  return util::bound_port(listener.get());
}

TEST_F(ServiceDialerTest, NobodyListeningMeansNode0IsMissing) {
  ServiceDialer dialer(settings(closed_port(), std::nullopt), signals_);
  std::string error = dial_error<util::SystemError>(dialer, 300ms);
  EXPECT_TRUE(contains(error, "node 3 could not reach the rendezvous at 127.0.0.1:")) << error;
  EXPECT_TRUE(contains(error, "node 0 is missing")) << error;
  EXPECT_TRUE(notices().empty());  // waiting for node 0 is usual: nothing to notice
}

TEST_F(ServiceDialerTest, WhileNode0IsUnreachableItSaysSoWithWhatItMet) {
  const int port = closed_port();
  DialSettings dial = settings(port, std::nullopt);
  dial.waiting_lines = WaitingSchedule{100ms, 60s, 100ms, 60s, 100ms};
  ServiceDialer dialer(dial, signals_);
  dial_error<util::SystemError>(dialer, 450ms);
  auto lines = notices();
  ASSERT_FALSE(lines.empty());
  // One line per mark at most, even when an attempt outlasts a mark.
  EXPECT_LE(lines.size(), 5u);
  for (const auto& line : lines)
    EXPECT_EQ(line, fmt::format("waiting for node 0 at 127.0.0.1:{} (0 s of 60 s): connection refused", port));
}

TEST_F(ServiceDialerTest, AStopSignalEndsTheWait) {
  ServiceDialer dialer(settings(closed_port(), std::nullopt), signals_);
  ::raise(SIGTERM);  // blocked by the channel: it waits there for the dialer
  try {
    dialer.dial(join(), util::Clock::now() + 60s);
    FAIL() << "dial() returned";
  } catch (const util::Interrupted& stopped) {
    EXPECT_EQ(stopped.signal, SIGTERM);
  }
}

TEST_F(ServiceDialerTest, SawNoticesEachThingOnceAndNamesTheLastAtTheDeadline) {
  ServiceDialer dialer(settings(closed_port(), std::nullopt), signals_);
  dialer.saw("node 0 closed the link before the World");
  dialer.saw("node 0 closed the link before the World");
  dialer.saw("something else");
  auto seen = notices();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0],
            "node 3: node 0 closed the link before the World; trying again until --rdzv-timeout (60 s)");
  std::string error = dial_error<util::SystemError>(dialer, 300ms);
  EXPECT_TRUE(contains(error, "could not join the rendezvous")) << error;
  EXPECT_TRUE(contains(error, ": something else. Check that node 0's launcher runs there")) << error;
}

}  // namespace
}  // namespace dlaunch::rendezvous
