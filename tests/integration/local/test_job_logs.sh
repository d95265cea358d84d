#!/bin/bash
# dlaunch logs and dlaunch status on a run's own records, without Slurm: a
# submission folder whose logs/ a 2-node dlaunch run (two launchers on this
# machine) filled. The time-ordered merge, --rank, --node, --attempt after a
# restart, --tail, --grep, --follow, the failure summary from node 0's
# result.json; hostile contents (a FIFO for a log, garbage in the time
# index and in result.json) give output or a clear error, never a hang;
# --follow on a running job shows a progress bar before its newline.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

cd "$TEST_DIR" || exit 1

# A folder shaped like dlaunch submit's (config.json, no job_id: as with --srun).
SUB=$TEST_DIR/sub
mkdir -p "$SUB"
printf '{"settings": {"nodes": {"value": "2", "source": "--nodes"}}, "command": ["w.sh"], "timestamp": "20261203_140509", "job_name": "w"}\n' >"$SUB/config.json"

# Lines 0.3 s apart, so the merge must interleave the ranks; the first
# attempt fails on rank 3, the second succeeds.
WORKER=$(write_worker w.sh <<'EOF'
for i in 1 2 3; do echo "rank $RANK attempt $TORCHELASTIC_RESTART_COUNT line $i"; sleep 0.3; done
echo "rank $RANK to stderr" >&2
[ "$RANK" = 3 ] && [ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && { echo "rank 3 fails" >&2; exit 5; }
exit 0
EOF
)
# run_two_nodes ARGS...: node 0 and node 1 of one job on this machine.
run_two_nodes() {
  local port
  port=$(free_port)
  timeout -k 5 120 "$DLAUNCH" run --nnodes 2 --node-rank 1 --nproc-per-node 2 --master-addr 127.0.0.1 \
    --master-port "$port" --log-dir "$SUB/logs" "$@" >"$TEST_DIR/node1.out" 2>"$TEST_DIR/node1.err" &
  local node1=$!
  expect_exit "$EXPECTED" "$DLAUNCH" run --nnodes 2 --node-rank 0 --nproc-per-node 2 --master-addr 127.0.0.1 \
    --master-port "$port" --log-dir "$SUB/logs" "$@"
  wait "$node1"
}

section "a 2-node run with one restart fills the folder"
EXPECTED=0 run_two_nodes --max-restarts 1 -- "$WORKER"
expect_file "node 0 wrote its verdict" "$SUB/logs/result.json"
expect_file "node 1 wrote which ranks it ran" "$SUB/logs/attempt_1/node1.json"
expect_file "each log has its time index" "$SUB/logs/attempt_1/rank2/stdout.times"

section "dlaunch status: the verdict, the restart, from the folder alone"
expect_exit 0 "$DLAUNCH" status "$SUB" --json
cp "$OUT" status.json
expect_eq "COMPLETED with exit code 0 after 1 restart" "COMPLETED 0 1" \
  "$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["state"], d["exit_code"], d["restarts"])' status.json)"
expect_exit 0 "$DLAUNCH" status "$SUB"
expect_contains "text: the state" "$(cat "$OUT")" "COMPLETED"

section "dlaunch logs: merged in time order, each rank's lines under its prefix"
expect_exit 0 "$DLAUNCH" logs "$SUB"
expect_contains "the last attempt by default, and it says so" "$(cat "$ERR")" "attempt 1 of 2"
expect_eq "4 ranks x 3 lines, and each rank's stderr line" 16 "$(grep -cE '^\[rank[0-3]\]:rank [0-3] (attempt 1 line|to stderr)' "$OUT")"
expect_eq "no line under another rank's prefix" 0 "$(grep -cvE '^\[rank([0-3])\]:rank \1 ' "$OUT")"
last_first=$(grep -n 'line 1$' "$OUT" | cut -d: -f1 | sort -n | tail -n 1)
first_third=$(grep -n 'line 3$' "$OUT" | cut -d: -f1 | sort -n | head -n 1)
expect_true "every rank's line 1 comes before any rank's line 3" test "$last_first" -lt "$first_third"
expect_exit 0 "$DLAUNCH" logs "$SUB" --attempt 0 --rank 3
expect_eq "--attempt 0 --rank 3: the failed attempt's lines, unprefixed" \
  "rank 3 attempt 0 line 1|rank 3 attempt 0 line 2|rank 3 attempt 0 line 3|rank 3 to stderr|rank 3 fails" "$(paste -sd'|' "$OUT")"
expect_exit 0 "$DLAUNCH" logs "$SUB" --node 1
expect_eq "--node 1: ranks 2 and 3" "2,3" "$(grep -oE '^\[rank[0-9]+\]' "$OUT" | tr -dc '0-9\n' | sort -u | paste -sd,)"
expect_exit 0 "$DLAUNCH" logs "$SUB" --grep 'line [12]$' --tail 3
expect_eq "--grep --tail 3: the last 3 matching lines" 3 "$(grep -cE 'line [12]$' "$OUT")"
expect_eq "--grep --tail 3: nothing else" 3 "$(wc -l <"$OUT")"
expect_exit 2 "$DLAUNCH" logs "$SUB" --grep '('
expect_contains "a bad --grep is refused, named" "$(cat "$ERR")" "--grep '('"
expect_exit 2 "$DLAUNCH" logs "$SUB" --attempt 7
expect_contains "--attempt 7: says which attempts there are" "$(cat "$ERR")" "there: 0, 1"
expect_exit 0 "$DLAUNCH" logs "$SUB" --follow --rank 0
expect_eq "--follow on a job that ended: its lines, then it returns" 4 "$(wc -l <"$OUT")"

section "a failed run: status shows node 0's failure summary"
rm -rf "$SUB/logs"
EXPECTED=5 run_two_nodes -- "$WORKER"
expect_exit 0 "$DLAUNCH" status "$SUB"
expect_contains "FAILED with the worker's exit code" "$(cat "$OUT")" "FAILED (exit 5)"
expect_contains "the summary names rank 3" "$(cat "$OUT")" "rank 3"
expect_contains "the summary holds its last line" "$(cat "$OUT")" "rank 3 fails"

section "hostile contents: a FIFO for a log, garbage in an index and in result.json"
rm -f "$SUB/logs/attempt_0/rank1/stdout.log"
mkfifo "$SUB/logs/attempt_0/rank1/stdout.log"
head -c 4096 /dev/urandom >"$SUB/logs/attempt_0/rank0/stdout.times"
expect_exit 0 "$DLAUNCH" logs "$SUB"
expect_contains "the other ranks' lines still show" "$(cat "$OUT")" "[rank2]:rank 2 attempt 0 line 3"
expect_contains "rank 0's lines show despite its broken index" "$(cat "$OUT")" "[rank0]:rank 0 attempt 0 line 3"
echo '{"state": ' >"$SUB/logs/result.json"
expect_exit 0 "$DLAUNCH" status "$SUB" --json
expect_contains "a cut-short result.json: unknown, not a crash" "$(cat "$OUT")" '"state": "UNKNOWN"'
expect_exit 2 "$DLAUNCH" status "$TEST_DIR"
expect_contains "a folder that is no submission is named" "$(cat "$ERR")" "is neither a dlaunch submit folder"
expect_exit 2 "$DLAUNCH" logs "12;rm"
expect_contains "a JOB that is neither id, folder nor last" "$(cat "$ERR")" "neither a job id"

section "--follow on a running job: a progress bar shows before its newline"
# A submitted job's folder (job_id) whose Slurm is a stand-in: RUNNING
# while $TEST_DIR/running exists. The test writes the workers' logs itself.
LIVE=$TEST_DIR/live
mkdir -p "$LIVE/logs/attempt_0/rank0" "$LIVE/logs/attempt_0/rank1" "$TEST_DIR/fake_slurm"
cp "$SUB/config.json" "$LIVE/"
echo 4242 >"$LIVE/job_id"
# shellcheck disable=SC2016  # $state is the stand-in's own variable
printf '#!/bin/bash\nif [ -e "%s/running" ]; then state=RUNNING; else state=COMPLETED; fi\necho "JobId=4242 JobName=w JobState=$state ExitCode=0:0"\n' \
  "$TEST_DIR" >"$TEST_DIR/fake_slurm/scontrol"
chmod +x "$TEST_DIR/fake_slurm/scontrol"
touch "$TEST_DIR/running"
LOG0=$LIVE/logs/attempt_0/rank0/stdout.log
LOG1=$LIVE/logs/attempt_0/rank1/stdout.log
: >"$LOG0"
: >"$LOG1"
PATH="$TEST_DIR/fake_slurm:$PATH" timeout -k 5 60 "$DLAUNCH" logs "$LIVE" --follow \
  >"$TEST_DIR/follow.out" 2>"$TEST_DIR/follow.err" &
FOLLOWER=$!
# follow_shows TEXT: the follower's output so far is TEXT, to the byte.
# shellcheck disable=SC2317  # called through wait_until
follow_shows() { [ "$(cat "$TEST_DIR/follow.out"; printf x)" == "${1}x" ]; }
printf ' 10%%' >>"$LOG0"
expect_true "the bar's start shows without its newline" wait_until 10 follow_shows $'[rank0]: 10%'
printf '\r 50%%' >>"$LOG0"
expect_true "redrawn under its prefix" wait_until 10 follow_shows $'[rank0]: 10%\r[rank0]: 50%'
echo "rank 1 line" >>"$LOG1"
expect_true "another rank's line ends it first" \
  wait_until 10 follow_shows $'[rank0]: 10%\r[rank0]: 50%\n[rank1]:rank 1 line\n'
printf '\r100%%\n' >>"$LOG0"
rm "$TEST_DIR/running"
wait_pid 30 "$FOLLOWER"
expect_eq "--follow returns when the job ends" 0 "$STATUS"
expect_eq "its newline completes it on a line of its own, as drawn" \
  $'[rank0]: 10%\r[rank0]: 50%\n[rank1]:rank 1 line\n[rank0]:100%\nx' "$(cat "$TEST_DIR/follow.out"; printf x)"
expect_exit 0 "$DLAUNCH" logs "$LIVE"
expect_eq "without --follow: the lines as they are in the files" \
  $'[rank0]: 10%\r 50%\r100%\n[rank1]:rank 1 line\nx' "$(cat "$OUT"; printf x)"

finish
