#!/usr/bin/env bash
# Health checks between restarts (--health-check): before round 1 every
# launcher runs dlaunch's own checks and the user's command; the command
# fails only on the launcher whose worker failed in round 0 (that worker
# leaves bad.SLOT, named by its launcher's DLAUNCH_TEST_SLOT).
#   1  --nnodes 2 --spare-nodes 1, three launchers on this machine: rank 1's
#      worker fails in round 0 once the spare stands by; its launcher fails
#      its check, node 0 benches it, the spare runs node rank 1 in round 1,
#      the job completes, and the benched launcher says it was benched and
#      why
#   2  no spare: the job stops before round 1, naming the node and the reason
#   2b the spare's launcher starts only after round 0 failed: node 0 waits
#      for it (the rest of --rdzv-timeout), and it takes node rank 1
#   2c the spare never starts: the job stops at --rdzv-timeout, naming the
#      node, its check and the slot that never joined
#   3  one node: a failed check stops the job with a clear error instead of
#      the restart
#   4  a check slower than --heartbeat-timeout drops no node
#   5  SIGTERM during a hanging check ends it (its process group too) and
#      the launcher at once, not at --health-check-timeout
# After each case no process of it is left.
. "$(dirname "$0")/../lib.sh"

# Attempt 0: rank 1 fails once rank 0 runs (and, with HOLD, once the test
# says go), leaving bad.SLOT; rank 0 holds until stopped. Attempt 1: every
# rank exits 0. Each says where it runs in started.RANK.ATTEMPT (the
# launcher's slot).
WORKER=$(write_worker worker.sh <<'EOF'
attempt=$TORCHELASTIC_RESTART_COUNT
echo "$DLAUNCH_TEST_SLOT" >"$DIR/started.$RANK.$attempt"
if [ "$attempt" = 0 ]; then
  if [ "$RANK" = 1 ]; then
    wait_files "$DIR/started.0.0" ${HOLD:+"$DIR/go"}
    [ -n "${NO_MARK:-}" ] || touch "$DIR/bad.$DLAUNCH_TEST_SLOT"
    echo "rank 1 fails in round 0"
    exit 3
  fi
  marked_sleep 300
fi
exit 0
EOF
)
CHECK="if [ -e '$TEST_DIR'/bad.\$DLAUNCH_TEST_SLOT ]; then echo 'scratch is not mounted here' >&2; exit 1; fi"

# start_job SPARES [STARTED]: a job of 2 nodes and SPARES spares; STARTED
# (all by default) of its launchers start now, the rest with
# start_launcher (slot K's output in node$K.{out,err}); sets LAUNCHERS (by
# slot). RDZV_TIMEOUT: --rdzv-timeout (60 by default).
start_job() {
  rm -rf "$TEST_DIR"/started.* "$TEST_DIR"/bad.* "$TEST_DIR/go" "$TEST_DIR/logs"
  local slot
  JOB_SPARES=$1
  JOB_PORT=$(free_port)
  LAUNCHERS=()
  for ((slot = 0; slot < ${2:-2 + JOB_SPARES}; slot++)); do start_launcher "$slot"; done
}

start_launcher() {
  DLAUNCH_TEST_SLOT=$1 timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run --nnodes 2 --spare-nodes "$JOB_SPARES" \
    --node-rank "$1" --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$JOB_PORT" \
    --rdzv-timeout "${RDZV_TIMEOUT:-60}" --max-restarts 1 --health-check "$CHECK" --health-check-timeout 20 \
    -- "$WORKER" >"$TEST_DIR/node$1.out" 2>"$TEST_DIR/node$1.err" &
  LAUNCHERS[$1]=$!
}

# Some launcher stands by as the spare in round 0.
spare_stands_by() { cat "$TEST_DIR"/node*.err 2>/dev/null | grep -q "round 0: this launcher .* stands by as a spare"; }

section "1: slot 1 fails its health check before round 1: benched, the spare takes node rank 1"
export HOLD=1
start_job 1
# Which launchers train in round 0 depends on who joins first: rank 1 fails
# only once the third stands by, so that it is in the job when round 1 gathers.
wait_until 60 spare_stands_by || fail "a launcher stood by as the spare in round 0" "$(cat "$TEST_DIR"/node*.err)"
touch "$TEST_DIR/go"
unset HOLD
for slot in 0 1 2; do
  wait_pid 90 "${LAUNCHERS[$slot]}"
  expect_eq "slot $slot's launcher exits 0" 0 "$STATUS"
