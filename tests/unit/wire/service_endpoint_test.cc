#include "wire/service_endpoint.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../test_support/input_error.h"
#include "../test_support/temp_dir.h"
#include "util/error.h"

namespace dlaunch::rendezvous {
namespace {

namespace fs = std::filesystem;

TEST(ServiceEndpoint, TheNewestFileUnderTheFolderWins) {
  test_support::TempDir dir;
  fs::create_directories(dir.path() + "/logs/requeue_1");
  ASSERT_TRUE(write_endpoint(dir.path() + "/logs", ServiceEndpoint{"node1", "10.0.0.1", 20001, "7.0", "node1"}));
  ASSERT_TRUE(write_endpoint(dir.path() + "/logs/requeue_1", ServiceEndpoint{"node3", "10.0.0.3", 20002, "7.0", "node3"}));
  fs::last_write_time(dir.path() + "/logs/rendezvous.json",
                      fs::last_write_time(dir.path() + "/logs/requeue_1/rendezvous.json") - std::chrono::hours(1));
  auto endpoint = find_endpoint(dir.path());
  ASSERT_TRUE(endpoint);
  EXPECT_EQ(endpoint->address, "node3");
  EXPECT_EQ(endpoint->port, 20002);
  EXPECT_EQ(endpoint->run_id, "7.0");
  EXPECT_EQ(endpoint->ip, "10.0.0.3");
}

TEST(ServiceEndpoint, NoneIsNulloptAndGarbageIsNamed) {
  test_support::TempDir dir;
  EXPECT_FALSE(find_endpoint(dir.path()));
  std::ofstream(dir.path() + "/rendezvous.json") << "{\"address\": 5}";
  try {
    find_endpoint(dir.path());
    FAIL() << "garbage was taken for an endpoint";
  } catch (const util::InputError& error) {
    EXPECT_NE(std::string(error.what()).find("rendezvous.json is not a rendezvous endpoint file"), std::string::npos);
  }
  std::ofstream(dir.path() + "/rendezvous.json") << "{\"address\": \"a\", \"port\": 70000}";
  EXPECT_THROW(find_endpoint(dir.path()), util::InputError);
  EXPECT_FALSE(write_endpoint("", ServiceEndpoint{}));
}

// Issue 24: the folder `dlaunch stacks` reads may be shared or copied. A
// FIFO there made it wait forever in open(); now it is refused at once,
// naming the file, what it is and what was expected.
TEST(ServiceEndpoint, AFifoIsRefusedNotWaitedOn) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/rendezvous.json";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::string error = test_support::input_error_of([&] { (void)find_endpoint(dir.path()); });
  EXPECT_NE(error.find(path + " is a FIFO, where dlaunch expects a rendezvous endpoint file"), std::string::npos)
      << error;
  EXPECT_NE(error.find("Remove it"), std::string::npos) << error;
}

TEST(ServiceEndpoint, ALinkIsRefusedAsDlaunchWritesTheFileItself) {
  test_support::TempDir dir;
  fs::create_directories(dir.path() + "/elsewhere");
  ASSERT_TRUE(write_endpoint(dir.path() + "/elsewhere", ServiceEndpoint{"node1", "", 20001, "7.0", "node1"}));
  const std::string path = dir.path() + "/rendezvous.json";
  ASSERT_EQ(::symlink((dir.path() + "/elsewhere/rendezvous.json").c_str(), path.c_str()), 0);
  std::string error = test_support::input_error_of([&] { (void)find_endpoint(dir.path()); });
  EXPECT_NE(error.find(path + " is a symbolic link"), std::string::npos) << error;
}

TEST(ServiceEndpoint, AnOversizedFileIsRefusedUnread) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/rendezvous.json";
  std::ofstream(path) << R"({"address": "node1", "port": 20001, "pad": ")" << std::string(1 << 20, 'x') << "\"}";
  std::string error = test_support::input_error_of([&] { (void)find_endpoint(dir.path()); });
  EXPECT_NE(error.find(path + " is larger than 64 KiB, more than a rendezvous endpoint file"), std::string::npos)
      << error;
}

// A document nested far enough overflowed the stack when it was copied.
TEST(ServiceEndpoint, DeepNestingIsRefusedNotACrash) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/rendezvous.json";
  std::ofstream(path) << R"({"address": "node1", "port": 20001, "x": )" << std::string(30000, '[')
                      << std::string(30000, ']') << "}";
  std::string error = test_support::input_error_of([&] { (void)find_endpoint(dir.path()); });
  EXPECT_NE(error.find(path + " is not a rendezvous endpoint file (nested deeper than"), std::string::npos)
      << error;
}

TEST(ServiceEndpoint, NumericAddressOfANameAndOfAnAddress) {
  EXPECT_EQ(numeric_address("127.0.0.1", 1), "127.0.0.1");
  EXPECT_EQ(numeric_address("::1", 1), "::1");
  EXPECT_EQ(numeric_address("no-such-host.invalid", 1), "");
}

}  // namespace
}  // namespace dlaunch::rendezvous
