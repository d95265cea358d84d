#include "cli/hostlist_command.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "slurm/hostlist.h"
#include "util/command_line.h"
#include "util/command_line_spec.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::cli {
namespace {

const std::vector<std::string> kActions = {"expand", "compress", "first", "count"};
constexpr const char* kHostlistDescription = "Expand and compress Slurm hostlist expressions";

struct HostlistRequest {
  std::string action;
  std::vector<std::string> expressions;
};

// Hosts go out in 64 KiB writes rather than one formatted print each, so
// that expanding n[1-10000000] takes a fraction of a second.
class Output {
 public:
  ~Output() { flush(); }
  Output() = default;
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  void line(std::string_view text) {
    buffer_ += text;
    buffer_ += '\n';
    if (buffer_.size() >= kFlushAt) flush();
  }

  void flush() {
    std::fwrite(buffer_.data(), 1, buffer_.size(), stdout);
    std::fflush(stdout);
    buffer_.clear();
  }

 private:
  static constexpr std::size_t kFlushAt = 1 << 16;
  std::string buffer_;
};

void configure_hostlist(CLI::App& app) {
  // ACTION and EXPR... are taken verbatim from remaining(): CLI11 would read
  // an argument like "[1-3],n5" as its own list syntax and strip the brackets.
  app.prefix_command();
  util::set_usage(app, "dlaunch hostlist expand|compress|first|count EXPR...");
  app.footer(
      "Actions (output is byte for byte that of scontrol 22.05):\n"
      "  expand EXPR...    one host per line (scontrol show hostnames)\n"
      "  compress HOST...  the compressed expression (scontrol show hostlist)\n"
      "  first EXPR...     the first host, without expanding the list\n"
      "  count EXPR...     the number of hosts, duplicates counted\n"
      "All arguments form one list; separate names by ',' or whitespace (e.g. 'n[1-3],m5').\n"
      "An EXPR of - reads expressions from stdin.");
  util::finish_help(app, {
                             {"dlaunch hostlist expand 'gpu[01-03],login1'", "gpu01, gpu02, gpu03 and login1, one a line"},
                             {"dlaunch hostlist compress gpu01 gpu02 gpu03 gpu07", "gpu[01-03,07]"},
                             {"dlaunch hostlist first \"$SLURM_JOB_NODELIST\"",
                              "the job's first node, as MASTER_ADDR usually is"},
                             {"squeue -h -o %N | dlaunch hostlist count -", "how many nodes the queue's jobs hold"},
                         });
}

[[noreturn]] void usage_error(std::string_view fault) {
  throw util::UsageError(
      fmt::format("dlaunch hostlist: {}. Run 'dlaunch hostlist --help' for usage.", fault));
}

// Splits the words after the options into ACTION and EXPR...; a "--" ends
// the options. Returns false when --help was asked for.
bool split_words(const std::vector<std::string>& words, HostlistRequest& request) {
  bool options_ended = false;
  for (const std::string& word : words) {
    if (!options_ended && word == "--") {
      options_ended = true;
    } else if (!options_ended && (word == "-h" || word == "--help")) {
      return false;
    } else if (!options_ended && word.size() > 1 && word.front() == '-') {
      usage_error(fmt::format("unknown option '{}'", word));
    } else if (request.action.empty()) {
      request.action = word;
    } else {
      request.expressions.push_back(word);
    }
  }
  return true;
}

// Returns nullopt when --help was printed.
std::optional<HostlistRequest> parse_request(const CommandArgs& args) {
  CLI::App app(kHostlistDescription, "dlaunch hostlist");
  configure_hostlist(app);
  HostlistRequest request;
  if (!util::parse_command_line(app, args, "dlaunch hostlist")) return std::nullopt;
  if (split_words(app.remaining(), request)) return request;
  fmt::print("{}", app.help());  // --help after the action
  return std::nullopt;
}

void check_action(const HostlistRequest& request) {
  if (request.action.empty())
    throw util::UsageError(
        "dlaunch hostlist: no action given; expected one of expand, compress, first, "
        "count (e.g. dlaunch hostlist expand 'n[1-4]')");
  if (std::find(kActions.begin(), kActions.end(), request.action) != kActions.end()) return;
  std::string hint;
  if (auto match = util::closest_match(request.action, kActions))
    hint = fmt::format("; did you mean '{}'?", *match);
  throw util::UsageError(fmt::format(
      "dlaunch hostlist: unknown action '{}'{} Expected expand, compress, first or count",
      request.action, hint.empty() ? "." : hint));
}

// Replaces each "-" by the whitespace-separated words of stdin, so that
// `squeue -h -o %N | dlaunch hostlist expand -` works. Stdin is read once.
std::vector<std::string> with_stdin(const std::vector<std::string>& expressions) {
  std::vector<std::string> result;
  bool read = false;
  for (const std::string& expression : expressions) {
    if (expression != "-") {
      result.push_back(expression);
      continue;
    }
    if (read) continue;
    read = true;
    result.insert(result.end(), std::istream_iterator<std::string>(std::cin),
                  std::istream_iterator<std::string>());
  }
  return result;
}

void print_expanded(const std::vector<std::string>& expressions) {
  // Validate everything before printing anything, so a bad EXPR never
  // leaves a partial list on stdout for a script to consume.
  for (const std::string& expression : expressions) slurm::count_hosts(expression);
  Output out;
  for (const std::string& expression : expressions)
    slurm::for_each_host(expression, [&](std::string_view host) { out.line(host); });
}

void print_first(const std::vector<std::string>& expressions) {
  std::optional<std::string> first;
  for (const std::string& expression : expressions) {
    if (slurm::count_hosts(expression) > 0 && !first) first = slurm::first_host(expression);
  }
  if (!first)
    throw util::InputError(
        "dlaunch hostlist first: the expressions name no hosts; expected at least "
        "one host name");
  fmt::print("{}\n", *first);
}

void print_count(const std::vector<std::string>& expressions) {
  std::size_t total = 0;
  for (const std::string& expression : expressions) {
    std::size_t count = slurm::count_hosts(expression);
    if (__builtin_add_overflow(total, count, &total))
      throw util::InputError(
          "dlaunch hostlist count: the expressions name more hosts than fit in 64 "
          "bits; expected a smaller list");
  }
  fmt::print("{}\n", total);
}

}  // namespace

int hostlist_command(const CommandArgs& args) {
  std::optional<HostlistRequest> request = parse_request(args);
  if (!request) return 0;
  check_action(*request);
  if (request->expressions.empty())
    throw util::UsageError(
        fmt::format("dlaunch hostlist {}: no expression given; expected EXPR... or - to read stdin "
                    "(e.g. dlaunch hostlist {} 'n[1-4]')",
                    request->action, request->action));
  std::vector<std::string> expressions = with_stdin(request->expressions);
  if (request->action == "expand") print_expanded(expressions);
  if (request->action == "compress") fmt::print("{}\n", slurm::compress_hostlist(expressions));
  if (request->action == "first") print_first(expressions);
  if (request->action == "count") print_count(expressions);
  return 0;
}

util::CommandLineSpec hostlist_command_line() {
  CLI::App app(kHostlistDescription, "dlaunch hostlist");
  configure_hostlist(app);
  util::CommandLineSpec spec = util::describe_command_line(app);
  spec.words = kActions;
  return spec;
}

}  // namespace dlaunch::cli
