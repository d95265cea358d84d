#include "util/socket.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/error.h"

namespace dlaunch::util {

namespace {

// Binds FD (of FAMILY) to every address at PORT and listens.
void bind_and_listen(const Fd& fd, int family, int port) {
  int on = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_storage storage{};
  socklen_t size = 0;
  if (family == AF_INET6) {
    auto* address = reinterpret_cast<sockaddr_in6*>(&storage);
    address->sin6_family = AF_INET6;
    address->sin6_addr = in6addr_any;
    address->sin6_port = htons(static_cast<std::uint16_t>(port));
    size = sizeof(sockaddr_in6);
  } else {
    auto* address = reinterpret_cast<sockaddr_in*>(&storage);
    address->sin_family = AF_INET;
    address->sin_addr.s_addr = htonl(INADDR_ANY);
    address->sin_port = htons(static_cast<std::uint16_t>(port));
    size = sizeof(sockaddr_in);
  }
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&storage), size) != 0) {
    int error = errno;
    if (error == EADDRINUSE)
      throw system_error(fmt::format("cannot bind TCP port {}: another process holds it (on IPv4 or IPv6, on "
                                     "some address of this host); choose another port",
                                     port),
                         error);
    throw system_error(fmt::format("cannot bind TCP port {}", port), error);
  }
  if (::listen(fd.get(), 4096) != 0) throw system_error(fmt::format("cannot listen on TCP port {}", port), errno);
}

}  // namespace

// Both families on one socket (IPV6_V6ONLY off): a name that resolves to
// ::1 as well as 127.0.0.1 (stock /etc/hosts for localhost) reaches this
// listener whichever address a dialer tries first, and no other user can
// hold the port on the family it did not bind and relay from there. Only a
// host without IPv6 (the socket cannot be made) falls back to IPv4 alone,
// where no one can bind an IPv6 address either. A port taken on either
// family is an error, never a reason to listen on one family only.
Fd listen_tcp(int port) {
  Fd dual(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (dual) {
    int off = 0;
    if (::setsockopt(dual.get(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) != 0)
      throw system_error("cannot make a socket listen on IPv4 and IPv6 together (IPV6_V6ONLY)", errno);
    bind_and_listen(dual, AF_INET6, port);
    return dual;
  }
  if (errno != EAFNOSUPPORT) throw system_error("cannot create a socket", errno);
  Fd ipv4(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!ipv4) throw system_error("cannot create a socket", errno);
  bind_and_listen(ipv4, AF_INET, port);
  return ipv4;
}

int bound_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    throw system_error("cannot read a socket's port", errno);
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
}

int millis_until(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1 << 30));
}

bool send_all(int fd, std::string_view bytes, std::chrono::milliseconds stall_limit) {
  while (!bytes.empty()) {
    ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    pollfd writable{fd, POLLOUT, 0};
    if (sent < 0 && errno == EAGAIN && ::poll(&writable, 1, static_cast<int>(stall_limit.count())) > 0)
      continue;
    return false;
  }
  return true;
}

namespace {

struct AddressList {
  addrinfo* head = nullptr;
  ~AddressList() {
    if (head != nullptr) ::freeaddrinfo(head);
  }
};

bool wait_connected(int fd, Clock::time_point deadline) {
  pollfd writable{fd, POLLOUT, 0};
  int ready = 0;
  do {
    ready = ::poll(&writable, 1, millis_until(deadline));
  } while (ready < 0 && errno == EINTR);
  if (ready <= 0) {
    errno = ETIMEDOUT;
    return false;
  }
  int error = 0;
  socklen_t length = sizeof(error);
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
  errno = error;
  return error == 0;
}

// An IPv4 peer of a dual-stack listener shows as ::ffff:a.b.c.d; it is
// named, and dialled back, as the IPv4 address it is.
std::string ip_text(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text, sizeof(text));
    return text;
  }
  if (address->sa_family != AF_INET6) return "";
  const in6_addr& ipv6 = reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&ipv6)) ::inet_ntop(AF_INET, &ipv6.s6_addr[12], text, sizeof(text));
  else ::inet_ntop(AF_INET6, &ipv6, text, sizeof(text));
  return text;
}

int port_of(const sockaddr* address) {
  if (address->sa_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(address)->sin_port);
  return ntohs(reinterpret_cast<const sockaddr_in6*>(address)->sin6_port);
}

std::string address_text(const sockaddr* address) {
  std::string ip = ip_text(address);
  if (ip.empty()) return "a non-IP address";
  if (ip.find(':') != std::string::npos) return fmt::format("[{}]:{}", ip, port_of(address));
  return fmt::format("{}:{}", ip, port_of(address));
}

}  // namespace

std::vector<TcpAddress> resolve_tcp(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  AddressList addresses;
  int status = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addresses.head);
  if (status != 0)
    throw SystemError(fmt::format("cannot resolve host '{}': {}", host, ::gai_strerror(status)));
  std::vector<TcpAddress> resolved;
  for (addrinfo* entry = addresses.head; entry != nullptr; entry = entry->ai_next) {
    if (entry->ai_addrlen > sizeof(sockaddr_storage)) continue;
    TcpAddress address;
    std::memcpy(&address.address, entry->ai_addr, entry->ai_addrlen);
    address.size = entry->ai_addrlen;
    address.text = address_text(entry->ai_addr);
    resolved.push_back(address);
  }
  return resolved;
}

// A socket binds only to an address of this host's own interfaces (else
// EADDRNOTAVAIL): the kernel's answer, which knows every alias, secondary
// address and namespace, where comparing interface lists would miss some.
bool names_this_host(const std::string& host) {
  std::vector<TcpAddress> addresses;
  try {
    addresses = resolve_tcp(host, 0);
  } catch (const SystemError&) {
    return false;
  }
  for (const auto& address : addresses) {
    const auto* raw = reinterpret_cast<const sockaddr*>(&address.address);
    Fd probe(::socket(raw->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (probe && ::bind(probe.get(), raw, address.size) == 0) return true;
  }
  return false;
}

Fd try_connect_address(const TcpAddress& address, Clock::time_point deadline) {
  const auto* raw = reinterpret_cast<const sockaddr*>(&address.address);
  Fd fd(::socket(raw->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return fd;
  if (::connect(fd.get(), raw, address.size) != 0 &&
      !(errno == EINPROGRESS && wait_connected(fd.get(), deadline)))
    return Fd();
  set_no_delay(fd.get());
  return fd;
}

Fd try_connect_tcp(const std::string& host, int port, Clock::time_point deadline) {
  for (const auto& address : resolve_tcp(host, port)) {
    if (Fd fd = try_connect_address(address, deadline)) return fd;
  }
  return Fd();
}

std::string peer_address(int fd) {
  sockaddr_storage address{};
  socklen_t size = sizeof(address);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) return "an unknown address";
  return address_text(reinterpret_cast<const sockaddr*>(&address));
}

std::string peer_ip(int fd) {
  sockaddr_storage address{};
  socklen_t size = sizeof(address);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) return "";
  return ip_text(reinterpret_cast<const sockaddr*>(&address));
}

void set_no_delay(int fd) {
  int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

}  // namespace dlaunch::util
