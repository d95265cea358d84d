#!/usr/bin/env bash
# Fencing: a launcher the job left behind never acts for it again.
#
# Three launchers on this machine (loopback), --nnodes 2 --spare-nodes 1,
# one shared --log-dir and --exit-code-file, a 2 s --heartbeat-timeout. A
# "host" is frozen as a hung kernel would leave it: SIGSTOP to its
# launcher and every process below it (workers, their children, the
# watchdog), all at once.
#   1  node rank 1's host frozen: the spare takes its place; thawed while the
#      new round runs, the frozen launcher says in one line that it was
#      replaced, kills its own workers at once, takes nothing over and
#      exits 1; the job completes (exit 0, the exit-code file 0)
#   2  no spare (--nnodes 2, two launchers), node rank 0's host (the
#      rendezvous) frozen: node 1 decides the job's end alone (failed, node
#      0 lost) and writes its exit code; thawed, the old node 0 sees it was
#      left behind, decides nothing, writes nothing over the job's records
#      and exits. (A take-over of node 0's rendezvous needs another host:
#      the frozen node 0 keeps its port here. tests/integration/cluster/
#      cluster_node_loss.sh does that one.)
#   3  every launcher and worker frozen at once for longer than the heartbeat
#      timeout (what Slurm's suspend does), then thawed: nobody is lost, the
#      job goes on in round 0 and completes
# After each case no process of it is left.
. "$(dirname "$0")/../lib.sh"

HEARTBEAT=2
export DLAUNCH_RDZV_TOKEN=fencing-test-secret-0123456789
# Attempt 0 holds until stopped; a later attempt, or attempt 0 of case 3,
# waits for the test's go-ahead ($DIR/go), then exits 0. Each worker says
# where it runs in started.RANK.ATTEMPT ("SLOT PID").
WORKER=$(write_worker worker.sh <<'EOF'
attempt=$TORCHELASTIC_RESTART_COUNT
echo "$DLAUNCH_TEST_SLOT $$" >"$DIR/started.$RANK.$attempt"
if [ "$attempt" = 0 ] && [ ! -e "$DIR/hold_no_longer" ]; then marked_sleep 600; exit 0; fi
wait_files "$DIR/go" && exit 0
exit 3
EOF
)

# start_job [SPARES]: starts 2 + SPARES (default 1) launchers (slot K's
# output in node$K.{out,err}); sets LAUNCHERS (the timeout processes, by slot).
start_job() {
  rm -rf "$TEST_DIR"/started.* "$TEST_DIR/go" "$TEST_DIR/logs" "$TEST_DIR/exit_code"
  local port slot spares=${1:-1}
  port=$(free_port)
  LAUNCHERS=()
  for ((slot = 0; slot < 2 + spares; slot++)); do
    DLAUNCH_TEST_SLOT=$slot timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run --nnodes 2 --spare-nodes "$spares" \
      --node-rank "$slot" --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" \
      --heartbeat-timeout "$HEARTBEAT" --shutdown-timeout 5 --max-restarts 2 \
      --log-dir "$TEST_DIR/logs" --exit-code-file "$TEST_DIR/exit_code" \
      -- "$WORKER" >"$TEST_DIR/node$slot.out" 2>"$TEST_DIR/node$slot.err" &
    LAUNCHERS+=($!)
  done
}

# The slot whose worker runs RANK in ATTEMPT.
slot_of() { awk '{print $1}' "$TEST_DIR/started.$1.$2" 2>/dev/null; }

# host_pids SLOT: the launcher of SLOT and every process below it.
host_pids() {
  local launcher
  launcher=$(pgrep -P "${LAUNCHERS[$1]}" -x dlaunch)
  [ -n "$launcher" ] || return
  _descendants "$launcher"
}
_descendants() {
  local child
  echo "$1"
  for child in $(pgrep -P "$1"); do _descendants "$child"; done
}

# freeze SLOT / thaw SLOT: the whole "host" at once.
freeze() { FROZEN=$(host_pids "$1"); kill -STOP $FROZEN 2>/dev/null; }
thaw() { kill -CONT $FROZEN 2>/dev/null; }

# The worker pid of RANK in ATTEMPT.
worker_pid() { awk '{print $2}' "$TEST_DIR/started.$1.$2" 2>/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }

