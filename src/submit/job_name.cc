// The job name derived from the command (job_name.h).
#include "submit/job_name.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <string_view>

#include "util/strings.h"

namespace dlaunch::submit {
namespace {

// A program that runs another program named later on its command line.
// Its options are skipped; which of them take the next word as their value
// is what the table says, so `-W ignore` or `--nproc-per-node 8` is never
// taken for the program.
struct Wrapper {
  std::vector<std::string_view> names;
  // true: every option takes a value unless listed in EXCEPTIONS (torchrun,
  // numactl); false: none does unless listed (python, env).
  bool options_take_values = false;
  std::set<std::string_view> exceptions;
  // Words after the options that are not the program: taskset's mask,
  // timeout's duration, accelerate's "launch" (options may follow them).
  int operands = 0;
  bool module_option = false;  // -m MODULE (--module): the program is a module
  bool code_option = false;    // -c CODE: the program is a string of code
};

const std::vector<Wrapper>& wrappers() {
  // names, options take values?, the exceptions, operands, -m, -c
  static const std::vector<Wrapper> table = {
      {{"python", "pypy"}, false, {"-X", "-W", "-Q", "--check-hash-based-pycs"}, 0, true, true},
      {{"torchrun"}, true, {"--standalone", "--no-python", "--no_python", "--run-path", "--run_path"}, 0, true, false},
      {{"deepspeed"}, true, {"--no_python", "--no_local_rank", "--force_multi", "--bind_cores_to_rank"}, 0, true,
       false},
      {{"accelerate"}, true,
       {"--multi_gpu", "--cpu", "--use_deepspeed", "--use_fsdp", "--use_megatron_lm", "--quiet", "-q",
        "--no_python", "--debug"},
       1, true, false},
      {{"env"}, false, {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, 0, false, false},
      {{"bash", "sh", "dash", "zsh"}, false, {"-o", "+o", "-O", "+O"}, 0, false, true},
      {{"nohup", "time", "exec"}, false, {}, 0, false, false},
      {{"nice"}, false, {"-n", "--adjustment"}, 0, false, false},
      {{"stdbuf"}, false, {"-i", "-o", "-e"}, 0, false, false},
      {{"numactl"}, true, {"-l", "--localalloc", "-s", "--show", "-H", "--hardware", "-a", "--all"}, 0, false,
       false},
      {{"taskset"}, false, {}, 1, false, false},
      {{"timeout"}, false, {"-s", "--signal", "-k", "--kill-after"}, 1, false, false},
  };
  return table;
}

// "python3", "python3.11", "pypy3" are the python entry: the name, then
// only digits and dots.
bool names_match(std::string_view entry, std::string_view program) {
  if (!program.starts_with(entry)) return false;
  std::string_view rest = program.substr(entry.size());
  if (entry != "python" && entry != "pypy") return rest.empty();
  return rest.find_first_not_of("0123456789.") == std::string_view::npos;
}

const Wrapper* wrapper_named(std::string_view program) {
  for (const Wrapper& wrapper : wrappers())
    for (std::string_view name : wrapper.names)
      if (names_match(name, program)) return &wrapper;
  return nullptr;
}

std::string base_name(const std::string& word) { return word.substr(word.find_last_of('/') + 1); }

// The modules that are torchrun itself: `python -m torch.distributed.run`.
bool is_torchrun_module(const std::string& module) {
  return module == "torch.distributed.run" || module == "torch.distributed.launch";
}

std::string without_script_ending(std::string name) {
  for (std::string_view ending : {".py", ".sh"})
    if (name.size() > ending.size() && name.ends_with(ending)) name.resize(name.size() - ending.size());
  return name;
}

// An option of a wrapper (env's NAME=VALUE words set variables: skipped too).
bool is_option(const Wrapper& wrapper, const std::string& word) {
  if (word == "--" || word == "-") return false;
  if (word.starts_with("-") || word.starts_with("+")) return true;
  return wrapper.names.front() == "env" && word.find('=') != std::string::npos && !word.starts_with("=");
}

bool takes_value(const Wrapper& wrapper, const std::string& option) {
  if (option.find('=') != std::string::npos) return false;  // --nproc-per-node=8, NAME=VALUE
  bool listed = wrapper.exceptions.contains(option);
  return wrapper.options_take_values ? !listed : listed;
}

// A word a value-taking guess must not swallow: the script itself.
bool looks_like_the_program(const std::string& word) { return word.ends_with(".py") || word.starts_with("-"); }

// Walks a command's words, skipping wrappers, to the name of what it runs.
class NameFinder {
 public:
  explicit NameFinder(const std::vector<std::string>& command) : command_(command) {}

  // The name; "" for an empty command.
  std::string find() {
    while (at_ < command_.size()) {
      const std::string program = base_name(command_[at_]);
      const Wrapper* wrapper = wrapper_named(program);
      if (wrapper == nullptr) return without_script_ending(program);
      ++at_;
      last_wrapper_ = program;
      if (auto name = skip_options_and_operands(*wrapper, program)) return *name;
      if (at_ < command_.size() && command_[at_] == "--") ++at_;
    }
    return last_wrapper_;
  }

 private:
  std::optional<std::string> skip_options_and_operands(const Wrapper& wrapper, const std::string& program) {
    if (auto name = skip_options(wrapper, program)) return name;
    for (int operand = 0; operand < wrapper.operands && at_ < command_.size(); ++operand) {
      ++at_;
      if (auto name = skip_options(wrapper, program)) return name;
    }
    return std::nullopt;
  }

  // Moves past the wrapper's options; the name when one of them names it
  // (-m MODULE, -c CODE).
  std::optional<std::string> skip_options(const Wrapper& wrapper, const std::string& program) {
    while (at_ < command_.size() && is_option(wrapper, command_[at_])) {
      const std::string& word = command_[at_++];
      if (wrapper.module_option && (word == "-m" || word == "--module")) return module_name(wrapper);
      if (wrapper.code_option && word == "-c") return code_string_name(wrapper, program);
      if (takes_value(wrapper, word) && at_ < command_.size() && !looks_like_the_program(command_[at_])) ++at_;
    }
    return std::nullopt;
  }

  // The module after -m, unless it is torchrun itself, whose own options
  // and program follow.
  std::optional<std::string> module_name(const Wrapper& wrapper) {
    if (at_ >= command_.size()) return last_wrapper_;
    std::string module = command_[at_++];
    if (wrapper.names.front() != "python" || !is_torchrun_module(module)) return module;
    last_wrapper_ = "torchrun";
    if (auto name = skip_options(*wrapper_named("torchrun"), "torchrun")) return name;
    if (at_ < command_.size() && command_[at_] == "--") ++at_;
    return find();
  }

  // `python3 -c CODE` runs no file: the interpreter names the job. `bash -c
  // "python3 train.py --lr 1"` runs the command in its string.
  std::optional<std::string> code_string_name(const Wrapper& wrapper, const std::string& program) {
    if (wrapper.names.front() == "python" || at_ >= command_.size()) return program;
    std::vector<std::string> words;
    for (const auto& word : util::split(command_[at_], ' '))
      if (!word.empty()) words.push_back(word);
    std::string name = NameFinder(words).find();
    return name.empty() ? program : name;
  }

  const std::vector<std::string>& command_;
  std::size_t at_ = 0;
  std::string last_wrapper_;
};

bool fits_a_job_name(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '+' || c == '-';
}

}  // namespace

std::string sanitized_job_name(const std::string& text) {
  std::string name = text.substr(0, kMaxDerivedJobNameLength);
  std::replace_if(name.begin(), name.end(), [](char c) { return !fits_a_job_name(c); }, '_');
  if (name.find_first_not_of('_') == std::string::npos) return kFallbackJobName;
  return name;
}

std::string derived_job_name(const std::vector<std::string>& command) {
  std::string name = NameFinder(command).find();
  return sanitized_job_name(name.empty() ? kFallbackJobName : name);
}

}  // namespace dlaunch::submit
