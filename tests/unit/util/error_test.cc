// The error family: which error is which kind (dlaunch_main maps the kind
// to the exit code), system_error() naming errno's text, Interrupted
// carrying its signal, and DLAUNCH_ASSERT.
#include "util/error.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace dlaunch::util {
namespace {

// Which of the family's catch clauses (in dlaunch_main's order: the most
// derived first) takes what THROWER throws.
template <typename Thrower>
std::string caught_as(Thrower thrower) {
  try {
    thrower();
  } catch (const UsageError&) {
    return "usage";
  } catch (const InputError&) {
    return "input";
  } catch (const ProtocolError&) {
    return "protocol";
  } catch (const SystemError&) {
    return "system";
  } catch (const Interrupted&) {
    return "interrupted";
  } catch (const std::exception&) {
    return "exception";
  } catch (...) {
    return "other";
  }
  return "nothing";
}

TEST(Error, EachErrorIsCaughtAsItsOwnKind) {
  EXPECT_EQ(caught_as([] { throw UsageError("u"); }), "usage");
  EXPECT_EQ(caught_as([] { throw InputError("i"); }), "input");
  EXPECT_EQ(caught_as([] { throw ProtocolError("p"); }), "protocol");
  EXPECT_EQ(caught_as([] { throw SystemError("s"); }), "system");
  EXPECT_EQ(caught_as([] { throw Interrupted(SIGTERM); }), "interrupted");
}

TEST(Error, TheFamilyNestsAsTheExitCodesNeed) {
  // A usage error is a user error (exit 2).
  EXPECT_TRUE((std::is_base_of_v<InputError, UsageError>));
  // A peer's garbage is the outside world failing us (exit 1), not a bug.
  EXPECT_TRUE((std::is_base_of_v<SystemError, ProtocolError>));
  EXPECT_FALSE((std::is_base_of_v<InputError, SystemError>));
  EXPECT_FALSE((std::is_base_of_v<SystemError, InputError>));
  // Everything reaches a catch of std::exception, so none is lost as "unknown".
  EXPECT_TRUE((std::is_base_of_v<std::exception, InputError>));
  EXPECT_TRUE((std::is_base_of_v<std::exception, SystemError>));
  EXPECT_TRUE((std::is_base_of_v<std::exception, Interrupted>));
}

TEST(Error, AProtocolErrorIsCaughtWhereASystemErrorIs) {
  try {
    throw ProtocolError("frame fails its authentication");
  } catch (const SystemError& error) {
    EXPECT_STREQ(error.what(), "frame fails its authentication");
  }
}

TEST(Error, SystemErrorEndsWithErrnosText) {
  for (int error : {ENOENT, EACCES, ECONNREFUSED}) {
    SystemError made = system_error("cannot open /some/file", error);
    EXPECT_EQ(std::string(made.what()), std::string("cannot open /some/file: ") + std::strerror(error));
  }
  EXPECT_STRNE(system_error("x", ENOENT).what(), system_error("x", EACCES).what());
}

TEST(Error, InterruptedCarriesItsSignal) {
  Interrupted by_term(SIGTERM);
  EXPECT_EQ(by_term.signal, SIGTERM);
  EXPECT_EQ(std::string(by_term.what()), "stopped by signal " + std::to_string(SIGTERM));
  EXPECT_EQ(Interrupted(SIGINT).signal, SIGINT);
}

TEST(Error, AnAssertionThatHoldsEvaluatesItsExpressionOnce) {
  int evaluated = 0;
  DLAUNCH_ASSERT(++evaluated == 1);
  EXPECT_EQ(evaluated, 1);
}

TEST(ErrorDeathTest, AFailedAssertionAbortsAsAnInternalError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  int two = 2;
  EXPECT_DEATH(DLAUNCH_ASSERT(two == 3),
               "dlaunch: internal error: assertion 'two == 3' failed at .*error_test\\.cc:[0-9]+");
}

}  // namespace
}  // namespace dlaunch::util
