// libsodium, the rendezvous' cryptography (AEAD, HMAC, random bytes, the
// constant-time compare), made ready before its first use.
//
// Why libsodium and not OpenSSL's libcrypto: dlaunch needs four primitives,
// and libcrypto cost every launcher 1.4 MiB of resident memory and about
// 1.5 ms only to be loaded, and 2 MiB and more once its provider was set up
// (docs/BENCHMARKS.md, issue 28): at 1,024 launchers on a machine that was
// a fifth of the job's start.
#pragma once

namespace dlaunch::rendezvous {

// Calls sodium_init() once per process (thread-safe); throws SystemError
// when libsodium cannot start (no source of randomness).
void ensure_sodium();

}  // namespace dlaunch::rendezvous
