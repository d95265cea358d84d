#!/bin/bash
# dlaunch status, logs and stacks on a --log-dir of dlaunch run, as a user
# of a single machine has it: no submission, no Slurm. A finished run's
# state and merged logs; a failed run names the failed rank and its code;
# a running run is RUNNING with its launcher, its logs followed to the end
# and its stacks captured live; a hang's saved report is named once the run
# ended; a --log-dir used again shows the new run, not the old result; a
# folder that is none of these is refused, naming what it takes.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

cd "$TEST_DIR" || exit 1

# Three lines per rank, 0.2 s apart; rank 1 fails with 3 when FAIL is set;
# with HOLD, every rank waits for $DIR/release after its first line.
WORKER=$(write_worker w.sh <<'EOF'
echo "rank $RANK line 1"
[ -n "${HOLD:-}" ] && wait_files "$DIR/release"
for i in 2 3; do sleep 0.2; echo "rank $RANK line $i"; done
echo "rank $RANK to stderr" >&2
[ -n "${FAIL:-}" ] && [ "$RANK" = 1 ] && { echo "rank 1 fails" >&2; exit 3; }
exit 0
EOF
)
# json_field FILE EXPR: a value of a JSON document, read with Python.
json_field() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

section "a finished run: status and logs from its --log-dir alone"
D=$TEST_DIR/done
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 --log-dir "$D" "$WORKER"
expect_exit 0 "$DLAUNCH" status "$D"
expect_contains "the run and its state" "$(cat "$OUT")" "run in $D (a --log-dir of dlaunch run, no Slurm job): COMPLETED"
expect_contains "what it ran" "$(cat "$OUT")" "1 x 2 worker(s)"
expect_exit 0 "$DLAUNCH" status "$D" --json
cp "$OUT" done.json
expect_eq "JSON: COMPLETED, exit 0, a run's folder" "COMPLETED 0 True" \
  "$(json_field done.json 'd["state"], d["exit_code"], d["run_log_dir"]')"
expect_exit 0 "$DLAUNCH" logs "$D"
expect_eq "both ranks' lines, each under its prefix" 8 "$(grep -cE '^\[rank([01])\]:rank \1 ' "$OUT")"
last_first=$(grep -n 'line 1$' "$OUT" | cut -d: -f1 | sort -n | tail -n 1)
first_third=$(grep -n 'line 3$' "$OUT" | cut -d: -f1 | sort -n | head -n 1)
expect_true "merged in time order: every line 1 before any line 3" test "$last_first" -lt "$first_third"
expect_exit 0 "$DLAUNCH" logs "$D" --rank 1
expect_eq "--rank 1: its lines alone, unprefixed" "rank 1 line 1|rank 1 line 2|rank 1 line 3|rank 1 to stderr" \
  "$(paste -sd'|' "$OUT")"
expect_exit 0 "$DLAUNCH" logs "$D" --follow
expect_eq "--follow on a run that ended returns with its lines" 8 "$(wc -l <"$OUT")"
expect_exit 1 "$DLAUNCH" stacks "$D"
expect_contains "stacks of a run that ended: nothing to capture, and why" "$(cat "$ERR")" \
  "nothing to capture: the run in $D ended (COMPLETED with exit code 0"
expect_exit 2 "$DLAUNCH" cancel "$D"
expect_contains "cancel: no Slurm job, and how to stop a run" "$(cat "$ERR")" "is a run's --log-dir, not a submission"

section "a failed run: status names the failed rank and its exit code"
F=$TEST_DIR/failed
FAIL=1 expect_exit 3 "$DLAUNCH" run --nproc-per-node 2 --log-dir "$F" "$WORKER"
expect_exit 0 "$DLAUNCH" status "$F"
expect_contains "FAILED with the worker's code" "$(cat "$OUT")" "FAILED (exit 3)"
expect_contains "the failed rank" "$(cat "$OUT")" "first failure: rank 1 (local rank 1)"
expect_contains "its last words" "$(cat "$OUT")" "rank 1 fails"
expect_exit 0 "$DLAUNCH" status "$F" --json
cp "$OUT" failed.json
expect_eq "JSON: the failure line" "rank 1 (local rank 1) on $(hostname) (node 0) exited with code 3" \
  "$(json_field failed.json 'd["failure"]')"

section "a running run: RUNNING, its logs followed to the end, its stacks live"
R=$TEST_DIR/running
HOLD=1 timeout -k 5 "$RUN_LIMIT" "$DLAUNCH" run --nproc-per-node 2 --log-dir "$R" "$WORKER" \
  >"$TEST_DIR/run.out" 2>"$TEST_DIR/run.err" &
LAUNCHER=$!
# The workers are in, and have said their first lines.
# shellcheck disable=SC2317  # called through wait_until or expect_true
logs_started() { grep -qs 'line 1' "$R/attempt_0/rank0/stdout.log" && grep -qs 'line 1' "$R/attempt_0/rank1/stdout.log"; }
wait_until 30 logs_started
expect_exit 0 "$DLAUNCH" status "$R"
expect_contains "RUNNING while its workers run here" "$(cat "$OUT")" "): RUNNING"
# $LAUNCHER is timeout's pid; dlaunch run is its child.
expect_contains "its launcher, by pid" "$(cat "$OUT")" "launcher pid $(pgrep -P "$LAUNCHER" -x dlaunch)"
timeout -k 5 60 "$DLAUNCH" logs "$R" --follow >"$TEST_DIR/follow.out" 2>"$TEST_DIR/follow.err" &
FOLLOWER=$!
if command -v eu-stack >/dev/null && command -v gdb >/dev/null; then
  expect_exit 0 "$DLAUNCH" stacks "$R"
  expect_contains "stacks: a live capture of the workers here" "$(cat "$OUT")" "live capture on"
  expect_contains "stacks: both ranks" "$(cat "$OUT")" "stacks of 2 ranks"
  # shellcheck disable=SC2317  # called through wait_until or expect_true
  live_report_saved() { compgen -G "$R/stacks/live_*.txt" >/dev/null; }
  expect_true "the report is saved in the run's stacks/" live_report_saved
