// What `dlaunch` says when its first word is not a command: a user who
// typed `dlaunch train.py`, `dlaunch --nproc-per-node 4 train.py` (torchrun's
// habit), `dlaunch --versoin` or `dlaunch -V` is told the line they meant,
// not only that the word is unknown.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "cli/command.h"

namespace dlaunch::cli {

// The short usage bare `dlaunch` prints to stderr before it exits 2: the
// command line's shape, the commands' names, where the help is.
std::string short_usage(std::span<const Command> commands);

// The command of COMMANDS that WORDS (dlaunch's arguments) name first.
// Throws the UsageError for any other first word, with the likeliest
// meaning: "did you mean 'dlaunch run train.py'?" for a program or a
// dlaunch run option, the nearest of --help and --version for another
// option, else the nearest command.
const Command& command_named_first(std::span<const Command> commands, const std::vector<std::string>& words);

}  // namespace dlaunch::cli
