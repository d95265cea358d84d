// bench/launcher_swarm.c: N real `dlaunch run` launchers on this machine,
// one node rank each, on loopback, one worker each; times one multi-node
// path of the job and reports what each launcher cost. bench/many_launchers
// runs it (and so does the ctest check at N = 128).
//
// Why C and not the shell: at N = 1,024 a shell's forks (a subshell and a
// `date` per launcher) cost more than the path being timed, and only the
// direct parent can read each launcher's exit time, status and rusage
// (peak RSS, CPU) from wait4.
//
//   launcher_swarm MODE N DLAUNCH OUT_DIR TIMEOUT_S [EXTRA_RUN_ARGS...]
//
// With SWARM_LAUNCHER=torchrun, DLAUNCH is torchrun instead (the anchor:
// its static rendezvous, a TCPStore on node 0) and only start and fail run.
// torchrun's agents watch only their own workers: after a failure the
// others run on, so fail mode then waits SWARM_GRACE_S seconds (default
// 10), reports how many launchers were still running, and kills them.
//
// MODE is one of
//   start  every worker reports and exits 0: start -> every worker running,
//          and -> every launcher exited
//   fail   once every worker runs, the last rank's worker exits 3:
//          -> every launcher exited (each must exit non-zero, none by a signal)
//   spare  N + 1 launchers with --spare-nodes 1 --max-restarts 1; once every
//          worker runs, node rank 1's launcher gets SIGKILL: -> every worker
//          of the next attempt running (then they exit 0 and the job completes)
//   hang   every worker stops (the last rank in another function); with the
//          EXTRA_RUN_ARGS' --hang-timeout: -> every launcher exited (exit 124)
//   gate   start with --gate: the survey and the gate's check before the
//          first attempt, -> every worker running
//
// The same binary is the worker: launchers run `launcher_swarm worker`,
// which reports "RANK RESTART PID" on the FIFO named by $SWARM_FIFO.
//
// Output (stdout): "key value" lines, seconds and KiB. Launcher K's console
// goes to OUT_DIR/node.K.log. Exit: 0 when the path ended as it must, 1
// otherwise (the reason on stderr), 2 on bad arguments.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vm_hwm.h"

