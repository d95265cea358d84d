#!/usr/bin/env bash
# dlaunch submit --sweep, a raw --array, --setup and --srun-arg on the real
# multi-node Slurm test cluster (tests/cluster/up): every array task runs in
# its own folder with its own values, --wait follows every task and fails
# naming the task that failed, and a --setup line's environment reaches the
# workers on every node through srun.
# Needs DLAUNCH_CLUSTER_DIR: the cluster fixture of tests/CMakeLists.txt
# brings the cluster up before the cluster tests and down after them.
. "$(dirname "$0")/../lib.sh"

[ -n "${DLAUNCH_CLUSTER_DIR:-}" ] && [ -f "$DLAUNCH_CLUSTER_DIR/env.sh" ] ||
  skip "no test cluster is up (DLAUNCH_CLUSTER_DIR unset or without env.sh)"
. "$DLAUNCH_CLUSTER_DIR/env.sh"
require_command sbatch
[ -x "$PY" ] || skip "$PY is missing"
RUN_LIMIT=${DLAUNCH_TEST_RUN_LIMIT:-300}
unset FOO

OUTPUTS=$TEST_DIR/outputs
cd "$DLAUNCH_SOURCE_DIR" || exit 1

# submission_folder: the folder the last submit printed.
submission_folder() { sed -n 's/^  folder: //p' "$OUT" | tail -n 1; }
# json FILE EXPRESSION: EXPRESSION (Python, over the document d) of FILE.
json() { "$PY" -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }

# The program every task runs: it says which task it is, its arguments, its
# folder and FOO, and exits with the code an --exit=N argument gives.
cat >"$TEST_DIR/show.sh" <<'SCRIPT'
#!/bin/bash
echo "sweep task=${SLURM_ARRAY_TASK_ID:-none} rank=$RANK on $(hostname) args=$* output_dir=$OUTPUT_DIR foo=${FOO:-unset}"
sleep 1
for arg in "$@"; do
  case $arg in --exit=*) exit "${arg#--exit=}" ;; esac
done
exit 0
SCRIPT
chmod +x "$TEST_DIR/show.sh"

section "a 2x2 sweep, at most 2 tasks at once: one array, a folder per task, --wait follows all 4"
expect_exit 0 "$DLAUNCH" submit --nodes 1 --gpus-per-node 1 --wait --output-dir "$OUTPUTS/grid" \
  --sweep lr=0.1,0.01 --sweep bs=32,64 --max-parallel 2 -- "$TEST_DIR/show.sh" --epochs 1
folder=$(submission_folder)
job_id=$(cat "$folder/job_id")
expect_contains "the array is one submission" "$(cat "$OUT")" "Submitted job array $job_id (4 tasks)"
expect_contains "the script asks for one array of 4, 2 at a time" "$(cat "$folder/job.sbatch")" "#SBATCH --array=0-3%2"
expect_eq "sweep.json names the array's job id" "$job_id" "$(json "$folder/sweep.json" "d['array_job_id']")"
expect_eq "sweep.json names the limit" 2 "$(json "$folder/sweep.json" "d['max_parallel']")"
expect_eq "sweep.json lists 4 tasks, each with its folder" "task_0 task_1 task_2 task_3" \
  "$(json "$folder/sweep.json" "' '.join(t['folder'] for t in d['tasks'])")"
lrs=(0.1 0.1 0.01 0.01)
bss=(32 64 32 64)
for i in 0 1 2 3; do
  lr=${lrs[$i]} bs=${bss[$i]}
  expect_eq "task_$i/config.json names its values" "lr=$lr bs=$bs" \
    "$(json "$folder/task_$i/config.json" "'lr=%s bs=%s' % (d['values']['lr'], d['values']['bs'])")"
  log=$folder/task_$i/slurm-${job_id}_$i.log
  expect_file "task $i has its own Slurm log" "$log"
  expect_contains "task $i's log shows its own values appended to the program's arguments, and its folder" \
    "$(cat "$log" 2>/dev/null)" "sweep task=$i rank=0"
  expect_contains "... args" "$(cat "$log" 2>/dev/null)" "args=--epochs 1 --lr=$lr --bs=$bs output_dir=$folder/task_$i "
  expect_contains "task $i's worker log is in its own folder" \
    "$(cat "$folder/task_$i/logs/attempt_0/rank0/stdout.log" 2>/dev/null)" "args=--epochs 1 --lr=$lr --bs=$bs "
