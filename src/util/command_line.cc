#include "util/command_line.h"

#include <algorithm>
#include <fmt/format.h>
#include <memory>

#include "util/command_line_spec.h"
#include "util/error.h"
#include "util/missing_value.h"
#include "util/option_rules.h"
#include "util/strings.h"

namespace dlaunch::util {
namespace {

constexpr std::size_t kNameWidth = 30;
constexpr std::size_t kLineWidth = 80;

// TEXT's words in lines of at most kLineWidth columns, the first starting
// at column FIRST_COLUMN, the others indented by INDENT.
std::string wrapped(std::string_view text, std::size_t first_column, std::size_t indent) {
  std::string result;
  std::size_t column = first_column;
  bool line_empty = true;
  for (const auto& word : split(text, ' ')) {
    if (!line_empty && column + 1 + word.size() > kLineWidth) {
      result += "\n" + std::string(indent, ' ');
      column = indent;
      line_empty = true;
    }
    if (!line_empty) {
      result += ' ';
      ++column;
    }
    result += word;
    column += word.size();
    line_empty = false;
  }
  return result;
}

// CLI11's layout with dlaunch's usage line first, one spelling per option,
// and text wrapped to the terminal's customary 80 columns (CLI11 2.1
// prints each description on one long line).
class HelpFormatter : public CLI::Formatter {
 public:
  explicit HelpFormatter(std::string usage) : usage_(std::move(usage)) {
    column_width(kNameWidth);
    label("Positionals", "Arguments");
  }

  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    std::string text = make_usage(app, name) + "\n" + make_description(app) + make_positionals(app) +
                       make_groups(app, mode) + "\n" + make_footer(app);
    // CLI11 ends each group with a blank line and starts the next with one.
    for (auto at = text.find("\n\n\n"); at != std::string::npos; at = text.find("\n\n\n"))
      text.erase(at, 1);
    return text;
  }

  const std::string& usage() const { return usage_; }

  std::string make_usage(const CLI::App*, std::string) const override {
    return fmt::format("Usage: {}\n", usage_);
  }

  std::string make_description(const CLI::App* app) const override {
    return wrapped(app->get_description(), 0, 0) + "\n";
  }

  std::string make_option_name(const CLI::Option* option, bool is_positional) const override {
    if (is_positional) return CLI::Formatter::make_option_name(option, is_positional);
    return join(shown_names(*option), ", ");
  }

  // Just the placeholder: CLI11 adds " ..." to a list option, which dlaunch
  // takes once per occurrence (its help says "repeatable").
  std::string make_option_opts(const CLI::Option* option) const override {
    if (option->get_expected_max() == 0 || option->get_option_text().empty()) return "";
    return " " + option->get_option_text();
  }

  std::string make_option(const CLI::Option* option, bool is_positional) const override {
    // An argument is shown by its placeholder alone (JOB), an option by its
    // names and placeholder (--master HOST:PORT).
    std::string name = is_positional ? "  " + option->get_option_text()
                                     : "  " + make_option_name(option, is_positional) + make_option_opts(option);
    std::string text = name.size() + 2 > kNameWidth ? name + "\n" + std::string(kNameWidth, ' ')
                                                    : fmt::format("{:<{}}", name, kNameWidth);
    return text + wrapped(make_option_desc(option), kNameWidth, kNameWidth) + "\n";
  }

