// TCP port helpers: free ports and the bind check before use.
#pragma once

#include <string>

namespace dlaunch::util {

// A port the kernel reports free on HOST (bind to port 0, read, close).
// Throws SystemError when HOST cannot be resolved or bound.
int pick_free_port(const std::string& host);

// Throws SystemError naming HOST:PORT when binding it fails (in use, or
// not an address of this machine), so a clash is reported before workers start.
void ensure_port_free(const std::string& host, int port);

// This machine's host name.
std::string local_host_name();

}  // namespace dlaunch::util
