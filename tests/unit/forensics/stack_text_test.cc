#include "forensics/stack_text.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace dlaunch::forensics {
namespace {

const char* kEuStack =
    "PID 10873 - process\n"
    "TID 10873:\n"
    "#0  0x00007f1e455162ec read - /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "#1  0x0000556f2261a1f4 app::wait_for_input() - /tmp/stuck\n"
    "#2  0x0000556f2261a232 main - /tmp/stuck\n"
    "TID 10875:\n"
    "#0  0x00007f1e454ed545 clock_nanosleep@GLIBC_2.2.5 - /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "#1  0x00007f1e456d44a3 - /usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30\n"
    "#2  0x00007f1e454a71f5 std::operator-(int) - /tmp/stuck\n";

TEST(ParseEuStack, ReadsEveryThreadOutermostFirstAndMarksTheMainOne) {
  auto threads = parse_eu_stack(kEuStack, 10873);
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0].thread, "10873");
  EXPECT_TRUE(threads[0].main_thread);
  EXPECT_FALSE(threads[1].main_thread);
  ASSERT_EQ(threads[0].frames.size(), 3u);
  EXPECT_EQ(threads[0].frames[0].function, "main");
  EXPECT_EQ(threads[0].frames[1].function, "app::wait_for_input()");
  EXPECT_EQ(threads[0].frames[2].function, "read");
  EXPECT_EQ(threads[0].frames[2].file, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(threads[0].frames[2].address, "0x00007f1e455162ec");
}

TEST(ParseEuStack, KeepsAFrameWithoutANameAndANameWithADash) {
  auto threads = parse_eu_stack(kEuStack, 10873);
  ASSERT_EQ(threads[1].frames.size(), 3u);
  EXPECT_EQ(threads[1].frames[0].function, "std::operator-(int)");
  EXPECT_EQ(threads[1].frames[1].function, "");
  EXPECT_EQ(threads[1].frames[1].file, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30");
  EXPECT_EQ(frame_name(threads[1].frames[1]),
            "?? (/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30 0x00007f1e456d44a3)");
}

TEST(ParseEuStack, BoundsFramesKeepingTheInnermostAndThreads) {
  std::string text = "TID 1:\n";
  for (std::size_t i = 0; i < kMaxFramesPerThread + 50; ++i)
    text += fmt::format("#{}  0x1 f{} - /m\n", i, i);
  for (std::size_t i = 0; i < kMaxThreadsPerWorker + 10; ++i) text += fmt::format("TID {}:\n", i + 2);
  auto threads = parse_eu_stack(text, 1);
  ASSERT_EQ(threads.size(), kMaxThreadsPerWorker);
  ASSERT_EQ(threads[0].frames.size(), kMaxFramesPerThread);
  EXPECT_TRUE(threads[0].truncated);
  EXPECT_EQ(threads[0].frames.back().function, "f0");  // the innermost frame is kept
}

TEST(ParseEuStack, SkipsGarbageAndTextCutShort) {
  auto threads = parse_eu_stack("#0 0x1 lost - before any thread\nTID 7:\n#0  0x12 f - /m\n#1  0x", 7);
  ASSERT_EQ(threads.size(), 1u);
  ASSERT_EQ(threads[0].frames.size(), 2u);  // "#1  0x" still has an address
  EXPECT_EQ(threads[0].frames[1].function, "f");
  EXPECT_TRUE(parse_eu_stack("\x01\x02 nothing \n\n###", 1).empty());
}

const char* kFaulthandler =
    "Thread 0x00007f6c34f4d6c0 (most recent call first):\n"
    "  File \"/tmp/hang.py\", line 6 in <lambda>\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 975 in run\n"
    "\n"
    "Current thread 0x00007f6c5738b040 (most recent call first):\n"
    "  File \"/tmp/a \\\"b\\\", line 1.py\", line 3 in load_batch\n"
    "  File \"/tmp/hang.py\", line 5 in train\n"
    "  File \"/tmp/hang.py\", line 7 in <module>\n";

TEST(ParseFaulthandler, ReadsEveryThreadAndTakesTheCurrentOneForMain) {
  auto threads = parse_faulthandler(kFaulthandler);
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_FALSE(threads[0].main_thread);
  EXPECT_TRUE(threads[1].main_thread);
  EXPECT_EQ(threads[1].thread, "0x00007f6c5738b040");
  ASSERT_EQ(threads[1].frames.size(), 3u);
  EXPECT_EQ(threads[1].frames[0].function, "<module>");
  EXPECT_EQ(threads[1].frames[2].function, "load_batch");
  EXPECT_EQ(threads[1].frames[2].line, 3);
  // A file name holding the separator itself: the last one counts.
  EXPECT_EQ(threads[1].frames[2].file, "/tmp/a \\\"b\\\", line 1.py");
}

TEST(ParseFaulthandler, MarksItsOwnDepthLimitAsTruncated) {
  auto threads = parse_faulthandler("Current thread 0x1 (most recent call first):\n  File \"x\", line 1 in f\n  ...\n");
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_TRUE(threads[0].truncated);
}

}  // namespace
}  // namespace dlaunch::forensics
