// Reading a Python traceback out of what a worker printed last.
//
// The text is the worker's: any bytes, any length, a traceback cut at the
// top by the tail's line limit, several chained ones ("During handling of
// the above exception..."). The parser never throws and never recurses;
// it takes the last traceback it finds, as that is the one that ended the
// process. fuzz/traceback_fuzz.cc feeds it arbitrary lines.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlaunch::doctor {

// One `  File "train.py", line 12, in load_config` line.
struct Frame {
  std::string file;
  int line = 0;
  std::string function;
};

// The exception a traceback ends with, and the frames that led to it.
struct PythonError {
  std::string type;             // "ValueError", "torch.cuda.OutOfMemoryError"
  std::string message;          // what follows "Type: ", may be empty
  std::vector<Frame> frames;    // outermost first, as Python prints them
  std::vector<std::string> lines;  // the traceback as printed, from its "Traceback" line
};

// The last traceback in LINES (a worker's last stderr lines), with its
// exception line; nullopt when there is none, or no exception line follows
// its frames (the tail was cut inside it). A "[rank2]:" or "[default0]:"
// prefix that a launcher put before each line is skipped.
std::optional<PythonError> parse_traceback(const std::vector<std::string>& lines);

// "Type: message" (an exception line, or error.json's message) as type and
// message; nullopt when LINE does not start with a dotted Python name
// followed by ":" or the end.
std::optional<std::pair<std::string, std::string>> split_exception_line(std::string_view line);

// True for a frame of Python itself or of an installed library (torch,
// site-packages, dist-packages, "<frozen ...>", "<string>"): not the
// user's code, so never the place a failure is blamed on.
bool is_library_file(std::string_view file);

// The innermost frame of the user's own code; nullopt when every frame is
// a library's.
std::optional<Frame> innermost_user_frame(const PythonError& error);

}  // namespace dlaunch::doctor
