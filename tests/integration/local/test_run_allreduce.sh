#!/bin/bash
# Acceptance: a real PyTorch job (examples/allreduce.py, CPU, gloo) under
# dlaunch run, on one node with 4 workers and on two nodes (two launchers on
# this machine) with 2 workers each.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_torch
export OMP_NUM_THREADS=1
# The example's copy lives in the test folder: its path carries the marker.
SCRIPT=$TEST_DIR/allreduce.py
cp "$DLAUNCH_SOURCE_DIR/examples/allreduce.py" "$SCRIPT"
HOST=$(hostname)

# expected_line RANK WORLD LOCAL: the line the example prints for that rank.
expected_line() {
  printf '[rank%d]:rank %d/%d local %d on %s: all_reduce sum %d == %d OK\n' \
    "$1" "$1" "$2" "$3" "$HOST" $(($2 * ($2 - 1) / 2)) $(($2 * ($2 - 1) / 2))
}
ok_lines() { grep -E '^\[rank[0-9]+\]:rank .* OK$' "$@" | sort; }

section "one node, 4 workers"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 4 --python "$PY" "$SCRIPT"
expect_eq "4 OK lines, one per rank, each prefixed [rankN]:" \
  "$(for r in 0 1 2 3; do expected_line $r 4 $r; done)" "$(ok_lines "$OUT")"
expect_contains "rank 0 prints the summary" "$(cat "$OUT")" \
  "[rank0]:all_reduce over 4 ranks done: sum 6, expected 6"
expect_not_contains "no rank failed" "$(cat "$OUT" "$ERR")" "FAILED"
no_leftovers

section "two nodes of 2 workers (world size 4), launchers started concurrently"
port=$(free_port)
common=(--nnodes 2 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60)
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 1 --python "$PY" "$SCRIPT" \
  >"$TEST_DIR/node1.out" 2>"$TEST_DIR/node1.err" &
node1=$!
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 0 --python "$PY" "$SCRIPT" \
  >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err"
status0=$?
wait "$node1"
status1=$?
expect_eq "node 0's launcher exits 0" 0 "$status0"
expect_eq "node 1's launcher exits 0" 0 "$status1"
expect_eq "node 0: ranks 0 and 1 OK" \
  "$(expected_line 0 4 0; expected_line 1 4 1)" "$(ok_lines "$TEST_DIR/node0.out")"
expect_eq "node 1: ranks 2 and 3 OK" \
  "$(expected_line 2 4 0; expected_line 3 4 1)" "$(ok_lines "$TEST_DIR/node1.out")"
expect_contains "rank 0 prints the summary" "$(cat "$TEST_DIR/node0.out")" \
  "[rank0]:all_reduce over 4 ranks done: sum 6, expected 6"
if [ "$status0" != 0 ] || [ "$status1" != 0 ]; then
  for node in 0 1; do say "--- node $node stderr:"; tail -n 20 "$TEST_DIR/node$node.err"; done
fi
no_leftovers

finish
