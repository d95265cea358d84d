// What a call says when the user's input is refused: the one way every
// unit test reads an InputError's message.
#pragma once

#include <functional>
#include <string>

#include "util/error.h"

namespace dlaunch::test_support {

// The message of the InputError CALL throws, or "no error" when it throws
// none (so an EXPECT on the text also fails when nothing was refused).
inline std::string input_error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const util::InputError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace dlaunch::test_support
