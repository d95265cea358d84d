// Slurm hostlist expressions ("n[1-3],m5", "rack[1-2]-node[01-08]"), expanded
// and compressed exactly as Slurm 22.05's `scontrol show hostnames` and
// `scontrol show hostlist` do.
//
// Why hand-written: no Debian -dev package provides Slurm's hostlist
// grammar. libslurm's hostlist API is not a stable public -dev library worth
// linking for four functions, and it would drag in slurm.conf loading (scontrol
// refuses to run even `show hostnames` without a configuration). The grammar
// is small; the rules below were learnt by probing scontrol 22.05, and
// tests/integration/local/test_hostlist_scontrol.sh keeps us honest against it.
//
// Where we deliberately differ from scontrol (all inputs a launcher should not
// guess about; scontrol's answers there are artefacts of lenient C parsing):
//  - Unbalanced or nested brackets ("n[1-3", "n]", "n[[1]]") are errors;
//    scontrol prints odd names such as "n]".
//  - Inside brackets only digits, '-' and ',' are allowed, and "1-" is an
//    error; scontrol lets strtoul skip spaces and '+' ("n[ 1]" gives "n01")
//    and reads "n[1-]" as "n1".
//  - Numbers in brackets above 2^64-1 are errors; scontrol clamps them.
//    Plain names ("n99999999999999999999") are kept as written, where scontrol
//    clamps their number too, and one of the range 2^64-2..2^64-1 in brackets
//    expands to both hosts, where scontrol prints nothing.
//  - Any whitespace character separates names; scontrol's command line drops
//    \r, \v and \f instead.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace dlaunch::slurm {

// Expands a Slurm hostlist expression into host names in Slurm's order,
// duplicates kept, exactly as `scontrol show hostnames` prints them. Names
// are separated by ',' or whitespace. Several bracket groups expand as a
// product in Slurm's order: the last group varies fastest, then the first,
// the second, ..., the last but one slowest ("a[1-2]b[3-4]c[5-6]" gives a1b3c5
// a1b3c6 a2b3c5 a2b3c6 a1b4c5 ...; for two groups that is the plain
// "rack1-node1, rack1-node2, ..." order). One range names at most 65536
// hosts, as in Slurm ("n[1-65536]"; "n[0-65536]" is refused), while several
// ranges or groups may name more ("n[1-65536,65537-70000]", "r[1-4]n[1-65536]").
// Throws util::InputError naming the expression, the position and fault,
// and what is expected.
std::vector<std::string> expand_hostlist(std::string_view expression);

// expand_hostlist without holding the whole list: calls VISIT with each name
// in order (the view is valid only during the call).
void for_each_host(std::string_view expression, const std::function<void(std::string_view)>& visit);

// Compresses host names into the expression `scontrol show hostlist` prints.
// Each element may itself be an expression ("n1,n[3-4]"); all of them form
// one list. Slurm neither sorts nor removes duplicates: a name extends the
// range before it only when it is that range's next number with the same
// prefix and an equivalent zero padding, and neighbouring ranges with the
// same prefix share one bracket ("n1,n2,n3,n01,n3" gives "n[1-3,01,3]").
// Like scontrol, it merges neighbouring ranges into one even beyond the
// 65536 hosts a range may name when read ("n[1-65536],n65537" gives
// "n[1-65537]", which neither scontrol nor expand_hostlist reads back).
std::string compress_hostlist(const std::vector<std::string>& hosts);

// The first host of an expression, without expanding the list. Throws
// InputError when the expression is invalid or names no host.
std::string first_host(std::string_view expression);

// The number of hosts an expression names (duplicates counted, as expand
// would), without expanding. Throws InputError when invalid, or when the
// count does not fit in std::size_t.
std::size_t count_hosts(std::string_view expression);

}  // namespace dlaunch::slurm
