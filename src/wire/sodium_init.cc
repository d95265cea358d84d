#include "wire/sodium_init.h"

#include <sodium.h>

#include "util/error.h"

namespace dlaunch::rendezvous {

void ensure_sodium() {
  // sodium_init() is itself safe to call from several threads and again;
  // the static only spares the call after the first.
  static const bool ready = sodium_init() >= 0;
  if (!ready)
    throw util::SystemError("cannot start libsodium for the rendezvous' encryption (no source of random bytes: "
                            "is /dev/urandom or getrandom() available?)");
}

}  // namespace dlaunch::rendezvous
