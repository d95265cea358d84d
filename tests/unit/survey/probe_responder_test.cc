// Reachability probes between launchers (probe_responder and probe_dialer):
// a probe counts only when the launcher at the address proves it is the
// slot asked for, of this job, with this job's token.
#include "survey/probe_responder.h"

#include <gtest/gtest.h>
#include <vector>

#include "survey/probe_dialer.h"
#include "util/socket.h"

namespace dlaunch::rendezvous {
namespace {

using std::chrono::milliseconds;

ProbeTarget loopback(const ProbeResponder& responder, std::uint32_t slot) {
  return {slot, "127.0.0.1", static_cast<std::uint32_t>(responder.port())};
}

TEST(ProbeResponder, AProbeOfTheRightSlotWithTheTokenReachesIt) {
  ProbeResponder responder({"job", 1, std::string("secret")});
  auto outcomes = probe_targets({loopback(responder, 1)}, {"job", 0, std::string("secret")}, milliseconds(30'000));
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_TRUE(outcomes[0].reached);
}

TEST(ProbeResponder, WithoutATokenTheRunIdAndSlotMustMatch) {
  ProbeResponder responder({"job", 1, std::nullopt});
  EXPECT_TRUE(probe_targets({loopback(responder, 1)}, {"job", 0, std::nullopt}, milliseconds(30'000))[0].reached);
  EXPECT_FALSE(probe_targets({loopback(responder, 2)}, {"job", 0, std::nullopt}, milliseconds(2000))[0].reached);
  EXPECT_FALSE(probe_targets({loopback(responder, 1)}, {"other", 0, std::nullopt}, milliseconds(2000))[0].reached);
}

TEST(ProbeResponder, AWrongTokenOnEitherEndIsNotReached) {
  ProbeResponder responder({"job", 1, std::string("secret")});
  EXPECT_FALSE(probe_targets({loopback(responder, 1)}, {"job", 0, std::string("wrong")}, milliseconds(2000))[0].reached);
  // A prober with a token refuses a responder that proves none.
  ProbeResponder open({"job", 1, std::nullopt});
  EXPECT_FALSE(probe_targets({loopback(open, 1)}, {"job", 0, std::string("secret")}, milliseconds(2000))[0].reached);
}

TEST(ProbeResponder, ASilentListenerOrANonAddressIsUnreachedWithinTheTimeout) {
  util::Fd silent = util::listen_tcp(0);  // accepts (backlog) but never speaks
  ProbeTarget target{1, "127.0.0.1", static_cast<std::uint32_t>(util::bound_port(silent.get()))};
  auto start = util::Clock::now();
  auto outcomes = probe_targets({target, {1, "not-an-ip", 80}}, {"job", 0, std::nullopt}, milliseconds(300));
  EXPECT_LT(util::Clock::now() - start, milliseconds(30'000));  // not hung on the silent one, even when loaded
  EXPECT_FALSE(outcomes[0].reached);
  EXPECT_FALSE(outcomes[1].reached);
}

// A probe expected to reach its responder gets 30 s: it ends as soon as it
// does, and a loaded machine cannot make it miss (issue 28). Those expected
// not to reach keep 2 s: a late answer would change nothing.
TEST(ProbeResponder, IdleConnectionsFromAStrangerDoNotShutOutAProbe) {
  ProbeResponder responder({"job", 1, std::string("secret")});
  std::vector<util::Fd> idle;
  for (std::size_t i = 0; i < kMostProbeConnections + 50; ++i) {
    auto fd = util::try_connect_tcp("127.0.0.1", responder.port(), util::Clock::now() + milliseconds(500));
    if (fd) idle.push_back(std::move(fd));
  }
  ASSERT_GT(idle.size(), kMostProbeConnections);
  auto outcomes = probe_targets({loopback(responder, 1)}, {"job", 0, std::string("secret")}, milliseconds(30'000));
  EXPECT_TRUE(outcomes[0].reached);
}

TEST(ProbeResponder, ManyTargetsAreProbedTogether) {
  std::vector<std::unique_ptr<ProbeResponder>> responders;
  std::vector<ProbeTarget> targets;
  for (int slot = 1; slot <= 20; ++slot) {
    responders.push_back(std::make_unique<ProbeResponder>(ProbeIdentity{"job", slot, std::nullopt}));
    targets.push_back(loopback(*responders.back(), static_cast<std::uint32_t>(slot)));
  }
  targets.push_back({99, "127.0.0.1", targets[0].port});  // slot 1's port, asked as slot 99: a liar
  auto outcomes = probe_targets(targets, {"job", 0, std::nullopt}, milliseconds(30'000));
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(outcomes[static_cast<std::size_t>(i)].reached) << i;
  EXPECT_FALSE(outcomes.back().reached);
}

}  // namespace
}  // namespace dlaunch::rendezvous