else
  say "(eu-stack or gdb missing: the live capture is not checked)"
fi
touch "$TEST_DIR/release"
wait_pid 60 "$LAUNCHER"
expect_eq "the run completed" 0 "$STATUS"
wait_pid 30 "$FOLLOWER"
expect_eq "the follower ended with the run" 0 "$STATUS"
expect_eq "the follower showed every line" 8 "$(grep -cE '^\[rank([01])\]:rank \1 ' "$TEST_DIR/follow.out")"
expect_exit 0 "$DLAUNCH" status "$R"
expect_contains "then COMPLETED" "$(cat "$OUT")" "): COMPLETED"

section "the same --log-dir again: the new run, not the old result"
FAIL=1 expect_exit 3 "$DLAUNCH" run --nproc-per-node 2 --log-dir "$R" "$WORKER"
rm -f "$TEST_DIR/release"
HOLD=1 timeout -k 5 "$RUN_LIMIT" "$DLAUNCH" run --nproc-per-node 2 --log-dir "$R" "$WORKER" \
  >"$TEST_DIR/run.out" 2>"$TEST_DIR/run.err" &
LAUNCHER=$!
# shellcheck disable=SC2317  # called through wait_until or expect_true
new_attempt_started() { [ "$R/attempt_0/node0.json" -nt "$R/result.json" ] && logs_started; }
wait_until 30 new_attempt_started
expect_exit 0 "$DLAUNCH" status "$R"
expect_contains "RUNNING, not the earlier run's FAILED" "$(cat "$OUT")" "): RUNNING"
touch "$TEST_DIR/release"
wait_pid 60 "$LAUNCHER"

section "two nodes in one --log-dir (as dlaunch ssh's hosts on a shared folder), with a token"
T=$TEST_DIR/two
rm -f "$TEST_DIR/release"
PORT=$(free_port)
export DLAUNCH_RDZV_TOKEN=0123456789abcdef0123456789abcdef
for node in 1 0; do
  HOLD=1 timeout -k 5 "$RUN_LIMIT" "$DLAUNCH" run --nnodes 2 --node-rank "$node" --nproc-per-node 1 \
    --master-addr 127.0.0.1 --master-port "$PORT" --log-dir "$T" "$WORKER" >"$TEST_DIR/node$node.out" 2>&1 &
done
# shellcheck disable=SC2317  # called through wait_until or expect_true
two_started() { grep -qs 'line 1' "$T/attempt_0/rank0/stdout.log" && grep -qs 'line 1' "$T/attempt_0/rank1/stdout.log"; }
wait_until 30 two_started
expect_exit 0 "$DLAUNCH" status "$T"
expect_contains "RUNNING, two nodes of one worker" "$(cat "$OUT")" "2 x 1 worker(s)"
if command -v eu-stack >/dev/null && command -v gdb >/dev/null; then
  expect_exit 0 "$DLAUNCH" stacks "$T"
  expect_contains "stacks through node 0's service, with the token" "$(cat "$OUT")" "stacks of 2 ranks"
fi
unset DLAUNCH_RDZV_TOKEN
expect_exit 2 "$DLAUNCH" stacks "$T"
expect_contains "without the token: where to find it" "$(cat "$ERR")" "requires the job's token, and dlaunch stacks has none"
touch "$TEST_DIR/release"
wait
expect_exit 0 "$DLAUNCH" status "$T"
expect_contains "then COMPLETED, from node 0's result" "$(cat "$OUT")" "): COMPLETED"

section "a hang: the report it saved is named once the run ended"
HUNG=$(write_worker hung.sh <<'EOF'
echo "rank $RANK waits"
marked_sleep 60
EOF
)
H=$TEST_DIR/hung
expect_exit 124 "$DLAUNCH" run --nproc-per-node 2 --log-dir "$H" --hang-timeout 2 "$HUNG"
expect_file "a single node's hang report is in --log-dir/stacks/" "$H/stacks/hang_attempt_0.txt"
expect_exit 1 "$DLAUNCH" stacks "$H"
expect_contains "stacks names the saved report" "$(cat "$ERR")" "Stack reports it saved: $H/stacks/hang_attempt_0.txt"
expect_exit 0 "$DLAUNCH" status "$H"
expect_contains "status: the hang's exit code" "$(cat "$OUT")" "FAILED (exit 124)"

section "a folder that is no run and no submission"
mkdir -p "$TEST_DIR/plain"
expect_exit 2 "$DLAUNCH" status "$TEST_DIR/plain"
expect_contains "refused, naming what is taken" "$(cat "$ERR")" "a --log-dir of dlaunch run or dlaunch ssh"
expect_exit 2 "$DLAUNCH" logs "$TEST_DIR/plain"
expect_exit 2 "$DLAUNCH" stacks "$TEST_DIR/plain"
expect_contains "stacks: no worker of it runs here, and where to run it" "$(cat "$ERR")" "no worker of $TEST_DIR/plain runs on this host"

no_leftovers
finish
