#!/usr/bin/env bash
# Hang forensics on the real multi-node Slurm test cluster (tests/cluster/up)
# with a real PyTorch job (examples/hang_demo.py, gloo, CPU), 3 nodes of 2
# workers:
#   1  dlaunch submit --hang-timeout 10 --wait, rank 5 (node rank 2) stuck
#      in load_batch: the job ends FAILED with exit code 124, the merged
#      report names rank 5 on its host first, in --wait's output and in the
#      submission folder (text and JSON); nothing of the job is left.
#   2  dlaunch stacks JOB_ID on a live job: all 6 ranks grouped within 10 s,
#      and the job then completes with exit code 0.
. "$(dirname "$0")/../lib.sh"

[ -n "${DLAUNCH_CLUSTER_DIR:-}" ] && [ -f "$DLAUNCH_CLUSTER_DIR/env.sh" ] ||
  skip "no test cluster is up (DLAUNCH_CLUSTER_DIR unset or without env.sh)"
. "$DLAUNCH_CLUSTER_DIR/env.sh"
. "$DLAUNCH_CLUSTER_DIR/cluster.env"
# shellcheck source-path=SCRIPTDIR source=job_checks.sh
. "$(dirname "$0")/job_checks.sh"
require_command sbatch
require_command scancel
require_command gdb
require_command eu-stack
require_torch
[ "${NODES:-0}" -ge 3 ] || skip "needs a cluster of 3 nodes or more (this one has ${NODES:-0})"

export OMP_NUM_THREADS=1
OUTPUTS=$TEST_DIR/outputs
DEMO=$TEST_DIR/hang_demo.py
cp "$DLAUNCH_SOURCE_DIR/examples/hang_demo.py" "$DEMO"
# Safety nets, never timing assertions.
START_LIMIT=120
END_LIMIT=180
GONE_LIMIT=20

_hang_cleanup() {
  [ -n "${JOB_ID:-}" ] && scancel "$JOB_ID" 2>/dev/null
  _lib_cleanup
}
trap _hang_cleanup EXIT

# submit NAME ARGS... -- PROGRAM ARGS...: a 3-node job of 2 workers a node
# with dlaunch submit --wait in the background (job_checks.sh).
submit() {
  RUN_DIR=$TEST_DIR/$1
  shift
  submit_in_background $((START_LIMIT + END_LIMIT)) --nodes 3 --gpus-per-node 2 --shutdown-timeout 10 \
    --output-dir "$OUTPUTS" "$@"
}

all_started() { [ "$(grep -c 'of 6 starts' "$LOG" 2>/dev/null)" -ge 6 ]; }

section "1: submit --hang-timeout 10, rank 5 (node rank 2) stuck in load_batch"
if submit stuck --hang-timeout 10 -- /usr/bin/python3 "$DEMO" --stuck-rank 5; then
  wait_for_job_end
  expect_eq "the job ended FAILED" FAILED "$END_STATE"
  expect_eq "with the hang's exit code" 124 "$END_CODE"
  followed=$(cat "$RUN_DIR/submit.out" "$RUN_DIR/submit.err")
  stuck_host=$(grep -o 'rank 5 (1) on [^:]*' <<<"$followed" | head -n 1 | sed 's/.* on //')
  expect_contains "--wait's output shows the outlier first, in load_batch" "$followed" \
    "rank 5 (1) on ${stuck_host:-?}: <module> > main > train > load_batch"
  third=$(scontrol show hostnames "$(scontrol show job -o "$JOB_ID" | grep -o ' NodeList=[^ ]*' | cut -d= -f2)" | sed -n 3p)
  expect_eq "its host is node rank 2's (the allocation's third node)" "$third" "$stuck_host"
  expect_contains "the other 5 ranks wait in all_reduce" "$followed" "ranks 0-4 (5) on"
  expect_contains "the failure summary names it" "$followed" "rank 5 on ${stuck_host:-?} differs"
  report=$FOLDER/logs/stacks/hang_attempt_0.txt
  expect_file "the full report is in the submission folder" "$report"
  expect_file "with its JSON" "${report%.txt}.json"
  expect_contains "it holds every node's ranks, rank 5's frame with its file" "$(cat "$report" 2>/dev/null)" \
    "File \"$DEMO\""
  expect_eq "the JSON report holds all 6 ranks" 6 \
    "$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["workers"]))' "${report%.txt}.json" 2>/dev/null)"
  expect_nothing_left
fi

section "2: dlaunch stacks JOB_ID on a live job, which then completes"
if submit live -- /usr/bin/python3 "$DEMO" --steps 300 --step-time 0.1; then
  if wait_until "$START_LIMIT" all_started; then
    pass "all 6 workers started"
    start_clock
    expect_exit 0 "$DLAUNCH" stacks "$JOB_ID"
    stop_clock
    expect_within "dlaunch stacks answered within 10 s" 10
    expect_contains "all 6 ranks, grouped" "$(cat "$OUT")" "stacks of 6 ranks in"
    expect_contains "each in the training loop" "$(cat "$OUT")" ": <module> > main > train"
    expect_true "the live report is saved in the submission folder" compgen -G "$FOLDER/stacks/live_*.txt"
  else
    fail "all 6 workers started within ${START_LIMIT} s" "$(tail -n 20 "$LOG" 2>/dev/null)"
  fi
  wait_for_job_end
  expect_eq "the job then completed" COMPLETED "$END_STATE"
  expect_eq "with exit code 0" 0 "$END_CODE"
  expect_nothing_left
fi

finish
