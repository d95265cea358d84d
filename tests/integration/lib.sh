# Shared helpers for the black-box integration tests of `dlaunch run`.
#
# Source it first thing in a test (in local/, cluster/ or ssh/ below this
# folder):  . "$(dirname "$0")/../lib.sh"
#
# Environment (set by ctest, see tests/CMakeLists.txt):
#   DLAUNCH             path of the dlaunch binary
#   DLAUNCH_SOURCE_DIR  the repository (defaults to two folders above this file)
#
# Every test gets a private folder, $TEST_DIR, removed on exit (kept, and
# named, when DLAUNCH_KEEP_TEST_DIR is set: to read a failed run's logs). Its name is
# unique, so it doubles as the test's process marker ($MARK): every worker
# script lives in it, hence every worker (and every launcher that starts one)
# carries the marker in its command line, and `no_leftovers` can assert with
# `pgrep -f "$MARK"` that nothing of the test is still running.
# Exit status: 0 all checks passed, 1 a check failed, 77 skipped.

set -u

LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${DLAUNCH_SOURCE_DIR:=$(cd "$LIB_DIR/../.." && pwd)}"
: "${DLAUNCH:=$DLAUNCH_SOURCE_DIR/build/src/dlaunch}"
export DLAUNCH DLAUNCH_SOURCE_DIR

