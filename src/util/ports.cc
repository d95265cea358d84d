#include "util/ports.h"

#include <cerrno>
#include <fmt/format.h>
#include <limits.h>
#include <unistd.h>

#include "util/error.h"
#include "util/socket.h"

namespace dlaunch::util {

// Both bind on every interface, as the workers' store will: a port free on
// one address but taken on another would still fail the workers.
int pick_free_port(const std::string& host) {
  try {
    Fd probe = listen_tcp(0);
    return bound_port(probe.get());
  } catch (const SystemError& error) {
    throw SystemError(fmt::format("cannot find a free port for {}: {}", host, error.what()));
  }
}

void ensure_port_free(const std::string& host, int port) {
  try {
    Fd probe = listen_tcp(port);
  } catch (const SystemError& error) {
    throw SystemError(fmt::format(
        "port {} for {} is not free on this machine ({}); choose another with --master-port",
        port, host, error.what()));
  }
}

std::string local_host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

}  // namespace dlaunch::util
