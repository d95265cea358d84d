// Reading the error file a worker leaves at TORCHELASTIC_ERROR_FILE.
//
// The worker owns that path, and a broken or hostile worker may put
// anything there: a FIFO (a blocking open would hang the launcher, deaf to
// SIGTERM), a device, gigabytes, JSON nested a million deep. Only a regular
// file of at most kMaxErrorFileBytes is read, as JSON nested at most
// util::kMaxJsonDepth deep; anything else gives no message, and the failure
// summary shows the worker's last log lines instead, as it does when a
// worker leaves no error file.
#pragma once

#include <cstddef>
#include <string>

namespace dlaunch::launch {

// torch's @record writes a traceback of some KiB; 1 MiB holds any real one.
inline constexpr std::size_t kMaxErrorFileBytes = 1 << 20;
// The message as the summary shows it: a traceback's worth, not a book.
inline constexpr std::size_t kMaxErrorMessageBytes = 16 * 1024;

// The message of the error file torch.distributed.elastic's @record writes
// ({"message": {"message": "...", "extraInfo": {...}}}, or a plain string),
// cut to kMaxErrorMessageBytes. Empty when there is no file or it cannot
// be read: a summary without it is still useful, so this never throws.
std::string read_error_file_message(const std::string& path);

// The same, from the file's TEXT (pure; the fuzz target's entry).
std::string error_file_message(const std::string& text);

}  // namespace dlaunch::launch
