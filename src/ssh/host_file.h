// The hosts of a `dlaunch ssh` job: --hosts, --hostfile, --include, --exclude.
//
// A hostfile takes DeepSpeed's format, so existing files work: one host a
// line, optionally "slots=N" (its worker count), '#' comments, and Slurm
// hostlist expressions ("gpu[01-16] slots=8"). --include/--exclude take
// DeepSpeed's selection syntax: "host1@host2:0,2" keeps (or drops) whole
// hosts, or only the listed slots of a host.
//
// "HOST:N" (MPICH's hostfile, Horovod's -H) is refused, with "HOST
// slots=N" as the hint, rather than read as slots: here "host:0,2" in
// --include names slot *ids*, and "HOST:N" is a port in --rdzv-endpoint and
// to ssh, so reading it as a slot count would give one text three meanings
// in one command line. IPv6 addresses have two colons or more and pass.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlaunch::ssh {

struct HostEntry {
  std::string host;
  std::optional<int> slots;   // nullopt: as --nproc-per-node says (or dlaunch run's default)
  std::vector<int> selected;  // after --include/--exclude with slots: the slot ids kept
};

// Parses a hostfile's TEXT; SOURCE ("hostfile.txt") names it in errors,
// with the line number. Throws InputError for a bad line, a bad slots
// value, a host listed twice, or a "HOST:N" host.
std::vector<HostEntry> parse_host_file(std::string_view text, std::string_view source);

// Parses --hosts: comma- or space-separated names and hostlist expressions.
// Throws InputError for a host listed twice or a "HOST:N" host.
std::vector<HostEntry> parse_host_list(std::string_view text);

// Applies --include (keep only what it names) and --exclude (drop what it
// names). A slot selection needs the host's slot count. Throws InputError
// naming a host the selection names but the list lacks, a slot out of
// range, or a selection that leaves no host.
std::vector<HostEntry> select_hosts(std::vector<HostEntry> hosts,
                                    const std::optional<std::string>& include,
                                    const std::optional<std::string>& exclude);

}  // namespace dlaunch::ssh
