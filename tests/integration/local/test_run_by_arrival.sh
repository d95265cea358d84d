#!/bin/bash
# dlaunch run as PyTorch's docs launch several nodes with torchrun's c10d
# rendezvous: the same command on every node, no --node-rank. The launcher
# on the endpoint's host that binds its port first serves the rendezvous as
# node 0; the others get node ranks in the order they join. Here every
# launcher runs on this machine (the endpoint is 127.0.0.1), so all of them
# could serve and exactly one must.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

# Each worker records what it was given, one file per global rank.
RECORDER=$(write_worker record.sh <<'EOF'
printf '%s %s %s %s\n' "$RANK" "$NODE_RANK" "$LOCAL_RANK" "$WORLD_SIZE" >"$DIR/ranks/$RANK"
EOF
)

# start_launchers COUNT OPTION...: COUNT launchers with the same command
# line, at once, each writing launcherN.out/.err; their pids in LAUNCHERS.
start_launchers() {
  local count=$1 i
  shift
  LAUNCHERS=()
  for i in $(seq 1 "$count"); do
    timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "$@" >"$TEST_DIR/launcher$i.out" 2>"$TEST_DIR/launcher$i.err" &
    LAUNCHERS+=($!)
  done
}

# Waits for every launcher; EXITS holds their statuses in order.
wait_launchers() {
  local pid
  EXITS=()
  for pid in "${LAUNCHERS[@]}"; do
    wait "$pid"
    EXITS+=($?)
  done
}

# Checks the ranks recorded: WORLD ranks, NPROC per node, every global rank
# once, RANK = NODE_RANK * NPROC + LOCAL_RANK, every node rank NPROC times.
check_ranks() {
  local world=$1 nproc=$2 rank node local size problems=""
  expect_eq "$world workers ran, one per global rank" "$world" "$(find "$TEST_DIR/ranks" -type f | wc -l)"
  for rank in $(seq 0 $((world - 1))); do
    read -r _ node local size <"$TEST_DIR/ranks/$rank" 2>/dev/null || { problems+=" rank $rank missing;"; continue; }
    [ "$size" = "$world" ] || problems+=" rank $rank has WORLD_SIZE $size;"
    [ $((node * nproc + local)) = "$rank" ] || problems+=" rank $rank is node $node local $local;"
  done
  expect_eq "every rank's NODE_RANK and LOCAL_RANK place it" "" "$problems"
  expect_eq "node ranks 0..$((world / nproc - 1)), $nproc workers each" \
    "$(for n in $(seq 0 $((world / nproc - 1))); do echo "$nproc $n"; done)" \
    "$(cut -d' ' -f2 "$TEST_DIR"/ranks/* | sort -n | uniq -c | awk '{print $1, $2}')"
}

section "three launchers, one command, no --node-rank: one serves, all get distinct node ranks"
rm -rf "$TEST_DIR/ranks" && mkdir "$TEST_DIR/ranks"
port=$(free_port)
start_launchers 3 --nnodes 3 --nproc-per-node 2 --rdzv-id arrival --rdzv-backend c10d \
  --rdzv-endpoint "127.0.0.1:$port" --rdzv-timeout 60 -- "$RECORDER"
wait_launchers
expect_eq "every launcher exits 0" "0 0 0" "${EXITS[*]}"
check_ranks 6 2
expect_eq "exactly one launcher serves the rendezvous" 1 \
  "$(cat "$TEST_DIR"/launcher*.err | grep -c "serves the rendezvous at 127.0.0.1:$port and is node 0")"
expect_eq "the two others each say which node they are, by arrival" "node 1,node 2" \
  "$(grep -ho "this launcher is node [0-9]" "$TEST_DIR"/launcher*.err | sed 's/this launcher is //' | sort | paste -sd,)"
no_leftovers

section "torchrun's own spelling (--rdzv_backend=c10d --rdzv_endpoint=...), with a token"
rm -rf "$TEST_DIR/ranks" && mkdir "$TEST_DIR/ranks"
port=$(free_port)
export DLAUNCH_RDZV_TOKEN=by-arrival-test-token
start_launchers 2 --nnodes=2 --nproc_per_node=1 --rdzv_id=arrival2 --rdzv_backend=c10d \
  "--rdzv_endpoint=127.0.0.1:$port" --rdzv_conf=join_timeout=60 "$RECORDER"
wait_launchers
unset DLAUNCH_RDZV_TOKEN
expect_eq "both launchers exit 0" "0 0" "${EXITS[*]}"
check_ranks 2 1
no_leftovers

section "a launcher beyond the job's size is refused and the job goes on"
rm -rf "$TEST_DIR/ranks" && mkdir "$TEST_DIR/ranks"
port=$(free_port)
# Every worker waits for the extra launcher's verdict before it exits, so
# the extra one arrives while the job still gathers or runs.
WAITER=$(write_worker wait.sh <<'EOF'
wait_files "$DIR/extra.done"
printf '%s %s %s %s\n' "$RANK" "$NODE_RANK" "$LOCAL_RANK" "$WORLD_SIZE" >"$DIR/ranks/$RANK"
EOF
)
rm -f "$TEST_DIR/extra.done"
start_launchers 2 --nnodes 2 --nproc-per-node 1 --rdzv-id arrival3 --rdzv-backend c10d \
  --rdzv-endpoint "127.0.0.1:$port" --rdzv-timeout 60 -- "$WAITER"
wait_until 30 grep -qs "this launcher is node 1" "$TEST_DIR/launcher1.err" "$TEST_DIR/launcher2.err"
expect_exit nonzero "$DLAUNCH" run --nnodes 2 --nproc-per-node 1 --rdzv-id arrival3 --rdzv-backend c10d \
  --rdzv-endpoint "127.0.0.1:$port" --rdzv-timeout 10 -- "$WAITER"
touch "$TEST_DIR/extra.done"
expect_contains "the extra launcher is told it is one too many" "$(cat "$ERR")" \
  "already has all 2 launchers of the job (--nnodes 2); this one is one too many"
wait_launchers
expect_eq "the job's two launchers exit 0" "0 0" "${EXITS[*]}"
check_ranks 2 1
no_leftovers

section "dlaunch env says where the node rank comes from"
expect_exit 0 "$DLAUNCH" env --nnodes 2 --rdzv-backend c10d --rdzv-endpoint "127.0.0.1:29400"
expect_contains "node rank: from the rendezvous, by arrival" "$(cat "$OUT")" \
  "the rendezvous, by arrival (--rdzv-backend c10d without --node-rank)"
expect_contains "who serves it" "$(cat "$OUT")" "on 127.0.0.1's host; node ranks by arrival"

section "a real PyTorch all-reduce over two launchers by arrival"
if "$PY" -c 'import torch.distributed' 2>/dev/null; then
  export OMP_NUM_THREADS=1
  SCRIPT=$TEST_DIR/allreduce.py
  cp "$DLAUNCH_SOURCE_DIR/examples/allreduce.py" "$SCRIPT"
  port=$(free_port)
  start_launchers 2 --nnodes 2 --nproc-per-node 2 --rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$port" \
    --rdzv-timeout 60 --python "$PY" "$SCRIPT"
  wait_launchers
  expect_eq "both launchers exit 0" "0 0" "${EXITS[*]}"
  expect_eq "4 ranks all-reduce the right sum" 4 \
    "$(cat "$TEST_DIR"/launcher*.out | grep -cE '^\[rank[0-3]\]:rank [0-3]/4 .*all_reduce sum 6 == 6 OK$')"
  no_leftovers
else
  say "skipped: $PY has no torch.distributed"
fi

finish
