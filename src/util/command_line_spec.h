// What a subcommand's command line accepts, as plain data taken from its
// parser, so that `dlaunch completion`'s scripts cannot drift from it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace dlaunch::util {

struct OptionSpec {
  std::vector<std::string> names;  // as shown in the help: "-N", "--nodes" (no underscore twins)
  bool takes_value = false;
  std::string placeholder;         // "N", "FILE", "node|task"; "" for a flag
  std::string help;
};

struct CommandLineSpec {
  std::vector<OptionSpec> options;  // hidden ones (no group) left out
  std::vector<std::string> words;   // the fixed words its first argument may be ("expand", ...)
  bool takes_program = false;       // PROGRAM [ARGS...] follow the options (dlaunch run)
};

// OPTION's spellings as the help shows them: "-N", "--nodes". torchrun's
// underscore twins (--nproc_per_node) are accepted but not shown.
std::vector<std::string> shown_names(const CLI::Option& option);

// The options of APP, in the order its help shows them.
CommandLineSpec describe_command_line(const CLI::App& app);

// The options of the parser CONFIGURE builds in a fresh PARSER (a struct
// that holds its CLI::App as `app` beside the values it parses into): the
// same function builds it for parsing, so the two never differ.
template <typename Parser>
CommandLineSpec describe_parser(void (*configure)(Parser&)) {
  Parser parser;
  configure(parser);
  return describe_command_line(parser.app);
}

// The values a placeholder fixes: "node|task" gives {node, task}; "0|1|2|3|MAP"
// gives {0, 1, 2, 3}; "N", "FILE" or "HOST:PORT" none.
std::vector<std::string> placeholder_choices(std::string_view placeholder);

}  // namespace dlaunch::util
