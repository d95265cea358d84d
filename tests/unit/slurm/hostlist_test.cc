// Slurm hostlist expressions. The expected values are what scontrol 22.05
// prints (`scontrol show hostnames` / `scontrol show hostlist`), recorded by
// running it; tests/integration/test_hostlist_scontrol.sh compares against
// the live scontrol on random inputs.
#include "slurm/hostlist.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../test_support/text.h"
#include "util/error.h"

namespace dlaunch::slurm {
namespace {

using Hosts = std::vector<std::string>;

using test_support::contains;

// n1 .. nN as PREFIX + numbers padded to WIDTH.
Hosts numbered(const std::string& prefix, int first, int last, int width = 0) {
  Hosts hosts;
  for (int i = first; i <= last; ++i) {
    // fmt pads: std::string::insert here makes g++ 12 at -O3 warn, falsely,
    // of a 2 GiB memcpy (-Wstringop-overflow).
    hosts.push_back(prefix + fmt::format("{:0{}}", i, width));
  }
  return hosts;
}

// The InputError message EXPRESSION throws from expand_hostlist, or "" if none.
std::string expand_error(const std::string& expression) {
  try {
    expand_hostlist(expression);
  } catch (const util::InputError& error) {
    return error.what();
  }
  return "";
}

// --- expand ------------------------------------------------------------------

TEST(HostlistExpand, RangesAndPlainNamesInOrder) {
  EXPECT_EQ(expand_hostlist("n[1-3],m5"), (Hosts{"n1", "n2", "n3", "m5"}));
  EXPECT_EQ(expand_hostlist("n7"), (Hosts{"n7"}));
  EXPECT_EQ(expand_hostlist("[1-3]"), (Hosts{"1", "2", "3"}));
}

TEST(HostlistExpand, WidthIsTheLengthOfTheLowBound) {
  EXPECT_EQ(expand_hostlist("n[1-10]"), numbered("n", 1, 10));
  EXPECT_EQ(expand_hostlist("n[01-10]"), numbered("n", 1, 10, 2));
  EXPECT_EQ(expand_hostlist("n[001-3]"), (Hosts{"n001", "n002", "n003"}));
  // The padding of the high bound is ignored.
  EXPECT_EQ(expand_hostlist("n[1-010]"), numbered("n", 1, 10));
  EXPECT_EQ(expand_hostlist("n[9-010]"), (Hosts{"n9", "n10"}));
  EXPECT_EQ(expand_hostlist("n[09-10]"), (Hosts{"n09", "n10"}));
  EXPECT_EQ(expand_hostlist("n[0-2]"), (Hosts{"n0", "n1", "n2"}));
  EXPECT_EQ(expand_hostlist("n[00-2]"), (Hosts{"n00", "n01", "n02"}));
  EXPECT_EQ(expand_hostlist("n[98-101]"), (Hosts{"n98", "n99", "n100", "n101"}));
  EXPECT_EQ(expand_hostlist("n[01-1]"), (Hosts{"n01"}));
}

TEST(HostlistExpand, SeveralRangesInOneBracketKeepTheirOrder) {
  EXPECT_EQ(expand_hostlist("n[1-3,5,7-8]"), (Hosts{"n1", "n2", "n3", "n5", "n7", "n8"}));
  EXPECT_EQ(expand_hostlist("n[3,1,2]"), (Hosts{"n3", "n1", "n2"}));
  EXPECT_EQ(expand_hostlist("n[1-2,01-02]"), (Hosts{"n1", "n2", "n01", "n02"}));
}

TEST(HostlistExpand, TwoGroupsExpandRowByRow) {
  EXPECT_EQ(expand_hostlist("rack[1-2]-node[01-03]"),
            (Hosts{"rack1-node01", "rack1-node02", "rack1-node03", "rack2-node01", "rack2-node02",
                   "rack2-node03"}));
  EXPECT_EQ(expand_hostlist("a[1-2][3-4]"), (Hosts{"a13", "a14", "a23", "a24"}));
  EXPECT_EQ(expand_hostlist("[1-2][1-2]"), (Hosts{"11", "12", "21", "22"}));
  EXPECT_EQ(expand_hostlist("n[1][2]"), (Hosts{"n12"}));
}

TEST(HostlistExpand, MoreGroupsFollowSlurmsOrder) {
  // Last group fastest, then the first, the second, ... (not row by row).
  EXPECT_EQ(expand_hostlist("a[1-2]b[3-4]c[5-6]"), (Hosts{"a1b3c5", "a1b3c6", "a2b3c5", "a2b3c6",
                                                          "a1b4c5", "a1b4c6", "a2b4c5", "a2b4c6"}));
  EXPECT_EQ(expand_hostlist("a[1,3-4]b[7,5]c[1-2,0]"),
            (Hosts{"a1b7c1", "a1b7c2", "a1b7c0", "a3b7c1", "a3b7c2", "a3b7c0", "a4b7c1", "a4b7c2",
                   "a4b7c0", "a1b5c1", "a1b5c2", "a1b5c0", "a3b5c1", "a3b5c2", "a3b5c0", "a4b5c1",
                   "a4b5c2", "a4b5c0"}));
  Hosts four = expand_hostlist("a[1-2]b[3-4]c[5-6]d[7-8]");
  ASSERT_EQ(four.size(), 16U);
  EXPECT_EQ(Hosts(four.begin(), four.begin() + 5),
            (Hosts{"a1b3c5d7", "a1b3c5d8", "a2b3c5d7", "a2b3c5d8", "a1b4c5d7"}));
  EXPECT_EQ(four[8], "a1b3c6d7");
  EXPECT_EQ(four[15], "a2b4c6d8");
}

TEST(HostlistExpand, CommasAndWhitespaceSeparateNames) {
  EXPECT_EQ(expand_hostlist("a b,c"), (Hosts{"a", "b", "c"}));
  EXPECT_EQ(expand_hostlist("a\tb\nc"), (Hosts{"a", "b", "c"}));
  EXPECT_EQ(expand_hostlist(",a,,b,"), (Hosts{"a", "b"}));
  EXPECT_EQ(expand_hostlist("n[1-2] m[1-2]"), (Hosts{"n1", "n2", "m1", "m2"}));
}

TEST(HostlistExpand, KeepsDuplicates) {
  EXPECT_EQ(expand_hostlist("n[1-2],n1,n[1-2]"), (Hosts{"n1", "n2", "n1", "n1", "n2"}));
  EXPECT_EQ(expand_hostlist("n[1,1]"), (Hosts{"n1", "n1"}));
}

TEST(HostlistExpand, NamesWithoutTrailingNumbersPrintAsWritten) {
  EXPECT_EQ(expand_hostlist("login,head"), (Hosts{"login", "head"}));
  EXPECT_EQ(expand_hostlist("n1a,n2a,n007"), (Hosts{"n1a", "n2a", "n007"}));
  EXPECT_EQ(expand_hostlist("gpu-01.ib,x.y"), (Hosts{"gpu-01.ib", "x.y"}));
}

TEST(HostlistExpand, EmptyExpressionNamesNoHosts) {
  EXPECT_TRUE(expand_hostlist("").empty());
  EXPECT_TRUE(expand_hostlist(" , \n").empty());
}

TEST(HostlistExpand, NumbersUpTo64Bits) {
  EXPECT_EQ(expand_hostlist("n[4294967295-4294967296]"), (Hosts{"n4294967295", "n4294967296"}));
  // scontrol prints nothing here (its loop wraps around); we give both.
  EXPECT_EQ(expand_hostlist("n[18446744073709551614-18446744073709551615]"),
            (Hosts{"n18446744073709551614", "n18446744073709551615"}));
  EXPECT_EQ(expand_hostlist("n[0000000000000000000000001]"), (Hosts{"n0000000000000000000000001"}));
}

TEST(HostlistExpand, OneRangeNamesAtMost65536HostsAsInSlurm) {
  Hosts hosts = expand_hostlist("n[1-65536]");
  ASSERT_EQ(hosts.size(), 65536U);
  EXPECT_EQ(hosts.back(), "n65536");
  EXPECT_EQ(count_hosts("n[0-65535]"), 65536U);
  // scontrol: "_parse_single_range: Too many hosts in range `1-65537'".
  for (const char* expression : {"n[1-65537]", "n[0-65536]", "n[0-99999999999]", "n[5,1-65537]",
                                 "a[1-2]b[0-65536]", "n[0-18446744073709551615]"}) {
    EXPECT_THROW(expand_hostlist(expression), util::InputError) << expression;
    EXPECT_THROW(count_hosts(expression), util::InputError) << expression;
    EXPECT_THROW(first_host(expression), util::InputError) << expression;
    EXPECT_THROW(compress_hostlist({expression}), util::InputError) << expression;
  }
  EXPECT_EQ(expand_error("n[0-99999999999]"),
            "invalid hostlist 'n[0-99999999999]': range '0-99999999999' of more than 65536 hosts at "
            "position 3; expected at most 65536 hosts in one range, as Slurm allows; split a longer "
            "one into several (e.g. n[1-65536,65537-100000])");
  // Several ranges and groups may name more together, as in Slurm.
  EXPECT_EQ(count_hosts("a[1-40000],b[1-40000]"), 80000U);
  EXPECT_EQ(count_hosts("n[1-40000,40001-80000]"), 80000U);
  EXPECT_EQ(count_hosts("n[1-65536]x[1-2]"), 131072U);
}

TEST(HostlistExpand, ForEachHostVisitsTheSameNames) {
  Hosts visited;
  for_each_host("rack[1-2]-node[1-2],x",
                [&](std::string_view host) { visited.emplace_back(host); });
  EXPECT_EQ(visited, expand_hostlist("rack[1-2]-node[1-2],x"));
}

// --- invalid expressions -------------------------------------------------------

struct InvalidCase {
  const char* expression;
  const char* fault;  // part of the message
};

class HostlistInvalid : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(HostlistInvalid, ThrowsInputErrorNamingExpressionFaultAndExpectation) {
  const InvalidCase& c = GetParam();
  std::string message = expand_error(c.expression);
  ASSERT_FALSE(message.empty()) << c.expression << " was accepted";
  EXPECT_TRUE(contains(message, std::string("'") + c.expression + "'"));
  EXPECT_TRUE(contains(message, c.fault));
  EXPECT_TRUE(contains(message, "at position"));
  EXPECT_TRUE(contains(message, "expected"));
  EXPECT_THROW(count_hosts(c.expression), util::InputError);
  EXPECT_THROW(first_host(c.expression), util::InputError);
  EXPECT_THROW(compress_hostlist({c.expression}), util::InputError);
}

INSTANTIATE_TEST_SUITE_P(
    Hostlist, HostlistInvalid,
    ::testing::Values(
        // Unbalanced and nested brackets (scontrol prints odd names like "n]").
        InvalidCase{"n[1-3", "never closed"}, InvalidCase{"n[", "never closed"},
        InvalidCase{"a[1-2]b[", "never closed"}, InvalidCase{"n1-3]", "without a '['"},
        InvalidCase{"n[1-3]]", "without a '['"}, InvalidCase{"n]a[1-2]", "without a '['"},
        InvalidCase{"n[[1-3]]", "nested"}, InvalidCase{"n[1[2]]", "nested"},
        // Ranges.
        InvalidCase{"n[5-3]", "reversed range '5-3'"}, InvalidCase{"n[1-2,5-3]", "reversed"},
        InvalidCase{"a[2-1]b[1]", "reversed"}, InvalidCase{"n[]", "empty range"},
        InvalidCase{"n[1,,3]", "empty range"}, InvalidCase{"n[,1]", "empty range"},
        InvalidCase{"n[1,]", "empty range"}, InvalidCase{"a[1-2]b[]", "empty range"},
        InvalidCase{"n[1-]", "missing number"}, InvalidCase{"n[-3]", "missing number"},
        InvalidCase{"n[-]", "missing number"}, InvalidCase{"n[1--3]", "unexpected '-'"},
        // Garbage inside brackets.
        InvalidCase{"n[a-b]", "unexpected 'a'"}, InvalidCase{"n[1-2x]", "unexpected 'x'"},
        InvalidCase{"n[3a-4]", "unexpected 'a'"}, InvalidCase{"n[1-2-3]", "unexpected '-'"},
        InvalidCase{"n[0x1-3]", "unexpected 'x'"}, InvalidCase{"n[1.5]", "unexpected '.'"},
        InvalidCase{"n[1-3:2]", "unexpected ':'"}, InvalidCase{"n[+1-2]", "unexpected '+'"},
        InvalidCase{"n[ 1]", "whitespace"}, InvalidCase{"n[1 - 2]", "whitespace"},
        InvalidCase{"n[1\x01]", "character 0x01"},
        InvalidCase{"n[99999999999999999999]", "too large"},
        // Text after the last group.
        InvalidCase{"n[1-2]a", "text 'a' after the last ']'"},
        InvalidCase{"n[1-2]-ib0", "after the last ']'"},
        InvalidCase{"n[1-3]a[1-2]b", "after the last ']'"},
        InvalidCase{"good,n[1-2].ib,good", "after the last ']'"}),
    // Stable, readable test names: "case7" rather than the case's bytes.
    [](const ::testing::TestParamInfo<InvalidCase>& param) {
      return "case" + std::to_string(param.index);
    });

TEST(HostlistInvalidMessage, GivesTheOneBasedPosition) {
  EXPECT_EQ(expand_error("n[5-3]"),
            "invalid hostlist 'n[5-3]': reversed range '5-3' at position 3; expected LOW-HIGH "
            "with LOW <= HIGH (e.g. n[3-5])");
  EXPECT_TRUE(contains(expand_error("ok,n[1-3"), "'[' that is never closed at position 5"));
  EXPECT_TRUE(contains(expand_error("n[1,b]"), "unexpected 'b' inside brackets at position 5"));
}

// --- compress ------------------------------------------------------------------

TEST(HostlistCompress, NeighbouringNumbersBecomeRanges) {
  EXPECT_EQ(compress_hostlist(numbered("n", 1, 3)), "n[1-3]");
  EXPECT_EQ(compress_hostlist({"rack1-node01", "rack1-node02", "rack2-node01"}),
            "rack1-node[01-02],rack2-node01");
  EXPECT_EQ(compress_hostlist({"n7"}), "n7");
  EXPECT_EQ(compress_hostlist({"n07"}), "n07");
  EXPECT_EQ(compress_hostlist({"1", "2", "3"}), "[1-3]");
  EXPECT_EQ(compress_hostlist({"01", "02"}), "[01-02]");
  EXPECT_EQ(compress_hostlist({"a-1", "a-2"}), "a-[1-2]");
  EXPECT_EQ(compress_hostlist({"r1n1", "r1n2"}), "r1n[1-2]");
}

TEST(HostlistCompress, NeitherSortsNorRemovesDuplicates) {
  EXPECT_EQ(compress_hostlist({"n1", "n2", "n3", "n01", "n3"}), "n[1-3,01,3]");
  EXPECT_EQ(compress_hostlist({"n3", "n2", "n1"}), "n[3,2,1]");
  EXPECT_EQ(compress_hostlist({"n1", "n1"}), "n[1,1]");
  EXPECT_EQ(compress_hostlist({"n1", "n2", "n2", "n3"}), "n[1-2,2-3]");
  EXPECT_EQ(compress_hostlist({"n[3,1,2]"}), "n[3,1-2]");
  EXPECT_EQ(compress_hostlist({"a", "b", "a"}), "a,b,a");
  EXPECT_EQ(compress_hostlist({"n", "n"}), "n,n");
}

TEST(HostlistCompress, OnlyNeighboursWithOnePrefixShareABracket) {
  EXPECT_EQ(compress_hostlist({"n1", "m1", "n2"}), "n1,m1,n2");
  EXPECT_EQ(compress_hostlist({"n1", "n2", "m1", "n3"}), "n[1-2],m1,n3");
  EXPECT_EQ(compress_hostlist({"x", "x1", "x2"}), "x,x[1-2]");
  EXPECT_EQ(compress_hostlist({"x1", "x", "x2"}), "x1,x,x2");
}

TEST(HostlistCompress, PaddingMustPrintTheSame) {
  EXPECT_EQ(compress_hostlist({"n9", "n10"}), "n[9-10]");
  EXPECT_EQ(compress_hostlist({"n09", "n10"}), "n[09-10]");
  EXPECT_EQ(compress_hostlist({"n9", "n010"}), "n[9,010]");
  EXPECT_EQ(compress_hostlist({"n99", "n100"}), "n[99-100]");
  EXPECT_EQ(compress_hostlist({"n099", "n100"}), "n[099-100]");
  EXPECT_EQ(compress_hostlist({"n099", "n0100"}), "n[099,0100]");
  EXPECT_EQ(compress_hostlist({"n0099", "n100"}), "n[0099,100]");
  EXPECT_EQ(compress_hostlist({"n01", "n1"}), "n[01,1]");
  EXPECT_EQ(compress_hostlist({"n05", "n6"}), "n[05,6]");
  EXPECT_EQ(compress_hostlist({"n0", "n00"}), "n[0,00]");
  EXPECT_EQ(compress_hostlist(numbered("n", 8, 11)), "n[8-11]");
  EXPECT_EQ(compress_hostlist({"n9", "n10", "n011"}), "n[9-10,011]");
}

TEST(HostlistCompress, ExpressionsArePushedRangeByRange) {
  EXPECT_EQ(compress_hostlist({"n[1-3]", "n[4-5]"}), "n[1-5]");
  EXPECT_EQ(compress_hostlist({"n[1-3,4-5]"}), "n[1-5]");
  EXPECT_EQ(compress_hostlist({"n[1-3]", "n[3-5]"}), "n[1-3,3-5]");
  EXPECT_EQ(compress_hostlist({"n[3-5]", "n[1-2]"}), "n[3-5,1-2]");
  EXPECT_EQ(compress_hostlist({"n[8-9]", "n[010-011]"}), "n[8-9,010-011]");
  EXPECT_EQ(compress_hostlist({"n[9-010]", "n11"}), "n[9-11]");
  EXPECT_EQ(compress_hostlist({"n[009-010]", "n11"}), "n[009-010,11]");
  EXPECT_EQ(compress_hostlist({"n[009-010]", "n011"}), "n[009-011]");
  EXPECT_EQ(compress_hostlist({"n[098-100],n101"}), "n[098-101]");
  EXPECT_EQ(compress_hostlist({"n[1-2],n", "n,n[1-2]"}), "n[1-2],n,n,n[1-2]");
}

TEST(HostlistCompress, EarlierGroupsBecomePartOfThePrefix) {
  EXPECT_EQ(compress_hostlist({"a[1-2][3-4]"}), "a1[3-4],a2[3-4]");
  EXPECT_EQ(compress_hostlist({"n[1-3]x[1-2]"}), "n1x[1-2],n2x[1-2],n3x[1-2]");
  EXPECT_EQ(compress_hostlist({"a[1][3],a14"}), "a13,a14");
  EXPECT_EQ(compress_hostlist({"n1[1-2],n13"}), "n1[1-2],n13");
  EXPECT_EQ(compress_hostlist({"a[1-2]b[9-10],a2b11"}), "a1b[9-10],a2b[9-11]");
  EXPECT_EQ(compress_hostlist({"a[1-2]b[3-4]c[5-6]"}),
            "a1b3c[5-6],a2b3c[5-6],a1b4c[5-6],a2b4c[5-6]");
}

TEST(HostlistCompress, NamesWithANumberInTheMiddleStayWhole) {
  EXPECT_EQ(compress_hostlist({"n1a", "n2a"}), "n1a,n2a");
  EXPECT_EQ(compress_hostlist({"a1b", "a2b"}), "a1b,a2b");
}

TEST(HostlistCompress, EmptyListIsEmpty) {
  EXPECT_EQ(compress_hostlist({}), "");
  EXPECT_EQ(compress_hostlist({"", " , "}), "");
}

TEST(HostlistCompress, NumbersAtTheEndOf64Bits) {
  EXPECT_EQ(compress_hostlist({"n[18446744073709551614-18446744073709551615]", "n0"}),
            "n[18446744073709551614-18446744073709551615,0]");
  EXPECT_EQ(compress_hostlist({"n18446744073709551615", "n18446744073709551616"}),
            "n18446744073709551615,n18446744073709551616");
  EXPECT_EQ(compress_hostlist({"n99999999999999999999", "n1"}), "n99999999999999999999,n1");
}

TEST(HostlistCompress, NeighbouringRangesMergeBeyondWhatOneRangeMayNameAsInSlurm) {
  // scontrol show hostlist prints the same, a range it cannot read back.
  EXPECT_EQ(compress_hostlist({"n[1-65536]", "n[65537-131072]", "n131073"}), "n[1-131073]");
  EXPECT_THROW(expand_hostlist("n[1-131073]"), util::InputError);
}

// --- first and count -----------------------------------------------------------

TEST(HostlistFirst, IsTheFirstExpandedHost) {
  EXPECT_EQ(first_host("rack[1-2]-node[01-08]"), "rack1-node01");
  EXPECT_EQ(first_host("a[3,1]b[2-4]c[07]"), "a3b2c07");
  EXPECT_EQ(first_host(" , n5,m[1-2]"), "n5");
  EXPECT_EQ(first_host("login"), "login");
}

TEST(HostlistFirst, ThrowsWhenThereIsNoHost) {
  EXPECT_THROW(first_host(""), util::InputError);
  EXPECT_THROW(first_host(" , "), util::InputError);
}

TEST(HostlistCount, CountsLikeExpand) {
  EXPECT_EQ(count_hosts("n[1-3],m5"), 4U);
  EXPECT_EQ(count_hosts("rack[1-2]-node[01-08]"), 16U);
  EXPECT_EQ(count_hosts("n[1-3,5,7-8]"), 6U);
  EXPECT_EQ(count_hosts("n1,n1,n[1,1]"), 4U);
  EXPECT_EQ(count_hosts(""), 0U);
  EXPECT_EQ(count_hosts("a[1-2]b[3-4]c[5-6]d[7-8]"), 16U);
}

TEST(HostlistCount, ThrowsWhenTheCountOverflows) {
  // 65535 * 2^48 hosts fit; 2^64 do not, as a product or as a sum.
  const std::string almost = "a[1-65536]b[1-65536]c[1-65536]d[1-65535]";
  EXPECT_EQ(count_hosts(almost), 18446462598732840960U);
  EXPECT_THROW(count_hosts("a[1-65536]b[1-65536]c[1-65536]d[1-65536]"), util::InputError);
  EXPECT_THROW(count_hosts(almost + ",e[1-65536]f[1-65536]g[1-65536]"), util::InputError);
}

TEST(HostlistFirstAndCount, NeverExpandHugeRanges) {
  // Ten trillion hosts could not be expanded in this machine's memory, so
  // getting answers at all proves first/count work on the ranges themselves.
  // (Speed is for bench/, never asserted here.)
  EXPECT_EQ(count_hosts("r[1-10000]n[1-65536]x[1-65536]"), 42949672960000U);
  EXPECT_EQ(first_host("r[1-10000]n[0001-65536]x[1-65536]"), "r1n0001x1");
}

// --- properties ----------------------------------------------------------------

// Host lists the way schedulers hand them out: runs, repeats, steps back,
// changes of prefix and padding, names without numbers.
Hosts random_hosts(std::mt19937& random) {
  static const std::vector<std::string> kPrefixes = {"n", "node", "rack1-node", "", "c1n", "x"};
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };
  Hosts hosts;
  std::string prefix = kPrefixes[pick(kPrefixes.size())];
  int number = static_cast<int>(pick(3)) * 49 + static_cast<int>(pick(3));
  int width = 0;
  std::size_t count = 1 + pick(25);
  for (std::size_t i = 0; i < count; ++i) {
    switch (pick(10)) {
      case 0:
        prefix = kPrefixes[pick(kPrefixes.size())];
        break;
      case 1:
        break;
      case 2:
        number = number > 0 ? number - 1 : 0;
        break;
      case 3:
        width = static_cast<int>(pick(4));
        break;
      default:
        ++number;
    }
    std::string digits = std::to_string(number);
    if (static_cast<int>(digits.size()) < width)
      digits.insert(0, static_cast<std::size_t>(width) - digits.size(), '0');
    hosts.push_back(pick(12) == 0 ? (prefix.empty() ? "h" : prefix) : prefix + digits);
  }
  return hosts;
}

TEST(HostlistProperties, CompressThenExpandGivesTheHostsBack) {
  std::mt19937 random(42);
  for (int i = 0; i < 2000; ++i) {
    Hosts hosts = random_hosts(random);
    std::string compressed = compress_hostlist(hosts);
    ASSERT_EQ(expand_hostlist(compressed), hosts) << compressed;
    ASSERT_EQ(count_hosts(compressed), hosts.size()) << compressed;
    ASSERT_EQ(first_host(compressed), hosts.front()) << compressed;
    ASSERT_EQ(compress_hostlist({compressed}), compressed);  // compressing is idempotent
  }
}

TEST(HostlistProperties, ExpressionsSurviveCompression) {
  for (const char* expression :
       {"rack[1-2]-node[01-08]", "n[1-3,5,7-8]", "a[1-2]b[3-4]c[5-6]", "n[9-010],n[1,1]",
        "x,x[1-2],y7", "[1-2][1-2]", "n[098-100],n0101"}) {
    Hosts hosts = expand_hostlist(expression);
    std::string compressed = compress_hostlist({expression});
    EXPECT_EQ(expand_hostlist(compressed), hosts) << expression;
    EXPECT_EQ(count_hosts(expression), hosts.size()) << expression;
    EXPECT_EQ(first_host(expression), hosts.front()) << expression;
  }
}

}  // namespace
}  // namespace dlaunch::slurm
