#!/usr/bin/env bash
# Host out of memory, for real: dlaunch runs in a memory cgroup of the
# test's own with a small limit, and one rank allocates until the kernel's
# OOM killer kills it with SIGKILL. dlaunch must tell that SIGKILL from its
# own (a cascade) and from a person's:
#   1  the OOM kill: the root is rank 1, kind host out of memory, with
#      dlaunch's evidence line (the cgroup's oom_kill count) in its last
#      lines, and the same OOM on the next attempt is not retried again
#      (exit 3, "not retrying")
#   2  the neighbour: a SIGKILL sent from outside, no OOM: the root is rank
#      1, killed by a signal, "which dlaunch did not send", and it is not
#      called an OOM
# Needs to create a memory cgroup (root, cgroup v2 with the memory
# controller at the top, or v1's memory hierarchy); skipped otherwise.
# After each case no process of it is left and the cgroup is gone.
. "$(dirname "$0")/../lib.sh"

PYTHON=/usr/bin/python3
require_command "$PYTHON"

# make_memory_cgroup LIMIT_BYTES: sets CGROUP (a folder taking pids in
# cgroup.procs) limited to LIMIT_BYTES without swap; false if none can be made.
make_memory_cgroup() {
  local limit=$1 v2=/sys/fs/cgroup v1=/sys/fs/cgroup/memory
  if [ -f "$v2/cgroup.subtree_control" ] && grep -qw memory "$v2/cgroup.subtree_control" 2>/dev/null &&
    mkdir "$v2/$MARK" 2>/dev/null; then
    CGROUP=$v2/$MARK
    echo "$limit" >"$CGROUP/memory.max" || return 1
    [ ! -e "$CGROUP/memory.swap.max" ] || echo 0 >"$CGROUP/memory.swap.max"
    return 0
  fi
  if [ -d "$v1" ] && mkdir "$v1/$MARK" 2>/dev/null; then
    CGROUP=$v1/$MARK
    echo "$limit" >"$CGROUP/memory.limit_in_bytes" || return 1
    # No swap for this group: the allocation must end in an OOM kill, not in paging.
    echo 0 >"$CGROUP/memory.swappiness" 2>/dev/null
    [ ! -e "$CGROUP/memory.memsw.limit_in_bytes" ] || echo "$limit" >"$CGROUP/memory.memsw.limit_in_bytes"
    return 0
  fi
  return 1
}

remove_memory_cgroup() {
  [ -n "${CGROUP:-}" ] && [ -d "$CGROUP" ] || return 0
  local pid
  while read -r pid; do kill -KILL "$pid" 2>/dev/null; done <"$CGROUP/cgroup.procs"
  wait_until 10 rmdir "$CGROUP" 2>/dev/null
}
trap 'remove_memory_cgroup; _lib_cleanup' EXIT

make_memory_cgroup $((256 << 20)) || skip "cannot create a memory cgroup here (not root, or no memory controller)"
say "memory cgroup: $CGROUP (256 MiB, no swap)"

# Rank 1 allocates 16 MiB at a time, touching every page, until killed
# (HOG=oom), or waits to be killed from outside (HOG=outside); rank 0
# waits to be stopped. Each notes its attempt.
WORKER=$TEST_DIR/hog.py
cat >"$WORKER" <<'EOF_PY'
import os, signal, sys, time
rank = int(os.environ["RANK"])
attempt = os.environ["TORCHELASTIC_RESTART_COUNT"]
folder = os.environ["DIR"]
open(os.path.join(folder, f"attempt.{attempt}.{rank}"), "w").close()
if rank == 1 and os.environ["HOG"] == "oom":
    print("rank 1 allocates", flush=True)
    blocks = []
    while True:
        blocks.append(bytearray(16 << 20))
if rank == 1:
    open(os.path.join(folder, "pid.1"), "w").write(str(os.getpid()))
time.sleep(300)
EOF_PY

# run_in_cgroup ARGS...: dlaunch run ARGS in the cgroup (bounded), output to $OUT/$ERR.
run_in_cgroup() {
  timeout -k 10 "$RUN_LIMIT" sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CGROUP" \
    "$DLAUNCH" run "$@" >"$OUT" 2>"$ERR"
  STATUS=$?
}

section "1: rank 1 runs out of memory twice: host OOM with the cgroup's evidence, not retried a third time"
export DIR=$TEST_DIR HOG=oom
run_in_cgroup --nproc-per-node 2 --max-restarts 3 -- "$PYTHON" "$WORKER"
expect_eq "exit code 3: the same failure twice (do not requeue)" 3 "$STATUS"
summary=$(cat "$ERR")
expect_contains "the root is rank 1, out of host memory" "$summary" "rank 1: host out of memory (OOM kill)"
expect_contains "dlaunch gives the cgroup's count as evidence" "$summary" \
  "killed by the kernel's OOM killer: the memory cgroup counted"
expect_contains "not retried a third time" "$summary" "not retrying"
expect_true "two attempts, not four" test -e "$TEST_DIR/attempt.1.1" -a ! -e "$TEST_DIR/attempt.2.1"
no_leftovers

section "2: rank 1 gets SIGKILL from outside: killed by a signal, not an OOM"
rm -f "$TEST_DIR"/attempt.* "$TEST_DIR/pid.1"
export HOG=outside
( wait_until 60 test -s "$TEST_DIR/pid.1" && kill -KILL "$(cat "$TEST_DIR/pid.1")" ) &
run_in_cgroup --nproc-per-node 2 -- "$PYTHON" "$WORKER"
wait
expect_eq "exit code 137" 137 "$STATUS"
summary=$(cat "$ERR")
expect_contains "the root is rank 1, killed by a signal" "$summary" "rank 1: killed by a signal"
expect_contains "dlaunch says it did not send it" "$summary" "which dlaunch did not send"
expect_not_contains "not called an OOM" "$summary" "out of memory"
no_leftovers

remove_memory_cgroup
expect_true "the test's cgroup is gone" test ! -d "$CGROUP"
finish