 private:
  std::string usage_;
};

// "--nodse=2" -> "--nodse"; "--nproc_per_nod" -> "--nproc-per-nod".
std::string dashed_option_name(std::string_view given) {
  std::string name(given.substr(0, given.find('=')));
  for (std::size_t i = 2; i < name.size(); ++i) {
    if (name[i] == '_') name[i] = '-';
  }
  return name;
}

// The first word CLI11 could not place that looks like an option.
std::optional<std::string> leftover_option(const CLI::App& app) {
  for (const auto& word : app.remaining()) {
    if (word == "--") return std::nullopt;
    if (word.size() > 1 && word.front() == '-') return word;
    if (app.get_prefix_command()) return std::nullopt;  // PROGRAM: the rest is its own
  }
  return std::nullopt;
}

// The placeholder as the parser gave it: CLI11 appends each check's
// description to it ("N:INT in [1 - 100]").
std::string placeholder_of(CLI::Option& option) {
  std::string placeholder = option.get_type_name();
  std::vector<std::string> checks;
  try {
    for (int index = 0;; ++index) checks.push_back(option.get_validator(index)->get_description());
  } catch (const CLI::OptionNotFound&) {  // past the last check
  }
  for (auto check = checks.rbegin(); check != checks.rend(); ++check) {
    std::string suffix = ":" + *check;
    if (!check->empty() && placeholder.ends_with(suffix)) placeholder.resize(placeholder.size() - suffix.size());
  }
  return placeholder;
}

// Other launchers' spellings (mpirun, Horovod, DeepSpeed, accelerate,
// sbatch) and what dlaunch says instead: the option of APP, or, when APP has
// none, the command that has one.
struct ForeignSpelling {
  std::vector<std::string_view> spellings;
  const char* option;     // dlaunch's option for it, when APP has it
  const char* elsewhere;  // else where it lives (nullptr with OPTION: nowhere, WHY says what to do)
  const char* why;        // how dlaunch counts, when it differs
};

const std::vector<ForeignSpelling>& foreign_spellings() {
  static const std::vector<ForeignSpelling> spellings = {
      {{"-np", "-n", "--np", "--nprocs", "--nproc", "--num-processes", "--num_processes", "--num-gpus",
        "--num_gpus", "--ntasks", "--ntasks-per-node", "--nproc-per-node"},
       "--nproc-per-node", "--gpus-per-node",
       " dlaunch counts workers per node, not in all (mpirun's -np is every process of the job)"},
      {{"--num-nodes", "--num_nodes", "--nodes"}, "--nnodes", "--nodes", ""},
      {{"-H", "--host", "--hosts"}, "--hosts", "dlaunch ssh --hosts h1,h2 --nproc-per-node N",
       " (Horovod's and mpirun's host:slots is --hosts h1,h2 with --nproc-per-node N)"},
      {{"--hostfile", "-hostfile", "--machinefile", "-machinefile"}, "--hostfile",
       "dlaunch ssh --hostfile FILE", ""},
      {{"--partition", "--time", "--account"}, nullptr, "dlaunch submit", ""},
      // torch.distributed.launch's: it passed --local_rank to the script,
      // and --use_env asked it not to. dlaunch always does what --use_env
      // asked, so neither has a dlaunch option to suggest.
      {{"--local-rank", "--local_rank", "--use-env", "--use_env"}, nullptr, nullptr,
       " Drop it: dlaunch sets LOCAL_RANK (and RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) in every "
       "worker's environment, as torchrun does; a script reads it with int(os.environ[\"LOCAL_RANK\"])."},
  };
  return spellings;
}

// " Did you mean ...?" for GIVEN, an other launcher's spelling, or "".
std::string foreign_hint(const CLI::App& app, std::string_view given) {
  std::string name(given.substr(0, given.find('=')));
  for (const auto& foreign : foreign_spellings()) {
    if (std::find(foreign.spellings.begin(), foreign.spellings.end(), name) == foreign.spellings.end()) continue;
    if (foreign.option == nullptr && foreign.elsewhere == nullptr) return foreign.why;
    if (foreign.option != nullptr && app.get_option_no_throw(foreign.option) != nullptr)
      return fmt::format(" Did you mean '{}'?{}", foreign.option, foreign.why);
    if (app.get_option_no_throw(foreign.elsewhere) != nullptr)
      return fmt::format(" Did you mean '{}'?{}", foreign.elsewhere, foreign.why);
    if (std::string_view(foreign.elsewhere).starts_with("dlaunch "))
      return fmt::format(" That is an option of '{}', which {}.", foreign.elsewhere,
                         std::string_view(foreign.elsewhere).starts_with("dlaunch ssh")
                             ? "starts dlaunch run on several hosts"
                             : "asks Slurm for the nodes");
  }
  return "";
}

// The argument of APP that is required and was not given (JOB), if any.
const CLI::Option* missing_argument(const CLI::App& app) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional() && option->get_required() && option->count() == 0) return option;
  }
  return nullptr;
}

