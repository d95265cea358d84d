#!/usr/bin/env bash
# The fault suite, on the real multi-node Slurm test cluster (tests/cluster/up).
#
# A job of 3 nodes x 2 workers, submitted with `dlaunch submit` (sbatch), and
# one fault injected per case; each case runs DLAUNCH_FAULT_REPEATS times
# (default 3) and every run is counted as passed or failed:
#   1  kill -9 of a random worker: FAILED, exit code 137, the summary names
#      the rank and SIGKILL
#   2  kill -9 of a random non-zero node's launcher (dlaunch run): FAILED,
#      "lost contact with the launcher of node K"
#   3  kill -9 of node 0's launcher: every other node reports it lost contact
#      with the rendezvous on node 0; FAILED
#   4  scancel JOBID: every worker on every node gets SIGTERM and stops within
#      the shutdown timeout; CANCELLED
#   5  preemption: --signal USR1@60 --requeue, `scancel --signal=USR1` as Slurm
#      delivers it; the workers checkpoint and exit 0, node 0 requeues the job,
#      the second run resumes from the checkpoints; COMPLETED, exit code 0
#   6  a node whose launcher never starts (a bind mount in that node's mount
#      namespace puts a sleeping script where the dlaunch binary is): the other
#      nodes give up after --rdzv-timeout naming the missing node rank; FAILED
#   7  a stranger holds node 0's rendezvous port before the job starts and
#      speaks the protocol without the token (tests/integration/hostile_peer.py
#      in node 0's namespace, offering a World of 200 workers): node 0 says its
#      port is taken, the other nodes believe nothing the stranger says, name
#      its address and give up at --rdzv-timeout; no worker starts; FAILED
#   8  1000 idle connections from the submit host flood node 0's rendezvous
#      port, reopened when closed, while the other nodes join (their
#      launchers start only once the flood is in place); COMPLETED, exit 0
#   9  every launcher's console stalls: `dlaunch submit --srun` with srun's
#      stdout a FIFO nobody reads, workers printing constantly, a 5 s
#      heartbeat timeout; the job still runs after 4 heartbeat timeouts, and
#      scancel stops every launcher within the shutdown timeout
#  10  one node's log folder is a full file system (a 1 MiB tmpfs mounted over
#      the submission's logs/ in node 2's mount namespace while the job is
#      held); its workers write 768 KiB each: COMPLETED, exit 0, the log names
#      the incomplete files and ENOSPC, and every line reached the Slurm log
# Spare nodes (2 nodes train, --max-restarts; the workers of a later attempt
# report and exit 0, as a job resuming from its checkpoint would):
#  11  --spare-nodes 1, kill -9 of node 1's launcher: the spare takes node
#      rank 1; the second attempt's 4 workers run on node 0's host and the
#      spare's; COMPLETED, exit code 0
#  12  --spare-nodes 1, kill -9 of node 0's launcher: node 1's launcher
#      takes over the rendezvous on the same port and node rank 0, the spare
#      takes node rank 1; COMPLETED, exit code 0
#  13  --spare-nodes 1, node 1's network cut (ip link set eth0 down in its
#      namespace): lost within --heartbeat-timeout (10 s), replaced by the
#      spare; the link comes back once the second attempt runs; COMPLETED, 0
#  14  no spare, --min-nodes 1, kill -9 of node 1's launcher: the job goes on
#      with 1 node, world size 2; COMPLETED, exit code 0
#  15  --spare-nodes 1 --node-fail-limit 2, the workers on the host of node
#      rank 1 exit 1 on every attempt: after 2 failed rounds it is benched and
#      the spare takes its place; COMPLETED, exit code 0
# For cases 11 to 14 the suite also measures the time from the fault to
# every worker of the next attempt running (the replacement figures).
# Every run also checks that the job ended within its case's stated bound and
# that no process of the job is left on any node. The suite ends with a
# table: case, runs, passes, worst time (from the fault to the job's end).
#
# Environment:
#   DLAUNCH_CLUSTER_DIR       the cluster (the ctest fixture sets it)
#   DLAUNCH_FAULT_REPEATS     runs per case (default 3)
#   DLAUNCH_FAULT_CASES       which cases to run (default "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15")
#   DLAUNCH_FAULT_KEEP_DIR    where the submission folders of failed runs are
#                             copied (with their logs) before the test folder goes
#   DLAUNCH_FAULT_TABLE       a file to write the final table to, as well
. "$(dirname "$0")/../lib.sh"

[ -n "${DLAUNCH_CLUSTER_DIR:-}" ] && [ -f "$DLAUNCH_CLUSTER_DIR/env.sh" ] ||
  skip "no test cluster is up (DLAUNCH_CLUSTER_DIR unset or without env.sh)"
. "$DLAUNCH_CLUSTER_DIR/env.sh"
. "$DLAUNCH_CLUSTER_DIR/cluster.env"
# shellcheck source-path=SCRIPTDIR source=job_checks.sh
. "$(dirname "$0")/job_checks.sh"
require_command sbatch
require_command scancel
require_command scontrol
require_command nsenter
[ "$(id -u)" = 0 ] || skip "needs root (a bind mount in a node's mount namespace)"
[ "${NODES:-0}" -ge 3 ] || skip "needs a cluster of 3 nodes or more (this one has ${NODES:-0})"

REPEATS=${DLAUNCH_FAULT_REPEATS:-3}
[[ $REPEATS =~ ^[1-9][0-9]*$ ]] || { say "DLAUNCH_FAULT_REPEATS must be a positive number"; exit 1; }
CASES=${DLAUNCH_FAULT_CASES:-1 2 3 4 5 6 7 8 9 10 11 12 13 14 15}
KEEP_DIR=${DLAUNCH_FAULT_KEEP_DIR:-}

JOB_NODES=3
PER_NODE=2
RANKS=$((JOB_NODES * PER_NODE))
# The job's --shutdown-timeout (SIGTERM to SIGKILL), and dlaunch run's default
# --heartbeat-timeout, which the jobs keep.
SHUTDOWN=10
HEARTBEAT=30
# --rdzv-timeout of case 6.
RDZV_TIMEOUT=20
# Bounds, in seconds, from the fault to the end of the job as `dlaunch
# submit --wait` reports it. They bound the features (a lost peer noticed, a
# grace period); they are generous for a loaded 2-core machine and say
# nothing about speed.
#   cases 1-3: the shutdown timeout + the heartbeat timeout + 30 s
BOUND_LOST=$((SHUTDOWN + HEARTBEAT + 30))
#   case 4: Slurm's KillWait (5 s) + the shutdown timeout + 30 s
BOUND_CANCEL=$((5 + SHUTDOWN + 30))
#   case 5: from the signal: the workers' exit and the requeue, then Slurm
#   holds the job until requeue + cred_expire (30 s here) + 1, the backfill
#   scheduler (every 30 s) starts it, and the second run ends: 30 + 30 +
#   the shutdown timeout + the heartbeat timeout + 60 s
BOUND_REQUEUE=$((30 + 30 + SHUTDOWN + HEARTBEAT + 60))
#   case 6: from the submission: the rendezvous timeout, then srun's --wait
#   (the seconds the generated job script gives srun to end the stuck task
#   once the others exited; read from job.sbatch, 0 when it has none) + 30 s
#   + the heartbeat timeout
BOUND_STUCK_BASE=$((RDZV_TIMEOUT + 30 + HEARTBEAT))
# How long a job may take to start its workers, and how long after its end
# the processes of a job may take to vanish from the nodes.
START_LIMIT=120
GONE_LIMIT=20
#   case 7: as case 6 (from the submission)
#   case 8: from the flood's start: the start of every worker (START_LIMIT)
#   + the heartbeat timeout + 30 s
BOUND_FLOOD=$((START_LIMIT + HEARTBEAT + 30))
#   case 9: from scancel: every launcher gone within KillWait (5 s) + the
#   shutdown timeout + 30 s, while every console is stalled
CONSOLE_HEARTBEAT=5
BOUND_CONSOLE=$((5 + SHUTDOWN + 30))
#   case 10: from the release of the held job: the start of every worker
#   (START_LIMIT) + the heartbeat timeout + 30 s
BOUND_FULL=$((START_LIMIT + HEARTBEAT + 30))
# Lines of 128 bytes per worker: 768 KiB. The node's two workers write 1.5
# MiB into a 1 MiB tmpfs, so the files fail; what they could not take (about
# 0.6 MiB with the rank prefixes) fits the console's 1 MiB backlog, so a
# slow srun I/O path only delays those lines (past the backlog the workers
# would wait for srun: the console never drops a line unless the job asks
# for --console-overflow drop).
FULL_LINES=6144
#   cases 11, 13-15 (spare nodes): from the fault, the next attempt's workers
#   start within the shutdown timeout + the heartbeat timeout + 30 s (case
#   13's heartbeat timeout is NET_HEARTBEAT), and the job ends within as much
#   again.
NET_HEARTBEAT=10
BOUND_REPLACE=$((SHUTDOWN + HEARTBEAT + 30))

