// Writing the files a test reads back (a run's records, a submission
// folder), with the folders above them made first.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace dlaunch::test_support {

// Writes TEXT to PATH, replacing it, after creating PATH's folders.
inline void write_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

}  // namespace dlaunch::test_support