done
expect_eq "no log is written beside the tasks' folders" "" "$(ls "$folder"/slurm-*.log 2>/dev/null)"
expect_contains "--wait showed the pending tasks one by one" "$(cat "$ERR")" "task 3 (lr=0.01 bs=64): PENDING"
expect_contains "--wait showed each task's end" "$(cat "$ERR")" "task 2 (lr=0.01 bs=32): COMPLETED with exit code 0"
expect_eq "the table lists 4 tasks completed with 0" 4 "$(grep -cE '^[0-3] .* COMPLETED +0 ' "$OUT")"
expect_contains "the array ended COMPLETED" "$(cat "$ERR")" \
  "job $job_id ended COMPLETED with exit code 0 (4 of 4 tasks completed with exit code 0)"

section "a sweep in which one value fails: non-zero, the failed task named"
expect_exit 3 "$DLAUNCH" submit --nodes 1 --gpus-per-node 1 --wait --output-dir "$OUTPUTS/fail" \
  --sweep exit=0,3 --sweep seed=1 -- "$TEST_DIR/show.sh"
folder=$(submission_folder)
job_id=$(cat "$folder/job_id")
expect_contains "the failed task is named with its values and log" "$(cat "$ERR")" \
  "task 1 (exit=3 seed=1) FAILED with exit code 3; log: $folder/task_1/slurm-${job_id}_1.log"
expect_contains "the other task completed" "$(cat "$ERR")" "task 0 (exit=0 seed=1): COMPLETED with exit code 0"
expect_contains "the array ended FAILED" "$(cat "$ERR")" \
  "job $job_id ended FAILED with exit code 3 (1 of 2 tasks completed with exit code 0)"
expect_not_contains "task 0 is not named as failed" "$(cat "$ERR")" "task 0 (exit=0 seed=1) FAILED"

section "a raw --sbatch-arg=--array: a folder per task too, without values"
expect_exit 0 "$DLAUNCH" submit --nodes 1 --gpus-per-node 1 --wait --output-dir "$OUTPUTS/raw" \
  --sbatch-arg=--array=0,2 -- "$TEST_DIR/show.sh"
folder=$(submission_folder)
job_id=$(cat "$folder/job_id")
for i in 0 2; do
  expect_contains "task $i logs into its own folder" "$(cat "$folder/task_$i/slurm-${job_id}_$i.log" 2>/dev/null)" \
    "sweep task=$i rank=0 on node"
  expect_file "task $i's workers log into its own folder" "$folder/task_$i/logs/attempt_0/rank0/stdout.log"
done
expect_true "no folder for index 1, which is not in the array" test ! -e "$folder/task_1"
expect_eq "sweep.json lists tasks 0 and 2 without values" "0:{} 2:{}" \
  "$(json "$folder/sweep.json" "' '.join('%d:%s' % (t['index'], json.dumps(t['values'])) for t in d['tasks'])")"

section "--setup 'export FOO=bar' and --srun-arg=--export=ALL: every node's workers see FOO"
expect_exit 0 "$DLAUNCH" submit --nodes 2 --gpus-per-node 1 --wait --output-dir "$OUTPUTS/setup" \
  --setup 'export FOO=bar' --srun-arg=--export=ALL -- "$TEST_DIR/show.sh"
folder=$(submission_folder)
log=$(ls "$folder"/slurm-*.log 2>/dev/null | head -n 1)
expect_eq "both workers, on 2 nodes, see FOO=bar" 2 "$(grep -c 'foo=bar' "$log" 2>/dev/null)"
expect_eq "... on 2 different nodes" 2 "$(sed -n 's/.* on \([^ ]*\) args=.*foo=bar$/\1/p' "$log" | sort -u | wc -l)"
expect_contains "the setup line is in the script" "$(cat "$folder/job.sbatch")" "export FOO=bar"
expect_contains "srun gets the --srun-arg" "$(cat "$folder/job.sbatch")" "--export=ALL /"

section "refusals"
expect_exit 2 "$DLAUNCH" submit --srun --sweep lr=1,2 --output-dir "$OUTPUTS/refused" -- "$TEST_DIR/show.sh"
expect_contains "--sweep with --srun is refused" "$(cat "$ERR")" "cannot be used with --srun"
expect_exit 2 "$DLAUNCH" submit --sbatch-arg=--array=0-3x --output-dir "$OUTPUTS/refused" -- "$TEST_DIR/show.sh"
expect_contains "an --array sbatch cannot read is refused" "$(cat "$ERR")" "'0-3x' is not an index or a range"
expect_eq "no submission folder is left" 0 "$(find "$OUTPUTS/refused" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)"

no_leftovers "of the sweeps, on any node"
finish
