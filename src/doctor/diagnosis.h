// What one failure was (its kind, exception, the user's line that raised
// it), a signature that is the same for the same bug on any rank and in
// any attempt, and which of one attempt's failures is the root.
//
// Pure: reads a Failure (wire/world.h) and the signature table
// (doctor/failure_signature.h), so node 0's service, a lone launcher and
// the summary all judge alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "doctor/failure_signature.h"
#include "doctor/traceback.h"
#include "wire/world.h"

namespace dlaunch::doctor {

struct Diagnosis {
  FailureKind kind = FailureKind::kExitCode;
  int exit_code = 0;  // the failure's, for a name when nothing better is known
  bool consequence = false;  // a cascade of another rank's failure
  std::string exception_type;   // "ValueError"; empty without a Python exception
  std::string exception_message;
  std::optional<Frame> user_frame;  // the innermost frame of the user's code
  std::vector<std::string> traceback;  // the traceback's lines as printed; empty if none
  // Rank-, pid-, address- and port-free: "python_exception ValueError
  // train.py:12", or "exit_code 3: <last meaningful line>".
  std::string signature;
};

// FAILURE classified by the first matching row of the table, else by what
// it is: a Python exception (from its traceback or its error file's
// message), a signal, a lost node, a plain exit code.
Diagnosis diagnose(const rendezvous::Failure& failure);

// "ValueError at train.py:12", "CUDA out of memory at model.py:80",
// "exit code 3": the few words that name the failure in a sentence.
std::string short_name(const Diagnosis& diagnosis);

// The root failure in one line for the summary and `dlaunch status`:
// "rank 2: ValueError at train.py:12: bad config", "rank 0: killed by a
// signal (SIGSEGV)", "node 1: lost node".
std::string root_cause_line(const rendezvous::Failure& failure, const Diagnosis& diagnosis);

// TEXT with what differs between ranks and runs made alike: digit runs
// become "N", hexadecimal addresses "0xN".
std::string without_numbers(std::string_view text);

// One attempt's failures, in the order they happened.
struct RootChoice {
  std::size_t root = 0;  // index of the root failure
  int consequences = 0;  // the other failures: ranks that failed because of it
};

// The root of FAILURES (not empty): the first that is not a consequence
// signature, else the first.
RootChoice choose_root(const std::vector<rendezvous::Failure>& failures);

}  // namespace dlaunch::doctor