done
bad=$(cat "$TEST_DIR/started.1.0" 2>/dev/null)
spare=$((3 - ${bad:-0}))
expect_true "rank 1 ran on slot 1 or 2 in round 0 (slot ${bad:-none}) and left its mark" test -e "$TEST_DIR/bad.${bad:-x}"
expect_eq "round 1's node rank 1 ran on the spare (slot $spare)" "$spare" "$(cat "$TEST_DIR/started.1.1" 2>/dev/null)"
err0=$(cat "$TEST_DIR/node0.err")
expect_contains "node 0 names the node, the round and the check's output" "$err0" \
  "node $bad ($(hostname)) failed its health check before round 1: health check '--health-check"
expect_contains "with the command's last line" "$err0" "(last output: scratch is not mounted here)"
expect_contains "and it is benched" "$err0" "it is benched and a spare takes its place"
err_bad=$(cat "$TEST_DIR/node$bad.err" 2>/dev/null)
expect_contains "the benched launcher says its check failed" "$err_bad" \
  "telling node 0, which benches this node for a spare or stops the job"
expect_contains "and that it stands by benched, and why" "$err_bad" \
  "round 1: this launcher ($(hostname)) is benched because its health check failed (health check"
expect_not_contains "the healthy spare said nothing of a failed check" \
  "$(cat "$TEST_DIR/node$spare.err" 2>/dev/null)" "failed its health check"
no_leftovers
mkdir -p "$TEST_DIR/case1" && mv "$TEST_DIR"/node*.* "$TEST_DIR/case1/"  # for DLAUNCH_KEEP_TEST_DIR

section "2: no spare: the job stops before round 1, naming the node and the reason"
start_job 0
statuses=()
for slot in 0 1; do
  wait_pid 90 "${LAUNCHERS[$slot]}"
  statuses+=("$STATUS")
done
bad=$(cat "$TEST_DIR/started.1.0" 2>/dev/null)
for slot in 0 1; do
  expect_true "slot $slot's launcher fails (exit ${statuses[$slot]})" test "${statuses[$slot]}" != 0
  expect_contains "slot $slot names the node and the reason" "$(cat "$TEST_DIR/node$slot.err")" \
    "node $bad ($(hostname)) failed its health check before round 1"
done
expect_contains "and says why the job cannot go on" "$(cat "$TEST_DIR/node0.err")" "No spare is left"
expect_true "round 1 never started" test ! -e "$TEST_DIR/started.0.1"
no_leftovers

section "2b: the spare's launcher starts only after round 0 failed: node 0 waits for it"
# On a loaded cluster one srun task may start seconds after the others.
# Slots 0 and 1 run round 0; slot 1 fails its check; slot 2 starts once
# node 0 says the round waits for the spare.
start_job 1 2
waits_for_spare() { grep -q "the round waits up to .* for a spare that has not joined yet" "$TEST_DIR/node0.err"; }
wait_until 60 waits_for_spare || fail "node 0 waits for the spare" "$(cat "$TEST_DIR"/node*.err)"
start_launcher 2
for slot in 0 1 2; do
  wait_pid 90 "${LAUNCHERS[$slot]}"
  expect_eq "slot $slot's launcher exits 0" 0 "$STATUS"
done
expect_eq "round 0's rank 1 ran on slot 1" 1 "$(cat "$TEST_DIR/started.1.0" 2>/dev/null)"
expect_eq "round 1's node rank 1 ran on the late spare (slot 2)" 2 "$(cat "$TEST_DIR/started.1.1" 2>/dev/null)"
no_leftovers

section "2c: the spare never starts: the job stops at --rdzv-timeout, naming the check"
RDZV_TIMEOUT=10 start_job 1 2
for slot in 0 1; do
  wait_pid 90 "${LAUNCHERS[$slot]}"
  expect_true "slot $slot's launcher fails (exit $STATUS)" test "$STATUS" != 0
