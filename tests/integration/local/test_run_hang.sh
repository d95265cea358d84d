#!/bin/bash
# Hang forensics on this machine: --hang-timeout ends a job that makes no
# progress with a report of every rank's stack (PyTorch and native
# workers), progress steps decide over output once used, and dlaunch
# stacks shows a live two-node job's ranks without stopping it.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_torch
require_command gdb
require_command eu-stack
export OMP_NUM_THREADS=1
DEMO=$TEST_DIR/hang_demo.py
cp "$DLAUNCH_SOURCE_DIR/examples/hang_demo.py" "$DEMO"
HOST=$(hostname)

# json_field FILE EXPR: a value of the report's JSON, read with Python.
json_field() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }

section "4 PyTorch workers, rank 2 stuck in load_batch, --hang-timeout 10"
# No gdb in PATH: the Python frames come from dlaunch's own call of the
# interpreter's dump, eu-stack gives the native ones.
mkdir -p "$TEST_DIR/nogdb"
ln -s "$(command -v eu-stack)" "$TEST_DIR/nogdb/eu-stack"
start_clock
expect_exit 124 env PATH="$TEST_DIR/nogdb" "$DLAUNCH" run --nproc-per-node 4 --hang-timeout 10 \
  --log-dir "$TEST_DIR/logs" --python "$PY" "$DEMO" --stuck-rank 2
stop_clock
expect_within "the job ended within 40 s" 40
console=$(cat "$ERR")
expect_contains "the hang is announced before anything is stopped" "$console" \
  "capturing every worker's stack before the job is stopped"
expect_contains "the outlier comes first, with its own function" "$console" \
  "  rank 2 (1) on $HOST: <module> > main > train > load_batch"
expect_contains "the others wait in all_reduce" "$console" "  ranks 0-1,3 (3) on $HOST: <module> > main > train > all_reduce"
expect_contains "the summary names the stuck rank" "$console" "rank 2 on $HOST differs"
expect_contains "the summary says why the job ended" "$console" "first failure: hang: no progress for"
report=$TEST_DIR/logs/stacks/hang_attempt_0.txt
expect_file "the full report is in the log folder" "$report"
sleep_line=$(grep -n 'time.sleep(seconds)' "$DEMO" | cut -d: -f1)
expect_contains "it shows rank 2's Python frame with file and line" "$(cat "$report")" \
  "File \"$DEMO\", line $sleep_line, in load_batch"
expect_contains "it shows the others' all_reduce frames" "$(cat "$report")" "distributed_c10d.py"
expect_contains "it shows native frames with names (gloo's thread)" "$(cat "$report")" "gloo::transport::tcp::Loop::run()"
expect_eq "the JSON report's first group is rank 2" "[2]" \
  "$(json_field "$TEST_DIR/logs/stacks/hang_attempt_0.json" 'd["groups"][0]["ranks"]')"
expect_not_contains "nothing was left uncaptured (no gdb needed)" "$(cat "$report")" "not captured"
expect_eq "the JSON report holds all 4 ranks" 4 \
  "$(json_field "$TEST_DIR/logs/stacks/hang_attempt_0.json" 'len(d["workers"])')"
no_leftovers

section "a native worker (no Python) stuck in read(): frames with function names"
cp "$DLAUNCH_STUCK_READER" "$TEST_DIR/stuck_reader"
expect_exit 124 "$DLAUNCH" run --nproc-per-node 2 --hang-timeout 3 "$TEST_DIR/stuck_reader"
expect_contains "both ranks in one group, down to read" "$(cat "$ERR")" \
  "ranks 0-1 (2) on $HOST: _start > __libc_start_main"
expect_contains "... through its own functions" "$(cat "$ERR")" \
  "main > stuck::run_reader() > stuck::wait_for_input(int) > read"
kept=$(sed -n 's/^dlaunch: full report: \(.*\) (and .json)$/\1/p' "$ERR")
expect_file "without --log-dir the report is kept in the temporary folder it names" "$kept"
expect_contains "it shows the second thread asleep" "$(cat "$kept" 2>/dev/null)" "__nanosleep"
no_leftovers

section "progress steps: a rank that prints but no longer steps is caught"
# --startup-timeout: no hang is declared in the job's first 30 s, which
# torch's import and init_process_group may take on a loaded machine (they
# took over 4 s beside a build); the stuck rank is caught after them.
expect_exit 124 "$DLAUNCH" run --nproc-per-node 2 --hang-timeout 4 --startup-timeout 30 --python "$PY" "$DEMO" \
  --stuck-rank 1 --chatty
