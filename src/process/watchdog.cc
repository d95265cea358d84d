#include "process/watchdog.h"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <fcntl.h>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cgroup.h"
#include "util/error.h"

namespace dlaunch::process {
namespace {

// Keeps only the standard descriptors and KEEP: an inherited end of the
// caller's pipe (a console the launcher reopened, say) would keep a shell's
// $(...) waiting for the watchdog.
void close_other_descriptors(int keep) {
  if (keep > 3) ::close_range(3, static_cast<unsigned>(keep) - 1, 0);
  ::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0);
}

[[noreturn]] void watchdog_main(int pipe_fd, const std::string& cgroup_dir) {
  // A group of its own: `kill -9 -PGID` of the launcher's group (a shell's
  // job control, a wrapper that kills its child's group) must not take the
  // watchdog with it, or the workers' children would outlive them all.
  ::setpgid(0, 0);
  // Survive the signals aimed at the launcher's terminal group: the
  // launcher decides what happens to the workers while it lives.
  for (int ignored : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE})
    ::signal(ignored, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Keep no end of the caller's pipes open (a shell's $(...) would wait for it).
  int null_fd = ::open("/dev/null", O_RDWR);
  for (int standard = 0; standard <= 2; ++standard) ::dup2(null_fd, standard);
  close_other_descriptors(pipe_fd);
  std::set<pid_t> groups;
  std::int32_t record = 0;
  while (util::read_retrying(pipe_fd, &record, sizeof(record)) == static_cast<ssize_t>(sizeof(record))) {
    if (record > 0) groups.insert(record);
    else groups.erase(-record);
  }
  for (pid_t group : groups) ::kill(-group, SIGKILL);
  if (!cgroup_dir.empty()) {
    util::kill_cgroup(cgroup_dir);
    util::remove_cgroup(cgroup_dir, std::chrono::seconds(1));
  }
  ::_exit(0);
}

}  // namespace

Watchdog::Watchdog(const std::string& cgroup_dir) {
  util::Pipe channel = util::make_pipe();
  pid_ = ::fork();
  if (pid_ < 0) throw util::system_error("cannot fork the watchdog", errno);
  if (pid_ == 0) {
    channel.write_end.reset();
    watchdog_main(channel.read_end.get(), cgroup_dir);
  }
  pipe_ = std::move(channel.write_end);
}

Watchdog::~Watchdog() {
  pipe_.reset();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void Watchdog::watch(pid_t group) {
  auto record = static_cast<std::int32_t>(group);
  util::write_all(pipe_.get(), std::string_view(reinterpret_cast<const char*>(&record), sizeof(record)));
}

void Watchdog::release(pid_t group) {
  auto record = static_cast<std::int32_t>(-group);
  util::write_all(pipe_.get(), std::string_view(reinterpret_cast<const char*>(&record), sizeof(record)));
}

}  // namespace dlaunch::process
