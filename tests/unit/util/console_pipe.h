// Test helpers shared by the console sink's and the console watch's tests:
// a pipe whose reader reads only when told, and lines that can be checked
// for tearing.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <string>

#include "util/fd.h"

namespace dlaunch::test_support {

// A pipe that holds one page (4096 bytes), whose reader reads only when told.
struct SmallPipe {
  util::Pipe pipe = util::make_pipe();
  SmallPipe() { ::fcntl(pipe.write_end.get(), F_SETPIPE_SZ, 4096); }
  int writer() const { return pipe.write_end.get(); }
  // Everything the pipe holds now (never waits).
  std::string read_now() {
    int flags = ::fcntl(pipe.read_end.get(), F_GETFL);
    ::fcntl(pipe.read_end.get(), F_SETFL, flags | O_NONBLOCK);
    std::string all;
    char buffer[4096];
    ssize_t got;
    while ((got = ::read(pipe.read_end.get(), buffer, sizeof(buffer))) > 0)
      all.append(buffer, static_cast<std::size_t>(got));
    ::fcntl(pipe.read_end.get(), F_SETFL, flags);
    return all;
  }
};

// "line N xxx...x\n", WIDTH bytes in all.
inline std::string numbered_line(int n, std::size_t width = 60) {
  std::string line = "line " + std::to_string(n) + " ";
  line.resize(width - 1, 'x');
  return line + "\n";
}

}  // namespace dlaunch::test_support