enum mode { MODE_START, MODE_FAIL, MODE_SPARE, MODE_HANG, MODE_GATE };

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fail(const char* format, ...) {
  va_list args;
  va_start(args, format);
  fputs("launcher_swarm: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  exit(1);
}

// ---------------------------------------------------------------- worker

static volatile sig_atomic_t told_to_fail = 0;
static void on_usr1(int signal_number) { (void)signal_number; told_to_fail = 1; }

// Distinct frames for the hang report: the last rank is the one stuck.
__attribute__((noinline)) void swarm_waiting_in_all_reduce(void) {
  for (;;) pause();
}
__attribute__((noinline)) void swarm_stuck_in_load_batch(void) {
  for (;;) pause();
}

static int worker(void) {
  const char* fifo = getenv("SWARM_FIFO");
  const char* mode = getenv("SWARM_MODE");
  const char* rank_text = getenv("RANK");
  const char* world_text = getenv("WORLD_SIZE");
  const char* restart_text = getenv("TORCHELASTIC_RESTART_COUNT");
  if (!fifo || !mode || !rank_text || !world_text) {
    fprintf(stderr, "launcher_swarm worker: SWARM_FIFO, SWARM_MODE, RANK and WORLD_SIZE must be set\n");
    return 2;
  }
  int rank = atoi(rank_text), world = atoi(world_text);
  int restart = restart_text ? atoi(restart_text) : 0;
  struct sigaction action = {0};
  action.sa_handler = on_usr1;
  sigaction(SIGUSR1, &action, NULL);
  int fd = open(fifo, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return 2;
  char line[64];
  int length = snprintf(line, sizeof line, "%d %d %d\n", rank, restart, (int)getpid());
  // One write under PIPE_BUF: whole, never interleaved with another's.
  if (write(fd, line, (size_t)length) != length) return 2;
  close(fd);
  if (strcmp(mode, "start") == 0) return 0;
  if (strcmp(mode, "spare") == 0 && restart > 0) return 0;
  if (strcmp(mode, "hang") == 0) {
    if (rank == world - 1) swarm_stuck_in_load_batch();
    swarm_waiting_in_all_reduce();
  }
  // fail (and spare's first attempt): wait to be told, or to be stopped.
  while (!told_to_fail) pause();
  return 3;
}

// ---------------------------------------------------------------- swarm

struct launcher {
  pid_t pid;
  int node_rank;
  double exited_at;  // 0 while running
  int status;
  struct rusage usage;
  long peak_kib;  // its own VmHWM at its exit stop; -1 when not traced
};

struct swarm {
  enum mode mode;
  int nnodes;     // training nodes
  int launchers;  // nnodes, + 1 spare in spare mode
  const char* dlaunch;
  const char* out_dir;
  double timeout_s;
  char** extra;
  int extra_count;
  int port;
  char fifo[4096];
  struct launcher* nodes;
  // Workers reported, per attempt (0 and 1), and the pid of each rank's.
  int reported[2];
  double all_running_at[2];
  pid_t* worker_pid;
  double started_at, event_at;
  int running;
  int torchrun;     // the launchers are torchrun (the anchor)
  double grace_s;   // torchrun, fail mode: how long to wait for the others
  int still_running_after_grace;  // -1 until measured
};

// A port below the kernel's ephemeral range (so no launcher's outgoing
// connection takes it meanwhile) that nothing holds on IPv4 or IPv6.
static int free_port(void) {
  srand((unsigned)getpid() ^ (unsigned)time(NULL));
  for (int attempt = 0; attempt < 200; ++attempt) {
    int port = 20000 + rand() % 10000;
    int v4 = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int v6 = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    int only = 1;
    setsockopt(v6, IPPROTO_IPV6, IPV6_V6ONLY, &only, sizeof only);
    int free4 = bind(v4, (struct sockaddr*)&a4, sizeof a4) == 0;
    int free6 = v6 < 0 || bind(v6, (struct sockaddr*)&a6, sizeof a6) == 0;
    close(v4);
    if (v6 >= 0) close(v6);
    if (free4 && free6) return port;
  }
  fail("no free TCP port in 20000..29999");
  return -1;
}

// The launcher other than node 0 whose own peak RSS is read: not the one
// spare mode kills.
static int traced_rank(const struct swarm* s) { return s->launchers > 2 ? 2 : 1; }

static void start_launcher(struct swarm* s, int k, const char* self) {
  char nnodes[16], rank[16], port[16], log[4200];
  snprintf(nnodes, sizeof nnodes, "%d", s->nnodes);
  snprintf(rank, sizeof rank, "%d", k);
  snprintf(port, sizeof port, "%d", s->port);
  snprintf(log, sizeof log, "%s/node.%d.log", s->out_dir, k);
  const char* dlaunch_args[] = {s->dlaunch, "run", "--nnodes", nnodes, "--node-rank", rank,
                                "--master-addr", "127.0.0.1", "--master-port", port,
                                "--nproc-per-node", "1", "--rdzv-id", "swarm"};
  // torchrun 1.13 takes underscore flags only, and needs -r and -t.
  const char* torchrun_args[] = {s->dlaunch, "--nnodes", nnodes, "--node_rank", rank,
                                 "--master_addr", "127.0.0.1", "--master_port", port,
                                 "--nproc_per_node", "1", "-r", "1", "-t", "1", "--no_python"};
  const char** fixed = s->torchrun ? torchrun_args : dlaunch_args;
  int fixed_count = s->torchrun ? (int)(sizeof torchrun_args / sizeof torchrun_args[0])
                                : (int)(sizeof dlaunch_args / sizeof dlaunch_args[0]);
  const char* spare[] = {"--spare-nodes", "1", "--max-restarts", "1"};
  const char* gate[] = {"--gate"};
  const char** mode_args = s->mode == MODE_GATE ? gate : spare;
  int spare_count = s->mode == MODE_SPARE ? 4 : s->mode == MODE_GATE ? 1 : 0;
  const char** argv = calloc((size_t)(fixed_count + spare_count + s->extra_count + 4), sizeof *argv);
  int n = 0;
  for (int i = 0; i < fixed_count; ++i) argv[n++] = fixed[i];
  for (int i = 0; i < spare_count; ++i) argv[n++] = mode_args[i];
  for (int i = 0; i < s->extra_count; ++i) argv[n++] = s->extra[i];
  if (!s->torchrun) argv[n++] = "--";
  argv[n++] = self;
  argv[n++] = "worker";
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid < 0) fail("fork: %s", strerror(errno));
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setpgid(0, 0);  // the timeout kills each launcher's group
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || null < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || dup2(null, 0) < 0) _exit(126);
    execv(s->dlaunch, (char* const*)argv);
    _exit(127);
  }
  free(argv);
  s->nodes[k].pid = pid;
  s->nodes[k].node_rank = k;
  s->nodes[k].peak_kib = -1;
  // Node 0 and one other launcher are traced to their exit stop, where
  // their own peak RSS can still be read (wait4's ru_maxrss also counts the
  // forks it makes: the worker before its exec, the watchdog).
  if ((k == 0 || k == traced_rank(s)) && ptrace(PTRACE_SEIZE, pid, NULL, (void*)PTRACE_O_TRACEEXIT) != 0)
    fprintf(stderr, "launcher_swarm: cannot trace node rank %d (%s): no peak RSS of its own\n", k, strerror(errno));
}

