#!/usr/bin/env bash
# dlaunch check on one machine: the all-reduce check, fault injection, the
# --bench sweep as JSON, and ranks that never arrive.
. "$(dirname "$0")/../lib.sh"
export OMP_NUM_THREADS=1
verdicts() { grep -cE "^\[rank[0-9]+\]:rank +[0-9]+ local +[0-9]+ on [^:]+: $1 " "$OUT"; }

section "dlaunch run --nproc-per-node 4 -- dlaunch check"
LANG=C.UTF-8 expect_exit 0 "$DLAUNCH" run --nproc-per-node 4 -- "$DLAUNCH" check
expect_eq "4 verdict lines, each ✓" 4 "$(verdicts ✓)"
expect_contains "every rank got the sum 0+1+2+3" "$(cat "$OUT")" "all-reduce sum 6 == 6, broadcast ok, barrier ok"
expect_contains "rank 0's banner says it passed" "$(cat "$OUT")" "[rank0]:# dlaunch check: ✓ PASSED"
expect_contains "the banner gives world size and nodes" "$(cat "$OUT")" "world size 4, 1 node(s)"
expect_contains "the banner counts the passes" "$(cat "$OUT")" "passed 4/4, failed 0"

section "ASCII when the locale is not UTF-8"
LANG=C LC_ALL=C expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 -- "$DLAUNCH" check
expect_eq "2 verdict lines, each OK" 2 "$(verdicts OK)"
expect_not_contains "no ✓ on an ASCII terminal" "$(cat "$OUT")" "✓"

section "a fault-injected rank: ✗ on the affected ranks, a failed banner, non-zero exit"
LANG=C.UTF-8 expect_exit nonzero "$DLAUNCH" run --nproc-per-node 3 -- "$DLAUNCH" check --inject-wrong-rank 1
expect_eq "3 ranks saw the wrong sum" 3 "$(verdicts ✗)"
expect_contains "the verdict says what it got and expected" "$(cat "$OUT")" "all-reduce sum 1003 (expected 3)"
expect_contains "rank 0's banner says it failed" "$(cat "$OUT")" "dlaunch check: ✗ FAILED"
expect_contains "the banner counts the failures" "$(cat "$OUT")" "passed 0/3, failed 3"

section "--bench --json: one row per size, nothing wrong"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 -- "$DLAUNCH" check --bench --json --max-bytes 65536 --iters 3 --warmup 1
json=$(sed -n 's/^\[rank0\]://p' "$OUT" | grep '^{')
rows=$(printf '%s' "$json" | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(len(d["rows"]))')
wrong=$(printf '%s' "$json" | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(sum(r["wrong"] for r in d["rows"]))')
sizes=$(printf '%s' "$json" | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(",".join(str(r["size"]) for r in d["rows"]))')
expect_eq "one row per size from 8 B to 64 KiB" 14 "$rows"
expect_eq "sizes double" "8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536" "$sizes"
expect_eq "#wrong is 0 everywhere" 0 "$wrong"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 -- "$DLAUNCH" check --bench --max-bytes 64 --iters 2
expect_contains "the table has nccl-tests' columns" "$(cat "$OUT")" "time(us)  algbw(GB/s)  busbw(GB/s)   #wrong"

section "a rank that never arrives is named within --timeout"
port=$(free_port)
RANK=0 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$DLAUNCH" check --timeout 2 \
  >"$TEST_DIR/r0.out" 2>"$TEST_DIR/r0.err" &
rank0=$!
RANK=1 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port expect_exit 1 "$DLAUNCH" check --timeout 2
wait_pid 30 "$rank0"
expect_eq "rank 0 exits 1" 1 "$STATUS"
expect_contains "rank 0 names the missing rank" "$(cat "$TEST_DIR/r0.err")" "rank(s) 2 did not arrive within 2 s (2/3 arrived)"
expect_contains "rank 1 says the same" "$(cat "$ERR")" "rank(s) 2 did not arrive"
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) expect_exit 1 "$DLAUNCH" check --timeout 1
expect_contains "a missing rank 0 is named" "$(cat "$ERR")" "cannot reach the store of rank 0"
expect_exit 2 env -u RANK -u WORLD_SIZE "$DLAUNCH" check
expect_contains "outside a launcher it says how to start it" "$(cat "$ERR")" "dlaunch run --nproc-per-node 4 -- dlaunch check"
no_leftovers

finish
