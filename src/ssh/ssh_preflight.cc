#include "ssh/ssh_preflight.h"

#include <cerrno>
#include <csignal>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>

#include "process/worker_process.h"
#include "ssh/remote_command.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/socket.h"
#include "util/strings.h"

namespace dlaunch::ssh {
namespace {

// Beyond ssh's connect timeout, what a host's check may take.
constexpr std::chrono::seconds kCheckAllowance(20);

struct Check {
  process::StartedWorker process;
  std::string out;
  std::string err;
  int exit_code = -1;
};

// Reads every check's output until all have closed it, or DEADLINE.
void collect_output(std::vector<Check>& checks, util::Clock::time_point deadline) {
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::string*> sinks;
    for (auto& check : checks) {
      if (check.process.stdout_pipe) {
        fds.push_back({check.process.stdout_pipe.get(), POLLIN, 0});
        sinks.push_back(&check.out);
      }
      if (check.process.stderr_pipe) {
        fds.push_back({check.process.stderr_pipe.get(), POLLIN, 0});
        sinks.push_back(&check.err);
      }
    }
    if (fds.empty() || util::Clock::now() >= deadline) return;
    if (::poll(fds.data(), fds.size(), util::millis_until(deadline)) <= 0) continue;
    char buffer[4096];
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      ssize_t got = util::read_retrying(fds[i].fd, buffer, sizeof(buffer));
      if (got > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(got));
        continue;
      }
      for (auto& check : checks) {
        if (check.process.stdout_pipe.get() == fds[i].fd) check.process.stdout_pipe.reset();
        if (check.process.stderr_pipe.get() == fds[i].fd) check.process.stderr_pipe.reset();
      }
    }
  }
}

// Reaps CHECK's ssh; one still running after the deadline is killed.
void finish(Check& check) {
  if (check.process.stdout_pipe || check.process.stderr_pipe) ::kill(-check.process.pid, SIGKILL);
  int status = 0;
  while (::waitpid(check.process.pid, &status, 0) < 0 && errno == EINTR) {
  }
  bool timed_out = check.process.stdout_pipe || check.process.stderr_pipe;
  if (!timed_out && WIFEXITED(status)) check.exit_code = WEXITSTATUS(status);
}

std::string last_line(const std::string& text) {
  auto lines = util::split(std::string(util::trim(text)), '\n');
  return lines.empty() ? std::string("(no message)") : std::string(util::trim(lines.back()));
}

}  // namespace

std::vector<std::string> interpret_preflight(const JobPlan& plan, const std::string& host,
                                             int exit_code, const std::string& out,
                                             const std::string& err,
                                             const std::vector<std::string>& worker_argv) {
  std::vector<std::string> problems;
  auto problem = [&](const std::string& text) { problems.push_back(fmt::format("{}: {}", host, text)); };
  if (exit_code == -1) {
    problem(fmt::format("did not answer within {} s; check that it is up and reachable",
                        plan.connect_timeout + kCheckAllowance.count()));
    return problems;
  }
  if (exit_code == kSshFailed) {
    problem(fmt::format("unreachable over ssh: {}. Check the host name, that your key logs in "
                        "without a prompt (ssh runs with BatchMode=yes), and --ssh-arg",
                        last_line(err)));
    return problems;
  }
  std::string version;
  bool answered = false;
  for (const auto& raw : util::split(out, '\n')) {
    std::string_view line = util::trim(raw);
    if (!line.starts_with("dlaunch-preflight: ")) continue;
    answered = true;
    std::string_view what = line.substr(19);
    if (what == "no-dir")
      problem(fmt::format("the working folder {} does not exist there; dlaunch ssh runs the job in "
                          "the same folder on every host",
                          plan.working_dir));
    else if (what == "no-dlaunch")
      problem(fmt::format("dlaunch is not at {} there; install the same dlaunch on every host, or "
                          "give its path with --remote-dlaunch",
                          plan.remote_dlaunch));
    else if (what.starts_with("version ")) version = std::string(util::trim(what.substr(8)));
    else if (what == "no-program")
      problem(fmt::format("cannot find '{}' there (not an executable, nor in that host's PATH)",
                          worker_argv.empty() ? "" : worker_argv.front()));
    else if (what.starts_with("no-script "))
      problem(fmt::format("the script {} is missing there (in {})", what.substr(10), plan.working_dir));
  }
  if (!answered) {
    problem(fmt::format("the check over ssh failed (exit {}): {}", exit_code, last_line(err)));
    return problems;
  }
  std::string expected = fmt::format("dlaunch {}", DLAUNCH_VERSION);
  if (!version.empty() && version != expected)
    problem(fmt::format("runs '{}' but this machine runs '{}'; install the same dlaunch on every host",
                        version, expected));
  return problems;
}

std::vector<std::string> preflight_hosts(const JobPlan& plan, const std::vector<std::string>& hosts,
                                         const std::vector<std::string>& worker_argv) {
  util::Environment environment = util::Environment::from_process();
  std::string command = remote_preflight_command(plan, worker_argv);
  std::vector<Check> checks(hosts.size());
  for (std::size_t i = 0; i < hosts.size(); ++i)
    checks[i].process = process::start_worker(ssh_argv(plan, hosts[i], command), environment);
  collect_output(checks, util::Clock::now() + std::chrono::seconds(plan.connect_timeout) + kCheckAllowance);
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    finish(checks[i]);
    for (auto& problem : interpret_preflight(plan, hosts[i], checks[i].exit_code, checks[i].out,
                                             checks[i].err, worker_argv))
      problems.push_back(std::move(problem));
  }
  return problems;
}

}  // namespace dlaunch::ssh
