#include "collective/store_secret.h"

#include <cerrno>
#include <cstdlib>
#include <fmt/format.h>
#include <unistd.h>

#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::collective {
namespace {

constexpr const char* kVariable = "DLAUNCH_STORE_SECRET_FD";
constexpr std::size_t kLongestSecret = 256;

}  // namespace

std::optional<std::string> take_store_secret() {
  const char* named = std::getenv(kVariable);
  if (named == nullptr) return std::nullopt;
  const int fd = static_cast<int>(util::parse_int_in_range(named, 3, 1 << 20, kVariable));
  ::unsetenv(kVariable);
  std::string secret;
  char buffer[kLongestSecret + 1];
  for (;;) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw util::InputError(fmt::format("{} names descriptor {}, which cannot be read; it is set by the "
                                         "launcher that starts the gate's check, not by hand",
                                         kVariable, fd));
    if (got == 0) break;
    secret.append(buffer, static_cast<std::size_t>(got));
    if (secret.size() > kLongestSecret) break;
  }
  ::close(fd);
  if (secret.empty() || secret.size() > kLongestSecret)
    throw util::InputError(fmt::format("the store secret on descriptor {} ({}) is {} bytes, expected 1 to {}",
                                       fd, kVariable, secret.size(), kLongestSecret));
  return secret;
}

}  // namespace dlaunch::collective