static struct launcher* launcher_of(struct swarm* s, pid_t pid) {
  for (int k = 0; k < s->launchers; ++k)
    if (s->nodes[k].pid == pid) return &s->nodes[k];
  return NULL;
}

// What happens once every worker of ATTEMPT runs: the path's event.
static void on_all_running(struct swarm* s, int attempt) {
  double now = now_s();
  s->all_running_at[attempt] = now;
  if (attempt != 0) return;
  if (s->mode == MODE_FAIL) {
    s->event_at = now_s();
    if (kill(s->worker_pid[s->nnodes - 1], SIGUSR1) != 0) fail("cannot signal the failing worker");
  } else if (s->mode == MODE_SPARE) {
    s->event_at = now_s();
    if (kill(s->nodes[1].pid, SIGKILL) != 0) fail("cannot kill node rank 1's launcher");
  } else {
    s->event_at = now;
  }
}

static void read_reports(struct swarm* s, int fifo) {
  static char pending[1 << 16];
  static size_t used = 0;
  ssize_t got;
  while ((got = read(fifo, pending + used, sizeof pending - used - 1)) > 0) {
    used += (size_t)got;
    char* line = pending;
    char* end;
    while ((end = memchr(line, '\n', (size_t)(pending + used - line))) != NULL) {
      *end = '\0';
      int rank, restart, pid;
      if (sscanf(line, "%d %d %d", &rank, &restart, &pid) != 3 || rank < 0 || rank >= s->nnodes ||
          restart < 0 || restart > 1)
        fail("a worker reported '%s'", line);
      s->worker_pid[rank] = pid;
      if (++s->reported[restart] == s->nnodes) on_all_running(s, restart);
      line = end + 1;
    }
    used = (size_t)(pending + used - line);
    memmove(pending, line, used);
  }
}

static void reap(struct swarm* s) {
  int status;
  struct rusage usage;
  pid_t pid;
  while ((pid = wait4(-1, &status, WNOHANG, &usage)) > 0) {
    struct launcher* node = launcher_of(s, pid);
    if (!node) continue;
    if (WIFSTOPPED(status)) {
      // A traced launcher: at its exit stop, read its peak; any other stop
      // is a signal for it (passed on) or a group stop under SEIZE.
      int event = status >> 16, signal_number = WSTOPSIG(status);
      if (event == PTRACE_EVENT_EXIT) node->peak_kib = read_hwm_kib(pid);
      int pass = (event == 0 && signal_number != SIGTRAP) ? signal_number : 0;
      ptrace(PTRACE_CONT, pid, NULL, (void*)(long)pass);
      continue;
    }
    node->exited_at = now_s();
    node->status = status;
    node->usage = usage;
    --s->running;
  }
}

static void kill_all(struct swarm* s) {
  for (int k = 0; k < s->launchers; ++k)
    if (s->nodes[k].exited_at == 0) kill(-s->nodes[k].pid, SIGKILL);
}

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double cpu_s(const struct rusage* usage) {
  return (double)usage->ru_utime.tv_sec + (double)usage->ru_utime.tv_usec / 1e6 +
         (double)usage->ru_stime.tv_sec + (double)usage->ru_stime.tv_usec / 1e6;
}

// Every launcher's exit status must fit the path: 0 after start and spare
// (the killed one aside), the job's code after fail (3) and hang (124).
static int check_exits(struct swarm* s) {
  if (s->torchrun && s->mode == MODE_FAIL) return 0;  // killed after the grace: see still_running
  int expected = s->mode == MODE_FAIL ? 3 : s->mode == MODE_HANG ? 124 : 0;
  int wrong = 0;
  for (int k = 0; k < s->launchers; ++k) {
    struct launcher* node = &s->nodes[k];
    if (s->mode == MODE_SPARE && k == 1) continue;
    int ok = WIFEXITED(node->status) && WEXITSTATUS(node->status) == expected;
    if (!ok && wrong++ < 5)
      fprintf(stderr, "launcher_swarm: node rank %d ended with %s %d, not exit code %d (see %s/node.%d.log)\n", k,
              WIFEXITED(node->status) ? "exit code" : "signal",
              WIFEXITED(node->status) ? WEXITSTATUS(node->status) : WTERMSIG(node->status), expected,
              s->out_dir, k);
  }
  return wrong;
}