done
err0=$(cat "$TEST_DIR/node0.err")
expect_contains "node 0 names the node and the check" "$err0" \
  "node 1 ($(hostname)) failed its health check before round 1"
expect_contains "and that no spare came in time" "$err0" \
  "No spare took its place within 10 s (--rdzv-timeout; slot(s) 2 never joined)"
expect_true "round 1 never started" test ! -e "$TEST_DIR/started.0.1"
no_leftovers

section "3: one node: a failed health check stops the job instead of the restart"
rm -rf "$TEST_DIR"/started.* "$TEST_DIR"/bad.*
DLAUNCH_TEST_SLOT=1 expect_exit 1 "$DLAUNCH" run --nproc-per-node 2 --max-restarts 1 --health-check "$CHECK" \
  -- "$WORKER"
expect_contains "the error names the check, the host and its output" "$(cat "$ERR")" \
  "health check '--health-check"
expect_contains "and says the job stops" "$(cat "$ERR")" "The job stops instead of starting restart 1 of 1"
expect_true "round 1 never started" test ! -e "$TEST_DIR/started.0.1"
no_leftovers

section "4: a check slower than --heartbeat-timeout: no node is lost, the job completes"
rm -rf "$TEST_DIR"/started.* "$TEST_DIR"/bad.* "$TEST_DIR/logs"
# Rank 1 fails in round 0 without leaving a mark; every launcher's check
# before round 1 takes 5 s, past the 2 s heartbeat timeout.
SLOW_CHECK="sleep 5"
port=$(free_port)
LAUNCHERS=()
for slot in 0 1; do
  DLAUNCH_TEST_SLOT=$slot NO_MARK=1 timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run --nnodes 2 --node-rank "$slot" \
    --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60 --max-restarts 1 \
    --heartbeat-timeout 2 --health-check "$SLOW_CHECK" --health-check-timeout 30 --retry-repeated-failures \
    -- "$WORKER" >"$TEST_DIR/node$slot.out" 2>"$TEST_DIR/node$slot.err" &
  LAUNCHERS+=($!)
done
for slot in 0 1; do
  wait_pid 90 "${LAUNCHERS[$slot]}"
  expect_eq "slot $slot's launcher exits 0 after its slow check" 0 "$STATUS"
done
expect_true "round 1 ran on both nodes" test -e "$TEST_DIR/started.0.1" -a -e "$TEST_DIR/started.1.1"
expect_not_contains "node 0 took no launcher for silent" "$(cat "$TEST_DIR"/node0.err)" "sent nothing for"
expect_not_contains "no launcher took node 0 for silent" "$(cat "$TEST_DIR"/node1.err)" "sent nothing for"
no_leftovers

section "5: a stop signal during a long health check ends the check and the launcher at once"
rm -rf "$TEST_DIR"/started.* "$TEST_DIR"/bad.* "$TEST_DIR/checking" "$TEST_DIR/logs"
# The site's check hangs (a stuck mount); scancel's SIGTERM must not wait
# for its 300 s timeout, past Slurm's KillWait.
HANGING_CHECK=$(write_worker hanging_check.sh <<'EOF'
touch "$DIR/checking"
marked_sleep 300
EOF
)
DLAUNCH_TEST_SLOT=0 NO_MARK=1 timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run --nproc-per-node 2 --max-restarts 1 \
  --health-check "$HANGING_CHECK" --health-check-timeout 300 -- "$WORKER" \
  >"$TEST_DIR/stop.out" 2>"$TEST_DIR/stop.err" &
launcher=$!
wait_for_files 60 "$TEST_DIR/checking" || fail "the check before round 1 started" "$(cat "$TEST_DIR/stop.err")"
kill -TERM "$launcher"
wait_pid 30 "$launcher"
expect_eq "the launcher exits as SIGTERM asks (128 + 15), not after the check's timeout" 143 "$STATUS"
expect_contains "it says what stopped it and where" "$(cat "$TEST_DIR/stop.err")" \
  "stopped by SIGTERM during the health check before round 1"
expect_true "round 1 never started" test ! -e "$TEST_DIR/started.0.1"
no_leftovers "the check and its children are gone with the launcher"

finish
