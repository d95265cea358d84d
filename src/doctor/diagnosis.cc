// Classifies one failure with the signature table and the traceback, and
// picks an attempt's root among its failures.
#include "doctor/diagnosis.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <fmt/format.h>

#include "util/signal_names.h"

namespace dlaunch::doctor {

namespace {

using rendezvous::Failure;

bool contains_folded(std::string_view text, std::string_view needle) {
  auto found = std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return found != text.end();
}

bool says(const Failure& failure, std::string_view needle) {
  if (contains_folded(failure.error_message, needle) || contains_folded(failure.description, needle)) return true;
  return std::any_of(failure.last_lines.begin(), failure.last_lines.end(),
                     [&](const std::string& line) { return contains_folded(line, needle); });
}

// The first row FAILURE matches. A worker that raised and was then killed
// (dlaunch's SIGTERM while it tore down) failed of its own: with an
// EXCEPTION read, the rows that know only the stop's exit code do not count.
const Signature* matching_row(const Failure& failure, bool exception) {
  for (const Signature& row : signature_table()) {
    if (exception && row.needle.empty() && row.consequence) continue;
    if (row.exit_code != kAnyExit && row.exit_code != failure.exit_code) continue;
    if (!row.needle.empty() && !says(failure, row.needle)) continue;
    return &row;
  }
  return nullptr;
}

// The kind of a failure no row matched.
FailureKind fallback_kind(const Failure& failure, bool has_exception) {
  if (failure.global_rank < 0)
    return failure.signal != 0 ? FailureKind::kLauncher : FailureKind::kLostNode;
  if (has_exception) return FailureKind::kPythonException;
  if (failure.signal != 0) return FailureKind::kSignal;
  return FailureKind::kExitCode;
}

// The exception from the traceback in the last lines, else from the error
// file's message ("ValueError: bad config", as torch's @record writes it).
void read_exception(const Failure& failure, Diagnosis& diagnosis) {
  if (auto error = parse_traceback(failure.last_lines)) {
    diagnosis.exception_type = error->type;
    diagnosis.exception_message = error->message;
    diagnosis.user_frame = innermost_user_frame(*error);
    diagnosis.traceback = error->lines;
    return;
  }
  std::string_view first_line = failure.error_message;
  first_line = first_line.substr(0, first_line.find('\n'));
  if (auto exception = split_exception_line(first_line); exception && first_line.find(':') != std::string_view::npos) {
    diagnosis.exception_type = exception->first;
    diagnosis.exception_message = exception->second;
  }
}

// The last line a person would read as the reason: not blank, not a
// traceback's frame or source line.
std::string last_meaningful_line(const Failure& failure) {
  for (auto line = failure.last_lines.rbegin(); line != failure.last_lines.rend(); ++line) {
    auto begin = line->find_first_not_of(" \t\r");
    if (begin == std::string::npos || begin > 0) continue;
    return *line;
  }
  return failure.global_rank < 0 ? failure.description : "";
}

std::string signature_of(const Failure& failure, const Diagnosis& diagnosis) {
  std::string kind(kind_id(diagnosis.kind));
  if (!diagnosis.exception_type.empty() && diagnosis.user_frame)
    return fmt::format("{} {} {}:{}", kind, diagnosis.exception_type, diagnosis.user_frame->file,
                       diagnosis.user_frame->line);
  std::string line = without_numbers(last_meaningful_line(failure));
  if (line.size() > 200) line.resize(200);
  return fmt::format("{} {}: {}", kind, failure.exit_code, line);
}

}  // namespace

Diagnosis diagnose(const Failure& failure) {
  Diagnosis diagnosis;
  diagnosis.exit_code = failure.exit_code;
  read_exception(failure, diagnosis);
  if (const Signature* row = matching_row(failure, !diagnosis.exception_type.empty())) {
    diagnosis.kind = row->kind;
    diagnosis.consequence = row->consequence;
  } else {
    diagnosis.kind = fallback_kind(failure, !diagnosis.exception_type.empty());
  }
  diagnosis.signature = signature_of(failure, diagnosis);
  return diagnosis;
}

std::string short_name(const Diagnosis& diagnosis) {
  std::string what = diagnosis.kind == FailureKind::kPythonException && !diagnosis.exception_type.empty()
                         ? diagnosis.exception_type
                         : std::string(kind_name(diagnosis.kind));
  if (diagnosis.kind == FailureKind::kExitCode) what = fmt::format("exit code {}", diagnosis.exit_code);
  if (diagnosis.user_frame)
    return fmt::format("{} at {}:{}", what, diagnosis.user_frame->file, diagnosis.user_frame->line);
  return what;
}

std::string root_cause_line(const Failure& failure, const Diagnosis& diagnosis) {
  std::string who = failure.global_rank >= 0 ? fmt::format("rank {}", failure.global_rank)
                    : failure.node_rank >= 0 ? fmt::format("node {}", failure.node_rank)
                                             : std::string("the job");
  std::string what = short_name(diagnosis);
  if (failure.signal != 0 && diagnosis.exception_type.empty())
    what += fmt::format(" ({})", util::signal_name(failure.signal));
  if (!diagnosis.exception_message.empty()) what += ": " + diagnosis.exception_message;
  if (diagnosis.kind != FailureKind::kPythonException && !diagnosis.exception_type.empty())
    what += fmt::format(" ({})", diagnosis.exception_type);
  return who + ": " + what;
}

std::string without_numbers(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    bool hex = text[i] == '0' && i + 2 < text.size() && (text[i + 1] == 'x' || text[i + 1] == 'X') &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2])) != 0;
    if (hex) {
      out += "0xN";
      for (i += 2; i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i])) != 0; ++i) {}
    } else if (std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
      out += 'N';
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) ++i;
    } else {
      out += text[i++];
    }
  }
  return out;
}

RootChoice choose_root(const std::vector<Failure>& failures) {
  RootChoice choice;
  choice.consequences = failures.empty() ? 0 : static_cast<int>(failures.size()) - 1;
  for (std::size_t i = 0; i < failures.size(); ++i) {
    if (!diagnose(failures[i]).consequence) {
      choice.root = i;
      break;
    }
  }
  return choice;
}

}  // namespace dlaunch::doctor