OUTPUTS=$TEST_DIR/outputs
DLAUNCH_REAL=$(readlink -f "$DLAUNCH")
# Beside the suite's lib.sh, so tests/cluster/fault_figures' snapshot has it too.
HOSTILE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/hostile_peer.py

# ---------------------------------------------------------------- the worker

# $1 = wait: report, then wait to be stopped (SIGTERM: note it, exit 143).
# $1 = preempt: on the first run, wait for SIGUSR1, save a checkpoint, exit 0;
# on a later run, exit 0 if and only if the checkpoint is there.
# $1 = quick: report, then exit 0.
# $1 = chatty: report, then print lines until stopped (SIGTERM: exit 143).
# $1 = flood: report, then print FULL_LINES lines of 128 bytes, exit 0.
# Its files go to the submission folder ($OUTPUT_DIR, set by the job script):
# started.RANK.runN ("PID PPID GROUP_RANK LOCAL_RANK HOST", written once its
# traps are set, so the test knows whom to kill without sleeping), term.RANK
# (the time it got SIGTERM), checkpoint.RANK, resumed.RANK.runN.
WORKER=$(write_worker fault_worker.sh <<'WORKER'
mode=${1:-wait}
run=${TORCHELASTIC_RESTART_COUNT:?}
out=${OUTPUT_DIR:?}
started() {
  echo "$$ $PPID $GROUP_RANK $LOCAL_RANK $(hostname) $(date +%s%N) $WORLD_SIZE" >"$out/.started.$RANK.run$run"
  mv "$out/.started.$RANK.run$run" "$out/started.$RANK.run$run"
}
on_term() {
  # Slurm signals every process of the step and the launcher forwards the
  # signal to the worker's group as well: a second SIGTERM could kill the
  # `date` below before it opens its file. Ignored from here, it cannot.
  trap '' TERM
  date +%s%N >"$out/term.$RANK"
  kill -KILL "$sleeper" 2>/dev/null
  exit 143
}
trap on_term TERM
# A job that resumes from its checkpoint: from the second attempt on, the
# worker reports and exits 0.
if [ "$mode" = resume ] && [ "$run" != 0 ]; then
  started
  echo "rank $RANK/$WORLD_SIZE (node $GROUP_RANK) on $(hostname): attempt $run resumed"
  exit 0
fi
# A bad host: the one that holds node rank 1 in attempt 0 (which launchers
# train is decided by who joins first) records itself in bad_host; its
# workers exit 1 on every attempt. Elsewhere they wait to be stopped, and
# from attempt $2 on (after the bad host was benched) exit 0.
if [ "$mode" = failhost ]; then
  if [ "$run" = 0 ] && [ "$GROUP_RANK" = 1 ]; then
    hostname >"$out/.bad_host.$RANK" && mv "$out/.bad_host.$RANK" "$out/bad_host"
  fi
  if [ "$(hostname)" = "$(cat "$out/bad_host" 2>/dev/null)" ]; then
    started
    echo "rank $RANK on $(hostname): a bad host, exiting 1" >&2
    exit 1
  fi
  if [ "$run" -ge "$2" ]; then
    started
    echo "rank $RANK/$WORLD_SIZE (node $GROUP_RANK) on $(hostname): attempt $run done"
    exit 0
  fi
fi
if [ "$mode" = quick ]; then
  started
  echo "rank $RANK (local $LOCAL_RANK, node $GROUP_RANK) on $(hostname): done"
  exit 0
fi
if [ "$mode" = chatty ]; then
  started
  n=0
  while :; do  # batches of 100 lines, then a breath: a trap runs between commands
    for _ in {1..100}; do echo "rank $RANK line $((n++)) ................................................"; done
    sleep 0.02
  done
fi
if [ "$mode" = flood ]; then
  started
  filler=$(printf '%0100d' 0)
  for ((n = 0; n < ${2:?}; n++)); do printf 'rank %d line %05d %s\n' "$RANK" "$n" "$filler"; done
  exit 0
fi
if [ "$mode" = preempt ]; then
  if [ "$run" != 0 ]; then
    echo "SLURM_RESTART_COUNT=${SLURM_RESTART_COUNT:-unset} TORCHELASTIC_RESTART_COUNT=$run" \
      >"$out/env.$RANK.run$run"
    if [ -f "$out/checkpoint.$RANK" ]; then
      echo "rank $RANK: run $run resumed from: $(cat "$out/checkpoint.$RANK")"
      touch "$out/resumed.$RANK.run$run"
      exit 0
    fi
    echo "rank $RANK: run $run found no checkpoint" >&2
    exit 1
  fi
  on_usr1() {
    echo "checkpoint of rank $RANK" >"$out/checkpoint.$RANK"
    echo "rank $RANK: preemption warning, checkpoint saved"
    kill -KILL "$sleeper" 2>/dev/null
    exit 0
  }
  trap on_usr1 USR1
fi
# Waits (bounded, so a lost signal fails the test instead of hanging it);
# a trap runs as soon as its signal arrives. The sleep ignores the signals
# under test: Slurm signals every process of a step, this sleep too, and a
# sleep that died of the signal first would end the wait before the
# worker's own trap ran (the worker would then exit 1 as if never signalled).
(trap '' TERM USR1 USR2 INT HUP; exec -a "$0.sleep" sleep 600) &
sleeper=$!
started
echo "rank $RANK (local $LOCAL_RANK, node $GROUP_RANK) on $(hostname): run $run started"
wait "$sleeper"
echo "rank $RANK: no fault within 600 s" >&2
exit 1
WORKER
)

# The launcher that never starts: bind-mounted over the dlaunch binary in one
# node's mount namespace, it sleeps with the test's marker in its command line.
STUCK=$TEST_DIR/stuck_launcher.sh
cat >"$STUCK" <<SCRIPT
#!/bin/bash
# fault suite: a launcher stuck before it reaches the rendezvous
exec -a "$MARK.stuck-launcher" sleep 3600
SCRIPT
chmod +x "$STUCK"

