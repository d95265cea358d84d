/* vm_hwm.h: a process's own peak resident set, VmHWM in /proc/PID/status,
 * in KiB; -1 when it cannot be read. Read it at the process's ptrace exit
 * stop, while its memory still exists. Shared by bench/peak_rss.c and
 * bench/launcher_swarm.c (each compiled alone, so a static function here). */
#ifndef DLAUNCH_BENCH_VM_HWM_H
#define DLAUNCH_BENCH_VM_HWM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static long read_hwm_kib(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) kib = strtol(line + 6, NULL, 10);
  fclose(f);
  return kib;
}

#endif
