# Submitting a job in the background and checks on its processes across the
# test cluster's nodes, shared by the cluster tests (cluster_faults.sh,
# cluster_spares.sh, cluster_hang.sh), which source it after ../lib.sh and
# the cluster's env files. Not a test itself: ctest runs cluster_*.sh only.
# Needs NET (cluster.env), NODES, MARK (lib.sh), JOB_ID, GONE_LIMIT, and
# SUBMITTER (and END_LIMIT for wait_for_job_end) when the test submits in
# the background.
# shellcheck shell=bash

NET_OCTET=${NET##*.}

# node_ns K: the network namespace of node K.
node_ns() { printf 'dlc%s-node%s' "$NET_OCTET" "$1"; }

# What runs of job $JOB_ID or of this test inside the cluster's node
# namespaces (its slurmstepd are named "slurmstepd: [JOBID.STEP]"), one
# "nodeK: PID ARGS" a line.
job_processes() {
  local k pid args
  for ((k = 1; k <= NODES; k++)); do
    for pid in $(ip netns pids "$(node_ns "$k")" 2>/dev/null); do
      args=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || continue
      case $args in *"[$JOB_ID."* | *"$MARK"*) printf 'node%s: %s %.160s\n' "$k" "$pid" "$args" ;; esac
    done
  done
}

# The same everywhere else (the submit host); the test's own submitter aside.
other_processes() {
  local pid
  for pid in $(pgrep -f "$MARK"); do
    [ "$pid" = "${SUBMITTER:-}" ] && continue
    printf 'host: %s %.160s\n' "$pid" "$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")"
  done
}

nothing_left() { [ -z "$(job_processes)$(other_processes)" ]; }

# expect_nothing_left: no process of the job on any node, nor on the submit
# host, within GONE_LIMIT seconds; what is left is named, then killed.
expect_nothing_left() {
  if wait_until "$GONE_LIMIT" nothing_left; then
    pass "no process of job $JOB_ID is left on any node (checked node1..node$NODES and the submit host)"
  else
    local left pids
    left=$( (job_processes; other_processes) | sort -u)
    fail "no process of job $JOB_ID is left on any node" "still running after ${GONE_LIMIT} s:" "$left"
    mapfile -t pids < <(awk '{print $2}' <<<"$left" | grep -E '^[0-9]+$')
    [ "${#pids[@]}" -gt 0 ] && kill -KILL "${pids[@]}" 2>/dev/null
  fi
}

# submit_in_background LIMIT ARGS...: dlaunch submit --wait ARGS (bounded by
# LIMIT seconds) in the background, its output in $RUN_DIR/submit.{out,err}
# (RUN_DIR set by the caller, created here); sets SUBMITTER, then, once the
# job is submitted, FOLDER, JOB_ID and LOG. False when it was not within 60 s.
submit_in_background() {
  local limit=$1
  shift
  mkdir -p "$RUN_DIR"
  FOLDER="" JOB_ID="" LOG=""
  timeout -k 10 "$limit" "$DLAUNCH" submit --wait "$@" >"$RUN_DIR/submit.out" 2>"$RUN_DIR/submit.err" &
  SUBMITTER=$!
  if ! wait_until 60 _job_known; then
    fail "the job was submitted" "$(cat "$RUN_DIR/submit.out" "$RUN_DIR/submit.err")"
    return 1
  fi
  FOLDER=$(sed -n 's/^  folder: //p' "$RUN_DIR/submit.out" | tail -n 1)
  JOB_ID=$(tr -dc '0-9' <"$FOLDER/job_id")
  LOG=$FOLDER/slurm-$JOB_ID.log
  say "  job $JOB_ID, folder $FOLDER"
}
_job_known() {
  local folder
  folder=$(sed -n 's/^  folder: //p' "$RUN_DIR/submit.out" 2>/dev/null | tail -n 1)
  [ -n "$folder" ] && [ -s "$folder/job_id" ]
}

# What a job that overran leaves to read: the lost host's launcher wrote
# to srun, which went with it, so the survivors' own words are in the log
# folder (result.json, the node records) and in their processes' states.
overrun_evidence() {
  local file pid
  printf 'files of %s:\n' "$FOLDER"
  (cd "$FOLDER" 2>/dev/null && find . -maxdepth 3 -newer job.sbatch -printf '  %TT %p %s\n' | sort)
  for file in "$FOLDER/logs/result.json" "$FOLDER/exit_code" "$FOLDER/state.json"; do
    [ -f "$file" ] && printf '%s:\n%s\n' "$file" "$(head -c 3000 "$file")"
  done
  printf 'processes (state, wait channel):\n'
  (job_processes; other_processes) | while read -r node pid _; do
    printf '  %s %s %s %s\n' "$node" "$pid" "$(ps -o stat=,wchan:24= -p "$pid" 2>/dev/null)" \
      "$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | cut -c1-120)"
  done
}

# wait_for_job_end: waits (at most END_LIMIT seconds) for the submitter of
# submit_in_background; sets END_STATE, END_CODE (the job's, as dlaunch
# submit --wait reports it) and STATUS (its own). On overrun it says what
# Slurm shows, cancels the job and returns false.
wait_for_job_end() {
  END_STATE="" END_CODE=""
  wait_pid "$END_LIMIT" "$SUBMITTER"
  SUBMITTER=""
  if [ "$STATUS" = timeout ]; then
    fail "the job ended within ${END_LIMIT} s" \
      "$(scontrol show job -o "$JOB_ID" 2>&1 | grep -oE '(JobState|Reason|ExitCode|RunTime)=[^ ]*' | tr '\n' ' ')" \
      "$(tail -n 30 "$LOG" 2>/dev/null)" "$(overrun_evidence)"
    scancel "$JOB_ID" 2>/dev/null
    return 1
  fi
  local line
  line=$(grep -o "job $JOB_ID ended [A-Z_]* with exit code [0-9]*" "$RUN_DIR/submit.err" | tail -n 1)
  END_STATE=$(awk '{print $4}' <<<"$line")
  END_CODE=$(awk '{print $NF}' <<<"$line")
  say "  job $JOB_ID ended ${END_STATE:-?} with exit code ${END_CODE:-?}"
}
