#!/usr/bin/env bash
# dlaunch submit on the real multi-node Slurm test cluster (tests/cluster/up).
# Needs DLAUNCH_CLUSTER_DIR: the cluster fixture of tests/CMakeLists.txt
# brings the cluster up before the cluster tests and down after them.
. "$(dirname "$0")/../lib.sh"

[ -n "${DLAUNCH_CLUSTER_DIR:-}" ] && [ -f "$DLAUNCH_CLUSTER_DIR/env.sh" ] ||
  skip "no test cluster is up (DLAUNCH_CLUSTER_DIR unset or without env.sh)"
. "$DLAUNCH_CLUSTER_DIR/env.sh"
require_command sbatch
require_torch
RUN_LIMIT=${DLAUNCH_TEST_RUN_LIMIT:-300}
export OMP_NUM_THREADS=1

OUTPUTS=$TEST_DIR/outputs
cd "$DLAUNCH_SOURCE_DIR" || exit 1

# submission_folder: the folder the last submit printed.
submission_folder() { sed -n 's/^  folder: //p' "$OUT" | tail -n 1; }
ok_lines() { grep -cE 'all_reduce sum [0-9]+ == [0-9]+ OK' "$1"; }
hosts_of() { sed -n 's/.* on \([^: ]*\): all_reduce sum .* OK$/\1/p' "$1" | sort -u | wc -l; }
ranks_of() { grep -oE 'rank [0-9]+/' "$1" | tr -dc '0-9\n' | sort -n | uniq | paste -sd, -; }

section "sbatch: 2 nodes x 2 GPUs, --wait, the all-reduce example"
expect_exit 0 "$DLAUNCH" submit --nodes 2 --gpus-per-node 2 --wait --output-dir "$OUTPUTS" \
  -- /usr/bin/python3 examples/allreduce.py
folder=$(submission_folder)
log=$(ls "$folder"/slurm-*.log 2>/dev/null | head -n 1)
expect_file "the submission folder holds the job script" "$folder/job.sbatch"
expect_file "the submission folder holds the resolved configuration" "$folder/config.json"
expect_file "the submission folder holds the Slurm log" "$log"
expect_eq "4 ranks verified their all-reduce" 4 "$(ok_lines "$log")"
expect_eq "ranks 0..3 reported" "0,1,2,3" "$(ranks_of "$log")"
expect_eq "the ranks ran on 2 different hosts" 2 "$(hosts_of "$log")"
expect_file "per-rank logs are filed" "$folder/logs/attempt_0/rank3/stdout.log"
expect_contains "the job ended COMPLETED" "$(cat "$ERR")" "COMPLETED with exit code 0"

section "srun: 3 nodes x 4 GPUs in the foreground (world size 12)"
expect_exit 0 "$DLAUNCH" submit --srun --nodes 3 --gpus-per-node 4 --output-dir "$OUTPUTS" \
  -- /usr/bin/python3 examples/allreduce.py
expect_eq "12 ranks verified their all-reduce" 12 "$(ok_lines "$OUT")"
expect_eq "the ranks ran on 3 different hosts" 3 "$(hosts_of "$OUT")"

section "--launch task: srun starts 12 tasks, each its own worker"
expect_exit 0 "$DLAUNCH" submit --launch task --nodes 3 --gpus-per-node 4 --wait \
  --output-dir "$OUTPUTS" -- /usr/bin/python3 examples/allreduce.py
folder=$(submission_folder)
log=$(ls "$folder"/slurm-*.log | head -n 1)
expect_eq "12 tasks verified their all-reduce" 12 "$(ok_lines "$log")"
expect_eq "ranks 0..11 reported" "$(seq -s, 0 11)" "$(ranks_of "$log")"
expect_eq "the tasks ran on 3 different hosts" 3 "$(hosts_of "$log")"