# The launcher that starts late: bind-mounted over the dlaunch binary in a
# node's mount namespace, it waits until the test is ready (case 8: the
# flood is in place), then runs a copy of the real binary.
LATE=$TEST_DIR/late_launcher.sh
cat >"$LATE" <<SCRIPT
#!/bin/bash
# fault suite: a launcher held back until $TEST_DIR/go exists
for _ in \$(seq 1 2400); do [ -e "$TEST_DIR/go" ] && break; sleep 0.05; done
exec "$TEST_DIR/dlaunch-real" "\$@"
SCRIPT
chmod +x "$LATE"

# ---------------------------------------------------------------- helpers

slurmd_pid() { tr -dc '0-9' <"$DLAUNCH_CLUSTER_DIR/run/slurmd-node$1.pid" 2>/dev/null; }

# mount_over_dlaunch NODE SCRIPT: bind-mounts SCRIPT over the dlaunch binary
# in cluster node NODE's mount namespace (its slurmd's).
MOUNTED_NODES=()
mount_over_dlaunch() {
  local pid
  pid=$(slurmd_pid "$1")
  nsenter --target "$pid" --mount -- mount --bind "$2" "$DLAUNCH_REAL" || return 1
  MOUNTED_NODES+=("$1")
}
# Undoes the bind mounts of cases 6 and 8 on every node (also when the test dies).
unmount_stuck() {
  local node pid
  for node in "${MOUNTED_NODES[@]}"; do
    pid=$(slurmd_pid "$node")
    [ -n "$pid" ] && nsenter --target "$pid" --mount -- umount "$DLAUNCH_REAL" 2>/dev/null
  done
  MOUNTED_NODES=()
}
# The 1 MiB tmpfs of case 10, in a node's mount namespace.
TMPFS_NODE="" TMPFS_PATH=""
unmount_tmpfs() {
  [ -n "$TMPFS_NODE" ] || return 0
  local pid
  pid=$(slurmd_pid "$TMPFS_NODE")
  [ -n "$pid" ] && nsenter --target "$pid" --mount -- umount "$TMPFS_PATH" 2>/dev/null
  TMPFS_NODE="" TMPFS_PATH=""
}
# The hostile peer of cases 7 and 8 (its command line carries the marker).
HOSTILE_PID=""
stop_hostile() {
  [ -n "$HOSTILE_PID" ] || return 0
  kill "$HOSTILE_PID" 2>/dev/null
  wait "$HOSTILE_PID" 2>/dev/null
  HOSTILE_PID=""
}
_faults_cleanup() {
  [ -n "${CUT_NS:-}" ] && ip netns exec "$CUT_NS" ip link set eth0 up 2>/dev/null
  unmount_stuck
  unmount_tmpfs
  exec 7>&- 2>/dev/null
  stop_hostile
  [ -n "${JOB_ID:-}" ] && scancel "$JOB_ID" 2>/dev/null
  _lib_cleanup
}
trap _faults_cleanup EXIT


# submit CASE RUN ARGS... -- WORKER_ARGS...: submits the job in the background
# with --wait (SUBMITTER; output in $RUN_DIR/submit.{out,err}); sets FOLDER,
# JOB_ID, LOG, SUBMIT_S. False when the job was not submitted.
submit() {
  RUN_DIR=$TEST_DIR/case$1.run$2
  shift 2
  SUBMIT_S=$(now_ns)
  submit_in_background $((START_LIMIT + BOUND_REQUEUE + 600)) --nodes "$JOB_NODES" --gpus-per-node "$PER_NODE" \
    --shutdown-timeout "$SHUTDOWN" --output-dir "$OUTPUTS" "$@"
}

# started_files RUN: the started files of every rank in run RUN of the job.
started_files() {
  local rank
  for ((rank = 0; rank < RANKS; rank++)); do printf '%s\n' "$FOLDER/started.$rank.run$1"; done
}
expect_workers_started() {
  local files
  mapfile -t files < <(started_files 0)
  if wait_for_files "$START_LIMIT" "${files[@]}"; then
    pass "all $RANKS workers started, on $JOB_NODES nodes"
    return 0
  fi
  fail "all $RANKS workers started within ${START_LIMIT} s" "started: $(cd "$FOLDER" && ls started.* 2>/dev/null | tr '\n' ' ')"
  return 1
}
# field_of RANK N [RUN]: field N of rank RANK's started file in attempt RUN
# (default 0): 1 pid, 2 launcher pid, 3 node rank, 4 local rank, 5 host, 6
# the time it started (ns), 7 WORLD_SIZE.
field_of() { awk -v n="$2" '{print $n}' "$FOLDER/started.$1.run${3:-0}"; }
# a rank on node rank $1
rank_on_node() { echo $(($1 * PER_NODE)); }

# wait_for_end BOUND: waits (at most BOUND + 60 s) for the submitter to report
# the job's end; sets END_STATE, END_CODE (the job's exit code as dlaunch
# submit reports it), STATUS (dlaunch submit's), ELAPSED_S since FAULT_NS.
wait_for_end() {
  wait_pid $(($1 + 60)) "$SUBMITTER"
  local end_ns
  end_ns=$(now_ns)
  ELAPSED_MS=$(((end_ns - FAULT_NS) / 1000000))
  ELAPSED_S=$(printf '%d.%d' $((ELAPSED_MS / 1000)) $((ELAPSED_MS % 1000 / 100)))
  local line
  line=$(grep -o "job $JOB_ID ended [A-Z_]* with exit code [0-9]*" "$RUN_DIR/submit.err" | tail -n 1)
  END_STATE=$(awk '{print $4}' <<<"$line")
  END_CODE=$(awk '{print $NF}' <<<"$line")
  if [ "$STATUS" = timeout ]; then
    NOT_ENDED[$CURRENT_CASE]=$((${NOT_ENDED[$CURRENT_CASE]:-0} + 1))
    fail "the job ended" "job $JOB_ID had not ended $(($1 + 60)) s after the fault; scontrol says:" \
      "$(scontrol show job -o "$JOB_ID" 2>&1 | grep -oE '(JobState|Reason|ExitCode|RunTime)=[^ ]*' | tr '\n' ' ')"
    scancel "$JOB_ID" 2>/dev/null
    return 1
  fi
  say "  job $JOB_ID ended $END_STATE with exit code $END_CODE, ${ELAPSED_S} s after the fault"
}

expect_in_log() {
  if grep -qF -- "$2" "$LOG" 2>/dev/null; then pass "$1"
  else fail "$1" "not in $LOG: $2"; fi
}
# count_in_log TEXT: lines of the Slurm log that contain TEXT.
count_in_log() { grep -cF -- "$1" "$LOG" 2>/dev/null; }

# ------------------------------------------------------------ book-keeping

declare -A RUNS PASSES WORST NOT_ENDED REPLACED
CASE_TITLE=(""
  "kill -9 of a random worker"
  "kill -9 of a random non-zero node's launcher"
  "kill -9 of node 0's launcher"
  "scancel (SIGTERM to the job)"
  "preemption: USR1, checkpoint, requeue"
  "a node's launcher never starts"
  "a stranger holds node 0's rendezvous port"
  "1000 idle connections to node 0's port"
  "every launcher's console stalls (srun)"
  "a node's log folder is full (1 MiB)"
  "spare: kill -9 of node 1's launcher"
  "spare: kill -9 of node 0's launcher"
  "spare: node 1's network cut"
  "no spare, --min-nodes 1: kill -9 of node 1"
  "spare: node 1 fails every attempt (benched)")
CASE_BOUND=("" "$BOUND_LOST" "$BOUND_LOST" "$BOUND_LOST" "$BOUND_CANCEL" "$BOUND_REQUEUE" "" "" "$BOUND_FLOOD"
  "$BOUND_CONSOLE" "$BOUND_FULL" "$((2 * BOUND_REPLACE))" "$((2 * BOUND_REPLACE))" "$((2 * BOUND_REPLACE))"
  "$((2 * BOUND_REPLACE))" "")

