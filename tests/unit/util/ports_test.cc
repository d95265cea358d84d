// Free ports, and the check that a port is free before workers use it.
#include "util/ports.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "util/error.h"
#include "util/socket.h"

namespace dlaunch::util {
namespace {

TEST(Ports, AFreePortCanBeBound) {
  int port = pick_free_port("127.0.0.1");
  EXPECT_GT(port, 0);
  EXPECT_LE(port, 65535);
  EXPECT_NO_THROW(ensure_port_free("127.0.0.1", port));
  Fd listener = listen_tcp(port);
  EXPECT_EQ(bound_port(listener.get()), port);
}

TEST(Ports, APortInUseIsNamedWithWhatToDo) {
  Fd listener = listen_tcp(0);
  int port = bound_port(listener.get());
  try {
    ensure_port_free("node1", port);
    FAIL() << "port " << port << " was reported free while it is in use";
  } catch (const SystemError& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("port " + std::to_string(port) + " for node1 is not free on this machine"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("choose another with --master-port"), std::string::npos) << message;
  }
}

TEST(Ports, LocalHostNameIsTheKernels) {
  char name[HOST_NAME_MAX + 1] = {};
  ASSERT_EQ(::gethostname(name, sizeof(name) - 1), 0);
  EXPECT_EQ(local_host_name(), std::string(name));
  EXPECT_FALSE(local_host_name().empty());
}

}  // namespace
}  // namespace dlaunch::util
