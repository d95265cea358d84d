// Running a CLI11 parser the same way for every subcommand, and the help
// every subcommand shows.
//
// How a subcommand's parser uses it, so that all of them look and behave
// alike (run, submit, ssh, check, stacks, hostlist, env, jobs, ...):
//
//   CLI::App app("What the command does, in a sentence", "dlaunch NAME");
//   util::set_usage(app, "dlaunch NAME [options] JOB");
//   app.add_option("--nodes", nodes, "Number of nodes")
//       ->group("Topology")       // a heading: Topology, Workers, Output, Slurm, ...
//       ->type_name("N");         // a typed placeholder, never CLI11's TEXT or INT
//   app.add_option("--launch", launch, "...")->group("Slurm")->type_name("node|task");
//   util::finish_help(app, {{"dlaunch NAME --nodes 2 x", "what this one does"}, ...});
//   if (!util::parse_command_line(app, args, "dlaunch NAME")) return 0;  // help printed
//
// Placeholders: N (a count), SECONDS, HOST:PORT, FILE, DIR, SIG, LIST (a,b,c),
// ARG (a word handed to another program, which may be a short option like
// -F: util/missing_value.h lets it through), or the fixed values as a|b|c,
// which `dlaunch completion` offers. Give 3-5
// examples that work as written. parse_command_line then answers a typo
// with the nearest option ("Did you mean '--nodes'?"); a parser that reads
// its own words (dlaunch ssh) calls throw_unknown_option. For `dlaunch
// completion` and its man page, a command describes its CLI::App with
// util::describe_command_line (util/command_line_spec.h).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlaunch::util {

// One worked example for a command's help: the command line as typed and
// what it does.
struct HelpExample {
  const char* command;
  const char* explanation;
};

// Makes APP's usage line "Usage: USAGE" (CLI11 would say "[OPTIONS]" and
// leave out PROGRAM [ARGS...]), and gives it dlaunch's help layout.
void set_usage(CLI::App& app, std::string usage);

// A whole-number option NAME of APP into VALUE, from 0 to MOST, shown under
// GROUP as PLACEHOLDER (no range in the help text: HELP says what it means).
CLI::Option* add_count_option(CLI::App& app, const std::string& name, int& value, const std::string& help,
                              const std::string& group, const std::string& placeholder, int most);

// Call last, after every option: puts -h,--help in a heading of its own at
// the end and appends an "Examples:" section to APP's footer.
void finish_help(CLI::App& app, const std::vector<HelpExample>& examples);

// Parses ARGS with APP. Returns false when --help was asked for (the help
// is printed); throws UsageError naming COMMAND ("dlaunch run") and CLI11's
// complaint for anything malformed, for an option whose value was left out
// ("--partition --dry-run": util/missing_value.h), and for an unknown
// option the nearest known one (also before PROGRAM, for parsers with
// prefix_command()).
bool parse_command_line(CLI::App& app, const std::vector<std::string>& args,
                        const std::string& command);

// Throws the UsageError for GIVEN ("--nodse" or "--nodse=2"), an option
// APP does not know: "unknown option '--nodse' for dlaunch submit. Did you
// mean '--nodes'? ...".
[[noreturn]] void throw_unknown_option(const CLI::App& app, std::string_view given,
                                       std::string_view command);

// The option of APP closest to GIVEN ("--nproc_per_nod" finds
// "--nproc-per-node"), when it is close enough to be a typo.
std::optional<std::string> closest_option(const CLI::App& app, std::string_view given);

// For parsers with prefix_command(): the PROGRAM [ARGS...] CLI11 left over,
// without a leading "--" (parse_command_line has refused a leftover option).
std::vector<std::string> program_after_options(const CLI::App& app);

}  // namespace dlaunch::util
