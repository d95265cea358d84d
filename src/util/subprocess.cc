#include "util/subprocess.h"

#include <cerrno>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/error.h"
#include "util/exit_codes.h"
#include "util/fd.h"
#include "util/program_spawn.h"

namespace dlaunch::util {
namespace {

SystemError cannot_start(const std::string& program, int error) {
  if (error == ENOENT)
    return SystemError(fmt::format("cannot run '{}': not found in PATH. Is the Slurm client "
                                   "installed and in PATH on this machine?",
                                   program));
  return system_error(fmt::format("cannot run '{}'", program), error);
}

void drain_both(int out_fd, int err_fd, CapturedRun& run) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&run.out, &run.err};
  int open = 2;
  char buffer[8192];
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t got = read_retrying(fds[i].fd, buffer, sizeof(buffer));
      if (got > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(got));
      } else {
        fds[i].fd = -1;
        --open;
      }
    }
  }
}

}  // namespace

CapturedRun run_captured(const std::vector<std::string>& argv) {
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  SpawnedProgram spawned = spawn_program({argv, std::nullopt, false, out.write_end.get(), err.write_end.get(), false});
  if (spawned.error != 0) throw cannot_start(argv[0], spawned.error);
  out.write_end.reset();
  err.write_end.reset();
  CapturedRun run;
  drain_both(out.read_end.get(), err.read_end.get(), run);
  int wait_status = 0;
  while (::waitpid(spawned.pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  run.exit_code = exit_code_of_wait_status(wait_status);
  return run;
}

pid_t spawn_inheriting(const std::vector<std::string>& argv) {
  SpawnedProgram spawned = spawn_program({argv, std::nullopt, true, -1, -1, false});
  if (spawned.error != 0) throw cannot_start(argv[0], spawned.error);
  return spawned.pid;
}

void exec_replacing(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  ::execvp(argv[0].c_str(), args.data());
  throw cannot_start(argv[0], errno);
}

}  // namespace dlaunch::util