begin_run() {
  CURRENT_CASE=$1
  RUN_FAILED_BEFORE=$FAILED
  FAULT_NS=$(now_ns)
  ELAPSED_MS=""
  ELAPSED_S=""
  JOB_ID=""
}
end_run() {
  local case=$1 run=$2
  RUNS[$case]=$((${RUNS[$case]:-0} + 1))
  if [ "$FAILED" -eq "$RUN_FAILED_BEFORE" ]; then
    PASSES[$case]=$((${PASSES[$case]:-0} + 1))
    say "  run passed"
  else
    say "  run FAILED"
    [ -n "$LOG" ] && [ -f "$LOG" ] && {
      say "        --- $LOG (last 40 lines)"
      tail -n 40 "$LOG" | sed 's/^/        | /'
    }
    if [ -n "$KEEP_DIR" ] && [ -n "$FOLDER" ] && [ -d "$FOLDER" ]; then
      mkdir -p "$KEEP_DIR" && cp -r "$FOLDER" "$KEEP_DIR/case$case.run$run.job$JOB_ID" &&
        cp "$RUN_DIR"/submit.* "$KEEP_DIR/case$case.run$run.job$JOB_ID/" 2>/dev/null
      say "        (kept in $KEEP_DIR/case$case.run$run.job$JOB_ID)"
    fi
  fi
  if [ -n "$ELAPSED_MS" ] && [ "$ELAPSED_MS" -gt "${WORST[$case]:-0}" ]; then WORST[$case]=$ELAPSED_MS; fi
  # A run that failed half-way must not leave its job to the next one.
  [ -n "${SUBMITTER:-}" ] && { kill "$SUBMITTER" 2>/dev/null; wait "$SUBMITTER" 2>/dev/null; }
  SUBMITTER=""
  if [ -n "$JOB_ID" ]; then
    scancel "$JOB_ID" 2>/dev/null
    wait_until "$GONE_LIMIT" nothing_left || true
  fi
  JOB_ID=""
}

# ------------------------------------------------------------------- cases

# 1: kill -9 of a random worker.
case_worker() {
  local run=$1 rank pid node local_rank host
  rank=$((RANDOM % RANKS))
  section "case 1, run $run/$REPEATS: kill -9 of worker rank $rank"
  submit 1 "$run" -- "$WORKER" wait || return
  expect_workers_started || return
  pid=$(field_of "$rank" 1) node=$(field_of "$rank" 3) local_rank=$(field_of "$rank" 4) host=$(field_of "$rank" 5)
  if ! tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF "$MARK/fault_worker.sh"; then
    fail "rank $rank's pid $pid is its worker" "$(ps -o pid=,args= -p "$pid")"
    return
  fi
  say "  killing rank $rank (pid $pid, local rank $local_rank, node $node, $host) with SIGKILL"
  FAULT_NS=$(now_ns)
  kill -KILL "$pid"
  wait_for_end "$BOUND_LOST" || return
  expect_eq "the job ends FAILED" FAILED "$END_STATE"
  expect_eq "its exit code is 137 (128 + SIGKILL)" 137 "$END_CODE"
  expect_within "it ends within ${BOUND_LOST} s of the kill" "$BOUND_LOST"
  expect_in_log "the summary names rank $rank and SIGKILL" \
    "first failure: rank $rank (local rank $local_rank) on $host (node $node) was killed by SIGKILL (exit code 137)"
  expect_in_log "the summary gives the signal" "signal      SIGKILL (9)"
  expect_nothing_left
}

# 2: kill -9 of a random non-zero node's launcher.
case_launcher() {
  local run=$1 node launcher host rank
  node=$((1 + RANDOM % (JOB_NODES - 1)))
  section "case 2, run $run/$REPEATS: kill -9 of node $node's launcher"
  submit 2 "$run" -- "$WORKER" wait || return
  expect_workers_started || return
  rank=$(rank_on_node "$node")
  launcher=$(field_of "$rank" 2) host=$(field_of "$rank" 5)
  expect_launcher "$launcher" "$node" "$host" || return
  say "  killing node $node's launcher (pid $launcher on $host) with SIGKILL"
  FAULT_NS=$(now_ns)
  kill -KILL "$launcher"
  wait_for_end "$BOUND_LOST" || return
  expect_eq "the job ends FAILED" FAILED "$END_STATE"
  expect_true "its exit code is not 0 (got $END_CODE)" test "${END_CODE:-0}" != 0
  expect_within "it ends within ${BOUND_LOST} s of the kill" "$BOUND_LOST"
  expect_in_log "node 0 says it lost the launcher of node $node" \
    "lost contact with the launcher of node $node ($host): it exited or was killed"
  expect_in_log "the summary names it as the first failure" \
    "first failure: lost contact with the launcher of node $node ($host)"
  expect_nothing_left
}

# expect_launcher PID NODE HOST: PID is `dlaunch run` of this job, in the
# network namespace of HOST, and the parent of node NODE's workers.
expect_launcher() {
  local pid=$1 args
  args=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")
  local in_ns
  in_ns=$( [ "$(stat -L -c %i "/proc/$pid/ns/net" 2>/dev/null)" = \
    "$(stat -L -c %i "/run/netns/$(node_ns "${3#node}")" 2>/dev/null)" ] && echo yes)
  if [[ $args == "$DLAUNCH_REAL run "*"$MARK"* ]] && [ "$in_ns" = yes ]; then
    pass "node $2's launcher is pid $1, dlaunch run in $3's namespace"
    return 0
  fi
  fail "node $2's launcher is pid $1, dlaunch run in $3's namespace" "args: $args" "in its namespace: ${in_ns:-no}"
  return 1
}

# 3: kill -9 of node 0's launcher.
case_node0() {
  local run=$1 launcher host others=$((JOB_NODES - 1))
  section "case 3, run $run/$REPEATS: kill -9 of node 0's launcher"
  submit 3 "$run" -- "$WORKER" wait || return
  expect_workers_started || return
  launcher=$(field_of 0 2) host=$(field_of 0 5)
  expect_launcher "$launcher" 0 "$host" || return
  say "  killing node 0's launcher (pid $launcher on $host) with SIGKILL"
  FAULT_NS=$(now_ns)
  kill -KILL "$launcher"
  wait_for_end "$BOUND_LOST" || return
  expect_eq "the job ends FAILED" FAILED "$END_STATE"
  expect_true "its exit code is not 0 (got $END_CODE)" test "${END_CODE:-0}" != 0
  expect_within "it ends within ${BOUND_LOST} s of the kill" "$BOUND_LOST"
  # Each of the other nodes prints one summary; node 0 is gone.
  expect_eq "each of the $others other nodes reports it lost contact with the rendezvous on node 0" \
    "$others" "$(count_in_log "first failure: lost contact with the rendezvous on node 0")"
  expect_eq "and exits 1 (srun: the other tasks exited with exit code 1)" "$others" \
    "$(grep -cE "task [1-9][0-9]*: Exited with exit code 1\$" "$LOG")"
  expect_nothing_left
}