static void report(struct swarm* s) {
  double last_exit = 0;
  double* rss = calloc((size_t)s->launchers, sizeof *rss);
  int counted = 0;
  for (int k = 0; k < s->launchers; ++k) {
    if (s->nodes[k].exited_at > last_exit) last_exit = s->nodes[k].exited_at;
    if (!(s->mode == MODE_SPARE && k == 1)) rss[counted++] = (double)s->nodes[k].usage.ru_maxrss;
  }
  qsort(rss, (size_t)counted, sizeof *rss, compare_doubles);
  printf("launchers %d\n", s->launchers);
  if (s->still_running_after_grace >= 0)
    printf("still_running_after_%.0f_s %d\n", s->grace_s, s->still_running_after_grace);
  printf("all_running_s %.3f\n", s->all_running_at[0] - s->started_at);
  if (s->mode == MODE_START || s->mode == MODE_GATE) printf("all_exited_s %.3f\n", last_exit - s->started_at);
  if (s->mode == MODE_FAIL) {
    printf("failure_to_all_exited_s %.3f\n", last_exit - s->event_at);
    // Where the time goes: node 0 decides once every launcher's Outcome is
    // in; the others exit after its Verdict.
    double* exits = calloc((size_t)s->launchers, sizeof *exits);
    for (int k = 0; k < s->launchers; ++k) exits[k] = s->nodes[k].exited_at - s->event_at;
    qsort(exits, (size_t)s->launchers, sizeof *exits, compare_doubles);
    printf("failure_to_first_exited_s %.3f\n", exits[0]);
    printf("failure_to_median_exited_s %.3f\n", exits[s->launchers / 2]);
    printf("failure_to_node0_exited_s %.3f\n", s->nodes[0].exited_at - s->event_at);
    free(exits);
  }
  if (s->mode == MODE_SPARE) printf("kill_to_all_running_s %.3f\n", s->all_running_at[1] - s->event_at);
  if (s->mode == MODE_HANG) printf("all_running_to_all_exited_s %.3f\n", last_exit - s->event_at);
  printf("node0_peak_rss_kib %ld\n", s->nodes[0].peak_kib);
  printf("node%d_peak_rss_kib %ld\n", traced_rank(s), s->nodes[traced_rank(s)].peak_kib);
  printf("node0_tree_maxrss_kib %ld\n", s->nodes[0].usage.ru_maxrss);
  printf("node0_cpu_s %.3f\n", cpu_s(&s->nodes[0].usage));
  printf("launcher_tree_maxrss_median_kib %.0f\n", rss[counted / 2]);
  printf("launcher_tree_maxrss_max_kib %.0f\n", rss[counted - 1]);
  double total_cpu = 0;
  for (int k = 0; k < s->launchers; ++k) total_cpu += cpu_s(&s->nodes[k].usage);
  printf("launchers_cpu_s %.3f\n", total_cpu);
  free(rss);
}

