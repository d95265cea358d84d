// What dlaunch says about its own console: the line that takes the place of
// the lines a stalled console dropped, and the account at exit.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "util/console.h"

namespace dlaunch::process {

// How long dlaunch waits at exit for a stalled console to take what it
// still holds, before it exits anyway; a console that took at least
// kConsoleExitProgress bytes in that while (a slow srun or ssh path still
// moving) gets another while, up to kConsoleExitLimit in all.
inline constexpr std::chrono::seconds kConsoleExitWait{2};
inline constexpr std::size_t kConsoleExitProgress = 64 << 10;
inline constexpr std::chrono::seconds kConsoleExitLimit{30};

// Where dropped worker lines can still be read: LOG_ROOT, the folder of the
// workers' files, which is the user's --log-dir when FROM_LOG_DIR (else a
// temporary folder that holds only what -r/-t filed). Sets the notice of
// the process's consoles; call once the folder is known.
void describe_console_drops(const std::string& log_root, bool from_log_dir);

// "dlaunch: console stalled, 1234 lines dropped; the --log-dir files have
// them", or its variant when some or all were filed nowhere.
std::string console_drop_notice(const util::ConsoleDrops& drops, const std::string& log_root,
                                bool from_log_dir);

// "dlaunch: stdout cannot be written any more (Broken pipe): its lines are
// dropped from here on; the --log-dir files have them": said once, on the
// other stream, when NAME's console SINK broke (its reader is gone).
std::string broken_console_notice(const util::ConsoleSink& sink, const std::string& name);

// At exit: writes what the consoles still hold, waiting kConsoleExitWait
// for a stalled one (longer while it moves), then repeats on stderr how many
// lines were dropped in all and how many could not be written at all.
void finish_console_output();

}  // namespace dlaunch::process