# 4: scancel.
case_cancel() {
  local run=$1 rank got last_ns=0 ns
  section "case 4, run $run/$REPEATS: scancel (SIGTERM to every step)"
  submit 4 "$run" -- "$WORKER" wait || return
  expect_workers_started || return
  say "  scancel $JOB_ID"
  FAULT_NS=$(now_ns)
  scancel "$JOB_ID"
  # The workers must be gone within the shutdown timeout (+5 s of slack for
  # Slurm to deliver the signal): they stop on SIGTERM, not on the SIGKILL
  # that would follow.
  if wait_until $((SHUTDOWN + 5)) nothing_left_of_workers; then
    pass "every worker stopped within the shutdown timeout (${SHUTDOWN} s + 5 s)"
  else
    fail "every worker stopped within the shutdown timeout (${SHUTDOWN} s + 5 s)" \
      "$(worker_pids | xargs -r ps -o pid=,args= -p)"
  fi
  wait_for_end "$BOUND_CANCEL" || return
  got=0
  for ((rank = 0; rank < RANKS; rank++)); do
    [ -f "$FOLDER/term.$rank" ] || continue
    got=$((got + 1))
    ns=$(cat "$FOLDER/term.$rank")
    [ "$ns" -gt "$last_ns" ] && last_ns=$ns
  done
  expect_eq "every worker on every node received SIGTERM" "$RANKS" "$got"
  [ "$last_ns" -gt 0 ] && say "  the last worker got SIGTERM $(((last_ns - FAULT_NS) / 1000000)) ms after scancel"
  # Slurm signals every process of the step, so which one reports first
  # (a launcher, or a worker that exited on its SIGTERM) varies: shown, not checked.
  say "  the log's first failure: $(grep -m1 -o 'first failure: .*' "$LOG" 2>/dev/null || echo none)"
  expect_eq "the job ends CANCELLED" CANCELLED "$END_STATE"
  expect_within "it ends within ${BOUND_CANCEL} s of scancel" "$BOUND_CANCEL"
  expect_nothing_left
}
# The workers (bash running the worker script) and their sleeps, not the
# launchers or srun, whose command lines name the worker too.
worker_pids() { pgrep -f "^(/bin/bash |/usr/bin/bash )?$TEST_DIR/fault_worker\.sh"; }
nothing_left_of_workers() { [ -z "$(worker_pids)" ]; }

# 5: preemption with checkpoint and requeue.
case_preempt() {
  local run=$1 rank ok_checkpoint=0 ok_resumed=0 ok_env=0 ready
  section "case 5, run $run/$REPEATS: preemption (--signal USR1@60 --requeue, scancel --signal=USR1)"
  submit 5 "$run" --signal USR1@60 --requeue -- "$WORKER" preempt || return
  expect_workers_started || return
  say "  scancel --signal=USR1 $JOB_ID"
  FAULT_NS=$(now_ns)
  scancel --signal=USR1 "$JOB_ID"
  wait_for_end "$BOUND_REQUEUE" || return
  expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
  expect_eq "its exit code is 0" 0 "$END_CODE"
  expect_within "it ends within ${BOUND_REQUEUE} s of the signal" "$BOUND_REQUEUE"
  for ((rank = 0; rank < RANKS; rank++)); do
    [ "$(cat "$FOLDER/checkpoint.$rank" 2>/dev/null)" = "checkpoint of rank $rank" ] && ok_checkpoint=$((ok_checkpoint + 1))
    [ -f "$FOLDER/resumed.$rank.run1" ] && ok_resumed=$((ok_resumed + 1))
    [ "$(cat "$FOLDER/env.$rank.run1" 2>/dev/null)" = "SLURM_RESTART_COUNT=1 TORCHELASTIC_RESTART_COUNT=1" ] &&
      ok_env=$((ok_env + 1))
  done
  expect_eq "every worker saved its checkpoint on SIGUSR1" "$RANKS" "$ok_checkpoint"
  expect_in_log "node 0 requeued the job" "requeueing job $JOB_ID"
  expect_eq "every worker's second run saw SLURM_RESTART_COUNT=1 and TORCHELASTIC_RESTART_COUNT=1" \
    "$RANKS" "$ok_env"
  expect_eq "every worker's second run found its checkpoint" "$RANKS" "$ok_resumed"
  expect_eq "no third run" "" "$(cd "$FOLDER" && ls started.*.run2 env.*.run2 2>/dev/null)"
  ready=$(stat -c %Y "$FOLDER/env.0.run1" 2>/dev/null)
  [ -n "$ready" ] && say "  the second run started $((ready - FAULT_NS / 1000000000)) s after the signal"
  expect_nothing_left
}

# 6: a node whose launcher never starts.
case_stuck() {
  local run=$1 node host pid wait_s bound others
  node=$((1 + RANDOM % (JOB_NODES - 1)))
  host=node$((node + 1))  # Slurm numbers the job's nodes in node-list order
  section "case 6, run $run/$REPEATS: node $node's launcher never starts ($host)"
  pid=$(slurmd_pid $((node + 1)))
  if ! mount_over_dlaunch $((node + 1)) "$STUCK"; then
    fail "bind-mounted a stuck launcher over $DLAUNCH_REAL in $host's mount namespace"
    return
  fi
  if nsenter --target "$pid" --mount -- grep -q "stuck before it reaches" "$DLAUNCH_REAL" &&
    ! grep -q "stuck before it reaches" "$DLAUNCH_REAL" 2>/dev/null; then
    pass "$host (only) sees the stuck launcher at $DLAUNCH_REAL"
  else
    fail "$host (only) sees the stuck launcher at $DLAUNCH_REAL"
  fi
  submit 6 "$run" --rdzv-timeout "$RDZV_TIMEOUT" -- "$WORKER" wait || { unmount_stuck; return; }
  FAULT_NS=$SUBMIT_S
  # srun's --wait in the generated job script, if any.
  wait_s=$(grep -oE -- "--wait=[0-9]+" "$FOLDER/job.sbatch" | head -n 1 | tr -dc '0-9')
  bound=$((BOUND_STUCK_BASE + ${wait_s:-0}))
  CASE_BOUND[6]=$bound
  if [ -n "$wait_s" ]; then say "  the job script's srun has --wait=$wait_s; bound ${bound} s from the submission"
  else say "  the job script's srun has no --wait; bound ${bound} s from the submission"; fi
  if wait_until "$START_LIMIT" pgrep -f "$MARK.stuck-launcher" >/dev/null; then
    pass "the step on $host runs the stuck launcher instead of dlaunch run"
  else
    fail "the step on $host runs the stuck launcher instead of dlaunch run"
  fi
  wait_for_end "$bound"
  local ended=$?
  unmount_stuck
  [ "$ended" = 0 ] || { expect_nothing_left; return; }
  expect_eq "the job ends FAILED" FAILED "$END_STATE"
  expect_true "its exit code is not 0 (got $END_CODE)" test "${END_CODE:-0}" != 0
  expect_within "it ends within ${bound} s of the submission" "$bound"
  others=$((JOB_NODES - 1))
  expect_eq "the $others other nodes exit with an error naming the missing node rank $node" "$others" \
    "$(grep -cE "dlaunch: error: rendezvous timed out after $RDZV_TIMEOUT s: $others/$JOB_NODES nodes joined; missing node rank\(s\): $node\." "$LOG")"
  local other
  for ((other = 0; other < JOB_NODES; other++)); do
    [ "$other" = "$node" ] && continue
    expect_true "node $other exits non-zero (srun: task $other exited with a non-zero code)" \
      grep -qE "task $other: Exited with exit code [1-9]" "$LOG"
  done
  expect_nothing_left
}

