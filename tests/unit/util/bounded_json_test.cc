// JSON from outside with its nesting bounded: deep documents are refused
// before anything recursive (a copy, a dump) can overflow the stack.
#include "util/bounded_json.h"

#include <fstream>
#include <gtest/gtest.h>

#include "../test_support/input_error.h"
#include "../test_support/temp_dir.h"

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

constexpr OutsideFile kRecord{"a record dlaunch wrote", 4096, Links::kRefuse};

TEST(ReadJsonFile, ReadsTheDocumentOrNulloptWhenThereIsNoFile) {
  test_support::TempDir dir;
  std::ofstream(dir.path() + "/r.json") << R"({"state": "COMPLETED", "exit_code": 0})";
  auto document = read_json_file(dir.path() + "/r.json", kRecord);
  ASSERT_TRUE(document.has_value());
  EXPECT_EQ((*document)["state"], "COMPLETED");
  EXPECT_EQ(read_json_file(dir.path() + "/missing.json", kRecord), std::nullopt);
}

TEST(ReadJsonFile, NotJsonOrTooDeepIsAnInputErrorNamingTheFile) {
  test_support::TempDir dir;
  std::ofstream(dir.path() + "/cut.json") << R"({"state": "COMPL)";
  std::string error = test_support::input_error_of([&] { (void)read_json_file(dir.path() + "/cut.json", kRecord); });
  EXPECT_NE(error.find(dir.path() + "/cut.json is not valid JSON"), std::string::npos) << error;
  std::ofstream(dir.path() + "/deep.json") << nested(kMaxJsonDepth + 1);
  error = test_support::input_error_of([&] { (void)read_json_file(dir.path() + "/deep.json", kRecord); });
  EXPECT_NE(error.find("nested deeper than"), std::string::npos) << error;
}

TEST(ReadJsonFile, TheFileIsReadWithTheOutsideFilesBounds) {
  test_support::TempDir dir;
  std::ofstream(dir.path() + "/big.json") << "[" << std::string(5000, ' ') << "]";
  std::string error = test_support::input_error_of([&] { (void)read_json_file(dir.path() + "/big.json", kRecord); });
  EXPECT_NE(error.find("is larger than 4 KiB"), std::string::npos) << error;
}

}  // namespace
}  // namespace dlaunch::util