section "--resv-ports: Slurm reserves the port (MpiParams=ports=12000-12999) and dlaunch uses it"
# Each worker asks dlaunch env what its node's launcher derived from the step.
cat >"$TEST_DIR/show_port.sh" <<'SCRIPT'
#!/bin/bash
echo "rank $RANK: $("$DLAUNCH" env | grep 'rendezvous port')"
echo "rank $RANK: OUTPUT_DIR=$OUTPUT_DIR TIMESTAMP=$TIMESTAMP"
SCRIPT
chmod +x "$TEST_DIR/show_port.sh"
expect_exit 0 "$DLAUNCH" submit --srun --resv-ports --nodes 2 --gpus-per-node 1 \
  --output-dir "$OUTPUTS" -- "$TEST_DIR/show_port.sh"
expect_contains "the rendezvous port comes from Slurm's reservation" "$(cat "$OUT")" "(SLURM_STEP_RESV_PORTS)"
port=$(sed -n 's/.*rank 0: *rendezvous port *\([0-9]*\).*/\1/p' "$OUT")
expect_true "it lies in MpiParams' range 12000-12999 (got '$port')" test "${port:-0}" -ge 12000 -a "${port:-0}" -le 12999
folder=$(sed -n 's/^dlaunch: running with srun; output folder //p' "$ERR")
expect_contains "the job sees OUTPUT_DIR and TIMESTAMP of its submission folder" "$(cat "$OUT")" \
  "rank 1: OUTPUT_DIR=$folder TIMESTAMP=$(basename "$folder")"

section "--srun: Ctrl-C (SIGINT) cancels the step and leaves nothing on the nodes"
cat >"$TEST_DIR/long.sh" <<SCRIPT
#!/bin/bash
touch "$TEST_DIR/started.\$RANK"
exec -a "$MARK.sleep" sleep 300
SCRIPT
chmod +x "$TEST_DIR/long.sh"
"$DLAUNCH" submit --srun --nodes 2 --gpus-per-node 1 --output-dir "$OUTPUTS" \
  -- "$TEST_DIR/long.sh" >"$TEST_DIR/interrupted.out" 2>&1 &
submitter=$!
expect_true "both workers started" wait_for_files 60 "$TEST_DIR/started.0" "$TEST_DIR/started.1"
kill -INT "$submitter"
wait_pid 60 "$submitter"
expect_true "dlaunch submit --srun exits non-zero after Ctrl-C (got $STATUS)" test "$STATUS" != 0 -a "$STATUS" != timeout
no_leftovers "of the interrupted job, on any node"

section "--wait: Ctrl-C stops following, says the job goes on, and the job does"
rm -f "$TEST_DIR"/started.*
"$DLAUNCH" submit --nodes 1 --gpus-per-node 1 --wait --output-dir "$OUTPUTS/follow" \
  -- "$TEST_DIR/long.sh" >"$TEST_DIR/follow.out" 2>"$TEST_DIR/follow.err" &
follower=$!
expect_true "the worker started" wait_for_files 60 "$TEST_DIR/started.0"
follow_job=$(sed -n 's/^Submitted job //p' "$TEST_DIR/follow.out")
kill -INT "$follower"
wait_pid 30 "$follower"
expect_eq "dlaunch submit --wait exits 130" 130 "$STATUS"
expect_contains "it says the job goes on, and how to cancel it" "$(cat "$TEST_DIR/follow.err")" \
  "stopped following job $follow_job; the job goes on"
expect_eq "Slurm still runs the job" RUNNING "$(squeue -h -j "$follow_job" -o %T 2>/dev/null)"
scancel "$follow_job" 2>/dev/null
followed_job_gone() { [ -z "$(squeue -h -j "$follow_job" 2>/dev/null)" ]; }
expect_true "scancel then ends it" wait_until 60 followed_job_gone
no_leftovers "of the followed job, on any node"

section "a failing rank: the job ends FAILED with the worker's code and a summary"
cat >"$TEST_DIR/fail_on_rank1.sh" <<SCRIPT
#!/bin/bash
if [ "\$RANK" = 1 ]; then echo "rank 1 gives up on \$(hostname)"; exit 3; fi
exec -a "$MARK.sleep" sleep 300
SCRIPT
chmod +x "$TEST_DIR/fail_on_rank1.sh"
expect_exit 3 "$DLAUNCH" submit --nodes 2 --gpus-per-node 2 --wait --shutdown-timeout 5 \
  --output-dir "$OUTPUTS" -- "$TEST_DIR/fail_on_rank1.sh"
