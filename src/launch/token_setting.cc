#include "launch/token_setting.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fd.h"
#include "util/strings.h"
#include "wire/token.h"

namespace dlaunch::launch {
namespace {

// Shorter secrets are guessable; generate_token() makes 64 characters.
constexpr std::size_t kMinimumTokenLength = 16;

// A secret is one line; a bigger file is not one (and is not read whole).
constexpr std::size_t kMaxTokenFileBytes = 4096;

[[noreturn]] void too_big(const std::string& path, std::size_t bytes) {
  throw util::InputError(fmt::format(
      "--rdzv-token-file '{}' holds {} bytes; a secret is one line (at most {} bytes). Give the "
      "file that holds only the secret",
      path, bytes, kMaxTokenFileBytes));
}

// "a directory", "a FIFO": what PATH is instead of a regular file.
std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "a special file";
}

void check_token_file(const std::string& path, const struct stat& info) {
  if (S_ISDIR(info.st_mode))
    throw util::InputError(fmt::format(
        "--rdzv-token-file '{}' is a directory, not a file holding the secret; give the file "
        "itself (e.g. DIR/rdzv.token, where dlaunch submit writes one)",
        path));
  if (!S_ISREG(info.st_mode))
    throw util::InputError(fmt::format(
        "--rdzv-token-file '{}' is {}, not a regular file holding the secret; write the secret "
        "into a file (mode 600) and give that",
        path, file_kind(info.st_mode)));
  // As ssh does for private keys: a secret others can read is no secret.
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    throw util::InputError(fmt::format(
        "--rdzv-token-file '{}' can be read by other users (mode {:o}); run chmod 600 on it", path,
        info.st_mode & 0777));
  if (static_cast<std::size_t>(info.st_size) > kMaxTokenFileBytes)
    too_big(path, static_cast<std::size_t>(info.st_size));
}

// Opened without blocking (a FIFO would wait for a writer) and checked on
// the open file itself, so what is read is what was checked.
std::string read_token_file(const std::string& path) {
  util::Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!file)
    throw util::InputError(fmt::format("--rdzv-token-file '{}' cannot be opened: {}. Give a file that "
                                 "holds the secret",
                                 path, std::strerror(errno)));
  struct stat info {};
  if (::fstat(file.get(), &info) != 0)
    throw util::InputError(fmt::format("--rdzv-token-file '{}' cannot be examined: {}", path,
                                 std::strerror(errno)));
  check_token_file(path, info);
  std::string contents;
  char buffer[kMaxTokenFileBytes + 1];
  while (contents.size() <= kMaxTokenFileBytes) {
    ssize_t got = ::read(file.get(), buffer, sizeof(buffer));
    if (got == 0) break;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw util::InputError(fmt::format("--rdzv-token-file '{}' cannot be read: {}", path,
                                   std::strerror(errno)));
    contents.append(buffer, static_cast<std::size_t>(got));
  }
  if (contents.size() > kMaxTokenFileBytes) too_big(path, contents.size());  // it grew meanwhile
  return std::string(util::trim(contents));
}

void check_strength(const util::Sourced<std::string>& token) {
  if (token.value.size() < kMinimumTokenLength)
    throw util::InputError(fmt::format(
        "the rendezvous token from {} has {} characters; use at least {} (dlaunch submit makes "
        "64 random hex digits: e.g. `openssl rand -hex 32`)",
        token.source, token.value.size(), kMinimumTokenLength));
}

util::Sourced<std::string> derived_token(const util::Environment& environment, const Topology& topology) {
  auto job_id = environment.get("SLURM_JOB_ID");
  if (!job_id)
    throw util::InputError(
        "--rdzv-token-derive needs a Slurm job (SLURM_JOB_ID is unset); outside Slurm give every "
        "node the same --rdzv-token-file or $DLAUNCH_RDZV_TOKEN");
  return {rendezvous::derive_token(topology.run_id.value, *job_id, ::getuid()),
          "--rdzv-token-derive (run id, SLURM_JOB_ID, user id)"};
}

}  // namespace

std::string read_rdzv_token_file(const std::string& path) { return read_token_file(path); }

std::optional<util::Sourced<std::string>> resolve_rdzv_token(const RunOptions& options,
                                                       const util::Environment& environment,
                                                       const Topology& topology) {
  if (options.rdzv_token && options.rdzv_token_file)
    throw util::UsageError("give --rdzv-token or --rdzv-token-file, not both");
  std::optional<util::Sourced<std::string>> token;
  if (options.rdzv_token)
    token = util::Sourced<std::string>{options.rdzv_token->value, options.rdzv_token->source};
  else if (options.rdzv_token_file)
    token = util::Sourced<std::string>{read_token_file(options.rdzv_token_file->value),
                                 options.rdzv_token_file->source + " " + options.rdzv_token_file->value};
  else if (auto value = environment.get(kTokenVariable))
    token = util::Sourced<std::string>{*value, kTokenVariable};
  else if (options.rdzv_token_derive)
    return derived_token(environment, topology);
  if (token) check_strength(*token);
  return token;
}

}  // namespace dlaunch::launch
