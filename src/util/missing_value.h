// The one check that an option's value was not left out: CLI11 takes the
// word after an option that needs a value as that value, whatever it is, so
// `dlaunch submit --partition --dry-run train.py` would submit for real to
// a partition named "--dry-run". Every command's words pass this check
// before they are parsed (util::parse_command_line calls it; dlaunch ssh,
// which reads its own words, calls it with its help's parser), and it reads
// the options from the command's own CLI::App, so a new option is checked
// without a line of its own.
//
// The word after an option that takes a value is refused as its value when
//   - it starts with "--" (another long option, or the "--" that ends the
//     options): `--log-dir --nproc-per-node`;
//   - or it is exactly one of the command's own short options (`--log-dir
//     -m`, `-p -N`), unless the option's placeholder is ARG (a word handed
//     to another program: --sbatch-arg, --srun-arg, --run-arg, --ssh-arg),
//     whose value may well be a short option of its own (`--ssh-arg -F`).
// An empty word ('' or "$UNSET", or --opt= with nothing after the '=') is
// refused as a value too, except for the few options where it means "none"
// (--prefix '', --rdzv-conf '', --local-ranks-filter ''): CLI11 would take
// the word after "--account=" as its value. An option that ends the line
// is refused with its placeholder. Any other word is a value: "-" (stdin), a negative number (`--nodes -1`,
// which the option's own range check answers), a short option the command
// does not have. A value that does start with "--" is written `--opt=VALUE`.
// Nothing after the options is looked at: not the words after "--", and,
// for parsers with prefix_command(), not PROGRAM or its arguments
// (`dlaunch run w.sh --log-dir --x` is w.sh's business).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace dlaunch::util {

// The placeholder of an option whose value is a word for another program.
inline constexpr std::string_view kPassedOnPlaceholder = "ARG";

// Throws UsageError for the first option of APP in ARGS (the words after
// "dlaunch NAME") whose value is another option, naming COMMAND ("dlaunch
// submit"), the option, its placeholder, the word it met and how to give
// that word as the value if it was meant: "dlaunch submit: --partition
// needs a value (NAME), got the option --dry-run; give the value
// (--partition NAME), or write --partition=--dry-run if you mean that
// text." Stops quietly at the first word APP does not know: the parser
// reports an unknown option better.
void refuse_missing_values(const CLI::App& app, const std::vector<std::string>& args,
                           std::string_view command);

// One option as the command line gives it: OPTION of the App, TYPED as
// the user spelled it ("--nproc_per_node", "-r"), its VALUE (nullopt for a
// flag given bare; a flag given "--gate=no" has the value "no") and the
// WORDS as typed ("--nproc_per_node=4", "-r 3"), for messages.
struct OptionUse {
  const CLI::Option* option;
  std::string typed;
  std::optional<std::string> value;
  std::string words;
};

// refuse_missing_values, which also returns the options it read, in
// order, up to the first word APP does not know or the end of the options
// (util/option_rules.h checks them further).
std::vector<OptionUse> read_option_uses(const CLI::App& app, const std::vector<std::string>& args,
                                        std::string_view command);

}  // namespace dlaunch::util
