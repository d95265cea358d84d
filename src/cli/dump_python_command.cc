#include "cli/dump_python_command.h"

#include <chrono>
#include <fmt/format.h>

#include "forensics/elf_symbol.h"
#include "forensics/python_dump.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::cli {

int dump_python_command(const CommandArgs& args) {
  if (args.size() != 3)
    throw util::UsageError("dlaunch __dump-python PID FD TIMEOUT_MS (internal: run by a stack capture)");
  auto pid = static_cast<pid_t>(util::parse_int_in_range(args[0], 1, 1 << 30, "PID"));
  auto fd = static_cast<int>(util::parse_int_in_range(args[1], 3, 1 << 20, "FD"));
  auto timeout = std::chrono::milliseconds(util::parse_int_in_range(args[2], 1, 600'000, "TIMEOUT_MS"));
  std::string problem;
  auto function = forensics::symbol_address(pid, "_Py_DumpTracebackThreads", problem);
  if (function) problem = forensics::dump_python_stacks(pid, *function, fd, timeout);
  if (problem.empty()) return 0;
  fmt::print(stderr, "{}\n", problem);
  return 1;
}

}  // namespace dlaunch::cli
