// The folder every submission gets: <output-dir>/<YYYYmmdd_HHMMSS>[_N]/.
#pragma once

#include <ctime>
#include <string>

namespace dlaunch::submit {

// "20261202_174501" for WHEN, in local time.
std::string timestamp_for(std::time_t when);

// The absolute path the next submission at TIMESTAMP would get under
// OUTPUT_DIR (the first of NAME, NAME_1, NAME_2, ... that does not exist).
std::string next_submission_path(const std::string& output_dir, const std::string& timestamp);

// Creates that folder atomically (two submissions in the same second get
// different folders). Throws SystemError naming the folder, and InputError
// when OUTPUT_DIR is another user's or others may write in it
// (util/trusted_folder.h).
std::string create_submission_folder(const std::string& output_dir, const std::string& timestamp);

// Writes SECRET (and a newline) to a new file at PATH that only its owner
// can read: created with O_EXCL and mode 0600, so it is never readable by
// others, not even for a moment, and never replaces an existing file or
// follows a link. Throws SystemError naming PATH.
void write_secret_file(const std::string& path, const std::string& secret);

}  // namespace dlaunch::submit
