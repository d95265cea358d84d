#!/usr/bin/env bash
# After submit, on the real multi-node Slurm test cluster: dlaunch jobs,
# status, logs (--rank, --node, --tail, --grep, --follow) and cancel (plain,
# and after a checkpoint signal) against running, finished and failed jobs,
# and a job Slurm has already forgotten (MinJobAge); each --json output is
# parsed and checked. A failing 3-node job shows its failure summary once.
. "$(dirname "$0")/../lib.sh"

[ -n "${DLAUNCH_CLUSTER_DIR:-}" ] && [ -f "$DLAUNCH_CLUSTER_DIR/env.sh" ] ||
  skip "no test cluster is up (DLAUNCH_CLUSTER_DIR unset or without env.sh)"
. "$DLAUNCH_CLUSTER_DIR/env.sh"
require_command sbatch
# Jobs of this test still in Slurm when it ends (it failed half-way) go too.
cancel_leftovers() { [ -f "$TEST_DIR/jobs" ] && xargs -r scancel <"$TEST_DIR/jobs" 2>/dev/null; }
trap 'cancel_leftovers; _lib_cleanup' EXIT
RUN_LIMIT=${DLAUNCH_TEST_RUN_LIMIT:-300}
OUTPUTS=$TEST_DIR/outputs
cd "$TEST_DIR" || exit 1