# 7: a stranger holds node 0's rendezvous port and speaks the protocol
# without the token.
case_stranger() {
  local run=$1 port wait_s bound others=$((JOB_NODES - 1))
  port=$(free_port)
  section "case 7, run $run/$REPEATS: a stranger holds node 0's rendezvous port (node1:$port)"
  rm -f "$TEST_DIR/stranger.ready"
  ip netns exec "$(node_ns 1)" "$PY" "$HOSTILE" impostor "$port" "$TEST_DIR/stranger.ready" \
    --token-required --workers "$PER_NODE,200,$PER_NODE" >"$TEST_DIR/stranger.log" 2>&1 &
  HOSTILE_PID=$!
  wait_for_files 30 "$TEST_DIR/stranger.ready" || { fail "the stranger holds node1:$port" "$(cat "$TEST_DIR/stranger.log")"; return; }
  submit 7 "$run" --rdzv-timeout "$RDZV_TIMEOUT" --run-arg=--master-port="$port" -- "$WORKER" wait || return
  FAULT_NS=$SUBMIT_S
  wait_s=$(grep -oE -- "--wait=[0-9]+" "$FOLDER/job.sbatch" | head -n 1 | tr -dc '0-9')
  bound=$((BOUND_STUCK_BASE + ${wait_s:-0}))
  CASE_BOUND[7]=$bound
  wait_for_end "$bound" || { stop_hostile; return; }
  stop_hostile
  expect_eq "the job ends FAILED" FAILED "$END_STATE"
  expect_true "its exit code is not 0 (got $END_CODE)" test "${END_CODE:-0}" != 0
  expect_within "it ends within ${bound} s of the submission" "$bound"
  expect_in_log "node 0 says a stranger holds its port" "node 0 cannot host the rendezvous on port $port"
  expect_eq "the $others other nodes believe nothing the stranger said, and name its address" "$others" \
    "$(grep -cE "dlaunch: error: node [0-9]+ could not join the rendezvous at node1:$port within $RDZV_TIMEOUT s: [0-9.]+:$port did not prove it holds the job's token" "$LOG")"
  expect_eq "no worker started on the stranger's World of 200 workers" "" \
    "$(cd "$FOLDER" && ls started.* 2>/dev/null)"
  expect_nothing_left
}

# 8: a flood of idle connections to node 0's port while the others join.
case_flood() {
  local run=$1 port k node0_addr
  port=$(free_port)
  node0_addr=$NET.11  # node1, the job's node 0 (tests/cluster/lib.sh)
  section "case 8, run $run/$REPEATS: 1000 idle connections flood node 0's port ($node0_addr:$port) while the others join"
  rm -f "$TEST_DIR/go" "$TEST_DIR/flood.ready"
  cp "$DLAUNCH_REAL" "$TEST_DIR/dlaunch-real"
  for ((k = 2; k <= JOB_NODES; k++)); do
    mount_over_dlaunch "$k" "$LATE" || { fail "held back node$k's launcher"; unmount_stuck; return; }
  done
  submit 8 "$run" --run-arg=--master-port="$port" -- "$WORKER" quick || { unmount_stuck; return; }
  if ! wait_until "$START_LIMIT" bash -c "exec 3<>/dev/tcp/$node0_addr/$port" 2>/dev/null; then
    fail "node 0 serves its rendezvous on $node0_addr:$port"
    unmount_stuck
    return
  fi
  "$PY" "$HOSTILE" flood "$port" "$TEST_DIR/flood.ready" --host "$node0_addr" --connections 1000 \
    >"$TEST_DIR/flood.log" 2>&1 &
  HOSTILE_PID=$!
  if ! wait_for_files 60 "$TEST_DIR/flood.ready"; then
    fail "1000 connections to node 0's port are open" "$(cat "$TEST_DIR/flood.log")"
    unmount_stuck
    stop_hostile
    return
  fi
  pass "1000 connections to node 0's port are open"
  FAULT_NS=$(now_ns)
  touch "$TEST_DIR/go"  # the other nodes' launchers start now, into the flood
  wait_for_end "$BOUND_FLOOD"
  local ended=$?
  expect_true "the flood was still held when the job ended" kill -0 "$HOSTILE_PID"
  stop_hostile
  unmount_stuck
  [ "$ended" = 0 ] || { expect_nothing_left; return; }
  expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
  expect_eq "its exit code is 0" 0 "$END_CODE"
  expect_within "it ends within ${BOUND_FLOOD} s of the flood" "$BOUND_FLOOD"
  local files
  mapfile -t files < <(started_files 0)
  expect_true "every one of the $RANKS workers ran" files_exist "${files[@]}"
  expect_nothing_left
}

# 9: every launcher's console stalls, as when srun's own output stalls.
case_console() {
  local run=$1 fifo=$TEST_DIR/console.fifo name
  name=case9.$MARK.$run
  section "case 9, run $run/$REPEATS: every launcher's console stalls (dlaunch submit --srun, its stdout a FIFO nobody reads)"
  RUN_DIR=$TEST_DIR/case9.run$run
  mkdir -p "$RUN_DIR"
  rm -f "$fifo"
  mkfifo "$fifo"
  exec 7<>"$fifo"  # held open, never read: srun's writes stall once it is full
  timeout -k 10 $((START_LIMIT + 300)) "$DLAUNCH" submit --srun --nodes "$JOB_NODES" --gpus-per-node "$PER_NODE" \
    --shutdown-timeout "$SHUTDOWN" --output-dir "$OUTPUTS" --job-name "$name" \
    --run-arg=--heartbeat-timeout="$CONSOLE_HEARTBEAT" -- "$WORKER" chatty >"$fifo" 2>"$RUN_DIR/submit.err" &
  SUBMITTER=$!
  if ! wait_until 60 grep -q "output folder" "$RUN_DIR/submit.err"; then
    fail "the job runs with srun" "$(cat "$RUN_DIR/submit.err")"
    exec 7>&-
    return
  fi
  FOLDER=$(sed -n 's/.*output folder //p' "$RUN_DIR/submit.err" | tail -n 1)
  wait_until 60 job_of_name "$name" >/dev/null || { fail "Slurm knows the job"; exec 7>&-; return; }
  JOB_ID=$(job_of_name "$name")
  say "  job $JOB_ID, folder $FOLDER"
  expect_workers_started || { exec 7>&-; return; }
  if wait_until 60 fifo_full 7; then pass "srun's stdout is stalled (the FIFO is full)"
  else fail "srun's stdout is stalled (the FIFO is full)" "it holds $(fifo_bytes 7) bytes"; exec 7>&-; return; fi
  # Four heartbeat timeouts with every console stalled: a launcher whose
  # event loop waited for its console would have gone silent, and node 0
  # would have stopped the job.
  if wait_until $((4 * CONSOLE_HEARTBEAT)) job_not_running; then
    fail "the job still runs after $((4 * CONSOLE_HEARTBEAT)) s of stalled consoles (heartbeat timeout ${CONSOLE_HEARTBEAT} s)" \
      "$(scontrol show job -o "$JOB_ID" 2>&1 | grep -oE '(JobState|Reason|ExitCode)=[^ ]*' | tr '\n' ' ')"
  else
    pass "the job still runs after $((4 * CONSOLE_HEARTBEAT)) s of stalled consoles (heartbeat timeout ${CONSOLE_HEARTBEAT} s)"
  fi
  say "  scancel $JOB_ID"
  FAULT_NS=$(now_ns)
  scancel "$JOB_ID"
  wait_until "$BOUND_CONSOLE" nothing_left_of_launchers
  stop_clock_at_fault
  expect_within "every launcher stopped within ${BOUND_CONSOLE} s of scancel, its console still stalled" "$BOUND_CONSOLE"
  # Now let srun write what it holds, and end.
  cat "$fifo" >/dev/null &
  local drainer=$!
  exec 7>&-
  wait_pid 60 "$SUBMITTER"
  SUBMITTER=""
  kill "$drainer" 2>/dev/null
  wait "$drainer" 2>/dev/null
  expect_nothing_left
}
job_of_name() { squeue -h -n "$1" -o %i 2>/dev/null | head -n 1 | grep -E '^[0-9]+$'; }
job_not_running() { ! scontrol show job -o "$JOB_ID" 2>/dev/null | grep -q 'JobState=RUNNING'; }
# Bytes waiting in the FIFO open on descriptor $1 (FIONREAD).
fifo_bytes() {
  "$PY" -c 'import fcntl, struct, sys, termios
print(struct.unpack("i", fcntl.ioctl(0, termios.FIONREAD, b"\0" * 4))[0])' <&"$1"
}
# Full: less room left than one of srun's writes needs (a few KiB of its 64 KiB).
fifo_full() { [ "$(fifo_bytes "$1")" -ge $((65536 - 8192)) ]; }
launcher_pids() { job_processes | grep -F "$DLAUNCH_REAL run" | awk '{print $2}'; }
nothing_left_of_launchers() { [ -z "$(launcher_pids)" ]; }
stop_clock_at_fault() { ELAPSED_MS=$((($(now_ns) - FAULT_NS) / 1000000)); ELAPSED_S=$(printf '%d.%d' $((ELAPSED_MS / 1000)) $((ELAPSED_MS % 1000 / 100))); }

