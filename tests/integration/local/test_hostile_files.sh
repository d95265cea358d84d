#!/bin/bash
# Hostile files (issue 24, parts 4 and 5): what a worker, or whoever can
# write in a shared, copied or damaged folder, may put where dlaunch reads.
# Every command ends quickly with the normal result or a clear error that
# names the file; none hangs, none dies of a signal, and no Slurm command
# sees an id that is not one.
#   - a worker's error file: a FIFO, 32 MB of '[', JSON nested deep; the
#     failure summary shows the worker's last log lines instead;
#   - a submission folder: job_id a FIFO or '--user=root', config.json
#     nested 1.5M deep, a .times index linked to /dev/zero; through status,
#     jobs, logs, cancel and stacks, with fake scontrol/scancel/sacct on
#     PATH that record their arguments.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

cd "$TEST_DIR" || exit 1
RUN_LIMIT=30  # every command here ends in seconds; a hang is a failure

# expect_no_signal DESCRIPTION: the last command ended by itself (a code
# below 124: not killed by timeout, nor by a signal of its own).
expect_no_signal() {
  if [ "$STATUS" -lt 124 ]; then pass "$1 (exit $STATUS)"
  else fail "$1" "exit status $STATUS: a hang (124/137) or a signal (128+N)"; show_last_output; fi
}

section "a worker's error file: a FIFO, 32 MB of '[', nesting: the summary uses the log's last lines"
# The worker replaces its error file, says a last line, and exits 1.
ERROR_WORKER=$(write_worker error_file.sh <<'WORKER'
rm -f "$TORCHELASTIC_ERROR_FILE"
case $KIND in
  fifo) mkfifo "$TORCHELASTIC_ERROR_FILE" ;;
  huge) head -c 33554432 /dev/zero | tr '\0' '[' >"$TORCHELASTIC_ERROR_FILE" ;;
  deep) { printf '{"message": {"message": "x", "extraInfo": '; head -c 200000 /dev/zero | tr '\0' '['; } >"$TORCHELASTIC_ERROR_FILE" ;;
  *) exit 0 ;;
esac
echo "worker's last words before its $KIND error file"
exit 1
WORKER
)
for kind in fifo huge deep; do
  start_clock
  KIND=$kind expect_exit 1 "$DLAUNCH" run --nproc-per-node 1 -- "$ERROR_WORKER"
  stop_clock
  expect_within "$kind: the launcher ends at once" 20
  expect_contains "$kind: the summary names the failure" "$(cat "$ERR")" "first failure: rank 0"
  expect_contains "$kind: the summary shows the log's last line" "$(cat "$ERR")" \
    "worker's last words before its $kind error file"
  expect_not_contains "$kind: no error line from the file" "$(cat "$ERR")" "error       x"
done
no_leftovers

section "two nodes: node 1's worker leaves a FIFO; both launchers end"
port=$(free_port)
KIND=fifo timeout -k 5 60 "$DLAUNCH" run --nnodes 2 --node-rank 1 --nproc-per-node 1 --master-addr 127.0.0.1 \
  --master-port "$port" -- "$ERROR_WORKER" >"$TEST_DIR/node1.out" 2>"$TEST_DIR/node1.err" &
node1=$!
KIND=none expect_exit 1 "$DLAUNCH" run --nnodes 2 --node-rank 0 --nproc-per-node 1 --master-addr 127.0.0.1 \
  --master-port "$port" -- "$ERROR_WORKER"
expect_contains "node 0's summary shows node 1's worker's last line" "$(cat "$ERR")" \
  "worker's last words before its fifo error file"
wait_pid 30 "$node1"
expect_eq "node 1's launcher ended by itself, not hung" 1 "$STATUS"
no_leftovers

# A submission folder, as dlaunch submit makes it, of job 12.
make_folder() {  # NAME: prints its path
  local folder=$TEST_DIR/out/$1
  mkdir -p "$folder/logs/attempt_0/rank0"
  printf '{"settings": {}, "command": ["w.sh"], "timestamp": "%s", "job_name": "w"}\n' "$1" >"$folder/config.json"
  echo 12 >"$folder/job_id"
  printf 'hello\n' >"$folder/logs/attempt_0/rank0/stdout.log"
  echo "$folder"
}
# Stand-ins for Slurm: each appends "NAME ARGS..." to calls.log. scontrol
# knows job 12 as COMPLETED; scancel and sacct do nothing.
mkdir -p "$TEST_DIR/fake_slurm"
for tool in scontrol scancel sacct squeue; do
  printf '#!/bin/bash\necho "%s $*" >>"%s/calls.log"\n' "$tool" "$TEST_DIR" >"$TEST_DIR/fake_slurm/$tool"
done
echo 'echo "JobId=12 JobName=w JobState=COMPLETED ExitCode=0:0 StdOut=/nonexistent/slurm-12.log"' \
  >>"$TEST_DIR/fake_slurm/scontrol"
