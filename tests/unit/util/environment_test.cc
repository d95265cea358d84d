// The environment as a value: what every Slurm and PET_* lookup reads.
#include "util/environment.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace dlaunch::util {
namespace {

TEST(Environment, AnEmptyValueCountsAsUnset) {
  Environment environment(std::map<std::string, std::string>{{"SET", "x"}, {"EMPTY", ""}});
  EXPECT_EQ(environment.get("SET"), "x");
  EXPECT_TRUE(environment.has("SET"));
  EXPECT_EQ(environment.get("EMPTY"), std::nullopt);
  EXPECT_FALSE(environment.has("EMPTY"));
  EXPECT_FALSE(environment.has("MISSING"));
  // It is still passed on as it is.
  EXPECT_EQ(environment.to_entries(), (std::vector<std::string>{"EMPTY=", "SET=x"}));
}

TEST(Environment, SetReplacesSetDefaultOnlyFillsAndEraseRemoves) {
  Environment environment;
  environment.set("A", "1");
  environment.set("A", "2");
  environment.set_default("A", "3");
  environment.set_default("B", "4");
  EXPECT_EQ(environment.get("A"), "2");
  EXPECT_EQ(environment.get("B"), "4");
  environment.erase("A");
  environment.erase("NEVER_SET");
  EXPECT_EQ(environment.get("A"), std::nullopt);
  EXPECT_EQ(environment.to_entries(), (std::vector<std::string>{"B=4"}));
}

TEST(Environment, EntriesAreSortedByNameForExecve) {
  Environment environment(std::map<std::string, std::string>{{"Z", "1"}, {"A", "x=y"}, {"M", ""}});
  EXPECT_EQ(environment.to_entries(), (std::vector<std::string>{"A=x=y", "M=", "Z=1"}));
}

TEST(Environment, FromProcessCopiesThisProcesssVariables) {
  ::setenv("DLAUNCH_ENVIRONMENT_TEST", "a=b c", 1);
  Environment environment = Environment::from_process();
  ::unsetenv("DLAUNCH_ENVIRONMENT_TEST");
  // A copy: it keeps the value the process no longer has.
  EXPECT_EQ(environment.get("DLAUNCH_ENVIRONMENT_TEST"), "a=b c");
  EXPECT_EQ(environment.get("PATH"), std::string(std::getenv("PATH")));
  EXPECT_EQ(Environment::from_process().get("DLAUNCH_ENVIRONMENT_TEST"), std::nullopt);
}

}  // namespace
}  // namespace dlaunch::util