# json_field FILE EXPR: EXPR (Python, over the document `d`) of the JSON in FILE.
json_field() { "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
# submitted_job: the job id the last submit printed.
submitted_job() { sed -n 's/^Submitted job \(array \)\{0,1\}\([0-9]*\).*$/\2/p' "$OUT" | tail -n 1 | tee -a "$TEST_DIR/jobs"; }
slurm_forgot() { ! scontrol show job -o "$1" >/dev/null 2>&1; }
# dl ARGS...: dlaunch ARGS --output-dir $OUTPUTS (a program, so that expect_exit can run it).
printf '#!/bin/bash\nexec "%s" "$@" --output-dir "%s"\n' "$DLAUNCH" "$OUTPUTS" >dl
chmod +x dl
dl() { "$TEST_DIR/dl" "$@"; }

# A worker that prints three numbered lines, slowly enough that ranks interleave.
cat >worker.sh <<'SCRIPT'
#!/bin/bash
for i in 1 2 3; do echo "rank $RANK line $i"; sleep 0.2; done
[ "$RANK" = "${FAIL_RANK:--1}" ] && { echo "rank $RANK gives up" >&2; exit 3; }
exit 0
SCRIPT
# A worker that runs until stopped; on USR1 it "saves a checkpoint" and exits 0.
cat >long_worker.sh <<'SCRIPT'
#!/bin/bash
trap 'echo "rank $RANK checkpoint saved"; exit 0' USR1
echo "rank $RANK started"
i=0
while :; do i=$((i + 1)); echo "rank $RANK tick $i"; sleep 0.3; done
SCRIPT
chmod +x worker.sh long_worker.sh

section "a job submitted without --wait, looked at only once Slurm has forgotten it (at the end)"
expect_exit 0 "$DLAUNCH" submit --nodes 2 --gpus-per-node 1 --output-dir "$OUTPUTS" -- "$TEST_DIR/worker.sh"
FORGOTTEN=$(submitted_job)

section "a finished job: status, logs, jobs"
expect_exit 0 "$DLAUNCH" submit --nodes 2 --gpus-per-node 2 --wait --output-dir "$OUTPUTS" -- "$TEST_DIR/worker.sh"
DONE=$(submitted_job)
expect_exit 0 "$TEST_DIR/dl" status "$DONE" --json
cp "$OUT" status_done.json
expect_eq "status: COMPLETED" COMPLETED "$(json_field status_done.json 'd["state"]')"
expect_eq "status: exit code 0" 0 "$(json_field status_done.json 'd["exit_code"]')"
expect_eq "status: 2 nodes x 2 GPUs" "2x2" "$(json_field status_done.json '"%dx%d" % (d["nodes"], d["gpus_per_node"])')"
expect_eq "status: the job id" "$DONE" "$(json_field status_done.json 'd["job_id"]')"
expect_contains "status: the hosts it ran on" "$(json_field status_done.json 'd["node_list"]')" "node"
expect_exit 0 "$TEST_DIR/dl" status "$DONE"
expect_contains "status (text) names the state" "$(cat "$OUT")" "COMPLETED"

expect_exit 0 "$TEST_DIR/dl" logs "$DONE"
expect_eq "logs: 4 ranks x 3 lines, merged" 12 "$(grep -cE '^\[rank[0-3]\]:rank [0-3] line [1-3]$' "$OUT")"
expect_eq "logs: each line under its own rank's prefix" 0 "$(grep -cvE '^\[rank([0-3])\]:rank \1 line' "$OUT")"
first_lines=$(grep -n 'line 1$' "$OUT" | cut -d: -f1 | sort -n | tail -n 1)
last_lines=$(grep -n 'line 3$' "$OUT" | cut -d: -f1 | sort -n | head -n 1)
expect_true "logs: in time order (every rank's line 1 before any line 3)" test "$first_lines" -lt "$last_lines"
expect_exit 0 "$TEST_DIR/dl" logs "$DONE" --rank 1
expect_eq "logs --rank 1: rank 1's lines alone, unprefixed" "rank 1 line 1|rank 1 line 2|rank 1 line 3" "$(paste -sd'|' "$OUT")"
expect_exit 0 "$TEST_DIR/dl" logs "$DONE" --node 1
expect_eq "logs --node 1: the ranks of node rank 1 (2 and 3)" "2,3" "$(grep -oE '^\[rank[0-9]+\]' "$OUT" | tr -dc '0-9\n' | sort -u | paste -sd,)"
expect_exit 0 "$TEST_DIR/dl" logs "$DONE" --grep 'line 2$' --tail 2
expect_eq "logs --grep --tail 2: two matching lines" 2 "$(grep -c 'line 2$' "$OUT")"
expect_eq "logs --grep --tail 2: nothing else" 2 "$(wc -l <"$OUT")"
expect_exit 2 "$TEST_DIR/dl" logs "$DONE" --rank 9
expect_contains "logs --rank 9: says which ranks there are" "$(cat "$ERR")" "ranks there: 0, 1, 2, 3"

section "a failed 3-node job: status names the failure; the summary is printed once"
expect_exit 3 env FAIL_RANK=4 "$DLAUNCH" submit --nodes 3 --gpus-per-node 2 --wait --output-dir "$OUTPUTS" -- "$TEST_DIR/worker.sh"
FAILED_JOB=$(submitted_job)
folder=$(sed -n 's/^  folder: //p' "$OUT" | tail -n 1)
expect_eq "the failure summary appears once in the job's log" 1 "$(grep -c '=== job failed ===' "$folder/slurm-$FAILED_JOB.log")"
expect_exit 0 "$TEST_DIR/dl" status "$FAILED_JOB" --json
cp "$OUT" status_failed.json
expect_eq "status: FAILED" FAILED "$(json_field status_failed.json 'd["state"]')"
expect_eq "status: exit code 3" 3 "$(json_field status_failed.json 'd["exit_code"]')"
expect_contains "status: the failure names rank 4" "$(json_field status_failed.json 'd["failure"]')" "rank 4"
expect_contains "status: the summary holds the rank's last line" "$(json_field status_failed.json 'd["failure_summary"]')" "rank 4 gives up"
expect_exit 0 "$TEST_DIR/dl" logs "$FAILED_JOB" --rank 4
expect_contains "logs --rank 4: its stderr too" "$(cat "$OUT")" "rank 4 gives up"

section "a running job: jobs, logs --follow, cancel"
expect_exit 0 "$DLAUNCH" submit --nodes 2 --gpus-per-node 1 --output-dir "$OUTPUTS" -- "$TEST_DIR/long_worker.sh"
RUNNING=$(submitted_job)
CANCELLED_JOB=$RUNNING
running() { dl status "$RUNNING" --json >running.json 2>/dev/null && [ "$(json_field running.json 'd["state"]')" = RUNNING ]; }
expect_true "status shows the job RUNNING" wait_until 60 running
logs_started() { dl logs "$RUNNING" --rank 0 2>/dev/null | grep -q 'tick 2'; }
expect_true "its workers write" wait_until 30 logs_started
expect_exit 0 "$TEST_DIR/dl" jobs --json
cp "$OUT" jobs.json
expect_eq "jobs: the running job's row says RUNNING" RUNNING \
  "$(json_field jobs.json "[j['state'] for j in d if j['job_id'] == '$RUNNING'][0]")"
expect_eq "jobs: the failed job's row says FAILED" FAILED \
  "$(json_field jobs.json "[j['state'] for j in d if j['job_id'] == '$FAILED_JOB'][0]")"
expect_eq "jobs: newest first" "$RUNNING" "$(json_field jobs.json 'd[0]["job_id"]')"
expect_exit 0 "$TEST_DIR/dl" jobs
expect_contains "jobs (text): a header and the running job" "$(cat "$OUT")" "JOB"
timeout -k 5 120 "$DLAUNCH" logs "$RUNNING" --follow --output-dir "$OUTPUTS" >follow.out 2>follow.err &
FOLLOWER=$!
follow_has_ticks() { grep -q 'tick' follow.out; }
expect_true "logs --follow shows the workers' lines as they come" wait_until 30 follow_has_ticks
expect_exit 0 "$TEST_DIR/dl" cancel "$RUNNING" --json
cp "$OUT" cancel.json
expect_eq "cancel: it cancelled" True "$(json_field cancel.json 'd["cancelled"]')"
expect_eq "cancel: the job ended CANCELLED" CANCELLED "$(json_field cancel.json 'd["state"]')"
wait_pid 60 "$FOLLOWER"
expect_eq "logs --follow ends by itself once the job ended" 0 "$STATUS"
expect_exit 0 "$TEST_DIR/dl" cancel "$RUNNING"
expect_contains "cancel again: nothing to cancel" "$(cat "$OUT")" "already ended"

section "cancel --signal USR1: the workers checkpoint and the job ends without scancel"
expect_exit 0 "$DLAUNCH" submit --nodes 2 --gpus-per-node 1 --output-dir "$OUTPUTS" -- "$TEST_DIR/long_worker.sh"
SIGNALLED=$(submitted_job)
RUNNING=$SIGNALLED
expect_true "status shows the job RUNNING" wait_until 60 running
logs_started() { dl logs "$SIGNALLED" 2>/dev/null | grep -q 'tick 2'; }
expect_true "its workers write" wait_until 30 logs_started
expect_exit 0 "$TEST_DIR/dl" cancel "$SIGNALLED" --signal USR1 --grace 60 --json
cp "$OUT" signal.json
expect_eq "cancel --signal: signalled" True "$(json_field signal.json 'd["signalled"]')"
expect_eq "cancel --signal: the job ended after the signal" True "$(json_field signal.json 'd["ended_after_signal"]')"
expect_eq "cancel --signal: no scancel was needed" False "$(json_field signal.json 'd["cancelled"]')"
expect_exit 0 "$TEST_DIR/dl" logs "$SIGNALLED"
expect_eq "both workers saved a checkpoint" 2 "$(grep -c 'checkpoint saved' "$OUT")"

section "a 2-task sweep: one row in jobs, each task's state in status, a task's logs"
expect_exit 0 "$DLAUNCH" submit --nodes 1 --gpus-per-node 1 --sweep lr=0.1,0.01 --wait --output-dir "$OUTPUTS" -- "$TEST_DIR/worker.sh"
SWEEP=$(submitted_job)
expect_exit 0 "$TEST_DIR/dl" status "$SWEEP" --json
cp "$OUT" status_sweep.json
expect_eq "status: the array COMPLETED" COMPLETED "$(json_field status_sweep.json 'd["state"]')"
expect_eq "status: each task's state and values" "0 lr=0.1 COMPLETED|1 lr=0.01 COMPLETED" \
  "$(json_field status_sweep.json '"|".join("%d lr=%s %s" % (t["index"], t["values"]["lr"], t["state"]) for t in d["tasks"])')"
expect_exit 0 "$TEST_DIR/dl" jobs --json
cp "$OUT" jobs_sweep.json
expect_eq "jobs: the array is one row" 1 "$(json_field jobs_sweep.json "len([j for j in d if j['job_id'] == '$SWEEP'])")"
expect_exit 0 "$TEST_DIR/dl" logs "${SWEEP}_1"
expect_eq "logs JOB_1: task 1's own worker output" 3 "$(grep -c 'rank 0 line' "$OUT")"
expect_exit 2 "$TEST_DIR/dl" logs "$SWEEP"
expect_contains "logs of a whole array: asks for one task" "$(cat "$ERR")" "${SWEEP}_0"

section "a job Slurm has forgotten (MinJobAge): what the folder recorded"
expect_true "Slurm forgot job $FORGOTTEN" wait_until 180 slurm_forgot "$FORGOTTEN"
expect_exit 0 "$TEST_DIR/dl" status "$FORGOTTEN" --json
cp "$OUT" status_forgotten.json
expect_eq "status: COMPLETED, from dlaunch run's record" COMPLETED "$(json_field status_forgotten.json 'd["state"]')"
expect_eq "status: exit code 0" 0 "$(json_field status_forgotten.json 'd["exit_code"]')"
expect_contains "status: says where that came from" "$(json_field status_forgotten.json 'd["source"]')" "no longer knows job $FORGOTTEN"
expect_true "Slurm forgot job $FAILED_JOB too" wait_until 180 slurm_forgot "$FAILED_JOB"
expect_exit 0 "$TEST_DIR/dl" status "$FAILED_JOB" --json
cp "$OUT" status_failed_later.json
expect_eq "the failed job still shows FAILED" FAILED "$(json_field status_failed_later.json 'd["state"]')"
expect_exit 0 "$TEST_DIR/dl" logs "$FORGOTTEN" --rank 0
expect_eq "its logs are still there" 3 "$(grep -c 'line' "$OUT")"
expect_exit 0 "$TEST_DIR/dl" jobs --json
cp "$OUT" jobs_later.json
expect_true "Slurm forgot job $CANCELLED_JOB" wait_until 180 slurm_forgot "$CANCELLED_JOB"
expect_exit 0 "$TEST_DIR/dl" jobs --json
cp "$OUT" jobs_later.json
expect_eq "jobs: the cancelled job, forgotten by Slurm, still CANCELLED" CANCELLED \
  "$(json_field jobs_later.json "[j['state'] for j in d if j['job_id'] == '$CANCELLED_JOB'][0]")"

finish
