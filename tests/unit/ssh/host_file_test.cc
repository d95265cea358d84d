// dlaunch ssh's host lists: hostfiles in DeepSpeed's format, --include/--exclude.
#include <gtest/gtest.h>

#include "ssh/host_file.h"
#include "util/error.h"

namespace dlaunch::ssh {
namespace {

std::vector<std::string> names(const std::vector<HostEntry>& hosts) {
  std::vector<std::string> result;
  for (const auto& entry : hosts) result.push_back(entry.host);
  return result;
}

std::string message_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const util::InputError& error) {
    return error.what();
  }
  return "<no error>";
}

TEST(SshHosts, HostfileTakesSlotsCommentsAndHostlists) {
  auto hosts = parse_host_file(
      "# the GPU servers\n"
      "gpu[01-02] slots=8   # two alike\n"
      "\n"
      "big slots=4\n"
      "plain\n",
      "hosts.txt");
  EXPECT_EQ(names(hosts), (std::vector<std::string>{"gpu01", "gpu02", "big", "plain"}));
  EXPECT_EQ(hosts[0].slots, 8);
  EXPECT_EQ(hosts[1].slots, 8);
  EXPECT_EQ(hosts[2].slots, 4);
  EXPECT_FALSE(hosts[3].slots);
}

TEST(SshHosts, BadHostfileLinesNameTheFileAndLine) {
  EXPECT_NE(message_of([] { parse_host_file("a\nb slots=zero\n", "f"); }).find("f:2"), std::string::npos);
  EXPECT_NE(message_of([] { parse_host_file("a gpus=2\n", "f"); }).find("expected 'HOST [slots=N]'"),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_host_file("a\nn[1-2]\nn2\n", "f"); }).find("'n2' is listed twice"),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_host_file("# nothing\n", "f"); }).find("lists no host"),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_host_file("n[1-\n", "f"); }), "<no error>");
  // Two ranges, each within Slurm's 65536 hosts per range, together too many.
  EXPECT_NE(message_of([] { parse_host_file("gpu[1-60000,60001-120000] slots=8\n", "f"); })
                .find("f:1: 'gpu[1-60000,60001-120000]' makes the host list longer than 100000 hosts"),
            std::string::npos);
}

// MPICH's hostfile and Horovod's -H write slots as HOST:N; here that would
// become an ssh to "node1:4". Refused, saying what to write instead.
TEST(SshHosts, HostColonSlotsIsRefusedWithTheSlotsForm) {
  EXPECT_EQ(message_of([] { parse_host_file("node0 slots=4\nnode1:4\n", "hosts.txt"); }),
            "hosts.txt:2: 'node1:4' is no host name (HOST:N is MPI's and Horovod's way to give slots); a "
            "line here is 'HOST [slots=N]': for 4 workers write 'node1 slots=4'. An ssh port goes in "
            "~/.ssh/config (Host node1 / Port N)");
  EXPECT_NE(message_of([] { parse_host_file("gpu[01-04]:8\n", "f"); }).find("write 'gpu[01-04] slots=8'"),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_host_file("a:1,b:2\n", "f"); }).find("'a:1' is no host name"), std::string::npos);
  std::string named = message_of([] { parse_host_file("node1:x\n", "f"); });
  EXPECT_NE(named.find("f:1: 'node1:x' is no host name; a line here is 'HOST [slots=N]'."), std::string::npos)
      << named;
  EXPECT_NE(message_of([] { parse_host_list("node1:4,node2:4"); })
                .find("'node1:4' is no host name. --hosts takes names only: for the same worker count on every "
                      "host give --nproc-per-node N"),
            std::string::npos);
  // IPv6 addresses hold two colons or more: still hosts.
  EXPECT_EQ(names(parse_host_file("fe80::1 slots=2\n2001:db8::4\n", "f")),
            (std::vector<std::string>{"fe80::1", "2001:db8::4"}));
}

TEST(SshHosts, HostListAcceptsCommasAndHostlists) {
  EXPECT_EQ(names(parse_host_list("h1,node[3-4]")), (std::vector<std::string>{"h1", "node3", "node4"}));
  EXPECT_NE(message_of([] { parse_host_list("a,a"); }).find("listed twice"), std::string::npos);
}

TEST(SshHosts, IncludeKeepsHostsAndSlots) {
  auto hosts = parse_host_file("a slots=4\nb slots=4\nc slots=4\n", "f");
  auto kept = select_hosts(hosts, std::string("a:1,3@c"), std::nullopt);
  EXPECT_EQ(names(kept), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(kept[0].slots, 2);
  EXPECT_EQ(kept[0].selected, (std::vector<int>{1, 3}));
  EXPECT_EQ(kept[1].slots, 4);
  EXPECT_TRUE(kept[1].selected.empty());
}

TEST(SshHosts, ExcludeDropsHostsOrSlots) {
  auto hosts = parse_host_file("a slots=4\nb slots=2\nc\n", "f");
  auto kept = select_hosts(hosts, std::nullopt, std::string("c@a:0"));
  EXPECT_EQ(names(kept), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(kept[0].selected, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(kept[0].slots, 3);
  // Excluding every slot of a host drops it.
  EXPECT_EQ(names(select_hosts(hosts, std::nullopt, std::string("b:0,1"))),
            (std::vector<std::string>{"a", "c"}));
  // Both name hosts of the full list, whichever applies first.
  EXPECT_EQ(names(select_hosts(hosts, std::string("b@c"), std::string("a"))),
            (std::vector<std::string>{"b", "c"}));
  // Include then exclude: the slot ids stay the hardware's.
  auto both = select_hosts(hosts, std::string("a:1,3"), std::string("a:3"));
  EXPECT_EQ(both[0].selected, (std::vector<int>{1}));
}

TEST(SshHosts, SelectionsThatMakeNoSenseAreRefused) {
  auto hosts = parse_host_file("a slots=2\nb\n", "f");
  EXPECT_NE(message_of([&] { select_hosts(hosts, std::string("zz"), std::nullopt); })
                .find("names host 'zz', which is not in the host list"),
            std::string::npos);
  EXPECT_NE(message_of([&] { select_hosts(hosts, std::string("a:5"), std::nullopt); })
                .find("selects slot 5 of 'a', which has slots 0,1"),
            std::string::npos);
  EXPECT_NE(message_of([&] { select_hosts(hosts, std::string("b:0"), std::nullopt); })
                .find("has no slots=N"),
            std::string::npos);
  EXPECT_NE(message_of([&] { select_hosts(hosts, std::nullopt, std::string("a@b")); })
                .find("leave no host"),
            std::string::npos);
}

}  // namespace
}  // namespace dlaunch::ssh
