// Quoting words for a POSIX shell and for sbatch's #SBATCH lines.
#include "util/shell_words.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/subprocess.h"

namespace dlaunch::util {
namespace {

// What sh reads WORDS (already quoted, joined) back as: one argument a line.
std::string as_the_shell_reads(const std::string& line) {
  return run_captured({"sh", "-c", "printf '%s\\n' " + line}).out;
}

TEST(ShellWords, SafeWordsStayBare) {
  for (const char* word : {"train.py", "--lr=0.1", "a,b:c", "user@host", "50%", "x+y", "/opt/dlaunch"})
    EXPECT_EQ(shell_quote(word), word);
}

TEST(ShellWords, EverythingElseIsSingleQuoted) {
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("a\nb"), "'a\nb'");
  EXPECT_EQ(shell_quote("[{rank}]"), "'[{rank}]'");
}

TEST(ShellWords, TheShellReadsTheJoinedWordsBackUnchanged) {
  std::vector<std::string> words{"plain", "two words", "it's", "$(touch /tmp/x)", "`id`", "a\\b",
                                 "*", "", "semi;colon", "new\nline", "\"double\""};
  std::string expected;
  for (const auto& word : words) expected += word + "\n";
  EXPECT_EQ(as_the_shell_reads(shell_join(words)), expected);
  EXPECT_EQ(shell_join({}), "");
  EXPECT_EQ(shell_join({"a", "b c"}), "a 'b c'");
}

TEST(SbatchWords, PlainOptionsStayBareAsBefore) {
  for (const char* word : {"--constraint=a100&ib", "--time=1:00:00", "--mem=0", "(x)", "a|b"})
    EXPECT_EQ(sbatch_quote(word), word);
}

TEST(SbatchWords, WhatSbatchWouldReadOtherwiseIsQuoted) {
  EXPECT_EQ(sbatch_quote("a b"), "'a b'");
  EXPECT_EQ(sbatch_quote("a#b"), "'a#b'");             // '#' would end the line's arguments
  EXPECT_EQ(sbatch_quote(":x"), "':x'");               // sbatch aborts on a leading ':'
  EXPECT_EQ(sbatch_quote("hetjob"), "'hetjob'");       // the next component's start
  EXPECT_EQ(sbatch_quote("PackJob"), "'PackJob'");
  EXPECT_EQ(sbatch_quote("a\"b"), "'a\"b'");
  EXPECT_EQ(sbatch_quote("caf\xc3\xa9"), "'caf\xc3\xa9'");  // isspace() of those depends on the locale
  EXPECT_EQ(sbatch_quote("a\tb"), "'a\tb'");
}

TEST(SbatchWords, QuotesAndBackslashesAreWrittenOutsideTheQuotes) {
  EXPECT_EQ(sbatch_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(sbatch_quote("a\\b"), "'a'\\\\'b'");
  // A shell reads those back alike.
  EXPECT_EQ(as_the_shell_reads(sbatch_quote("it's a\\b #1")), "it's a\\b #1\n");
}

}  // namespace
}  // namespace dlaunch::util
