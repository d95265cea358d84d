// Durations as a command line gives them ("30m") and as dlaunch says them.
#include "util/duration_text.h"

#include <gtest/gtest.h>

#include <string>

#include "util/error.h"

namespace dlaunch::util {
namespace {

TEST(DurationText, ReadsANumberWithAnOptionalUnit) {
  EXPECT_EQ(parse_duration_text("1800", "--x", 1, 86400), 1800);
  EXPECT_EQ(parse_duration_text("90s", "--x", 1, 86400), 90);
  EXPECT_EQ(parse_duration_text("30m", "--x", 1, 86400), 1800);
  EXPECT_EQ(parse_duration_text("2h", "--x", 1, 86400), 7200);
  EXPECT_EQ(parse_duration_text("1d", "--x", 1, 86400), 86400);
}

TEST(DurationText, RefusesWhatIsNoDurationOrOutOfRangeNamingTheOption) {
  for (const char* text : {"", "m", "-5m", "+5m", "5 m", "5x", "1.5h", "2d", "0", "99999999999999999999h"}) {
    try {
      parse_duration_text(text, "--bench-cooldown", 1, 86400);
      ADD_FAILURE() << "'" << text << "' was accepted";
    } catch (const InputError& error) {
      EXPECT_EQ(std::string(error.what()).rfind("--bench-cooldown takes a duration such as 90s, 30m, 2h or 1d, got '" +
                                                    std::string(text) + "'",
                                                0),
                0u)
          << error.what();
    }
  }
}

TEST(DurationText, SaysDurationsInWords) {
  EXPECT_EQ(format_duration_text(45), "45 s");
  EXPECT_EQ(format_duration_text(1800), "30 min");
  EXPECT_EQ(format_duration_text(7200), "2 h");
  EXPECT_EQ(format_duration_text(5400), "1 h 30 min");
  EXPECT_EQ(format_duration_text(86400), "24 h");
}

}  // namespace
}  // namespace dlaunch::util