# 10: one node's log folder is a full file system.
case_full_disk() {
  local run=$1 node=2 host pid rank count
  host=node$((node + 1))
  section "case 10, run $run/$REPEATS: node $node's log folder is a full file system (1 MiB tmpfs on $host)"
  submit 10 "$run" --sbatch-arg=--hold -- "$WORKER" flood "$FULL_LINES" || return
  mkdir -p "$FOLDER/logs"
  pid=$(slurmd_pid $((node + 1)))
  if ! nsenter --target "$pid" --mount -- mount -t tmpfs -o size=1m tmpfs "$FOLDER/logs"; then
    fail "mounted a 1 MiB tmpfs over the job's logs/ in $host's mount namespace"
    return
  fi
  TMPFS_NODE=$((node + 1)) TMPFS_PATH=$FOLDER/logs
  if mountpoint -q "$FOLDER/logs"; then fail "only $host sees the tmpfs"; else pass "only $host sees the tmpfs"; fi
  scontrol release "$JOB_ID"
  FAULT_NS=$(now_ns)
  wait_for_end "$BOUND_FULL"
  local ended=$?
  unmount_tmpfs
  [ "$ended" = 0 ] || { expect_nothing_left; return; }
  expect_eq "the job ends COMPLETED (logs must not kill training)" COMPLETED "$END_STATE"
  expect_eq "its exit code is 0" 0 "$END_CODE"
  expect_within "it ends within ${BOUND_FULL} s of its release" "$BOUND_FULL"
  expect_in_log "$host's launcher names a log file on the full disk and ENOSPC" "No space left on device"
  expect_in_log "the end of its run lists the incomplete files" "incomplete:"
  for ((rank = node * PER_NODE; rank < (node + 1) * PER_NODE; rank++)); do
    count=$(grep -cE "^\[rank$rank\]:rank $rank line [0-9]{5} 0{100}\$" "$LOG")
    expect_eq "rank $rank on $host: every one of its $FULL_LINES lines reached the Slurm log" "$FULL_LINES" "$count"
  done
  expect_nothing_left
}

# -------------------------------------------------------------- spare nodes

# attempt_hosts RUN RANKS: the hosts rank 0..RANKS-1 ran on in attempt RUN, sorted, unique.
attempt_hosts() {
  local rank
  for ((rank = 0; rank < $2; rank++)); do field_of "$rank" 5 "$1"; done | sort -u | paste -sd' ' -
}

# seconds_of MS: MS milliseconds as seconds, to the hundredth.
seconds_of() { printf '%d.%02d' $(($1 / 1000)) $(($1 % 1000 / 10)); }

# new_hosts BEFORE AFTER: the hosts of the list AFTER that are not in BEFORE.
new_hosts() {
  local host found=()
  for host in $2; do [[ " $1 " == *" $host "* ]] || found+=("$host"); done
  echo "${found[*]}"
}

# expect_next_attempt CASE RANKS: every one of RANKS workers of attempt 1
# started within BOUND_REPLACE of the fault; records the replacement time
# (the last worker's start, from FAULT_NS).
expect_next_attempt() {
  local files rank last=0 started
  files=()
  for ((rank = 0; rank < $2; rank++)); do files+=("$FOLDER/started.$rank.run1"); done
  if ! wait_for_files "$BOUND_REPLACE" "${files[@]}"; then
    fail "the next attempt's $2 workers started within ${BOUND_REPLACE} s" \
      "started: $(cd "$FOLDER" && ls started.* 2>/dev/null | tr '\n' ' ')"
    return 1
  fi
  for ((rank = 0; rank < $2; rank++)); do
    started=$(field_of "$rank" 6 1)
    [ "$started" -gt "$last" ] && last=$started
  done
  local ms=$(((last - FAULT_NS) / 1000000))
  REPLACED[$1]="${REPLACED[$1]:-} $ms"
  pass "the next attempt's $2 workers all run, $(seconds_of "$ms") s after the fault"
}

# 11: a spare takes the place of node 1, whose launcher is killed.
case_spare() {
  local run=$1 JOB_NODES=2 RANKS=4 launcher host before after spare
  section "case 11, run $run/$REPEATS: kill -9 of node 1's launcher, with a spare"
  submit 11 "$run" --spare-nodes 1 --max-restarts 1 -- "$WORKER" resume || return
  expect_workers_started || return
  launcher=$(field_of 2 2) host=$(field_of 2 5)
  expect_launcher "$launcher" 1 "$host" || return
  before=$(attempt_hosts 0 4)
  say "  killing node 1's launcher (pid $launcher on $host) with SIGKILL"
  FAULT_NS=$(now_ns)
  kill -KILL "$launcher"
  expect_next_attempt 11 4 || return
  after=$(attempt_hosts 1 4)
  spare=$(new_hosts "$before" "$after")
  expect_eq "the second attempt runs on 2 hosts" 2 "$(wc -w <<<"$after")"
  expect_true "one of them is the spare, which ran nothing before ($after; before: $before)" test -n "$spare"
  expect_true "the killed node's host ($host) is not among them" bash -c "! grep -qw '$host' <<<'$after'"
  wait_for_end "$BOUND_REPLACE" || return
  expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
  expect_eq "its exit code is 0" 0 "$END_CODE"
  expect_in_log "node 0 names the replacement" "$spare (spare) takes node rank 1; restart 1/1"
  expect_in_log "the timeline names the lost node" "lost contact with the launcher of node 1 ($host)"
  expect_nothing_left
}

# 12: node 0's launcher is killed: node 1's launcher takes over the
# rendezvous, the spare takes node rank 1.
case_spare_node0() {
  local run=$1 JOB_NODES=2 RANKS=4 launcher host successor before after
  section "case 12, run $run/$REPEATS: kill -9 of node 0's launcher, with a spare"
  submit 12 "$run" --spare-nodes 1 --max-restarts 1 -- "$WORKER" resume || return
  expect_workers_started || return
  launcher=$(field_of 0 2) host=$(field_of 0 5) successor=$(field_of 2 5)
  expect_launcher "$launcher" 0 "$host" || return
  before=$(attempt_hosts 0 4)
  say "  killing node 0's launcher (pid $launcher on $host) with SIGKILL"
  FAULT_NS=$(now_ns)
  kill -KILL "$launcher"
  expect_next_attempt 12 4 || return
  after=$(attempt_hosts 1 4)
  expect_eq "node 1's host ($successor) holds node rank 0 in the second attempt" "$successor" "$(field_of 0 5 1)"
  expect_true "the killed node 0's host ($host) is not in it ($after)" bash -c "! grep -qw '$host' <<<'$after'"
  expect_eq "the second attempt runs on 2 hosts" 2 "$(wc -w <<<"$after")"
  expect_true "one of them is the spare, which ran nothing before ($after; before: $before)" \
    test -n "$(new_hosts "$before" "$after")"
  wait_for_end "$BOUND_REPLACE" || return
  expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
  expect_eq "its exit code is 0" 0 "$END_CODE"
  expect_in_log "node 1's launcher takes over the rendezvous" "the rendezvous moves to $successor"
  expect_in_log "the spare takes node rank 1" "(spare) takes node rank 1"
  expect_nothing_left
}

