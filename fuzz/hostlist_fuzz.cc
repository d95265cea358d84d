// hostlist_fuzz: the Slurm hostlist grammar (slurm/hostlist.h) on any text.
//
// Checks that the only failure is InputError, that count_hosts, first_host
// and expand_hostlist agree on what is valid and on the hosts, that every
// expanded name is a plain name (no brackets or separators), and that
// compression round-trips: expand(compress(expand(x))) == expand(x),
// expand(compress({x})) == expand(x), and compressing a compressed list
// changes nothing.
//
// One range names at most 65536 hosts, as in Slurm, but several ranges or
// groups may name far more ("r[1-65536]n[1-65536]"), so expansion is capped
// here: larger lists are only counted (count_hosts and first_host never
// expand), which keeps each run fast and small.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/hostlist.h"
#include "util/error.h"

namespace {

using namespace dlaunch;

constexpr std::size_t kMaxExpandedHosts = 1000;

void check(bool condition, const char* what, std::string_view input) {
  if (condition) return;
  std::fprintf(stderr, "hostlist_fuzz: invariant broken: %s\ninput: '%.*s'\n", what,
               static_cast<int>(input.size()), input.data());
  std::abort();
}

template <typename Call>
bool throws_input_error(Call&& call) {
  try {
    call();
  } catch (const util::InputError&) {
    return true;
  }
  return false;
}

void check_hosts(const std::vector<std::string>& hosts, std::string_view input) {
  for (const std::string& host : hosts) {
    check(!host.empty(), "an expanded host name is empty", input);
    check(host.find_first_of("[], \t\n\v\f\r") == std::string::npos,
          "an expanded host name holds a bracket or separator", input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  // first_host and count_hosts never expand, so they are safe on any input.
  std::string first;
  bool has_first = !throws_input_error([&] { first = slurm::first_host(input); });
  std::size_t count = 0;
  bool counted = !throws_input_error([&] { count = slurm::count_hosts(input); });
  if (!has_first) {
    // Invalid or empty. An invalid expression is refused by every entry
    // point, before any expansion (so these calls are cheap).
    check(!counted || count == 0, "first_host refused a list count_hosts found hosts in", input);
    if (!counted) {
      check(throws_input_error([&] { slurm::expand_hostlist(input); }),
            "count_hosts and first_host refused the input but expand_hostlist accepted it", input);
      check(throws_input_error([&] { slurm::compress_hostlist({std::string(input)}); }),
            "count_hosts and first_host refused the input but compress_hostlist accepted it",
            input);
      return 0;
    }
  } else {
    if (!counted) return 0;  // valid, but more hosts than std::size_t counts
    check(count > 0, "first_host found a host in a list count_hosts says is empty", input);
  }
  if (count > kMaxExpandedHosts) return 0;

  // Valid and small: expansion must succeed and match the count.
  std::vector<std::string> hosts = slurm::expand_hostlist(input);
  check(hosts.size() == count, "expand_hostlist and count_hosts disagree", input);
  if (has_first) check(hosts.front() == first, "first_host is not the first expanded host", input);
  check_hosts(hosts, input);
  std::size_t visited = 0;
  slurm::for_each_host(input, [&](std::string_view host) {
    check(visited < hosts.size() && host == hosts[visited], "for_each_host differs from expand",
          input);
    ++visited;
  });
  check(visited == hosts.size(), "for_each_host visits fewer hosts than expand", input);

  // Compressing the expanded names gives an expression naming the same hosts
  // in the same order, and is stable.
  std::string compressed = slurm::compress_hostlist(hosts);
  check(slurm::expand_hostlist(compressed) == hosts, "expand(compress(expand(x))) != expand(x)",
        input);
  check(slurm::count_hosts(compressed) == count, "count(compress(expand(x))) != count(x)", input);
  check(slurm::compress_hostlist({compressed}) == compressed,
        "compress(compress(expand(x))) != compress(expand(x))", input);

  // compress also takes expressions: compressing X itself names the same hosts.
  std::string compressed_expression = slurm::compress_hostlist({std::string(input)});
  check(slurm::expand_hostlist(compressed_expression) == hosts, "expand(compress({x})) != expand(x)",
        input);
  return 0;
}
