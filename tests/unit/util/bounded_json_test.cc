// JSON from outside with its nesting bounded: deep documents are refused
// before anything recursive (a copy, a dump) can overflow the stack.
#include "util/bounded_json.h"

#include <gtest/gtest.h>

namespace dlaunch::util {
namespace {

std::string nested(int depth, char open = '[', char close = ']') {
  return std::string(static_cast<std::size_t>(depth), open) + std::string(static_cast<std::size_t>(depth), close);
}

TEST(ParseJsonBounded, ParsesWhatNlohmannParses) {
  std::string why = "stale";
  auto document = parse_json_bounded(R"({"a": [1, {"b": "c"}], "d": null})", &why);
  ASSERT_FALSE(document.is_discarded());
  EXPECT_EQ(document["a"][1]["b"], "c");
  EXPECT_EQ(why, "");
}

TEST(ParseJsonBounded, NotJsonIsDiscardedWithNlohmannsReason) {
  std::string why;
  EXPECT_TRUE(parse_json_bounded(R"({"state": )", &why).is_discarded());
  EXPECT_NE(why.find("parse error"), std::string::npos) << why;
  EXPECT_TRUE(parse_json_bounded("").is_discarded());
}

TEST(ParseJsonBounded, TheDepthBoundIsExact) {
  EXPECT_FALSE(parse_json_bounded(nested(kMaxJsonDepth)).is_discarded());
  std::string why;
  EXPECT_TRUE(parse_json_bounded(nested(kMaxJsonDepth + 1), &why).is_discarded());
  EXPECT_EQ(why, "nested deeper than 64 levels");
  EXPECT_FALSE(parse_json_bounded(R"({"a": {"b": 1}})", nullptr, 2).is_discarded());
  EXPECT_TRUE(parse_json_bounded(R"({"a": {"b": {}}})", nullptr, 2).is_discarded());
  EXPECT_TRUE(parse_json_bounded(R"([{"a": [1]}])", nullptr, 2).is_discarded());
}

TEST(ParseJsonBounded, AMillionLevelsAreRefusedWithoutACrash) {
  // 1.5M levels of config.json crashed `dlaunch status` (SIGSEGV) at the
  // document's first copy; refused now before it is built.
  std::string why;
  auto arrays = parse_json_bounded(std::string(1'500'000, '['), &why);
  EXPECT_TRUE(arrays.is_discarded());
  EXPECT_EQ(why, "nested deeper than 64 levels");
  std::string objects;
  for (int i = 0; i < 200'000; ++i) objects += R"({"a":)";
  EXPECT_TRUE(parse_json_bounded(objects).is_discarded());
}

}  // namespace
}  // namespace dlaunch::util
