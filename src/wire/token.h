// The rendezvous secret: what proves a launcher belongs to the job.
//
// The token itself never crosses the wire. Node 0's service sends each new
// connection a fresh random challenge; a launcher answers with a nonce of its
// own and an HMAC-SHA256, under the token, of both nonces and its join
// request, so a recorded answer is useless on another connection and a peer
// without the token cannot forge one. Node 0 proves itself in turn with the
// session keys derived from the token and both nonces (wire/session.h).
// libsodium provides the HMAC, the constant-time comparison and the random
// bytes: no cryptography is written here.
#pragma once

#include <string>
#include <string_view>

namespace dlaunch::rendezvous {

inline constexpr std::size_t kChallengeSize = 32;

// A new secret of 256 random bits, as 64 hex digits.
std::string generate_token();

// KSIZE random bytes for a challenge.
std::string random_bytes(std::size_t size);

// HMAC-SHA256 of DATA under KEY (raw 32 bytes).
std::string hmac_sha256(std::string_view key, std::string_view data);

// A launcher's proof of TOKEN for the Join whose signed part is MESSAGE, on
// the connection whose service nonce is CHALLENGE and launcher nonce NONCE
// (raw 32 bytes).
std::string join_proof(std::string_view token, std::string_view challenge, std::string_view nonce,
                       std::string_view message);

// A probe's proof (survey/probe_responder.h): LABEL ("hello" from the
// prober, "ack" from the probed launcher) keeps the two directions and the
// Join apart, so no answer can be replayed as another.
std::string probe_proof(std::string_view token, std::string_view label, std::string_view challenge,
                        std::string_view nonce, std::string_view message);

// Compares two proofs in constant time.
bool proofs_match(std::string_view expected, std::string_view given);

// A token every launcher of one Slurm job computes alike, for users who
// opt in (--rdzv-token-derive) instead of distributing a secret. It keeps
// another job's or another user's launchers out by accident, not an attacker
// who can read the job id: the derivation is public.
std::string derive_token(std::string_view run_id, std::string_view job_id, unsigned user_id);

}  // namespace dlaunch::rendezvous
