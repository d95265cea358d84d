#include "process/console_report.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fmt/format.h>

namespace dlaunch::process {
namespace {

// Set by describe_console_drops() on the main thread; read at exit.
struct DropPlace {
  std::string log_root;
  bool from_log_dir = false;
  std::chrono::steady_clock::duration exit_wait{};  // how long the exit drain waited
};
DropPlace& drop_place() {
  static DropPlace place;
  return place;
}

std::string where_they_are(const util::ConsoleDrops& drops, const std::string& log_root,
                           bool from_log_dir) {
  std::string files = from_log_dir ? "the --log-dir files" : fmt::format("the log files in {}", log_root);
  if (drops.unfiled == 0) return files + " have them";
  if (drops.filed == 0)
    return from_log_dir ? "no log file has them" : "they were not filed: pass --log-dir to keep every line";
  return fmt::format("{} of them are in {}, {} were not filed{}", drops.filed, files, drops.unfiled,
                     from_log_dir ? "" : ": pass --log-dir to keep every line");
}

// "stdout" (and stderr when one sink serves both).
std::string account(const util::ConsoleSink& sink, const std::string& name) {
  const DropPlace& place = drop_place();
  std::string text;
  util::ConsoleDrops drops = sink.dropped();
  if (drops.total() > 0 && sink.error() != 0)
    text += fmt::format("dlaunch: {} could not be written ({}): {} lines dropped in all; {}\n", name,
                        std::strerror(sink.error()), drops.total(),
                        where_they_are(drops, place.log_root, place.from_log_dir));
  else if (drops.total() > 0)
    text += fmt::format("dlaunch: console stalled, {} lines dropped in all ({}); {}\n", drops.total(),
                        name, where_they_are(drops, place.log_root, place.from_log_dir));
  util::ConsoleDrops unwritten = sink.unwritten();
  if (unwritten.total() > 0)
    text += fmt::format(
        "dlaunch: {} more lines could not be written to {}: it did not drain before exit (waited "
        "{:.1f} s); {}\n",
        unwritten.total(), name, std::chrono::duration<double>(place.exit_wait).count(),
        where_they_are(unwritten, place.log_root, place.from_log_dir));
  return text;
}

}  // namespace

std::string console_drop_notice(const util::ConsoleDrops& drops, const std::string& log_root,
                                bool from_log_dir) {
  return fmt::format("dlaunch: console stalled, {} lines dropped; {}\n", drops.total(),
                     where_they_are(drops, log_root, from_log_dir));
}

std::string broken_console_notice(const util::ConsoleSink& sink, const std::string& name) {
  const DropPlace& place = drop_place();
  // Every line from here on is dropped unfiled or filed alike: say where
  // they are as for lines that were all filed, or all not.
  util::ConsoleDrops kind;
  (place.from_log_dir ? kind.filed : kind.unfiled) = 1;
  return fmt::format("dlaunch: {} cannot be written any more ({}): its lines are dropped from here on; {}",
                     name, std::strerror(sink.error()),
                     place.from_log_dir ? "the --log-dir files have them"
                                        : where_they_are(kind, place.log_root, place.from_log_dir));
}

void describe_console_drops(const std::string& log_root, bool from_log_dir) {
  drop_place() = DropPlace{log_root, from_log_dir};
  auto notice = [log_root, from_log_dir](const util::ConsoleDrops& drops) {
    return console_drop_notice(drops, log_root, from_log_dir);
  };
  util::console_out().set_drop_notice(notice);
  util::console_err().set_drop_notice(notice);
}

namespace {

// Drains OUT and ERR (the same sink when SHARED) while they move: each
// while of kConsoleExitWait that took kConsoleExitProgress bytes or more
// earns another, up to kConsoleExitLimit. A console nobody reads costs
// kConsoleExitWait; one that srun forwards slowly is written to the end.
void drain_while_moving(util::ConsoleSink& out, util::ConsoleSink& err, bool shared) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto backlog = [&] { return out.backlog_bytes() + (shared ? 0 : err.backlog_bytes()); };
  for (;;) {
    std::size_t before = backlog();
    auto deadline = std::min(Clock::now() + kConsoleExitWait, start + kConsoleExitLimit);
    bool drained = out.drain(deadline);
    if (!shared) drained = err.drain(deadline) && drained;
    std::size_t after = backlog();
    if (drained || after == 0 || before < after + kConsoleExitProgress ||
        Clock::now() >= start + kConsoleExitLimit)
      break;
  }
  drop_place().exit_wait = Clock::now() - start;
}

}  // namespace

void finish_console_output() {
  util::ConsoleSink& out = util::console_out();
  util::ConsoleSink& err = util::console_err();
  const bool shared = &out == &err;
  drain_while_moving(out, err, shared);
  out.abandon();
  err.abandon();
  std::string report = account(out, shared ? "stdout and stderr" : "stdout");
  if (!shared) report += account(err, "stderr");
  if (report.empty()) return;
  // The account itself gets a short while more, then the process exits.
  err.write_message(report);
  err.drain(std::chrono::steady_clock::now() + std::chrono::milliseconds(250));
}

}  // namespace dlaunch::process