folder=$(submission_folder)
log=$(ls "$folder"/slurm-*.log | head -n 1)
job_id=$(cat "$folder/job_id")
expect_contains "dlaunch reports the job FAILED" "$(cat "$ERR")" "FAILED with exit code 3"
expect_contains "the summary names the failed rank" "$(cat "$log")" "first failure: rank 1 (local rank 1)"
expect_contains "the summary names its node" "$(cat "$log")" "(node 0) exited with code 3"
expect_contains "scontrol agrees the job failed" "$(scontrol show job -o "$job_id")" "JobState=FAILED"
no_leftovers "of the failed job, on any node"

section "two jobs at once on overlapping nodes: ports do not collide"
"$DLAUNCH" submit --nodes 3 --gpus-per-node 1 --wait --output-dir "$OUTPUTS/a" \
  -- /usr/bin/python3 examples/allreduce.py >"$TEST_DIR/a.out" 2>"$TEST_DIR/a.err" &
first=$!
"$DLAUNCH" submit --nodes 2 --gpus-per-node 1 --wait --output-dir "$OUTPUTS/b" \
  -- /usr/bin/python3 examples/allreduce.py >"$TEST_DIR/b.out" 2>"$TEST_DIR/b.err" &
second=$!
wait "$first"; first_status=$?
wait "$second"; second_status=$?
expect_eq "the first job succeeded" 0 "$first_status"
expect_eq "the second job succeeded" 0 "$second_status"
expect_eq "the first job's 3 ranks verified" 3 "$(ok_lines "$(ls "$OUTPUTS"/a/*/slurm-*.log)")"
expect_eq "the second job's 2 ranks verified" 2 "$(ok_lines "$(ls "$OUTPUTS"/b/*/slurm-*.log)")"

section "refusals: clear errors, non-zero exits, the refused folder marked NOT-SUBMITTED"
expect_exit 2 "$DLAUNCH" submit --partition nosuch --output-dir "$OUTPUTS/refused" -- /bin/true
expect_contains "sbatch's own message is shown" "$(cat "$ERR")" "sbatch refused the job (exit code 1)"
expect_contains "it names the partition problem" "$(cat "$ERR")" "artition"
expect_eq "one folder, kept to read" 1 "$(find "$OUTPUTS/refused" -mindepth 1 -maxdepth 1 | wc -l)"
expect_eq "its secret is gone, its refusal recorded" "job.sbatch not_submitted.json" \
  "$(cd "$OUTPUTS"/refused/* && ls job.sbatch not_submitted.json rdzv.token job_id 2>/dev/null | paste -sd' ')"
expect_exit 1 "$DLAUNCH" status last --output-dir "$OUTPUTS/refused"
expect_contains "status last: never submitted, in sbatch's words" "$(cat "$OUT")" "never submitted"
expect_exit 0 "$DLAUNCH" jobs --output-dir "$OUTPUTS/refused"
expect_contains "jobs: NOT-SUBMITTED" "$(cat "$OUT")" "NOT-SUBMITTED (sbatch refused it, exit code 1"
expect_exit 2 "$DLAUNCH" submit --gpus-per-node 9 --output-dir "$OUTPUTS/refused" -- /bin/true
expect_contains "more GPUs than a node has is refused" "$(cat "$ERR")" "sbatch refused the job"
expect_exit 2 "$DLAUNCH" submit --output-dir "$OUTPUTS/refused" -- ./no/such/program
expect_contains "a missing program is named" "$(cat "$ERR")" "./no/such/program"
expect_exit 2 "$DLAUNCH" submit --python /nope/python3 --output-dir "$OUTPUTS/refused" -- "$DLAUNCH_SOURCE_DIR/examples/allreduce.py"
expect_contains "a missing --python is named before anything is written" "$(cat "$ERR")" \
  "python '/nope/python3' (from --python) is not an executable file here"
expect_eq "no folder beyond the two sbatch refused" 2 "$(find "$OUTPUTS/refused" -mindepth 1 -maxdepth 1 | wc -l)"

finish