# Debian's interpreter, which has torch; the first python3 in PATH may not.
PY=/usr/bin/python3
TEST_NAME=$(basename "$0" .sh)
TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/dlit_${TEST_NAME#test_}_XXXXXXXX")
MARK=$(basename "$TEST_DIR")
# dlaunch's temporary log folders (and torchrun's) land in the test folder.
export TMPDIR=$TEST_DIR
# Upper bound on any single launcher run, so a hang fails the test instead
# of blocking ctest: a safety net, never a timing assertion.
RUN_LIMIT=${DLAUNCH_TEST_RUN_LIMIT:-120}

PASSED=0
FAILED=0
# Files holding the output of the last `expect_exit` / `run_dlaunch`.
OUT=$TEST_DIR/last.stdout
ERR=$TEST_DIR/last.stderr

# Kills (by pid) whatever still carries the marker, then removes the folder.
_lib_cleanup() {
  local pids
  mapfile -t pids < <(pgrep -f "$MARK" 2>/dev/null)
  [ "${#pids[@]}" -gt 0 ] && kill -KILL "${pids[@]}" 2>/dev/null
  if [ -n "${DLAUNCH_KEEP_TEST_DIR:-}" ]; then say "kept the test's folder: $TEST_DIR"
  else rm -rf "$TEST_DIR"; fi
}
trap _lib_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say() { printf '%s\n' "$*"; }
section() { printf '\n== %s\n' "$*"; }

pass() {
  PASSED=$((PASSED + 1))
  printf '  ok    %s\n' "$1"
}

fail() {
  FAILED=$((FAILED + 1))
  printf '  FAIL  %s\n' "$1"
  shift
  local detail
  for detail in "$@"; do printf '        %s\n' "$detail"; done
}

# Shows the last launcher's output, indented, after a failed check.
show_last_output() {
  local stream
  for stream in "$OUT" "$ERR"; do
    [ -s "$stream" ] || continue
    printf '        --- %s (last 30 lines)\n' "$(basename "$stream")"
    tail -n 30 "$stream" | sed 's/^/        | /'
  done
}

skip() {
  say "SKIP: $*"
  exit 77
}

require_torch() {
  [ -x "$PY" ] || skip "$PY is missing"
  "$PY" -c 'import torch, torch.distributed' 2>/dev/null || skip "$PY cannot import torch"
}

require_command() {
  command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"
}

[ -x "$DLAUNCH" ] || { say "DLAUNCH='$DLAUNCH' is not an executable; build dlaunch first"; exit 1; }
command -v pgrep >/dev/null 2>&1 || skip "pgrep (procps) is not installed"

# expect_eq DESCRIPTION EXPECTED ACTUAL
expect_eq() {
  if [ "$2" == "$3" ]; then pass "$1"
  else fail "$1" "expected: $(printf '%q' "$2")" "got:      $(printf '%q' "$3")"; fi
}

# expect_contains DESCRIPTION HAYSTACK NEEDLE   (fixed string)
expect_contains() {
  if grep -qF -- "$3" <<<"$2"; then pass "$1"
  else fail "$1" "expected to contain: $3" "in: $(head -c 2000 <<<"$2" | sed '2,$s/^/            /')"; fi
}

# expect_not_contains DESCRIPTION HAYSTACK NEEDLE
expect_not_contains() {
  if grep -qF -- "$3" <<<"$2"; then
    fail "$1" "expected NOT to contain: $3" "in: $(grep -F -- "$3" <<<"$2" | head -n 5)"
  else pass "$1"; fi
}

# expect_file DESCRIPTION PATH: PATH exists.
expect_file() {
  if [ -e "$2" ]; then pass "$1"; else fail "$1" "missing file: $2"; fi
}

# expect_true DESCRIPTION COMMAND...: COMMAND succeeds.
expect_true() {
  local description=$1
  shift
  if "$@"; then pass "$description"; else fail "$description" "command failed: $*"; fi
}

# run_dlaunch ARGS...: runs the launcher (bounded by RUN_LIMIT), stdout to
# $OUT, stderr to $ERR; sets STATUS.
run_dlaunch() {
  timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" "$@" >"$OUT" 2>"$ERR"
  STATUS=$?
}

# expect_exit CODE COMMAND...: runs COMMAND (bounded by RUN_LIMIT) with
# stdout to $OUT and stderr to $ERR, and checks its exit status. CODE may be
# "nonzero". Sets STATUS.
expect_exit() {
  local want=$1
  shift
  timeout -k 10 "$RUN_LIMIT" "$@" >"$OUT" 2>"$ERR"
  STATUS=$?
  local description
  description="exit status $want: $(_short_command "$@")"
  if [ "$want" == nonzero ]; then
    if [ "$STATUS" -ne 0 ]; then pass "$description (got $STATUS)"; return 0; fi
  elif [ "$STATUS" -eq "$want" ]; then
    pass "$description"; return 0
  fi
  fail "$description" "got exit status $STATUS"
  show_last_output
  return 1
}

# The command line, with the launcher and the test folder abbreviated.
_short_command() {
  local text="$*"
  text=${text//$DLAUNCH/dlaunch}
  text=${text//$TEST_DIR/\$TEST_DIR}
  text=${text//$DLAUNCH_SOURCE_DIR\//}
  printf '%.160s' "$text"
}

# A TCP port that is free now on 127.0.0.1.
# A port the kernel never hands out by itself: one of the ephemeral range
# (what bind to port 0 gives) may go to any connect() or bind(0) of the
# tests beside this one (a hundred launchers of test_many_launchers) before
# the launcher binds it. Free now on IPv4 and IPv6, so only a test that
# picks the same random port at the same moment can collide.
free_port() {
  "$PY" -c 'import random, socket
def free(family, host, port):
    try:
        s = socket.socket(family)
    except OSError:  # no IPv6 on this host
        return True
    with s:
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True
for _ in range(500):
    port = random.randint(20000, 32767)
    if free(socket.AF_INET, "0.0.0.0", port) and free(socket.AF_INET6, "::", port):
        print(port)
        break
else:
    raise SystemExit("free_port: no free TCP port in 20000..32767")'
}

# Nanosecond clock, for bounds on timeout features.
now_ns() { date +%s%N; }

# expect_within DESCRIPTION SECONDS: checks the time between start_clock and
# stop_clock. It bounds a timeout feature (the launcher must give up, or
# notice a lost node, in time); it is not a performance assertion.
start_clock() { CLOCK_START=$(now_ns); }
stop_clock() { ELAPSED_MS=$((($(now_ns) - CLOCK_START) / 1000000)); }
expect_within() {
  if [ "$ELAPSED_MS" -lt $(($2 * 1000)) ]; then pass "$1 (${ELAPSED_MS} ms)"
  else fail "$1" "took ${ELAPSED_MS} ms, bound $2 s"; fi
}

# wait_until SECONDS COMMAND...: polls COMMAND until it succeeds; false if it
# still fails after SECONDS. For events the test cannot be told about.
wait_until() {
  local limit_ns=$(($(now_ns) + $1 * 1000000000))
  shift
  until "$@"; do
    [ "$(now_ns)" -ge "$limit_ns" ] && return 1
    sleep 0.05
  done
}

files_exist() {
  local file
  for file in "$@"; do [ -e "$file" ] || return 1; done
}

# wait_for_files SECONDS FILE...: true once every FILE exists.
wait_for_files() {
  local seconds=$1
  shift
  wait_until "$seconds" files_exist "$@"
}

# wait_pid SECONDS PID: waits for a background child of this shell to exit
# and sets STATUS to its exit status; on overrun kills it (STATUS=timeout).
wait_pid() {
  if wait_until "$1" _pid_gone "$2"; then
    wait "$2"
    STATUS=$?
  else
    kill -KILL "$2" 2>/dev/null
    wait "$2" 2>/dev/null
    STATUS=timeout
  fi
}
_pid_gone() { ! kill -0 "$1" 2>/dev/null; }

_marker_gone() { ! pgrep -f "$MARK" >/dev/null 2>&1; }

# no_leftovers [DESCRIPTION]: no process of this test (workers, their
# children, launchers, watchdogs) is left. Processes killed a moment ago may
# take a little while to vanish, so this polls (bounded) before failing;
# survivors are listed and killed.
# shellcheck disable=SC2120  # DESCRIPTION is optional
no_leftovers() {
  local description="${1:-no process of the test is left}"
  if wait_until 10 _marker_gone; then
    pass "$description"
  else
    local pids
    mapfile -t pids < <(pgrep -f "$MARK")
    fail "$description" "still running:" \
      "$(IFS=,; ps -o pid=,ppid=,pgid=,args= -p "${pids[*]}" 2>/dev/null | cut -c1-200)"
    [ "${#pids[@]}" -gt 0 ] && kill -KILL "${pids[@]}" 2>/dev/null
  fi
}

# write_worker NAME: writes stdin to the executable $TEST_DIR/NAME (its path
# carries the marker), after a preamble that defines, for the worker:
#   DIR                 the test folder (for marker files)
#   marked_sleep SECS   a sleep whose command line carries the marker too,
#                       interruptible by the traps of the worker
#   wait_files FILE...  bounded wait (60 s) for FILEs to exist
# and prints the path.
# slurm_stand_ins SUBMIT_ANSWER QUERY_ERROR: in $TEST_DIR/bin (made), sbatch,
# srun, ssh and scancel that append their command line to $TEST_DIR/called
# and print SUBMIT_ANSWER, and scontrol, squeue and sacct that print
# QUERY_ERROR ("" for nothing) on stderr and exit 1: nothing reaches a real
# cluster, and a test sees whether anything was submitted or started.
slurm_stand_ins() {
  local program
  mkdir -p "$TEST_DIR/bin"
  for program in sbatch srun ssh scancel; do
    printf '#!/bin/sh\necho "$0 $*" >>%q/called\necho %q\n' "$TEST_DIR" "$1" >"$TEST_DIR/bin/$program"
  done
  for program in scontrol squeue sacct; do
    printf '#!/bin/sh\n[ -z %q ] || echo %q >&2\nexit 1\n' "$2" "$2" >"$TEST_DIR/bin/$program"
  done
  chmod +x "$TEST_DIR"/bin/*
}

write_worker() {
  local path=$TEST_DIR/$1
  {
    printf '#!/bin/bash\n'
    printf 'DIR=%q\n' "$TEST_DIR"
    cat <<'PREAMBLE'
marked_sleep() { (exec -a "$0.sleep" sleep "$1") & wait $!; }
wait_files() {
  local i f missing
  for i in $(seq 1 1200); do
    missing=0
    for f in "$@"; do [ -e "$f" ] || missing=1; done
    [ "$missing" = 0 ] && return 0
    sleep 0.05
  done
  echo "worker $RANK: gave up waiting for $*" >&2
  return 1
}
PREAMBLE
    cat
  } >"$path"
  chmod +x "$path"
  printf '%s\n' "$path"
}

# finish: prints the summary line and exits 0 if every check passed.
finish() {
  printf '\n%s: %d passed, %d failed\n' "$TEST_NAME" "$PASSED" "$FAILED"
  [ "$FAILED" -eq 0 ]
  exit $?
}
