// A call that may hang (a read of a shared file system), given a deadline:
// its value, or nothing once it overran or threw, and the caller is free.
#include "util/bounded_call.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>

namespace dlaunch::util {
namespace {

using namespace std::chrono_literals;

// The limits below only catch a call that never returns: a quick call
// finishes long before them.
constexpr auto kNoHurry = 60s;

TEST(CallWithin, AQuickCallGivesItsValue) {
  EXPECT_EQ(call_within<int>(kNoHurry, [] { return 42; }), 42);
  EXPECT_EQ(call_within<std::string>(kNoHurry, [] { return std::string("result.json"); }), "result.json");
}

TEST(CallWithin, ACallThatThrowsGivesNothing) {
  EXPECT_EQ(call_within<int>(kNoHurry, []() -> int { throw std::runtime_error("Stale file handle"); }),
            std::nullopt);
}

// Sets a promise when it is destroyed: the work's closure holds the only
// one, and the abandoned thread destroys it as it ends.
class EndOfWork {
 public:
  explicit EndOfWork(std::promise<void>& ended) : ended_(ended) {}
  ~EndOfWork() { ended_.set_value(); }
  EndOfWork(const EndOfWork&) = delete;
  EndOfWork& operator=(const EndOfWork&) = delete;

 private:
  std::promise<void>& ended_;
};

// An NFS read that blocks: the work cannot finish until the test lets it,
// so the call can only have returned by giving up on it. The test lets it
// go afterwards and waits until its thread has finished, so that no thread
// is left blocked behind it.
TEST(CallWithin, ACallThatOverrunsGivesNothingAndDoesNotHoldTheCaller) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> ended;
  std::future<void> work_ended = ended.get_future();
  std::promise<void> started;
  std::future<void> work_started = started.get_future();

  auto value = call_within<int>(50ms, [released, &started, end = std::make_shared<EndOfWork>(ended)] {
    started.set_value();
    released.wait();
    return 7;  // too late: dropped
  });
  EXPECT_EQ(value, std::nullopt);
  // The work did run (it was not merely never started) and is still blocked.
  ASSERT_EQ(work_started.wait_for(kNoHurry), std::future_status::ready);
  EXPECT_EQ(work_ended.wait_for(0s), std::future_status::timeout);

  release.set_value();
  EXPECT_EQ(work_ended.wait_for(kNoHurry), std::future_status::ready) << "the abandoned thread did not finish";
}

}  // namespace
}  // namespace dlaunch::util
