#include "util/program_spawn.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>


namespace dlaunch::util {
namespace {

std::vector<char*> pointers_to(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const auto& text : strings) pointers.push_back(const_cast<char*>(text.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

// posix_spawn's attributes and file actions, released however the spawn ends.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attributes_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attributes_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  posix_spawnattr_t* attributes() { return &attributes_; }
  posix_spawn_file_actions_t* actions() { return &actions_; }

 private:
  posix_spawnattr_t attributes_;
  posix_spawn_file_actions_t actions_;
};

void set_signals_and_group(posix_spawnattr_t* attributes, bool own_process_group) {
  sigset_t none;
  sigemptyset(&none);
  sigset_t every;
  sigfillset(&every);
  posix_spawnattr_setsigmask(attributes, &none);
  posix_spawnattr_setsigdefault(attributes, &every);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(attributes, 0);
  }
  posix_spawnattr_setflags(attributes, flags);
}

void set_streams(posix_spawn_file_actions_t* actions, const ProgramSpawn& request) {
  if (!request.inherit_stdin) posix_spawn_file_actions_addopen(actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (request.stdout_fd >= 0) posix_spawn_file_actions_adddup2(actions, request.stdout_fd, STDOUT_FILENO);
  if (request.stderr_fd >= 0) posix_spawn_file_actions_adddup2(actions, request.stderr_fd, STDERR_FILENO);
}

}  // namespace

SpawnedProgram spawn_program(const ProgramSpawn& request) {
  if (request.argv.empty()) return SpawnedProgram{-1, EINVAL};
  SpawnSetup setup;
  set_signals_and_group(setup.attributes(), request.own_process_group);
  set_streams(setup.actions(), request);
  auto argv = pointers_to(request.argv);
  std::vector<char*> envp;
  if (request.environment) envp = pointers_to(*request.environment);
  SpawnedProgram spawned;
  spawned.error = ::posix_spawnp(&spawned.pid, argv[0], setup.actions(), setup.attributes(), argv.data(),
                                 request.environment ? envp.data() : environ);
  if (spawned.error != 0) spawned.pid = -1;
  return spawned;
}

}  // namespace dlaunch::util
