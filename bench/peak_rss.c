/* peak_rss OUTFILE PROGRAM [ARGS...]: runs PROGRAM and writes to OUTFILE
 *   "<wall_ms> <launcher_hwm_kib> <tree_maxrss_kib> <exit_status> <launcher_cpu_ms>"
 *
 * wall_ms: wall time from just before exec to the reaping of PROGRAM.
 * launcher_hwm_kib: VmHWM (peak resident set) of PROGRAM's own process alone,
 *   read from /proc/PID/status at its ptrace exit stop (PTRACE_O_TRACEEXIT),
 *   when its memory still exists; its children are not traced or counted.
 *   -1 if ptrace is not permitted.
 * tree_maxrss_kib: ru_maxrss from wait4, what GNU time reports as %M: the
 *   largest peak of PROGRAM and of every descendant it waited for.
 * Part of bench/ (launch_latency, log_throughput). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vm_hwm.h"

static long read_cpu_ms(pid_t pid) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  char *after_name = strrchr(text, ')');
  unsigned long user = 0, system = 0;
  if (!after_name || sscanf(after_name + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                            &user, &system) != 2)
    return -1;
  return (long)((user + system) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: peak_rss OUTFILE PROGRAM [ARGS...]\n");
    return 2;
  }
  int sync_pipe[2];
  if (pipe(sync_pipe) != 0) { perror("pipe"); return 2; }
  pid_t pid = fork();
  if (pid < 0) { perror("fork"); return 2; }
  if (pid == 0) {
    close(sync_pipe[0]);
    int traced = ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0;
    if (write(sync_pipe[1], &traced, sizeof traced) != sizeof traced) _exit(126);
    close(sync_pipe[1]);
    if (traced) raise(SIGSTOP);
    execvp(argv[2], argv + 2);
    fprintf(stderr, "peak_rss: cannot run %s: %s\n", argv[2], strerror(errno));
    _exit(127);
  }
  close(sync_pipe[1]);
  int traced = 0;
  if (read(sync_pipe[0], &traced, sizeof traced) != sizeof traced) traced = 0;
  close(sync_pipe[0]);
  int status = 0;
  struct rusage usage;
  if (traced) {
    if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) { fprintf(stderr, "peak_rss: no stop\n"); return 2; }
    ptrace(PTRACE_SETOPTIONS, pid, NULL,
           (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL));
  }
  long hwm = -1, cpu = -1;
  double start = now_ms();
  if (traced) ptrace(PTRACE_CONT, pid, NULL, NULL);
  for (;;) {
    pid_t got = wait4(pid, &status, 0, &usage);
    if (got < 0) {
      if (errno == EINTR) continue;
      perror("wait4");
      return 2;
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) break;
    if (!WIFSTOPPED(status)) continue;
    int event = status >> 16;
    int signal_number = WSTOPSIG(status);
    if (event == PTRACE_EVENT_EXIT) {
      hwm = read_hwm_kib(pid);
      cpu = read_cpu_ms(pid);
      ptrace(PTRACE_CONT, pid, NULL, NULL);
    } else if (event != 0) {
      ptrace(PTRACE_CONT, pid, NULL, NULL);
    } else {
      /* a signal for PROGRAM: deliver it */
      ptrace(PTRACE_CONT, pid, NULL, (void *)(long)signal_number);
    }
  }
  double wall = now_ms() - start;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  FILE *out = fopen(argv[1], "w");
  if (!out) { perror(argv[1]); return 2; }
  fprintf(out, "%.2f %ld %ld %d %ld\n", wall, hwm, usage.ru_maxrss, code, cpu);
  fclose(out);
  return code;
}