// "dlaunch status: JOB is missing: a Slurm job id ... Usage: dlaunch status
// [options] JOB", for CLI11's "job is required".
[[noreturn]] void throw_missing_argument(const CLI::App& app, const CLI::Option& argument,
                                         const std::string& command) {
  std::string usage;
  if (auto formatter = std::dynamic_pointer_cast<HelpFormatter>(app.get_formatter()))
    usage = fmt::format(" Usage: {}.", formatter->usage());
  std::string what = argument.get_description();
  if (!what.empty()) what = ": " + what;
  throw UsageError(fmt::format("{}: {} is missing{}.{} '{} --help' says more.", command,
                               argument.get_option_text().empty() ? argument.get_name() : argument.get_option_text(),
                               what, usage, command));
}

}  // namespace

void set_usage(CLI::App& app, std::string usage) {
  app.formatter(std::make_shared<HelpFormatter>(std::move(usage)));
}

CLI::Option* add_count_option(CLI::App& app, const std::string& name, int& value, const std::string& help,
                              const std::string& group, const std::string& placeholder, int most) {
  return app.add_option(name, value, help)
      ->group(group)
      ->type_name(placeholder)
      ->check(CLI::Range(0, most).description(""));
}

void finish_help(CLI::App& app, const std::vector<HelpExample>& examples) {
  // The help and util::describe_command_line show the option text.
  for (CLI::Option* option : app.get_options()) option->option_text(placeholder_of(*option));
  app.set_help_flag("-h,--help", "Show this help and exit")->group("Help");
  std::string text = app.get_footer();
  if (!text.empty()) text += "\n\n";
  text += "Examples:";
  for (const auto& example : examples) text += fmt::format("\n  {}\n      {}", example.command, example.explanation);
  app.footer(text);
}

bool parse_command_line(CLI::App& app, const std::vector<std::string>& args,
                        const std::string& command) {
  // CLI11 would take the option after one whose value was left out as that
  // value ("--partition --dry-run"): refused first, for every command; then
  // the rules of util/option_rules.h.
  std::vector<OptionUse> uses = read_option_uses(app, args, command);
  refuse_flag_values(uses, command);
  refuse_conflicting_repeats(uses, command);
  accept_identical_repeats(app);
  // CLI11 consumes a vector of arguments from its back.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return false;
  } catch (const CLI::ParseError& error) {
    // An unknown option explains more than what it left missing ("JOB is required").
    if (auto option = leftover_option(app)) throw_unknown_option(app, *option, command);
    if (const CLI::Option* argument = missing_argument(app); argument && dynamic_cast<const CLI::RequiredError*>(&error))
      throw_missing_argument(app, *argument, command);
    throw UsageError(
        fmt::format("{}: {}. '{} --help' lists the options.", command, error.what(), command));
  }
  // With prefix_command() CLI11 hands an unknown option over as PROGRAM.
  if (auto option = leftover_option(app)) throw_unknown_option(app, *option, command);
  return true;
}

std::optional<std::string> closest_option(const CLI::App& app, std::string_view given) {
  std::vector<std::string> known;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group().empty()) continue;  // hidden
    for (const auto& name : shown_names(*option)) {
      if (name.starts_with("--")) known.push_back(name);
    }
  }
  return closest_match(dashed_option_name(given), known);
}

void throw_unknown_option(const CLI::App& app, std::string_view given, std::string_view command) {
  std::string name(given.substr(0, given.find('=')));
  std::string hint = foreign_hint(app, given);
  if (auto close = closest_option(app, given); hint.empty() && close) hint = fmt::format(" Did you mean '{}'?", *close);
  // dlaunch submit passes the sbatch options it has none of.
  if (hint.empty() && app.get_option_no_throw("--sbatch-arg") != nullptr && name.starts_with("--"))
    hint = fmt::format(" An sbatch option of its own goes through --sbatch-arg={}=VALUE.", name);
  std::string program_hint =
      app.get_prefix_command() ? " Put '--' before a PROGRAM whose name starts with '-';" : "";
  throw UsageError(fmt::format("unknown option '{}' for {}.{}{} '{} --help' lists the options.", name,
                               command, hint, program_hint, command));
}

std::vector<std::string> program_after_options(const CLI::App& app) {
  std::vector<std::string> program = app.remaining();
  if (!program.empty() && program.front() == "--") program.erase(program.begin());
  return program;
}

}  // namespace dlaunch::util