section "1: node rank 1's host frozen: the spare replaces it; thawed, it says so and stops"
start_job
if wait_for_files 30 "$TEST_DIR/started.0.0" "$TEST_DIR/started.1.0"; then
  lost=$(slot_of 1 0)
  old_worker=$(worker_pid 1 0)
  freeze "$lost"
  wait_for_files 30 "$TEST_DIR/started.0.1" "$TEST_DIR/started.1.1" ||
    fail "a new round started without the frozen host" "$(cat "$TEST_DIR/node0.err")"
  spare=$(slot_of 1 1)
  expect_true "node rank 1 moved to another launcher (slot $lost -> ${spare:-none})" \
    test -n "$spare" -a "$spare" != "$lost"
  thaw
  wait_pid 20 "${LAUNCHERS[$lost]}"
  expect_eq "the thawed launcher exits 1" 1 "$STATUS"
  err=$(cat "$TEST_DIR/node$lost.err")
  expect_contains "it says it was replaced, naming the round and the launcher that took its place" "$err" \
    "this node ($(hostname), node rank 1) was replaced by $(hostname) (slot $spare) in round 1 while it was unreachable; exiting"
  expect_not_contains "it takes nothing over" "$err" "the rendezvous moves to"
  expect_true "its worker of attempt 0 is gone" wait_until 10 gone "$old_worker"
  touch "$TEST_DIR/go"
  for slot in 0 1 2; do
    [ "$slot" = "$lost" ] && continue
    wait_pid 30 "${LAUNCHERS[$slot]}"
    expect_eq "slot $slot's launcher exits 0" 0 "$STATUS"
  done
  expect_eq "the job's exit code (the exit-code file) is 0" 0 "$(tr -dc 0-9 <"$TEST_DIR/exit_code")"
  expect_contains "node 0 says how long the job was down, from the frozen host's last sign of life" \
    "$(cat "$TEST_DIR/node0.err")" "takes node rank 1; restart 1/2; the job was down"
  expect_contains "and how long the loss took to notice" "$(cat "$TEST_DIR/node0.err")" \
    "s of it before the loss was noticed)"
fi
no_leftovers

section "2: no spare, node rank 0's host frozen: node 1 decides alone; thawed, the old node 0 decides nothing"
start_job 0
if wait_for_files 30 "$TEST_DIR/started.0.0" "$TEST_DIR/started.1.0"; then
  freeze 0
  wait_pid 30 "${LAUNCHERS[1]}"
  expect_eq "node 1's launcher exits 1: the job failed with node 0" 1 "$STATUS"
  expect_contains "node 1 names the lost node 0" "$(cat "$TEST_DIR/node1.err")" \
    "node 0 (127.0.0.1:"
  expect_eq "node 1 wrote the job's exit code, 1" 1 "$(tr -dc 0-9 <"$TEST_DIR/exit_code")"
  thaw
  wait_pid 20 "${LAUNCHERS[0]}"
  expect_eq "the thawed old node 0 exits 1" 1 "$STATUS"
  err=$(cat "$TEST_DIR/node0.err")
  expect_contains "its service sees it was left behind and decides nothing" "$err" \
    "every other launcher left it meanwhile: the job went on without it in a later round, or ended; this node decides nothing and stops"
  expect_contains "its launcher says the job was decided without it, naming who decided" "$err" \
    "the job was decided while this launcher ($(hostname)) was unreachable: FAILED with exit code 1, by the launcher on $(hostname); exiting"
  expect_not_contains "it prints no failure summary of its own" "$err" "dlaunch: job failed"
  expect_eq "the job's exit code is still node 1's" 1 "$(tr -dc 0-9 <"$TEST_DIR/exit_code")"
  expect_contains "result.json names node 0's loss, as node 1 saw it" "$(cat "$TEST_DIR/logs/result.json")" \
    "node 0 (127.0.0.1:"
fi
no_leftovers

section "3: every launcher and worker frozen past the heartbeat timeout, then thawed: the job goes on"
start_job
touch "$TEST_DIR/hold_no_longer"
if wait_for_files 30 "$TEST_DIR/started.0.0" "$TEST_DIR/started.1.0"; then
  all=$(for slot in 0 1 2; do host_pids "$slot"; done)
  kill -STOP $all 2>/dev/null
  # Stopped three heartbeat timeouts: every peer's silence is far past it.
  sleep $((3 * HEARTBEAT))
  kill -CONT $all 2>/dev/null
  touch "$TEST_DIR/go"
  for slot in 0 1 2; do
    wait_pid 30 "${LAUNCHERS[$slot]}"
    expect_eq "slot $slot's launcher exits 0" 0 "$STATUS"
  done
  expect_true "no restart: no attempt 1" test ! -e "$TEST_DIR/started.0.1"
  expect_not_contains "no node was counted lost" "$(cat "$TEST_DIR"/node*.err)" "sent nothing for"
  expect_contains "node 0 says it did not run for a while" "$(cat "$TEST_DIR/node0.err")" \
    "did not run for"
fi
rm -f "$TEST_DIR/hold_no_longer"
no_leftovers

finish
