#include "cli/run_step_command.h"

#include <chrono>

#include "process/signal_channel.h"
#include "submit/step_guard.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::cli {
namespace {

constexpr const char* kUsage =
    "dlaunch __run-step VERDICT_FILE GRACE_SECONDS [--foreground] -- STEP... (internal: written into "
    "dlaunch submit's job scripts)";

}  // namespace

int run_step_command(const CommandArgs& args) {
  std::size_t separator = 0;
  while (separator < args.size() && args[separator] != "--") ++separator;
  if (separator + 1 >= args.size() || separator < 2 || separator > 3) throw util::UsageError(kUsage);
  submit::StepGuardSettings settings;
  settings.verdict_file = args[0];
  settings.grace = std::chrono::seconds(util::parse_int_in_range(args[1], 0, 7 * 24 * 3600, "GRACE_SECONDS"));
  if (separator == 3) {
    if (args[2] != "--foreground") throw util::UsageError(kUsage);
    settings.foreground = true;
  }
  std::vector<std::string> step(args.begin() + static_cast<long>(separator) + 1, args.end());
  process::SignalChannel signals;
  return submit::run_step_until_verdict(step, settings, signals);
}

}  // namespace dlaunch::cli
