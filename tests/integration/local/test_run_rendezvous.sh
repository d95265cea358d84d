#!/bin/bash
# dlaunch run: the rendezvous of several launchers. A node waiting for a
# missing node gives up after --rdzv-timeout and names it; a launcher of
# another job (--rdzv-id) or with another --nnodes is refused; nodes with
# different worker counts get contiguous global ranks.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TRUE_WORKER=$(write_worker true.sh <<'EOF'
exit 0
EOF
)
RDZV_TIMEOUT=3

section "node 1 without node 0 gives up after --rdzv-timeout $RDZV_TIMEOUT and names node 0"
port=$(free_port)
start_clock
expect_exit nonzero "$DLAUNCH" run --nnodes 2 --node-rank 1 --nproc-per-node 1 \
  --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout "$RDZV_TIMEOUT" -- "$TRUE_WORKER"
stop_clock
expect_within "it exits within the timeout + 5 s" $((RDZV_TIMEOUT + 5))
expect_contains "the message names the missing node 0" "$(cat "$ERR")" "node 0 is missing"
expect_contains "the message names the address tried" "$(cat "$ERR")" "127.0.0.1:$port"
no_leftovers

section "node 0 alone gives up after --rdzv-timeout $RDZV_TIMEOUT and names node rank 1"
port=$(free_port)
start_clock
expect_exit nonzero "$DLAUNCH" run --nnodes 2 --node-rank 0 --nproc-per-node 1 \
  --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout "$RDZV_TIMEOUT" -- "$TRUE_WORKER"
stop_clock
expect_within "it exits within the timeout + 5 s" $((RDZV_TIMEOUT + 5))
expect_contains "the message names the missing node rank 1" "$(cat "$ERR")" "missing node rank(s): 1"
no_leftovers

section "--rdzv-conf join_timeout=$RDZV_TIMEOUT works like --rdzv-timeout"
port=$(free_port)
start_clock
expect_exit nonzero "$DLAUNCH" run --nnodes 2 --node-rank 0 --nproc-per-node 1 \
  --master-addr 127.0.0.1 --master-port "$port" --rdzv-conf "join_timeout=$RDZV_TIMEOUT" -- "$TRUE_WORKER"
stop_clock
expect_within "it exits within the timeout + 5 s" $((RDZV_TIMEOUT + 5))
expect_contains "the message names the missing node rank 1" "$(cat "$ERR")" "missing node rank(s): 1"
no_leftovers

section "a launcher of another job, or expecting another node count, is refused"
port=$(free_port)
common=(--nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port")
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --nnodes 2 --node-rank 0 --rdzv-id job-a \
  --rdzv-timeout 60 -- "$TRUE_WORKER" >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
node0=$!
expect_exit nonzero "$DLAUNCH" run "${common[@]}" --nnodes 2 --node-rank 1 --rdzv-id job-b \
  --rdzv-timeout 30 -- "$TRUE_WORKER"
expect_contains "another --rdzv-id: the message says why" "$(cat "$ERR")" "give every node the same --rdzv-id"
expect_contains "another --rdzv-id: the message names its id" "$(cat "$ERR")" "'job-b'"
expect_contains "another --rdzv-id: the message names node 0's id" "$(cat "$ERR")" "'job-a'"
# Node 0 is still waiting: the right node 1 completes the job.
expect_exit 0 "$DLAUNCH" run "${common[@]}" --nnodes 2 --node-rank 1 --rdzv-id job-a \
  --rdzv-timeout 30 -- "$TRUE_WORKER"
wait_pid 60 "$node0"
expect_eq "node 0 still runs the job with the right node 1 (exit 0)" 0 "$STATUS"
no_leftovers

section "a node of the job that expects another node count stops the job at once, on every node"
port=$(free_port)
common=(--nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" --rdzv-id job-a)
start_clock
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --nnodes 2 --node-rank 0 \
  --rdzv-timeout 60 -- "$TRUE_WORKER" >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
node0=$!
expect_exit nonzero "$DLAUNCH" run "${common[@]}" --nnodes 3 --node-rank 1 --rdzv-timeout 60 -- "$TRUE_WORKER"
expect_contains "node 1 is told why" "$(cat "$ERR")" "expects 3 nodes but node 0 expects 2; give every node the same --nnodes"
wait_pid 60 "$node0"
stop_clock
expect_eq "node 0 exits non-zero too" 1 "$STATUS"
expect_contains "node 0 names node 1" "$(cat "$TEST_DIR/node0.err")" "node 1 ("
expect_within "both stop long before the 60 s join timeout" 15
no_leftovers

section "different worker counts without --allow-uneven stop the job, naming both nodes"
port=$(free_port)
common=(--nnodes 2 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60)
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 0 --nproc-per-node 1 -- "$TRUE_WORKER" \
  >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
node0=$!
expect_exit nonzero "$DLAUNCH" run "${common[@]}" --node-rank 1 --nproc-per-node 3 -- "$TRUE_WORKER"
# Whichever node joined second is the one named first.
message=$(cat "$ERR")
expect_contains "the message names node 0" "$message" "node 0 ($(hostname)) runs 1"
expect_contains "the message names node 1" "$message" "node 1 ($(hostname)) runs 3"
expect_contains "the message gives the fix" "$message" \
  "give every node the same --nproc-per-node, or pass --allow-uneven"
wait_pid 60 "$node0"
expect_eq "node 0 exits non-zero" 1 "$STATUS"
no_leftovers

section "a node whose program is missing stops the whole job at once with its reason"
port=$(free_port)
common=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60)
start_clock
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 0 -- "$TRUE_WORKER" \
  >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
node0=$!
expect_exit 2 "$DLAUNCH" run "${common[@]}" --node-rank 1 -- "$TEST_DIR/no-such-program"
wait_pid 60 "$node0"
stop_clock
expect_eq "node 0 exits non-zero" 1 "$STATUS"
expect_contains "node 0 says node 1 failed its preflight and why" "$(cat "$TEST_DIR/node0.err")" \
  "node 1 ($(hostname)) failed its preflight: cannot run '$TEST_DIR/no-such-program'"
expect_within "both stop long before the 60 s join timeout" 15
no_leftovers

section "node 0's own missing program reaches the other node too"
port=$(free_port)
common=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60)
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 0 -- "$TEST_DIR/no-such-program" \
  >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
