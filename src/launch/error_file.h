// Reading the error file a worker leaves at TORCHELASTIC_ERROR_FILE.
#pragma once

#include <string>

namespace dlaunch::launch {

// The message of the error file torch.distributed.elastic's @record writes
// ({"message": {"message": "...", "extraInfo": {...}}}, or a plain string).
// Empty when there is no file or it cannot be read: a summary without it is
// still useful, so this never throws.
std::string read_error_file_message(const std::string& path);

}  // namespace dlaunch::launch
