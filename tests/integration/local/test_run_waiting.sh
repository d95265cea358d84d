#!/bin/bash
# dlaunch run across nodes says things once per job: the failure summary
# and the notices come from node 0 alone, not once per node, unless node 0
# is gone: then the node that lost it prints its own summary. While the
# rendezvous waits, node 0 says every few seconds which node ranks are
# missing, and a node that cannot reach node 0 says whom it waits for and
# what it met, long before --rdzv-timeout ends the wait.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

SUMMARY_HEADER="==================== job failed ===================="
OMP_NOTICE="OMP_NUM_THREADS set to 1 for each worker"

# count_in FILE... : how many lines of FILEs hold the fixed string $NEEDLE.
count_in() { cat "$@" | grep -cF -- "$NEEDLE"; }

section "two nodes, rank 3 (node 1) fails: one summary and one notice for the whole job"
# Rank 3 fails once every other rank has started; the others wait to be stopped.
FAILING=$(write_worker failing.sh <<'EOF'
trap 'exit 143' TERM
if [ "$RANK" = 3 ]; then
  wait_files "$DIR/started.0" "$DIR/started.1" "$DIR/started.2"
  echo "rank 3 fails now"
  exit 3
fi
touch "$DIR/started.$RANK"
marked_sleep 300
EOF
)
port=$(free_port)
common=(--nnodes 2 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60)
# The notice is said only when OMP_NUM_THREADS is not set.
env -u OMP_NUM_THREADS timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 0 -- "$FAILING" \
  >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
node0=$!
env -u OMP_NUM_THREADS timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 1 -- "$FAILING" \
  >"$TEST_DIR/node1.out" 2>"$TEST_DIR/node1.err"
status1=$?
wait_pid 60 "$node0"
expect_eq "node 1's launcher exits 3" 3 "$status1"
expect_eq "node 0's launcher exits 3" 3 "$STATUS"
NEEDLE=$SUMMARY_HEADER
expect_eq "exactly one failure summary across both launchers" 1 "$(count_in "$TEST_DIR"/node[01].err)"
expect_eq "node 0 prints it" 1 "$(count_in "$TEST_DIR/node0.err")"
expect_contains "it names node 1's worker" "$(cat "$TEST_DIR/node0.err")" \
  "first failure: rank 3 (local rank 1) on $(hostname) (node 1) exited with code 3"
expect_contains "with its last words, which node 1 sent with its outcome" "$(cat "$TEST_DIR/node0.err")" \
  "| rank 3 fails now"
NEEDLE="first failure:"
expect_eq "node 1 prints no summary line of its own" 0 "$(count_in "$TEST_DIR/node1.err")"
NEEDLE=$OMP_NOTICE
expect_eq "the OMP_NUM_THREADS notice appears once across both launchers" 1 \
  "$(count_in "$TEST_DIR"/node[01].err)"
expect_eq "node 0 says it" 1 "$(count_in "$TEST_DIR/node0.err")"
no_leftovers

section "node 0's launcher is killed: node 1, which decides alone, prints its own summary"
rm -f "$TEST_DIR"/started.*
WAITING=$(write_worker waiting.sh <<'EOF'
trap 'exit 143' TERM
touch "$DIR/started.$RANK"
marked_sleep 300
EOF
)
port=$(free_port)
common=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60)
# In a subshell whose own stderr (where bash announces the kill) is dropped.
(
  timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 0 -- "$WAITING" \
    >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err"
  exit $?
) 2>/dev/null &
node0=$!
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 1 -- "$WAITING" \
  >"$TEST_DIR/node1.out" 2>"$TEST_DIR/node1.err" &
node1=$!
wait_for_files 30 "$TEST_DIR/started.0" "$TEST_DIR/started.1" || fail "the workers of both nodes started"
# The launcher is timeout's child: kill the dlaunch process itself.
kill -KILL "$(pgrep -P "$(pgrep -P "$node0" -x timeout)" -x dlaunch)"
wait_pid 60 "$node1"
expect_eq "node 1's launcher exits 1" 1 "$STATUS"
NEEDLE=$SUMMARY_HEADER
expect_eq "node 1 prints one summary" 1 "$(count_in "$TEST_DIR/node1.err")"
expect_contains "it names the loss of node 0" "$(cat "$TEST_DIR/node1.err")" \
  "first failure: lost contact with the rendezvous on node 0 (127.0.0.1:$port)"
wait_pid 30 "$node0"
no_leftovers

# Both waits run at once, each on its own port: node 0 with nobody else,
# node 1 with nobody at node 0's address. The first line is due at 5 s.
RDZV_TIMEOUT=8
TRUE_WORKER=$(write_worker true.sh <<'EOF'
exit 0
EOF
)
section "node 0 alone names the missing node rank every few seconds; node 1 alone names node 0"
port0=$(free_port)
port1=$(free_port)
start_clock
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run --nnodes 2 --node-rank 0 --nproc-per-node 1 \
  --master-addr 127.0.0.1 --master-port "$port0" --rdzv-timeout "$RDZV_TIMEOUT" -- "$TRUE_WORKER" \
  >"$TEST_DIR/alone0.out" 2>"$TEST_DIR/alone0.err" &
alone0=$!
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run --nnodes 2 --node-rank 1 --nproc-per-node 1 \
  --master-addr 127.0.0.1 --master-port "$port1" --rdzv-timeout "$RDZV_TIMEOUT" -- "$TRUE_WORKER" \
  >"$TEST_DIR/alone1.out" 2>"$TEST_DIR/alone1.err" &
alone1=$!
wait_pid $((RDZV_TIMEOUT + 20)) "$alone0"
status0=$STATUS
wait_pid $((RDZV_TIMEOUT + 20)) "$alone1"
status1=$STATUS
stop_clock
expect_true "node 0 exits non-zero at the timeout (got $status0)" [ "$status0" != 0 ]
expect_true "node 1 exits non-zero at the timeout (got $status1)" [ "$status1" != 0 ]
expect_within "both exit within the timeout + 10 s" $((RDZV_TIMEOUT + 10))

# The first line is due at 5 s; a loaded machine may say it a second late.
expect_true "node 0 says whom it waits for, and how long of how long" \
  grep -qE "^dlaunch: rendezvous: waiting for node rank\(s\) 1 \(1/2 joined, [56] s of $RDZV_TIMEOUT s\)$" \
  "$TEST_DIR/alone0.err"
# The waiting line comes before the timeout's error, which still names the node.
first_wait=$(grep -n "waiting for node rank(s) 1" "$TEST_DIR/alone0.err" | head -n 1 | cut -d: -f1)
timed_out=$(grep -n "rendezvous timed out after $RDZV_TIMEOUT s" "$TEST_DIR/alone0.err" | head -n 1 | cut -d: -f1)
# shellcheck disable=SC2317  # called through expect_true
in_order() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" -lt "$2" ]; }
expect_true "node 0's waiting line (line ${first_wait:-none}) comes before the timeout (line ${timed_out:-none})" \
  in_order "$first_wait" "$timed_out"
expect_contains "the timeout still names the missing node rank" "$(cat "$TEST_DIR/alone0.err")" \
  "missing node rank(s): 1"

expect_true "node 1 says it waits for node 0, where, and what it met" \
  grep -qE "^dlaunch: waiting for node 0 at 127\.0\.0\.1:$port1 \([56] s of $RDZV_TIMEOUT s\): connection refused$" \
  "$TEST_DIR/alone1.err"
expect_contains "node 1's error still says node 0 is missing" "$(cat "$TEST_DIR/alone1.err")" "node 0 is missing"
no_leftovers

finish
