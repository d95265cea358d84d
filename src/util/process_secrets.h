// Keeping a secret the launcher holds (the rendezvous token) from the other
// processes of the same user: its workers above all, which run the user's
// code and any library that code pulls in.
//
// Linux lets a process of the same user read another's initial environment
// (/proc/PID/environ) and memory (ptrace, /proc/PID/mem) unless that
// process is marked non-dumpable. The mark lasts until the process execs,
// so the workers, which exec their program, stay dumpable: hang forensics
// can still attach to them.
#pragma once

namespace dlaunch::util {

// Marks this process non-dumpable: no same-user ptrace, /proc/PID/environ
// and /proc/PID/mem readable by root only, no core dump of its memory.
void hide_process_memory();

// Removes NAME from this process's environment after overwriting its value
// where it lies: /proc/PID/environ shows the environment block the process
// started with, which unsetenv alone leaves as it was.
void scrub_environment_variable(const char* name);

}  // namespace dlaunch::util
