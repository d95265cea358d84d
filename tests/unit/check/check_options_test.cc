// dlaunch check's command line: defaults, bounds, and byte counts as typed.
#include "check/check_options.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "util/error.h"
#include "../test_support/input_error.h"

namespace dlaunch::check {
namespace {

TEST(CheckOptions, DefaultsAndBounds) {
  auto defaults = parse_check_options({});
  ASSERT_TRUE(defaults);
  EXPECT_FALSE(defaults->bench);
  EXPECT_EQ(defaults->min_bytes, 8u);
  EXPECT_EQ(defaults->max_bytes, 256ull << 20);
  EXPECT_EQ(defaults->timeout, std::chrono::seconds(120));
  auto bench = parse_check_options({"--bench", "--json", "--max-bytes", "1024", "--timeout", "5",
                                    "--inject-wrong-rank", "2"});
  EXPECT_TRUE(bench->bench && bench->json);
  EXPECT_EQ(bench->max_bytes, 1024u);
  EXPECT_EQ(bench->inject_wrong_rank, 2);
  EXPECT_THROW(parse_check_options({"--min-bytes", "64", "--max-bytes", "8"}), util::UsageError);
  EXPECT_THROW(parse_check_options({"--iters", "0"}), util::UsageError);
  EXPECT_THROW(parse_check_options({"--bogus"}), util::UsageError);
}

// --gate: its own default message size unless --pair-bytes is given, and
// none of the other modes with it.
TEST(CheckOptions, GateHasItsOwnPairBytesAndNoOtherMode) {
  auto gate = parse_check_options({"--gate", "--timeout", "30"});
  ASSERT_TRUE(gate);
  EXPECT_TRUE(gate->gate);
  EXPECT_EQ(gate->pair_bytes, kGatePairBytes);
  EXPECT_EQ(gate->timeout, std::chrono::seconds(30));
  EXPECT_EQ(parse_check_options({"--gate", "--pair-bytes", "1048576"})->pair_bytes, 1048576u);
  EXPECT_EQ(parse_check_options({"--pairs"})->pair_bytes, 64ull << 20);
  EXPECT_THROW(parse_check_options({"--gate", "--pairs"}), util::UsageError);
  EXPECT_THROW(parse_check_options({"--gate", "--bench"}), util::UsageError);
  bool listed = false;
  for (const auto& option : describe_check_options().options)
    listed |= std::find(option.names.begin(), option.names.end(), "--gate") != option.names.end();
  EXPECT_TRUE(listed);
}

// CLI11 reads "-1" into an unsigned integer as 2^64-1; the byte counts are
// read by dlaunch instead, which names the option and the value as typed.
TEST(CheckOptions, NegativeOrMalformedByteCountsAreRefusedAsTyped) {
  auto message_of = [](std::vector<std::string> args) {
    return test_support::input_error_of([&] { parse_check_options(args); });
  };
  std::string message = message_of({"--min-bytes", "-1"});
  EXPECT_NE(message.find("--min-bytes (bytes) must be an integer from 4 to 1099511627776, got '-1'"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("18446744073709551615"), std::string::npos) << message;
  EXPECT_NE(message_of({"--max-bytes=-8"}).find("--max-bytes (bytes)"), std::string::npos);
  EXPECT_NE(message_of({"--pair-bytes", "0"}).find("--pair-bytes (bytes)"), std::string::npos);
  EXPECT_NE(message_of({"--max-bytes", "64M"}).find("got '64M'"), std::string::npos);
  EXPECT_NE(message_of({"--max-bytes", "99999999999999999999"}).find("got '99999999999999999999'"),
            std::string::npos);
  // Beyond 1 TiB the sweep's doubling would run towards 2^64.
  EXPECT_NE(message_of({"--max-bytes", "18446744073709551615"}).find("--max-bytes"), std::string::npos);
  auto largest = parse_check_options({"--min-bytes", "1099511627776", "--max-bytes", "1099511627776",
                                      "--pair-bytes", "1"});
  ASSERT_TRUE(largest);
  EXPECT_EQ(largest->max_bytes, 1ull << 40);
  EXPECT_EQ(largest->pair_bytes, 1u);
}

}  // namespace
}  // namespace dlaunch::check
