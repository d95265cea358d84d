#include "launch/token_setting.h"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "rendezvous/token.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch {
namespace {

// Shorter secrets are guessable; generate_token() makes 64 characters.
constexpr std::size_t kMinimumTokenLength = 16;

std::string read_token_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw InputError(fmt::format("--rdzv-token-file '{}': {}. Give a file that holds the secret",
                                 path, std::strerror(errno)));
  // As ssh does for private keys: a secret others can read is no secret.
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    throw InputError(fmt::format(
        "--rdzv-token-file '{}' can be read by other users (mode {:o}); run chmod 600 on it", path,
        info.st_mode & 0777));
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  if (!file) throw InputError(fmt::format("--rdzv-token-file '{}' cannot be read", path));
  return std::string(trim(contents.str()));
}

void check_strength(const Sourced<std::string>& token) {
  if (token.value.size() < kMinimumTokenLength)
    throw InputError(fmt::format(
        "the rendezvous token from {} has {} characters; use at least {} (dlaunch submit makes "
        "64 random hex digits: e.g. `openssl rand -hex 32`)",
        token.source, token.value.size(), kMinimumTokenLength));
}

Sourced<std::string> derived_token(const Environment& environment, const Topology& topology) {
  auto job_id = environment.get("SLURM_JOB_ID");
  if (!job_id)
    throw InputError(
        "--rdzv-token-derive needs a Slurm job (SLURM_JOB_ID is unset); outside Slurm give every "
        "node the same --rdzv-token-file or $DLAUNCH_RDZV_TOKEN");
  return {rendezvous::derive_token(topology.run_id.value, *job_id, ::getuid()),
          "--rdzv-token-derive (run id, SLURM_JOB_ID, user id)"};
}

}  // namespace

std::optional<Sourced<std::string>> resolve_rdzv_token(const RunOptions& options,
                                                       const Environment& environment,
                                                       const Topology& topology) {
  if (options.rdzv_token && options.rdzv_token_file)
    throw UsageError("give --rdzv-token or --rdzv-token-file, not both");
  std::optional<Sourced<std::string>> token;
  if (options.rdzv_token) token = Sourced<std::string>{options.rdzv_token->value, options.rdzv_token->source};
  else if (options.rdzv_token_file)
    token = Sourced<std::string>{read_token_file(options.rdzv_token_file->value),
                                 options.rdzv_token_file->source + " " + options.rdzv_token_file->value};
  else if (auto value = environment.get(kTokenVariable))
    token = Sourced<std::string>{*value, kTokenVariable};
  else if (options.rdzv_token_derive)
    return derived_token(environment, topology);
  if (token) check_strength(*token);
  return token;
}

}  // namespace dlaunch
