#!/bin/bash
# dlaunch run against hostile peers on the rendezvous port (issue 11): a
# stranger that holds node 0's port and speaks the protocol without the
# token, a silent listener, and a flood of 1000 idle connections held open
# to node 0's port. With a token no worker starts on a stranger's word and
# the job still starts for its own launchers; without one, a World that
# does not fit the node is a clear protocol error, not 200 workers or an
# assertion.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

HOSTILE=$DLAUNCH_SOURCE_DIR/tests/integration/hostile_peer.py
[ -x "$PY" ] || skip "$PY is missing"
TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
# Leaves a file per started worker: none may start on a stranger's World.
MARKING_WORKER=$(write_worker marking.sh <<'EOF2'
touch "$DIR/started.$RANK.$LOCAL_RANK"
exit 0
EOF2
)

# hostile MODE PORT ARGS...: starts the hostile peer in the background
# (its command line carries the test's marker) and waits until it is in place.
hostile() {
  local mode=$1 port=$2
  shift 2
  rm -f "$TEST_DIR/hostile.ready"
  "$PY" "$HOSTILE" "$mode" "$port" "$TEST_DIR/hostile.ready" "$@" >"$TEST_DIR/hostile.log" 2>&1 &
  HOSTILE_PID=$!
  wait_for_files 30 "$TEST_DIR/hostile.ready" || fail "the $mode peer is in place" "$(cat "$TEST_DIR/hostile.log")"
}

stop_hostile() {
  kill "$HOSTILE_PID" 2>/dev/null
  wait "$HOSTILE_PID" 2>/dev/null
}

no_worker_started() {
  local started
  started=$(ls "$TEST_DIR"/started.* 2>/dev/null | wc -l)
  expect_eq "$1" 0 "$started"
}

section "a stranger holding node 0's port cannot feed a launcher with a token its World"
port=$(free_port)
hostile impostor "$port" --token-required --workers 1,200
common=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port")
start_clock
expect_exit 1 env DLAUNCH_RDZV_TOKEN="$TOKEN" "$DLAUNCH" run "${common[@]}" --node-rank 1 \
  --rdzv-timeout 3 -- "$MARKING_WORKER"
stop_clock
message=$(cat "$ERR")
expect_contains "it names the address and what the stranger failed to do" "$message" \
  "127.0.0.1:$port did not prove it holds the job's token"
expect_contains "it ends at --rdzv-timeout with that reason" "$message" \
  "could not join the rendezvous at 127.0.0.1:$port within 3 s"
expect_within "it gives up at its --rdzv-timeout (3 s) + 5 s" 8
no_worker_started "no worker started on the stranger's World of 200 workers"
# Node 0's own launcher cannot take its port from the stranger: it says so.
expect_exit 1 env DLAUNCH_RDZV_TOKEN="$TOKEN" "$DLAUNCH" run "${common[@]}" --node-rank 0 \
  --rdzv-timeout 3 -- "$MARKING_WORKER"
expect_contains "node 0 names its taken port" "$(cat "$ERR")" "node 0 cannot host the rendezvous on port $port"
no_worker_started "no worker started on node 0 either"
stop_hostile
no_leftovers

section "without a token, a World that does not fit this node is a protocol error"
for workers in 1,200 1; do
  port=$(free_port)
  hostile impostor "$port" --workers "$workers"
  expect_exit 1 env -u DLAUNCH_RDZV_TOKEN "$DLAUNCH" run --nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 \
    --master-port "$port" --node-rank 1 --rdzv-timeout 10 -- "$MARKING_WORKER"
  message=$(cat "$ERR")
  expect_contains "World $workers: a protocol error naming node 0's address" "$message" \
    "protocol error: node 0 (127.0.0.1:$port) sent a world that does not fit this node"
  if [ "$workers" = 1,200 ]; then
    expect_contains "World 1,200: the worker count is named" "$message" "200 workers for this node (node 1), which runs 1"
  else
    expect_contains "World 1: the node count is named" "$message" "1 nodes, but this node was started with 2 (--nnodes)"
  fi
  expect_not_contains "World $workers: never an internal error" "$message" "internal error"
  no_worker_started "World $workers: no worker started"
  stop_hostile
done
no_leftovers

section "a silent listener on the port is named within the handshake deadline"
port=$(free_port)
hostile silent "$port"
DLAUNCH_RDZV_TOKEN=$TOKEN timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run --nnodes 2 --nproc-per-node 1 \
  --master-addr 127.0.0.1 --master-port "$port" --node-rank 1 --rdzv-timeout 30 -- "$MARKING_WORKER" \
  >"$TEST_DIR/silent.out" 2>"$TEST_DIR/silent.err" &
launcher=$!
start_clock
wait_until 20 grep -q "answered but is not a dlaunch rendezvous" "$TEST_DIR/silent.err"
stop_clock
expect_contains "the launcher says the port is not a dlaunch rendezvous" "$(cat "$TEST_DIR/silent.err")" \
  "127.0.0.1:$port answered but is not a dlaunch rendezvous (no greeting within 5000 ms)"
expect_within "it says so within the 5 s handshake deadline + 3 s" 8
# The launcher is timeout's child: signal the dlaunch process itself.
kill -TERM "$(pgrep -P "$launcher" -x dlaunch)"
wait_pid 30 "$launcher"
expect_eq "SIGTERM stops it while it waits (exit 143)" 143 "$STATUS"
no_worker_started "no worker started"
stop_hostile
no_leftovers

section "1000 idle connections held open to node 0's port do not stop a job with a token"
port=$(free_port)
LONG_ENOUGH_WORKER=$(write_worker echo.sh <<'EOF2'
echo "rank $RANK of $WORLD_SIZE ran"
EOF2
)
common=(--nnodes 2 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60)
DLAUNCH_RDZV_TOKEN=$TOKEN timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 0 \
  -- "$LONG_ENOUGH_WORKER" >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
node0=$!
wait_until 30 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null || fail "node 0 listens"
hostile flood "$port" --connections 1000
expect_exit 0 env DLAUNCH_RDZV_TOKEN="$TOKEN" "$DLAUNCH" run "${common[@]}" --node-rank 1 -- "$LONG_ENOUGH_WORKER"
node1_out=$(cat "$OUT")
wait_pid 60 "$node0"
expect_eq "node 0 completes the job too (exit 0)" 0 "$STATUS"
expect_contains "node 1's workers ran" "$node1_out" "rank 3 of 4 ran"
expect_contains "node 0's workers ran" "$(cat "$TEST_DIR/node0.out")" "rank 0 of 4 ran"
expect_true "the flood was still held when the job ended" kill -0 "$HOSTILE_PID"
stop_hostile
no_leftovers

finish
