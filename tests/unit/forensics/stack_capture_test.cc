// Capturing real processes' stacks: a native program stuck in a system
// call, a Python program stuck in a function of its own, and what is said
// when a tool is missing, a worker is gone, or a tool overruns.
#include "forensics/stack_capture.h"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test_support/temp_dir.h"
#include "forensics/stack_report.h"
#include "forensics/tool_runs.h"
#include "process/worker_process.h"

namespace dlaunch::forensics {
namespace {

bool have(const char* tool) {
  return process::find_executable(tool, util::Environment::from_process()).has_value();
}

// A child running ARGV, killed and reaped at the end of the test.
class Child {
 public:
  explicit Child(std::vector<std::string> argv) {
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> args;
      for (auto& arg : argv) args.push_back(arg.data());
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~Child() {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = 0;
};

// Waits (bounded) until PID runs EXE (its exec is done), MARKER_FILE (if
// any) exists, and it sleeps (state S): the capture then sees it where the
// test put it.
bool wait_until_sleeping(pid_t pid, const std::string& exe, const std::string& marker_file = "") {
  std::string proc = "/proc/" + std::to_string(pid);
  for (int i = 0; i < 1000; ++i) {
    std::error_code error;
    auto path = std::filesystem::read_symlink(proc + "/exe", error).filename().string();
    std::ifstream stat(proc + "/stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    bool sleeping = close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'S';
    bool marker = marker_file.empty() || ::access(marker_file.c_str(), F_OK) == 0;
    if (!error && path.rfind(exe, 0) == 0 && marker && sleeping) return true;
    ::usleep(10'000);
  }
  return false;
}

std::string names_of(const ThreadStack& thread) {
  std::string text;
  for (const auto& frame : thread.frames) text += frame.function + ";";
  return text;
}

TEST(StackCapture, ANativeProgramInASystemCallHasNamedFrames) {
  if (!have("eu-stack")) GTEST_SKIP() << "eu-stack is not installed";
  Child child({"/bin/sleep", "30"});
  ASSERT_TRUE(wait_until_sleeping(child.pid(), "sleep"));
  CaptureSettings settings;
  settings.environment = util::Environment::from_process();
  auto stacks = capture_stacks({{child.pid(), 3, 1, 0, "here"}}, settings);
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_EQ(stacks[0].rank, 3);
  EXPECT_EQ(stacks[0].host, "here");
  EXPECT_TRUE(stacks[0].python_threads.empty());  // sleep is not Python
  ASSERT_FALSE(stacks[0].native_threads.empty()) << (stacks[0].problems.empty() ? "" : stacks[0].problems[0]);
  EXPECT_TRUE(stacks[0].native_threads[0].main_thread);
  EXPECT_NE(names_of(stacks[0].native_threads[0]).find("nanosleep"), std::string::npos)
      << names_of(stacks[0].native_threads[0]);
  // It goes on: still alive and not stopped.
  EXPECT_EQ(::kill(child.pid(), 0), 0);
}

TEST(StackCapture, APythonProgramShowsItsOwnFunctionAndGoesOn) {
  if (!have("eu-stack") || !have("gdb") || ::access("/usr/bin/python3", X_OK) != 0)
    GTEST_SKIP() << "gdb, eu-stack or /usr/bin/python3 is missing";
  std::string marker = ::testing::TempDir() + "dlaunch_capture_py_" + std::to_string(::getpid());
  ::unlink(marker.c_str());
  Child child({"/usr/bin/python3", "-c",
               "import time\ndef wait_here():\n    open('" + marker + "', 'w').close()\n    time.sleep(30)\nwait_here()\n"});
  ASSERT_TRUE(wait_until_sleeping(child.pid(), "python", marker));
  ASSERT_TRUE(runs_python(child.pid()));
  CaptureSettings settings;
  settings.environment = util::Environment::from_process();
  auto stacks = capture_stacks({{child.pid(), 0, 0, 0, "here"}}, settings);
  ASSERT_EQ(stacks[0].python_threads.size(), 1u) << (stacks[0].problems.empty() ? "" : stacks[0].problems[0]);
  const ThreadStack& main = stacks[0].python_threads[0];
  EXPECT_TRUE(main.main_thread);
  ASSERT_EQ(main.frames.size(), 2u);
  EXPECT_EQ(main.frames[0].function, "<module>");
  EXPECT_EQ(main.frames[1].function, "wait_here");
  EXPECT_EQ(main.frames[1].line, 4);
  EXPECT_EQ(::kill(child.pid(), 0), 0);
  StackReport report = merge_stacks(stacks);
  EXPECT_EQ(path_text(report.groups[0].path), "<module> > wait_here");
  ::unlink(marker.c_str());
}

TEST(StackCapture, SaysWhatCouldNotBeCapturedAndWhy) {
  Child child({"/bin/sleep", "30"});
  CaptureSettings no_tools;
  no_tools.environment.set("PATH", "/nonexistent");
  auto stacks = capture_stacks({{child.pid(), 0, 0, 0, "h"}}, no_tools);
  ASSERT_EQ(stacks[0].problems.size(), 1u);
  EXPECT_EQ(stacks[0].problems[0], "native frames: eu-stack not found in PATH (Debian: apt-get install elfutils)");
  // A worker gone before the capture.
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  int status = 0;
  ::waitpid(gone, &status, 0);
  stacks = capture_stacks({{gone, 1, 0, 0, "h"}}, no_tools);
  EXPECT_EQ(stacks[0].problems.at(0), "the worker had exited before its stack was captured");
}

// A gdb stand-in that puts MAKES ("fifo" or "link") where it was told to
// have the worker write its Python dump, and a worker whose executable is
// named python3-sleep, so the capture asks gdb for its Python frames.
class PlantedDump : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.path() + "/bin");
    std::ofstream(dir_.path() + "/bin/gdb")
        << "#!/bin/sh\n"
           "for arg; do\n"
           "  case \"$arg\" in\n"
           "    'call (int)open(\"'*) path=${arg#'call (int)open(\"'}; path=${path%%'\"'*};;\n"
           "  esac\n"
           "done\n"
           "if [ \"$MAKES\" = fifo ]; then /usr/bin/mkfifo \"$path\"; "
           "else echo 'Current thread 0x1 (most recent call first):' > \"$path.real\"; "
           "/bin/ln -s \"$path.real\" \"$path\"; fi\n";
    std::filesystem::permissions(dir_.path() + "/bin/gdb", std::filesystem::perms::owner_all);
    std::filesystem::copy_file("/bin/sleep", dir_.path() + "/python3-sleep");
    std::filesystem::permissions(dir_.path() + "/python3-sleep", std::filesystem::perms::owner_all);
  }

  // The problems said for the worker when gdb leaves MAKES at the dump's path.
  std::vector<std::string> capture_with(const std::string& makes) {
    Child child({dir_.path() + "/python3-sleep", "30"});
    EXPECT_TRUE(wait_until_sleeping(child.pid(), "python3-sleep"));
    CaptureSettings settings;
    settings.environment.set("PATH", dir_.path() + "/bin");
    settings.environment.set("TMPDIR", dir_.path());
    settings.environment.set("MAKES", makes);
    auto stacks = capture_stacks({{child.pid(), 0, 0, 0, "here"}}, settings);
    EXPECT_EQ(::kill(child.pid(), 0), 0);
    return stacks.at(0).problems;
  }

  test_support::TempDir dir_;
};

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

// Issue 24: the capture read the dump with fopen(), which waits forever for
// a writer when a FIFO is there; the launcher's capture hung with it.
TEST_F(PlantedDump, AFifoIsAProblemNotAHang) {
  std::string problems = joined(capture_with("fifo"));
  EXPECT_NE(problems.find("Python frames (gdb): " + dir_.path() + "/dlaunch-stacks-"), std::string::npos) << problems;
  EXPECT_NE(problems.find(" is a FIFO, where dlaunch expects the Python stack dump gdb writes"), std::string::npos)
      << problems;
}

// dlaunch names the dump's path in its private folder: a link there was
// planted, and is not followed.
TEST_F(PlantedDump, ALinkIsRefused) {
  std::string problems = joined(capture_with("link"));
  EXPECT_NE(problems.find(" is a symbolic link, where dlaunch expects the Python stack dump gdb writes"),
            std::string::npos)
      << problems;
}

TEST(ToolRuns, ATimeoutKillsTheToolAndTheOutputIsCapped) {
  ToolRuns runs;
  ToolResult slow, chatty, missing;
  runs.start({{"/bin/sleep", "30"}, {}, std::chrono::milliseconds(100), [&](const ToolResult& r) { slow = r; }});
  runs.start({{"/usr/bin/yes"}, {}, std::chrono::milliseconds(300), [&](const ToolResult& r) { chatty = r; }});
  runs.start({{"/nonexistent/tool"}, {}, std::chrono::milliseconds(100), [&](const ToolResult& r) { missing = r; }});
  auto start = std::chrono::steady_clock::now();
  runs.run();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(slow.timed_out);
  EXPECT_EQ(slow.exit_code, 128 + SIGKILL);
  EXPECT_TRUE(chatty.truncated);
  EXPECT_EQ(chatty.output.size(), ToolRuns::kOutputCap);
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.output.find("cannot run /nonexistent/tool"), std::string::npos);
}

TEST(ToolRuns, ADoneCallbackMayStartTheNextTool) {
  ToolRuns runs;
  std::vector<std::string> outputs;
  runs.start({{"/bin/echo", "first"}, {}, std::chrono::seconds(5), [&](const ToolResult& result) {
                outputs.push_back(result.output);
                runs.start({{"/bin/echo", "second"}, {}, std::chrono::seconds(5),
                            [&](const ToolResult& next) { outputs.push_back(next.output); }});
              }});
  runs.run();
  EXPECT_EQ(outputs, (std::vector<std::string>{"first\n", "second\n"}));
}

TEST(ToolRuns, NoMoreThanTheLimitRunAtOnce) {
  ToolRuns runs(1);
  std::vector<std::string> order;
  // The slow one first: with one slot the quick one cannot start, so cannot end, before it.
  runs.start({{"/bin/sh", "-c", "read line </dev/null; exec sleep 0.3"}, {}, std::chrono::seconds(5),
              [&](const ToolResult&) { order.push_back("slow"); }});
  runs.start({{"/bin/true"}, {}, std::chrono::seconds(5), [&](const ToolResult&) { order.push_back("quick"); }});
  runs.run();
  EXPECT_EQ(order, (std::vector<std::string>{"slow", "quick"}));
}

}  // namespace
}  // namespace dlaunch::forensics