static int run_swarm(struct swarm* s, const char* self) {
  s->launchers = s->nnodes + (s->mode == MODE_SPARE ? 1 : 0);
  s->nodes = calloc((size_t)s->launchers, sizeof *s->nodes);
  s->worker_pid = calloc((size_t)s->nnodes, sizeof *s->worker_pid);
  snprintf(s->fifo, sizeof s->fifo, "%s/reports.fifo", s->out_dir);
  unlink(s->fifo);
  if (mkfifo(s->fifo, 0600) != 0) fail("mkfifo %s: %s", s->fifo, strerror(errno));
  // Read-write, so the FIFO never reads as closed between two writers.
  int fifo = open(s->fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fifo < 0) fail("open %s: %s", s->fifo, strerror(errno));
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int children = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  s->port = free_port();
  setenv("SWARM_FIFO", s->fifo, 1);
  // The gate's workers behave as start's: report, exit 0.
  setenv("SWARM_MODE", s->mode == MODE_START || s->mode == MODE_GATE ? "start" : s->mode == MODE_FAIL ? "fail"
                       : s->mode == MODE_SPARE ? "spare" : "hang", 1);
  s->started_at = now_s();
  for (int k = 0; k < s->launchers; ++k) start_launcher(s, k, self);
  s->running = s->launchers;
  double deadline = s->started_at + s->timeout_s;
  while (s->running > 0) {
    if (s->torchrun && s->mode == MODE_FAIL && s->event_at > 0 && s->still_running_after_grace < 0 &&
        now_s() >= s->event_at + s->grace_s) {
      s->still_running_after_grace = s->running;
      kill_all(s);
    }
    double wake = deadline;
    if (s->torchrun && s->mode == MODE_FAIL && s->event_at > 0 && s->still_running_after_grace < 0)
      wake = s->event_at + s->grace_s;
    double left = wake - now_s();
    if (left <= 0 && wake < deadline) continue;
    if (left <= 0) {
      kill_all(s);
      fail("timed out after %.0f s: %d of %d launchers still running, %d/%d workers reported (logs in %s)",
           s->timeout_s, s->running, s->launchers, s->reported[0], s->nnodes, s->out_dir);
    }
    struct pollfd fds[2] = {{.fd = fifo, .events = POLLIN}, {.fd = children, .events = POLLIN}};
    if (poll(fds, 2, (int)(left * 1000) + 1) < 0 && errno != EINTR) fail("poll: %s", strerror(errno));
    if (fds[0].revents) read_reports(s, fifo);
    if (fds[1].revents) {
      struct signalfd_siginfo info;
      while (read(children, &info, sizeof info) > 0) {
      }
      reap(s);
    }
  }
  read_reports(s, fifo);
  unlink(s->fifo);
  int broken = 0;
  if (s->all_running_at[0] == 0) broken = fprintf(stderr, "launcher_swarm: only %d of %d workers ever ran\n",
                                                  s->reported[0], s->nnodes);
  if (s->mode == MODE_SPARE && s->all_running_at[1] == 0)
    broken = fprintf(stderr, "launcher_swarm: only %d of %d workers of the spare's attempt ran\n",
                     s->reported[1], s->nnodes);
  if (check_exits(s) > 0) broken = 1;
  if (s->torchrun && s->mode == MODE_FAIL && s->still_running_after_grace < 0) s->still_running_after_grace = 0;
  report(s);
  return broken ? 1 : 0;
}

static int usage(void) {
  fputs("usage: launcher_swarm start|fail|spare|hang|gate N DLAUNCH OUT_DIR TIMEOUT_S [EXTRA_RUN_ARGS...]\n"
        "       launcher_swarm worker   (run by the launchers)\n",
        stderr);
  return 2;
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "worker") == 0) return worker();
  if (argc < 6) return usage();
  struct swarm s = {0};
  s.still_running_after_grace = -1;
  s.torchrun = getenv("SWARM_LAUNCHER") && strcmp(getenv("SWARM_LAUNCHER"), "torchrun") == 0;
  s.grace_s = getenv("SWARM_GRACE_S") ? atof(getenv("SWARM_GRACE_S")) : 10;
  if (strcmp(argv[1], "start") == 0) s.mode = MODE_START;
  else if (strcmp(argv[1], "fail") == 0) s.mode = MODE_FAIL;
  else if (strcmp(argv[1], "spare") == 0) s.mode = MODE_SPARE;
  else if (strcmp(argv[1], "hang") == 0) s.mode = MODE_HANG;
  else if (strcmp(argv[1], "gate") == 0) s.mode = MODE_GATE;
  else return usage();
  s.nnodes = atoi(argv[2]);
  s.dlaunch = argv[3];
  s.out_dir = argv[4];
  s.timeout_s = atof(argv[5]);
  s.extra = argv + 6;
  s.extra_count = argc - 6;
  if (s.nnodes < 2 || s.nnodes > 100000 || s.timeout_s <= 0 || s.grace_s <= 0) return usage();
  if (s.torchrun && (s.mode == MODE_SPARE || s.mode == MODE_HANG || s.mode == MODE_GATE)) {
    fputs("launcher_swarm: torchrun runs start and fail only (it has no spares, hang verdict or gate)\n", stderr);
    return 2;
  }
  char self[4096];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) fail("cannot read /proc/self/exe");
  self[length] = '\0';
  // One descriptor per launcher is not needed (logs are opened in the
  // child), but the launchers inherit this limit: node 0 holds N sockets.
  struct rlimit files;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  return run_swarm(&s, self);
}
