#include "util/strings.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace dlaunch::util {
namespace {

TEST(Strings, EscapedShowsControlCharactersAndKeepsTheRest) {
  EXPECT_EQ(escaped("host\nforged line\x1b[2K\r\t\x7f"), "host\\nforged line\\x1b[2K\\r\\t\\x7f");
  EXPECT_EQ(escaped("node-1 ünï"), "node-1 ünï");
  EXPECT_EQ(escaped(std::string_view("a\0b", 3)), "a\\x00b");
}

TEST(Strings, SplitKeepsEmptyFields) {
  EXPECT_EQ(split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(split("", ','), (std::vector<std::string>{""}));
}

TEST(Strings, ParseIntRejectsAnythingButAWholeNumber) {
  EXPECT_EQ(parse_int("42"), 42);
  EXPECT_EQ(parse_int("-3"), -3);
  EXPECT_FALSE(parse_int(""));
  EXPECT_FALSE(parse_int("4x"));
  EXPECT_FALSE(parse_int(" 4"));
  EXPECT_FALSE(parse_int("99999999999999999999999"));
}

TEST(Strings, ParseIntInRangeNamesTheInputInItsError) {
  EXPECT_EQ(parse_int_in_range(" 7 ", 0, 10, "--x"), 7);
  try {
    parse_int_in_range("11", 0, 10, "--max-restarts");
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("--max-restarts"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("'11'"), std::string::npos);
  }
}

TEST(Strings, ClosestMatchSuggestsLikelyTypos) {
  std::vector<std::string> commands{"run", "env", "hostlist"};
  EXPECT_EQ(closest_match("hostlsit", commands), "hostlist");
  EXPECT_EQ(closest_match("rnu", commands), "run");
  EXPECT_FALSE(closest_match("completely-different", commands));
}

}  // namespace
}  // namespace dlaunch::util
