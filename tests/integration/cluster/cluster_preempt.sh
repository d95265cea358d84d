#!/usr/bin/env bash
# Preemption and requeue on the real multi-node Slurm test cluster
# (tests/cluster/up): dlaunch submit --signal USR1@60 --requeue, the
# preemption warning delivered as Slurm delivers it (to every step), the
# workers' checkpoint, node 0's requeue, the second run resuming with
# SLURM_RESTART_COUNT=1 and TORCHELASTIC_RESTART_COUNT=1, the job ending
# COMPLETED, the logs of both runs kept, and the rendezvous token file.
# Needs DLAUNCH_CLUSTER_DIR: the cluster fixture of tests/CMakeLists.txt
# brings the cluster up before the cluster tests and down after them.
. "$(dirname "$0")/../lib.sh"

[ -n "${DLAUNCH_CLUSTER_DIR:-}" ] && [ -f "$DLAUNCH_CLUSTER_DIR/env.sh" ] ||
  skip "no test cluster is up (DLAUNCH_CLUSTER_DIR unset or without env.sh)"
. "$DLAUNCH_CLUSTER_DIR/env.sh"
. "$DLAUNCH_CLUSTER_DIR/cluster.env"
require_command sbatch
require_command scancel
# A requeued job waits for its BeginTime (requeue + AuthInfo's cred_expire,
# 30 s on the test cluster) and the next backfill pass (every 30 s).
JOB_LIMIT=${DLAUNCH_TEST_JOB_LIMIT:-400}
OUTPUTS=$TEST_DIR/outputs
RANKS=4

# The worker: on its first run it reports, says it is ready, waits for the
# preemption warning (SIGUSR1), saves a checkpoint and exits 0. On a later
# run it reports and exits 0 if and only if its checkpoint is there. Its
# files go to the submission folder ($OUTPUT_DIR, exported by the job script).
worker=$(write_worker preemptible.sh <<'WORKER'
run=${TORCHELASTIC_RESTART_COUNT:?}
echo "SLURM_RESTART_COUNT=${SLURM_RESTART_COUNT:-unset} TORCHELASTIC_RESTART_COUNT=$run" \
  "DLAUNCH_RDZV_TOKEN=${DLAUNCH_RDZV_TOKEN:+set}" >"$OUTPUT_DIR/start.$RANK.run$run"
echo "rank $RANK on $(hostname): run $run starts"
if [ "$run" = 0 ]; then
  checkpoint() {
    echo "checkpoint of rank $RANK" >"$OUTPUT_DIR/checkpoint.$RANK"
    echo "rank $RANK: preemption warning, checkpoint saved"
    kill "$sleeper" 2>/dev/null
    exit 0
  }
  trap checkpoint USR1
  # Waits for the signal (bounded, so a lost signal fails the test instead
  # of hanging it); the trap runs as soon as it arrives. The sleep ignores
  # USR1: Slurm and dlaunch signal the worker's whole process group, and a
  # sleep that died of USR1 first could end the wait before this shell's
  # trap ran (the rank then exited 1 as if never warned: a flaky CI run).
  (trap '' USR1; exec -a "$0.sleep" sleep 600) &
  sleeper=$!
  touch "$OUTPUT_DIR/ready.$RANK"
  wait "$sleeper"
  echo "rank $RANK: no preemption warning within 600 s" >&2
  exit 1
fi
if [ -f "$OUTPUT_DIR/checkpoint.$RANK" ]; then
  echo "resumed from: $(cat "$OUTPUT_DIR/checkpoint.$RANK")" >"$OUTPUT_DIR/resumed.$RANK.run$run"
  echo "rank $RANK: run $run resumed from its checkpoint"
  exit 0
fi
echo "rank $RANK: run $run found no checkpoint" >&2
exit 1
WORKER
)

# job_field ID NAME: NAME=... of `scontrol show job -o ID`.
job_field() { scontrol show job -o "$1" 2>/dev/null | grep -o " $2=[^ ]*" | cut -d= -f2-; }
submission_folder() { sed -n 's/^  folder: //p' "$TEST_DIR/submit.out" | tail -n 1; }
folder_known() { [ -n "$(submission_folder)" ]; }
ready_files() {
  local rank
  for ((rank = 0; rank < RANKS; rank++)); do printf '%s\n' "$folder/ready.$rank"; done
}

section "dlaunch submit --nodes 2 --gpus-per-node 2 --signal USR1@60 --requeue --wait"
start_s=$(date +%s)
timeout -k 10 "$JOB_LIMIT" "$DLAUNCH" submit --nodes 2 --gpus-per-node 2 --signal USR1@60 --requeue \
  --wait --output-dir "$OUTPUTS" -- "$worker" >"$TEST_DIR/submit.out" 2>"$TEST_DIR/submit.err" &
submitter=$!
expect_true "the job was submitted" wait_until 60 folder_known
folder=$(submission_folder)
job_id=$(cat "$folder/job_id" 2>/dev/null)
say "  job $job_id, folder $folder"
mapfile -t ready < <(ready_files)
expect_true "all $RANKS workers started and are waiting for the signal" wait_for_files 120 "${ready[@]}"

section "the rendezvous token"
token_file=$folder/rdzv.token
expect_file "the submission folder holds rdzv.token" "$token_file"
expect_eq "it is readable by its owner only (mode 600)" 600 "$(stat -c %a "$token_file")"
token=$(cat "$token_file")
expect_eq "it holds 64 hex digits" 64 "$(tr -dc '0-9a-f' <<<"$token" | wc -c)"
expect_contains "the job script reads the token from the file" "$(cat "$folder/job.sbatch")" \
  "DLAUNCH_RDZV_TOKEN=\$(cat $token_file)"
