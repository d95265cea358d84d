// TCP sockets with deadlines: listening, resolving, connecting, sending.
#include "util/socket.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "util/error.h"

namespace dlaunch::util {
namespace {

using std::chrono::milliseconds;

Fd accept_one(int listener) { return Fd(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC)); }

TEST(Socket, ListensOnAPortTheKernelChoseAndTakesItBackAtOnce) {
  int port = 0;
  {
    Fd listener = listen_tcp(0);
    port = bound_port(listener.get());
    EXPECT_GT(port, 0);
    Fd client = try_connect_tcp("127.0.0.1", port, Clock::now() + milliseconds(2000));
    ASSERT_TRUE(client.valid());
    Fd served = accept_one(listener.get());
    ASSERT_TRUE(served.valid());
  }
  // SO_REUSEADDR: a restarted job takes its port back despite TIME_WAIT.
  EXPECT_NO_THROW(listen_tcp(port));
}

TEST(Socket, APortTakenIsNamed) {
  Fd listener = listen_tcp(0);
  int port = bound_port(listener.get());
  try {
    listen_tcp(port);
    FAIL() << "port " << port << " was bound twice";
  } catch (const SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot bind TCP port " + std::to_string(port)),
              std::string::npos)
        << error.what();
  }
}

// Whether this host can bind ::1 (a container may have no IPv6 at all).
bool has_ipv6_loopback() {
  Fd probe(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe) return false;
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  return ::bind(probe.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
}

// A listener of another process on [::1]:PORT only, as a local attacker
// binds it to relay a dual-stack name's first answer.
Fd squat_ipv6_loopback(int port) {
  Fd squatter(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int on = 1;
  ::setsockopt(squatter.get(), IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  address.sin6_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(squatter.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return Fd();
  ::listen(squatter.get(), 1);
  return squatter;
}

// One listener takes both families: a dialer that tries ::1 first (a name
// mapped to both) reaches it as surely as one that tries 127.0.0.1, and
// the IPv4 peer is named as the IPv4 address it is.
TEST(Socket, TheListenerTakesIPv4AndIPv6Together) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "this host has no IPv6 loopback";
  Fd listener = listen_tcp(0);
  int port = bound_port(listener.get());
  Fd over_ipv6 = try_connect_tcp("::1", port, Clock::now() + milliseconds(2000));
  ASSERT_TRUE(over_ipv6.valid());
  Fd accepted_ipv6 = accept_one(listener.get());
  EXPECT_EQ(peer_ip(accepted_ipv6.get()), "::1");
  Fd over_ipv4 = try_connect_tcp("127.0.0.1", port, Clock::now() + milliseconds(2000));
  ASSERT_TRUE(over_ipv4.valid());
  Fd accepted_ipv4 = accept_one(listener.get());
  EXPECT_EQ(peer_ip(accepted_ipv4.get()), "127.0.0.1");
  EXPECT_EQ(peer_address(accepted_ipv4.get()).rfind("127.0.0.1:", 0), 0u) << peer_address(accepted_ipv4.get());
  // Nobody else can take the port on the other family once it is held.
  EXPECT_FALSE(squat_ipv6_loopback(port).valid());
}

// A port someone holds on [::1] alone is refused, never listened to on
// IPv4 only: that would leave the squatter between the dialers and node 0.
TEST(Socket, APortHeldOnIPv6AloneIsRefusedNotSplit) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "this host has no IPv6 loopback";
  Fd free_port = listen_tcp(0);
  int port = bound_port(free_port.get());
  free_port.reset();
  Fd squatter = squat_ipv6_loopback(port);
  ASSERT_TRUE(squatter.valid());
  try {
    listen_tcp(port);
    FAIL() << "listened on port " << port << " beside a squatter on [::1]";
  } catch (const SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("another process holds it"), std::string::npos) << error.what();
  }
}

TEST(Socket, ResolvesNumericAddressesAsTheyAre) {
  auto addresses = resolve_tcp("127.0.0.1", 29500);
  ASSERT_EQ(addresses.size(), 1u);
  EXPECT_EQ(addresses[0].text, "127.0.0.1:29500");
}

TEST(Socket, AConnectionNobodyAcceptsIsRefusedAtOnce) {
  int port = 0;
  {
    Fd listener = listen_tcp(0);
    port = bound_port(listener.get());
  }
  auto start = Clock::now();
  // Refused, not waited out: far below the minute a retrying dial would
  // take, and far above what a loaded machine needs (issue 28).
  Fd client = try_connect_tcp("127.0.0.1", port, start + milliseconds(60'000));
  EXPECT_FALSE(client.valid());
  EXPECT_LT(Clock::now() - start, milliseconds(30'000));
}

TEST(Socket, ConnectionsAreNonBlockingWithoutNagle) {
  Fd listener = listen_tcp(0);
  Fd client = try_connect_tcp("127.0.0.1", bound_port(listener.get()), Clock::now() + milliseconds(2000));
  ASSERT_TRUE(client.valid());
  EXPECT_TRUE(::fcntl(client.get(), F_GETFL) & O_NONBLOCK);
  int no_delay = 0;
  socklen_t size = sizeof(no_delay);
  ASSERT_EQ(::getsockopt(client.get(), IPPROTO_TCP, TCP_NODELAY, &no_delay, &size), 0);
  EXPECT_NE(no_delay, 0);
  Fd served = accept_one(listener.get());
  sockaddr_in local{};
  socklen_t local_size = sizeof(local);
  ASSERT_EQ(::getsockname(client.get(), reinterpret_cast<sockaddr*>(&local), &local_size), 0);
  EXPECT_EQ(peer_address(served.get()), "127.0.0.1:" + std::to_string(ntohs(local.sin_port)));
  EXPECT_EQ(peer_address(listener.get()), "an unknown address");
}

TEST(Socket, SendAllDeliversEverythingOrGivesUpOnAPeerThatDoesNotRead) {
  Fd listener = listen_tcp(0);
  Fd client = try_connect_tcp("127.0.0.1", bound_port(listener.get()), Clock::now() + milliseconds(2000));
  ASSERT_TRUE(client.valid());
  Fd served = accept_one(listener.get());
  ASSERT_TRUE(send_all(client.get(), "hello", milliseconds(1000)));
  char buffer[8];
  EXPECT_EQ(::recv(served.get(), buffer, sizeof(buffer), 0), 5);

  // Nobody reads: send_all stops after the stall limit instead of blocking.
  std::string lots(1 << 20, 'x');
  auto start = Clock::now();
  bool sent = true;
  for (int i = 0; i < 64 && sent; ++i) sent = send_all(client.get(), lots, milliseconds(200));
  EXPECT_FALSE(sent);
  EXPECT_LT(Clock::now() - start, milliseconds(10000));

  served.reset();  // gone: no SIGPIPE, just false
  EXPECT_FALSE(send_all(client.get(), "x", milliseconds(200)));
}

TEST(Socket, MillisUntilIsNeverNegative) {
  EXPECT_EQ(millis_until(Clock::now() - milliseconds(500)), 0);
  int left = millis_until(Clock::now() + milliseconds(1000));
  EXPECT_GT(left, 900);
  EXPECT_LE(left, 1000);
}

}  // namespace
}  // namespace dlaunch::util
