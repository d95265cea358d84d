// How dlaunch ssh reads a host's preflight answer.
#include "ssh/ssh_preflight.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sample_plan.h"

namespace dlaunch::ssh {
namespace {

using test_support::sample_plan;

TEST(SshPreflight, ReadsEachHostsAnswer) {
  JobPlan plan = sample_plan();
  std::vector<std::string> worker{"python3", "-u", "train.py"};
  std::string version = std::string("dlaunch-preflight: version dlaunch ") + DLAUNCH_VERSION + "\n";
  EXPECT_TRUE(interpret_preflight(plan, "h1", 0, version, "", worker).empty());
  auto unreachable = interpret_preflight(plan, "h2", 255, "", "ssh: connect to host h2 port 22: No route to host\n", worker);
  ASSERT_EQ(unreachable.size(), 1u);
  EXPECT_NE(unreachable[0].find("h2: unreachable over ssh: ssh: connect to host h2 port 22: No route"), std::string::npos);
  auto missing = interpret_preflight(plan, "h3", 0, "dlaunch-preflight: no-dlaunch\n", "", worker);
  EXPECT_NE(missing.at(0).find("h3: dlaunch is not at /opt/dlaunch there"), std::string::npos);
  auto old = interpret_preflight(plan, "h3", 0, "dlaunch-preflight: version dlaunch 0.0.1\n", "", worker);
  EXPECT_NE(old.at(0).find("runs 'dlaunch 0.0.1' but this machine runs"), std::string::npos);
  auto two = interpret_preflight(
      plan, "h1", 0, version + "dlaunch-preflight: no-program\ndlaunch-preflight: no-script train.py\n", "", worker);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NE(two[0].find("cannot find 'python3' there"), std::string::npos);
  EXPECT_NE(two[1].find("the script train.py is missing there"), std::string::npos);
  EXPECT_NE(interpret_preflight(plan, "h1", -1, "", "", worker).at(0).find("did not answer within 27 s"),
            std::string::npos);
}

}  // namespace
}  // namespace dlaunch::ssh