expect_not_contains "the job script does not contain the token" "$(cat "$folder/job.sbatch")" "$token"
expect_not_contains "config.json does not contain it" "$(cat "$folder/config.json")" "$token"
expect_not_contains "dlaunch submit did not print it" "$(cat "$TEST_DIR/submit.out" "$TEST_DIR/submit.err")" "$token"
expect_eq "the workers were not given it" "" "$(grep -l 'DLAUNCH_RDZV_TOKEN=set' "$folder"/start.* 2>/dev/null)"
expect_contains "the job script asks Slurm for the signal and the requeue" "$(cat "$folder/job.sbatch")" \
  $'#SBATCH --signal=USR1@60\n#SBATCH --requeue'

section "the preemption warning, delivered as Slurm does: scancel --signal=USR1 (every step)"
signal_s=$(date +%s)
expect_true "scancel --signal=USR1 $job_id" scancel --signal=USR1 "$job_id"
wait_pid "$JOB_LIMIT" "$submitter"
end_s=$(date +%s)
expect_eq "dlaunch submit --wait followed the job through the requeue and exits 0" 0 "$STATUS"
expect_contains "the job ended COMPLETED with exit code 0" "$(cat "$TEST_DIR/submit.err")" \
  "job $job_id ended COMPLETED with exit code 0"
expect_eq "scontrol agrees: COMPLETED" COMPLETED "$(job_field "$job_id" JobState)"
expect_eq "scontrol: exit code 0:0" 0:0 "$(job_field "$job_id" ExitCode)"
expect_eq "scontrol: Slurm started the job twice (Restarts=1)" 1 "$(job_field "$job_id" Restarts)"

section "the workers: checkpoint on the signal, resumed after the requeue"
for ((rank = 0; rank < RANKS; rank++)); do
  expect_eq "rank $rank saved its checkpoint" "checkpoint of rank $rank" \
    "$(cat "$folder/checkpoint.$rank" 2>/dev/null)"
  expect_eq "rank $rank's first run saw no restart" \
    "SLURM_RESTART_COUNT=unset TORCHELASTIC_RESTART_COUNT=0 DLAUNCH_RDZV_TOKEN=" \
    "$(cat "$folder/start.$rank.run0" 2>/dev/null)"
  expect_eq "rank $rank's second run saw SLURM_RESTART_COUNT=1, TORCHELASTIC_RESTART_COUNT=1" \
    "SLURM_RESTART_COUNT=1 TORCHELASTIC_RESTART_COUNT=1 DLAUNCH_RDZV_TOKEN=" \
    "$(cat "$folder/start.$rank.run1" 2>/dev/null)"
  expect_file "rank $rank's second run found its checkpoint" "$folder/resumed.$rank.run1"
done
expect_eq "no third run" "" "$(ls "$folder"/start.*.run2 2>/dev/null)"

section "the logs of both runs"
log=$folder/slurm-$job_id.log
expect_contains "the Slurm log kept the first run (--open-mode=append)" "$(cat "$log")" \
  "preemption warning, checkpoint saved"
expect_contains "node 0 requeued the job" "$(cat "$log")" "requeueing job $job_id"
expect_not_contains "node 0's launcher had the token from the job script (both runs)" "$(cat "$log")" \
  "rendezvous has no token"
expect_contains "the job script says where the second run's worker logs go" "$(cat "$log")" \
  "dlaunch: job $job_id started again after requeue 1; worker logs in $folder/logs/requeue_1"
expect_contains "the second run's output follows" "$(cat "$log")" "run 1 resumed from its checkpoint"
for ((rank = 0; rank < RANKS; rank++)); do
  expect_contains "logs/attempt_0/rank$rank: the first run, not overwritten" \
    "$(cat "$folder/logs/attempt_0/rank$rank/stdout.log" 2>/dev/null)" "rank $rank: preemption warning"
  expect_contains "logs/requeue_1/attempt_0/rank$rank: the second run" \
    "$(cat "$folder/logs/requeue_1/attempt_0/rank$rank/stdout.log" 2>/dev/null)" \
    "rank $rank: run 1 resumed"
done
second_start=$(stat -c %Y "$folder/start.0.run1" 2>/dev/null || echo "$end_s")
say "  timing: submit to signal $((signal_s - start_s)) s, signal to second start" \
  "$((second_start - signal_s)) s, signal to COMPLETED $((end_s - signal_s)) s"

section "nothing of the job is left"
no_leftovers "no process of the job is left (pgrep -f the test's marker)"
# job_processes: what runs of this job inside the cluster's node namespaces
# (its slurmstepd are named "slurmstepd: [JOBID.STEP]").
job_processes() {
  local k ns pid args
  for ((k = 1; k <= NODES; k++)); do
    ns=dlc${NET##*.}-node$k
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
      args=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
      case $args in *"[$job_id."* | *"$MARK"*) printf 'node%s: %s %s\n' "$k" "$pid" "$args" ;; esac
    done
  done
}
no_job_processes() { [ -z "$(job_processes)" ]; }
if wait_until 10 no_job_processes; then pass "no process of job $job_id is left on the nodes"
else fail "no process of job $job_id is left on the nodes" "$(job_processes)"; fi

finish