chmod +x "$TEST_DIR"/fake_slurm/*
export PATH="$TEST_DIR/fake_slurm:$PATH"

GOOD=$(make_folder 20261203_140500)

section "job_id as a FIFO: status, logs, cancel name it; jobs lists the rest"
FIFO_ID=$(make_folder 20261203_140501)
rm "$FIFO_ID/job_id"
mkfifo "$FIFO_ID/job_id"
for command in status logs cancel; do
  expect_exit 2 "$DLAUNCH" "$command" "$FIFO_ID"
  expect_no_signal "$command on a FIFO job_id"
  expect_contains "$command: names the FIFO" "$(cat "$ERR")" "$FIFO_ID/job_id is a FIFO"
done
expect_exit 0 "$DLAUNCH" jobs --output-dir "$TEST_DIR/out"
expect_contains "jobs: lists the readable folder" "$(cat "$OUT")" "$GOOD"
expect_contains "jobs: says which folder it left out, and why" "$(cat "$ERR")" "left out: $FIFO_ID/job_id is a FIFO"
rm -rf "$FIFO_ID"

section "config.json nested 1.5M deep: refused, named, never a crash"
DEEP=$(make_folder 20261203_140502)
head -c 1500000 /dev/zero | tr '\0' '[' >"$DEEP/config.json"
for command in status logs cancel; do
  expect_exit 2 "$DLAUNCH" "$command" "$DEEP"
  expect_no_signal "$command on a deep config.json"
  expect_contains "$command: names the file and why" "$(cat "$ERR")" \
    "$DEEP/config.json is not valid JSON (nested deeper than 64 levels)"
done
expect_exit 0 "$DLAUNCH" jobs --output-dir "$TEST_DIR/out" --json
expect_contains "jobs --json: the other folders still listed" "$(cat "$OUT")" "$GOOD"
expect_exit 0 "$DLAUNCH" status last --output-dir "$TEST_DIR/out"
expect_contains "status last: the newest readable folder" "$(cat "$OUT")" "job 12"
# A deep result.json or state.json is no record: status goes on without it.
head -c 1500000 /dev/zero | tr '\0' '[' >"$GOOD/logs/result.json"
head -c 1500000 /dev/zero | tr '\0' '{' >"$GOOD/state.json"
expect_exit 0 "$DLAUNCH" status "$GOOD"
expect_no_signal "status with a deep result.json and state.json"
rm -rf "$DEEP" "$GOOD/logs/result.json" "$GOOD/state.json"

section "a .times index linked to /dev/zero: logs shows the log and ends"
ln -s /dev/zero "$GOOD/logs/attempt_0/rank0/stdout.times"
start_clock
expect_exit 0 "$DLAUNCH" logs "$GOOD"
stop_clock
expect_within "logs ends" 10
expect_eq "the log's line" "hello" "$(cat "$OUT")"
expect_exit 0 "$DLAUNCH" logs "$GOOD" --follow
expect_eq "--follow on an ended job: the line, then it ends" "hello" "$(cat "$OUT")"
rm "$GOOD/logs/attempt_0/rank0/stdout.times"
head -c 8388608 /dev/zero >"$GOOD/logs/attempt_0/rank0/stdout.times"
expect_exit 0 "$DLAUNCH" logs "$GOOD"
expect_eq "an index of 8 MB of zeros: the line" "hello" "$(cat "$OUT")"

section "job_id '--user=root': no Slurm command sees it"
ROOT_ID=$(make_folder 20261203_140503)
echo '--user=root' >"$ROOT_ID/job_id"
rm -f "$TEST_DIR/calls.log"
for command in status logs cancel; do
  expect_exit 2 "$DLAUNCH" "$command" "$ROOT_ID"
  expect_contains "$command: says it is no job id" "$(cat "$ERR")" \
    "$ROOT_ID/job_id holds \"--user=root\", which is not a Slurm job id"
done
expect_exit 0 "$DLAUNCH" jobs --output-dir "$TEST_DIR/out"
expect_contains "jobs: leaves it out, and says so" "$(cat "$ERR")" "left out: $ROOT_ID/job_id holds"
expect_not_contains "no Slurm command got it" "$(cat "$TEST_DIR/calls.log" 2>/dev/null)" "--user=root"
expect_exit 0 "$DLAUNCH" status "$GOOD"
expect_contains "a good id goes after --" "$(cat "$TEST_DIR/calls.log")" "scontrol show job -o -- 12"
rm -rf "$ROOT_ID"

section "stacks on hostile folders: an error that names the file, never a hang"
STACKS=$(make_folder 20261203_140504)
mkfifo "$STACKS/logs/rendezvous.json"
for target in "$STACKS" "$STACKS/logs" 12; do
  expect_exit nonzero "$DLAUNCH" stacks "$target" --timeout 5
  expect_no_signal "stacks $target with a FIFO endpoint file"
done
rm -f "$STACKS/logs/rendezvous.json"
head -c 60000 /dev/zero | tr '\0' '[' >"$STACKS/logs/rendezvous.json"
expect_exit nonzero "$DLAUNCH" stacks "$STACKS/logs" --timeout 5
expect_no_signal "stacks with a deeply nested endpoint file"
"$PY" -c 'import sys; d = 32000; open(sys.argv[1], "w").write("{\"port\": 1, \"address\": " + "[" * d + "]" * d + "}")' \
  "$STACKS/logs/rendezvous.json"
expect_exit 2 "$DLAUNCH" stacks "$STACKS/logs" --timeout 5
expect_contains "an endpoint whose address nests 32000 deep: refused, named" "$(cat "$ERR")" \
  "rendezvous.json is not a rendezvous endpoint file"

finish