node0=$!
expect_exit nonzero "$DLAUNCH" run "${common[@]}" --node-rank 1 -- "$TRUE_WORKER"
expect_contains "node 1 learns node 0's reason" "$(cat "$ERR")" "node 0 ($(hostname)) failed its preflight: cannot run"
wait_pid 60 "$node0"
expect_eq "node 0 exits 2 (bad input)" 2 "$STATUS"
no_leftovers

section "uneven workers (--allow-uneven): node 0 with 1, node 1 with 3 -> ranks 0..3, WORLD_SIZE 4"
SHOW_RANKS=$(write_worker show_ranks.sh <<'EOF'
echo "RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE GROUP_RANK=$GROUP_RANK GROUP_WORLD_SIZE=$GROUP_WORLD_SIZE"
EOF
)
port=$(free_port)
common=(--nnodes 2 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60 --allow-uneven)
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 0 --nproc-per-node 1 -- "$SHOW_RANKS" \
  >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
node0=$!
expect_exit 0 "$DLAUNCH" run "${common[@]}" --node-rank 1 --nproc-per-node 3 -- "$SHOW_RANKS"
wait_pid 60 "$node0"
expect_eq "node 0 exits 0" 0 "$STATUS"
expect_eq "node 0: one worker, rank 0" \
  "[rank0]:RANK=0 LOCAL_RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=1 GROUP_RANK=0 GROUP_WORLD_SIZE=2" \
  "$(cat "$TEST_DIR/node0.out")"
expect_eq "node 1: three workers, ranks 1..3" \
  "[rank1]:RANK=1 LOCAL_RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=3 GROUP_RANK=1 GROUP_WORLD_SIZE=2
[rank2]:RANK=2 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=3 GROUP_RANK=1 GROUP_WORLD_SIZE=2
[rank3]:RANK=3 LOCAL_RANK=2 WORLD_SIZE=4 LOCAL_WORLD_SIZE=3 GROUP_RANK=1 GROUP_WORLD_SIZE=2" \
  "$(sort "$OUT")"
no_leftovers

section "node 0 raises its own open-file limit for the rendezvous; its workers keep the one they were given"
hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -le 256 ]; then
  say "  (skipped: the hard open-file limit is $hard)"
else
  SHOW_LIMIT=$(write_worker show_limit.sh <<'EOF'
echo "workers see $(ulimit -Sn); launcher $(awk '/Max open files/ {print $4}' /proc/$PPID/limits)"
EOF
)
  port=$(free_port)
  common=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60)
  # Both launchers start with a soft limit of 256, far under the hard limit.
  (ulimit -Sn 256 && exec timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 0 -- "$SHOW_LIMIT") \
    >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
  node0=$!
  expect_exit 0 bash -c 'ulimit -Sn 256 && exec "$@"' _ "$DLAUNCH" run "${common[@]}" --node-rank 1 -- "$SHOW_LIMIT"
  wait_pid 60 "$node0"
  expect_eq "node 0 exits 0" 0 "$STATUS"
  limit0=$(cat "$TEST_DIR/node0.out")
  expect_contains "node 0's workers get the limit node 0 was started with" "$limit0" "workers see 256;"
  expect_not_contains "node 0's own limit was raised for the rendezvous" "$limit0" "launcher 256"
  expect_contains "node 1 (no service) raises nothing" "$(cat "$OUT")" "workers see 256; launcher 256"
  no_leftovers
fi

finish