# 13: node 1's network is cut; the spare takes its place.
case_net_cut() {
  local run=$1 JOB_NODES=2 RANKS=4 host ns after
  section "case 13, run $run/$REPEATS: node 1's network cut, with a spare"
  submit 13 "$run" --spare-nodes 1 --max-restarts 1 --run-arg=--heartbeat-timeout=$NET_HEARTBEAT \
    -- "$WORKER" resume || return
  expect_workers_started || return
  host=$(field_of 2 5)
  ns=$(node_ns "${host#node}")
  say "  cutting $host's network (ip link set eth0 down in $ns)"
  FAULT_NS=$(now_ns)
  ip netns exec "$ns" ip link set eth0 down
  CUT_NS=$ns
  expect_next_attempt 13 4
  local replaced=$?
  ip netns exec "$ns" ip link set eth0 up
  CUT_NS=""
  [ "$replaced" = 0 ] || return
  after=$(attempt_hosts 1 4)
  expect_true "the cut host ($host) is not in the second attempt ($after)" bash -c "! grep -qw '$host' <<<'$after'"
  wait_for_end "$BOUND_REPLACE" || return
  expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
  expect_eq "its exit code is 0" 0 "$END_CODE"
  expect_in_log "node 0 lost node 1 at the heartbeat timeout" \
    "node 1 ($host) sent nothing for $NET_HEARTBEAT s (--heartbeat-timeout)"
  expect_in_log "the spare takes node rank 1" "(spare) takes node rank 1"
  expect_nothing_left
}

# 14: no spare, --min-nodes 1: the job goes on with node 0 alone.
case_min_nodes() {
  local run=$1 JOB_NODES=2 RANKS=4 launcher host
  section "case 14, run $run/$REPEATS: no spare, --min-nodes 1, kill -9 of node 1's launcher"
  submit 14 "$run" --min-nodes 1 --max-restarts 1 -- "$WORKER" resume || return
  expect_workers_started || return
  launcher=$(field_of 2 2) host=$(field_of 2 5)
  expect_launcher "$launcher" 1 "$host" || return
  FAULT_NS=$(now_ns)
  kill -KILL "$launcher"
  expect_next_attempt 14 2 || return
  expect_eq "the second attempt's world size is 2" "2 2" "$(field_of 0 7 1) $(field_of 1 7 1)"
  expect_eq "it runs on node 0's host alone" "$(field_of 0 5)" "$(attempt_hosts 1 2)"
  wait_for_end "$BOUND_REPLACE" || return
  expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
  expect_eq "its exit code is 0" 0 "$END_CODE"
  expect_in_log "node 0 says the job goes on with fewer nodes" "the job goes on with 1 of 2 nodes (--min-nodes 1)"
  expect_nothing_left
}

# 15: node 1's host fails every attempt; after --node-fail-limit 2 it is benched.
case_bench() {
  local run=$1 JOB_NODES=2 RANKS=4 bad after
  section "case 15, run $run/$REPEATS: node 1's workers fail every attempt, --node-fail-limit 2"
  FAULT_NS=$(now_ns)
  submit 15 "$run" --spare-nodes 1 --max-restarts 3 --node-fail-limit 2 -- "$WORKER" failhost 2 || return
  wait_for_end "$((2 * BOUND_REPLACE))" || return
  bad=$(cat "$FOLDER/bad_host" 2>/dev/null)
  expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
  expect_eq "its exit code is 0" 0 "$END_CODE"
  expect_in_log "node 0 benches the bad host (${bad:-none recorded})" \
    "node 1 (${bad:-?}) failed 2 rounds in a row (--node-fail-limit 2): it is benched"
  after=$(attempt_hosts 2 4)
  expect_true "attempt 2 runs without $bad ($after)" bash -c "! grep -qw '$bad' <<<'$after' && test -n '$after'"
  expect_nothing_left
}

# ------------------------------------------------------------------- main

CASE_FUNCTION=("" case_worker case_launcher case_node0 case_cancel case_preempt case_stuck case_stranger case_flood
  case_console case_full_disk case_spare case_spare_node0 case_net_cut case_min_nodes case_bench)
say "fault suite: $REPEATS run(s) of case(s) $CASES, jobs of $JOB_NODES nodes x $PER_NODE workers"
say "cluster $DLAUNCH_CLUSTER_DIR, dlaunch $DLAUNCH_REAL"
for case in $CASES; do
  [[ $case =~ ^([1-9]|1[0-5])$ ]] && [ -n "${CASE_FUNCTION[$case]}" ] ||
    { say "unknown case '$case' (1..15)"; exit 1; }
  for ((run = 1; run <= REPEATS; run++)); do
    begin_run "$case"
    FOLDER="" LOG="" RUN_DIR=""
    "${CASE_FUNCTION[$case]}" "$run"
    end_run "$case" "$run"
  done
done

table() {
  printf '%-4s %-46s %5s %7s %10s %9s\n' case fault runs passes "worst (s)" "bound (s)"
  local case worst notes=""
  for case in $CASES; do
    worst=${WORST[$case]:-}
    [ -n "$worst" ] && worst=$(printf '%d.%d' $((worst / 1000)) $((worst % 1000 / 100)))
    if [ "${NOT_ENDED[$case]:-0}" -gt 0 ]; then
      worst=">$worst"
      notes+="case $case: ${NOT_ENDED[$case]} run(s) had not ended when the suite gave up on them (bound + 60 s) and cancelled the job"$'\n'
    fi
    printf '%-4s %-46s %5s %7s %10s %9s\n' "$case" "${CASE_TITLE[$case]}" "${RUNS[$case]:-0}" \
      "${PASSES[$case]:-0}" "${worst:--}" "${CASE_BOUND[$case]:--}"
  done
  printf '%s' "$notes"
}
# The replacement figures: from the fault to every worker of the next
# attempt running, median and worst over the runs that got there.
replacement_table() {
  local case sorted count
  for case in $CASES; do
    [ -n "${REPLACED[$case]:-}" ] || continue
    mapfile -t sorted < <(tr ' ' '\n' <<<"${REPLACED[$case]}" | grep . | sort -n)
    count=${#sorted[@]}
    printf '%-4s %-46s %5s %10s %10s\n' "$case" "${CASE_TITLE[$case]}" "$count" \
      "$(seconds_of "${sorted[$(((count - 1) / 2))]}")" "$(seconds_of "${sorted[$((count - 1))]}")"
  done
}
section "fault suite: $REPEATS run(s) per case"
table
if [ -n "${REPLACED[*]}" ]; then
  section "replacement: from the fault to every worker of the next attempt running"
  printf '%-4s %-46s %5s %10s %10s\n' case fault runs "median (s)" "worst (s)"
  replacement_table
fi
[ -n "${DLAUNCH_FAULT_TABLE:-}" ] && { table; replacement_table; } >"$DLAUNCH_FAULT_TABLE"
finish
