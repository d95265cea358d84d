#include "launch/verdict_line.h"

#include <fmt/format.h>

#include "util/strings.h"
#include "wire/token.h"

namespace dlaunch::launch {
namespace {

constexpr std::string_view kLead = "dlaunch: the job's verdict: ";
constexpr std::string_view kTagLead = " [verdict ";

std::string hex(std::string_view bytes) {
  std::string text;
  for (unsigned char byte : bytes) text += fmt::format("{:02x}", byte);
  return text;
}

// The tag of STATE and CODE for RUN_ID under TOKEN, as hex.
std::string tag(const std::string& token, const std::string& run_id, std::string_view state, int code) {
  return hex(rendezvous::hmac_sha256(token, fmt::format("dlaunch ssh verdict\n{}\n{}\n{}", run_id, state, code)));
}

std::string state_of(const rendezvous::Verdict& verdict) {
  return verdict.kind == rendezvous::Verdict::Kind::kSucceeded ? "COMPLETED" : "FAILED";
}

}  // namespace

std::string verdict_line(const rendezvous::Verdict& verdict, const std::string& run_id, const std::string& token) {
  const std::string state = state_of(verdict);
  return fmt::format("{}{} with exit code {}{}{}]", kLead, state, verdict.exit_code, kTagLead,
                     tag(token, run_id, state, verdict.exit_code));
}

std::optional<AnnouncedVerdict> read_verdict_line(std::string_view line, const std::string& run_id,
                                                  const std::string& token) {
  line = util::trim(line);
  if (!line.starts_with(kLead) || !line.ends_with("]")) return std::nullopt;
  line.remove_prefix(kLead.size());
  line.remove_suffix(1);
  auto tag_at = line.find(kTagLead);
  if (tag_at == std::string_view::npos) return std::nullopt;
  std::string_view given = line.substr(tag_at + kTagLead.size());
  std::string_view said = line.substr(0, tag_at);
  constexpr std::string_view kCode = " with exit code ";
  auto code_at = said.find(kCode);
  if (code_at == std::string_view::npos) return std::nullopt;
  std::string state(said.substr(0, code_at));
  auto code = util::parse_int(said.substr(code_at + kCode.size()));
  if ((state != "COMPLETED" && state != "FAILED") || !code || *code < 0 || *code > 255) return std::nullopt;
  if (!rendezvous::proofs_match(tag(token, run_id, state, static_cast<int>(*code)), given)) return std::nullopt;
  return AnnouncedVerdict{state, static_cast<int>(*code)};
}

}  // namespace dlaunch::launch