expect_contains "it kept printing" "$(cat "$OUT")" "[rank1]:rank 1: still alive (a side thread)"
expect_contains "and was caught in load_batch" "$(cat "$ERR")" "rank 1 (1) on $HOST: <module> > main > train > load_batch"
no_leftovers

section "progress steps: a job that prints rarely but steps is not"
# 48 steps of 0.25 s: 12 s with output only at the start and the end,
# against a hang timeout of 8 s (the start-up before the first step, torch's
# import, has --startup-timeout: a loaded machine may take longer).
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 --hang-timeout 8 --startup-timeout 30 --python "$PY" "$DEMO" \
  --steps 48 --step-time 0.25
expect_contains "it ran all its steps" "$(cat "$OUT")" "rank 0 done after 48 steps"
expect_not_contains "no hang was declared" "$(cat "$ERR")" "hang:"
say "  the same quiet job without steps (output only):"
expect_exit 124 "$DLAUNCH" run --nproc-per-node 2 --hang-timeout 8 --python "$PY" "$DEMO" \
  --steps 48 --step-time 0.25 --no-steps
no_leftovers

section "dlaunch stacks on a live two-node job (token), which then completes"
port=$(free_port)
export DLAUNCH_RDZV_TOKEN
DLAUNCH_RDZV_TOKEN=$("$PY" -c 'import secrets; print(secrets.token_hex(32))')
common=(--nnodes 2 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port "$port" --hang-timeout 60)
for node in 0 1; do
  timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank $node --log-dir "$TEST_DIR/live$node" \
    --python "$PY" "$DEMO" --steps 150 --step-time 0.1 >"$TEST_DIR/live$node.out" 2>&1 &
  eval "live$node=\$!"
done
expect_true "node 0 published its rendezvous endpoint" wait_for_files 60 "$TEST_DIR/live0/rendezvous.json"
expect_true "the workers run" wait_until 60 grep -q "rank 3 of 4 starts" "$TEST_DIR/live1.out"
start_clock
expect_exit 0 "$DLAUNCH" stacks "$TEST_DIR/live0"
stop_clock
expect_within "dlaunch stacks answered within 10 s" 10
expect_contains "all 4 ranks, grouped" "$(cat "$OUT")" "stacks of 4 ranks in"
expect_contains "each in the training loop" "$(cat "$OUT")" "on $HOST: <module> > main > train"
expect_true "the live report is saved in the folder" compgen -G "$TEST_DIR/live0/stacks/live_*.txt"
say "  with a wrong token:"
DLAUNCH_RDZV_TOKEN=$("$PY" -c 'import secrets; print(secrets.token_hex(32))') \
  expect_exit nonzero "$DLAUNCH" stacks "$TEST_DIR/live0" --timeout 15
expect_contains "it is refused, naming the address" "$(cat "$ERR")" "127.0.0.1:$port"
wait_pid "$RUN_LIMIT" "$live0"
expect_eq "node 0's launcher: the job completed (exit 0)" 0 "$STATUS"
wait_pid "$RUN_LIMIT" "$live1"
expect_eq "node 1's launcher: exit 0" 0 "$STATUS"
expect_not_contains "no hang was declared" "$(cat "$TEST_DIR/live0.out")" "hang:"
unset DLAUNCH_RDZV_TOKEN
no_leftovers

section "dlaunch stacks: bad input is named"
expect_exit nonzero "$DLAUNCH" stacks "$TEST_DIR/nowhere"
expect_contains "a folder that is not there" "$(cat "$ERR")" "'$TEST_DIR/nowhere' is neither a Slurm job id nor a folder"
mkdir -p "$TEST_DIR/empty"
expect_exit nonzero "$DLAUNCH" stacks "$TEST_DIR/empty"
expect_contains "a folder without a running job" "$(cat "$ERR")" "holds no rendezvous.json"
expect_exit nonzero "$DLAUNCH" stacks --master nohost
expect_contains "--master without a port" "$(cat "$ERR")" "expected HOST:PORT"
expect_exit nonzero "$DLAUNCH" run --nproc-per-node 1 --hang-timeout soon true
expect_contains "--hang-timeout that is not a number" "$(cat "$ERR")" "--hang-timeout"
no_leftovers

finish
