// dlaunch submit's settings: the keys it knows, each value with its source,
// and the built-in layer.
#include "submit/submit_settings.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "submit/script_value.h"

namespace dlaunch::submit {
namespace {

TEST(SubmitSettings, KeysAreFoundDashedUnderscoredAndInThePluralOfLists) {
  ASSERT_NE(find_key("gpus-per-node"), nullptr);
  EXPECT_EQ(find_key("gpus_per_node"), find_key("gpus-per-node"));
  EXPECT_EQ(find_key("sbatch-args"), find_key("sbatch-arg"));
  EXPECT_EQ(find_key("sbatch_args"), find_key("sbatch-arg"));
  EXPECT_EQ(find_key("run-args"), find_key("run-arg"));
  EXPECT_EQ(find_key("sbatch-arg")->kind, ValueKind::kStringList);
  EXPECT_EQ(find_key("nodes")->kind, ValueKind::kInteger);
  EXPECT_EQ(find_key("requeue")->kind, ValueKind::kBool);
  EXPECT_EQ(find_key("gpu"), nullptr);
  EXPECT_EQ(find_key("nodes-args"), nullptr);
  EXPECT_EQ(find_key(""), nullptr);
}

TEST(SubmitSettings, EveryKeyHasOneNameAndHelp) {
  std::set<std::string> names;
  for (const Key& key : submit_keys()) {
    EXPECT_TRUE(names.insert(key.name).second) << key.name << " twice";
    EXPECT_NE(std::string(key.help), "") << key.name;
    EXPECT_EQ(std::string(key.name).find('_'), std::string::npos) << key.name;
    EXPECT_EQ(find_key(key.name), &key);
  }
  // Every setting the job script's text is checked for is a key.
  for (const char* name : {"job-name", "partition", "account", "qos", "time", "constraint", "mem",
                           "sbatch-arg", "output-dir", "signal"}) {
    EXPECT_TRUE(names.count(name)) << name;
    EXPECT_TRUE(reaches_script_text(name)) << name;
  }
}

TEST(SubmitSettings, KindsHaveTheNamesErrorsUse) {
  EXPECT_STREQ(kind_name(ValueKind::kInteger), "an integer");
  EXPECT_STREQ(kind_name(ValueKind::kBool), "true or false");
  EXPECT_STREQ(kind_name(ValueKind::kString), "a string");
  EXPECT_STREQ(kind_name(ValueKind::kStringList), "a list of strings");
}

TEST(SubmitSettings, ALaterLayerReplacesAValueAndItsSourceListsIncluded) {
  SubmitSettings settings = default_submit_settings();
  settings.set("sbatch-arg", std::vector<std::string>{"--a", "--b"}, "dlaunch.toml:2 [defaults]");
  settings.set("sbatch-arg", std::vector<std::string>{"--c"}, "--sbatch-arg");
  EXPECT_EQ(settings.list("sbatch-arg"), (std::vector<std::string>{"--c"}));
  EXPECT_EQ(settings.find("sbatch-arg")->source, "--sbatch-arg");
  settings.set("nodes", std::int64_t{4}, "--nodes");
  EXPECT_EQ(settings.integer("nodes"), 4);
  EXPECT_EQ(settings.find("nodes")->source, "--nodes");
}

TEST(SubmitSettings, UnsetValuesAreAbsentNotDefaults) {
  SubmitSettings settings;
  EXPECT_EQ(settings.find("nodes"), nullptr);
  EXPECT_EQ(settings.integer("nodes"), std::nullopt);
  EXPECT_EQ(settings.string("partition"), std::nullopt);
  EXPECT_FALSE(settings.flag("exclusive"));
  EXPECT_EQ(settings.list("sbatch-arg"), std::vector<std::string>{});
  settings.set("exclusive", true, "--exclusive");
  EXPECT_TRUE(settings.flag("exclusive"));
}

TEST(SubmitSettings, TheBuiltInLayer) {
  SubmitSettings defaults = default_submit_settings();
  EXPECT_EQ(defaults.integer("nodes"), 1);
  EXPECT_EQ(defaults.integer("gpus-per-node"), 1);
  EXPECT_EQ(defaults.string("output-dir"), "slurm-outputs");
  EXPECT_EQ(defaults.string("launch"), "node");
  EXPECT_EQ(defaults.integer("cpus-per-gpu"), 1);  // one CPU per worker, not one per node
  EXPECT_EQ(defaults.values().size(), 5u);
  for (const auto& [name, value] : defaults.values()) EXPECT_EQ(value.source, "built-in default") << name;
}

TEST(SubmitSettings, ValuesAreFormattedAsTomlForPrintConfig) {
  EXPECT_EQ(format_value(std::int64_t{4}), "4");
  EXPECT_EQ(format_value(true), "true");
  EXPECT_EQ(format_value(false), "false");
  EXPECT_EQ(format_value(std::string("debug")), "'debug'");
  EXPECT_EQ(format_value(std::vector<std::string>{"a", "b"}), "['a', 'b']");
  EXPECT_EQ(format_value(std::vector<std::string>{}), "[]");
}

}  // namespace
}  // namespace dlaunch::submit
