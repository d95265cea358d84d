// parse_traceback(): the last Python traceback in a worker's last lines,
// and the innermost frame of the user's own code in it.
#include "doctor/traceback.h"

#include <gtest/gtest.h>

namespace dlaunch::doctor {
namespace {

const std::vector<std::string> kValueError = {
    "loading /data/cfg.yaml",
    "Traceback (most recent call last):",
    "  File \"/home/ana/proj/train.py\", line 30, in <module>",
    "    main()",
    "  File \"/home/ana/proj/train.py\", line 12, in load_config",
    "    raise ValueError(f\"bad learning rate: {lr}\")",
    "ValueError: bad learning rate: -1",
};

TEST(Traceback, ReadsTheExceptionAndItsFrames) {
  auto error = parse_traceback(kValueError);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->type, "ValueError");
  EXPECT_EQ(error->message, "bad learning rate: -1");
  ASSERT_EQ(error->frames.size(), 2u);
  EXPECT_EQ(error->frames[1].function, "load_config");
  EXPECT_EQ(error->lines.size(), 6u);
  auto frame = innermost_user_frame(*error);
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->file, "/home/ana/proj/train.py");
  EXPECT_EQ(frame->line, 12);
}

TEST(Traceback, BlamesTheUserNotTorch) {
  std::vector<std::string> lines = {
      "[rank1]: Traceback (most recent call last):",
      "[rank1]:   File \"/work/train.py\", line 44, in <module>",
      "[rank1]:     dist.all_reduce(t)",
      "[rank1]:   File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 1536, "
      "in all_reduce",
      "[rank1]:     work = default_pg.allreduce([tensor], opts)",
      "[rank1]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
      "[10.0.0.2]:4001",
  };
  auto error = parse_traceback(lines);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->type, "RuntimeError");
  auto frame = innermost_user_frame(*error);
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->file, "/work/train.py");
  EXPECT_EQ(frame->line, 44);
}

TEST(Traceback, TakesTheLastOfChainedTracebacks) {
  std::vector<std::string> lines = {
      "Traceback (most recent call last):",
      "  File \"a.py\", line 3, in f",
      "KeyError: 'lr'",
      "",
      "During handling of the above exception, another exception occurred:",
      "",
      "Traceback (most recent call last):",
      "  File \"a.py\", line 5, in f",
      "    raise ValueError(\"no lr\")",
      "ValueError: no lr",
  };
  auto error = parse_traceback(lines);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->type, "ValueError");
  EXPECT_EQ(error->frames.at(0).line, 5);
}

TEST(Traceback, NoneWhenCutOrAbsent) {
  EXPECT_FALSE(parse_traceback({"Segmentation fault (core dumped)"}));
  EXPECT_FALSE(parse_traceback({"Traceback (most recent call last):", "  File \"a.py\", line 3, in f"}));
  EXPECT_FALSE(parse_traceback({}));
}

TEST(Traceback, LibraryFiles) {
  EXPECT_TRUE(is_library_file("/opt/venv/lib/python3.10/site-packages/torch/nn/modules/module.py"));
  EXPECT_TRUE(is_library_file("<frozen runpy>"));
  EXPECT_TRUE(is_library_file("/usr/lib/python3.10/runpy.py"));
  EXPECT_FALSE(is_library_file("/home/ana/proj/train.py"));
  EXPECT_FALSE(is_library_file("train.py"));
}

TEST(Traceback, ExceptionLines) {
  auto split = split_exception_line("torch.cuda.OutOfMemoryError: CUDA out of memory.");
  ASSERT_TRUE(split);
  EXPECT_EQ(split->first, "torch.cuda.OutOfMemoryError");
  EXPECT_EQ(split->second, "CUDA out of memory.");
  EXPECT_TRUE(split_exception_line("KeyboardInterrupt"));
  EXPECT_FALSE(split_exception_line("Segmentation fault (core dumped)"));
  EXPECT_FALSE(split_exception_line("3 ranks failed"));
}

}  // namespace
}  // namespace dlaunch::doctor
