// Checking every host over ssh before anything starts: reachable, dlaunch
// present in the same version, the working folder and the program there.
// All hosts are checked at once, and every problem is reported, per host.
#pragma once

#include <string>
#include <vector>

#include "ssh/remote_command.h"

namespace dlaunch::ssh {

// One line per problem, "host2: dlaunch is not at /opt/dlaunch there; ...";
// empty when every host is ready. WORKER_ARGV is the worker's argv as
// dlaunch run builds it (interpreter included).
std::vector<std::string> preflight_hosts(const JobPlan& plan, const std::vector<std::string>& hosts,
                                         const std::vector<std::string>& worker_argv);

// What one host's check printed and how its ssh ended, turned into
// problems (pure, for tests). EXIT_CODE -1: it did not answer in time.
std::vector<std::string> interpret_preflight(const JobPlan& plan, const std::string& host,
                                             int exit_code, const std::string& out,
                                             const std::string& err,
                                             const std::vector<std::string>& worker_argv);

}  // namespace dlaunch::ssh
