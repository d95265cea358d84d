// What a terminal shows of a line: the text after the last '\r', in
// UTF-8 characters.
#include "util/terminal_text.h"

#include <gtest/gtest.h>

namespace dlaunch::util {
namespace {

TEST(TerminalText, TheTextAfterTheLastCarriageReturnShows) {
  EXPECT_EQ(visible_of("plain"), "plain");
  EXPECT_EQ(visible_of("\r 10%\r 20%"), " 20%");
  EXPECT_EQ(visible_of("done\r"), "done") << "a CRLF line's '\\r' is not a redraw";
  EXPECT_EQ(visible_of("a\rb\r\r"), "b");
  EXPECT_EQ(visible_of("\r"), "");
  EXPECT_EQ(visible_of(""), "");
}

TEST(TerminalText, ColumnsAreUtf8Characters) {
  EXPECT_EQ(columns_of(""), 0u);
  EXPECT_EQ(columns_of("50%"), 3u);
  EXPECT_EQ(columns_of("\xe2\x96\x88\xe2\x96\x88 ok"), 5u);  // two full blocks, a space, "ok"
}

TEST(TerminalText, AnOpenLineIsContinuedWhenItGrewElseRedrawnUnderItsPrefix) {
  EXPECT_EQ(update_of_open_line("[r]:", "load", "loading"), "ing");
  EXPECT_EQ(update_of_open_line("[r]:", "10%", "20%"), "\r[r]:20%");
  EXPECT_EQ(update_of_open_line("[r]:", "100%|###", "2/9"), "\r[r]:2/9     ");
  EXPECT_EQ(update_of_open_line("[r]:", "same", "same"), "");
  EXPECT_EQ(update_of_open_line("[r]:", "", "new"), "\r[r]:new") << "nothing shown: redrawn";
}

}  // namespace
}  // namespace dlaunch::util
