// Slurm not configured on this machine: said in dlaunch's words, with what
// to do, whether SLURM_CONF is set and which slurm.conf is missing; a
// SLURM_CONF naming no file is caught before a command waits 60 s for it.
#include "slurm/slurm_command.h"

#include <algorithm>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <map>
#include <string>
#include <vector>

namespace dlaunch::slurm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// What Slurm 22.05's scontrol prints with no slurm.conf and SLURM_CONF unset.
constexpr const char* kNoConfigurationSource =
    "scontrol: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
    "scontrol: error: fetch_config: DNS SRV lookup failed\n"
    "scontrol: error: _establish_config_source: failed to fetch config\n"
    "scontrol: fatal: Could not establish a configuration source\n";

// ... and with a slurm.conf that lacks ClusterName.
constexpr const char* kUnusableFile =
    "scontrol: error: ClusterName needs to be specified\n"
    "scontrol: fatal: Unable to process configuration file\n";

ConfigurationView view(std::map<std::string, std::string> variables, std::vector<std::string> existing) {
  return {util::Environment(std::move(variables)), [existing](const std::string& path) {
            return std::find(existing.begin(), existing.end(), path) != existing.end();
          }};
}

TEST(SaysUnconfigured, KnowsSlurmsWordsForIt) {
  EXPECT_TRUE(says_unconfigured(kNoConfigurationSource));
  EXPECT_TRUE(says_unconfigured(kUnusableFile));
  EXPECT_FALSE(says_unconfigured("slurm_load_jobs error: Invalid job id specified"));
  EXPECT_FALSE(says_unconfigured("sbatch: error: Batch job submission failed: Invalid partition name specified"));
}

TEST(UnconfiguredMessage, NoSlurmConfAndNoVariableSaysSoAndWhatToDo) {
  std::string message = unconfigured_message("scontrol", kNoConfigurationSource, view({}, {}));
  EXPECT_THAT(message, HasSubstr("Slurm is not configured on this machine (SLURM_CONF is unset and "
                                 "/etc/slurm/slurm.conf does not exist)"));
  EXPECT_THAT(message, HasSubstr("scontrol cannot find the cluster's controller"));
  EXPECT_THAT(message, HasSubstr("set SLURM_CONF to the cluster's slurm.conf"));
  EXPECT_THAT(message, HasSubstr("login node"));
  // Slurm's last word only, not its DNS lookups.
  EXPECT_THAT(message, HasSubstr("fatal: Could not establish a configuration source"));
  EXPECT_THAT(message, Not(HasSubstr("resolve_ctls_from_dns_srv")));
}

TEST(UnconfiguredMessage, ASlurmConfVariableNamingNoFileIsNamed) {
  std::string message =
      unconfigured_message("sbatch", kNoConfigurationSource, view({{"SLURM_CONF", "/opt/slurm/etc/slurm.conf"}}, {}));
  EXPECT_THAT(message, HasSubstr("SLURM_CONF names /opt/slurm/etc/slurm.conf, which does not exist"));
  EXPECT_THAT(message, HasSubstr("so sbatch cannot find"));
}

TEST(UnconfiguredMessage, AFileThatIsThereButUnusableGivesSlurmsReason) {
  std::string message = unconfigured_message("scontrol", kUnusableFile, view({}, {"/etc/slurm/slurm.conf"}));
  EXPECT_THAT(message, HasSubstr("Slurm's configuration on this machine, /etc/slurm/slurm.conf, cannot be used"));
  EXPECT_THAT(message, HasSubstr("ClusterName needs to be specified"));
  EXPECT_THAT(message, Not(HasSubstr("is not configured")));
}

TEST(CertainConfigurationProblem, OnlyASlurmConfNamingNoFileIsCertainBeforehand) {
  auto problem = certain_configuration_problem(view({{"SLURM_CONF", "/nowhere/slurm.conf"}}, {}));
  ASSERT_TRUE(problem);
  EXPECT_THAT(*problem, HasSubstr("SLURM_CONF names /nowhere/slurm.conf, which does not exist"));
  EXPECT_THAT(*problem, HasSubstr("wait 60 s"));
  EXPECT_FALSE(certain_configuration_problem(view({{"SLURM_CONF", "/x/slurm.conf"}}, {"/x/slurm.conf"})));
  // Unset: Slurm may still find a configuration (configless, DNS SRV).
  EXPECT_FALSE(certain_configuration_problem(view({}, {})));
}

TEST(ThrowIfUnconfigured, OnlyAFailureThatSaysSo) {
  EXPECT_THROW(throw_if_unconfigured("scancel", {1, "", kNoConfigurationSource}), NotConfigured);
  EXPECT_NO_THROW(throw_if_unconfigured("scancel", {1, "", "scancel: error: Invalid job id 12"}));
  EXPECT_NO_THROW(throw_if_unconfigured("scancel", {0, "", kNoConfigurationSource}));
}

}  // namespace
}  // namespace dlaunch::slurm
