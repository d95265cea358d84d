#!/usr/bin/env bash
# Across a Slurm requeue, a host dlaunch benched stays excluded, on the
# real multi-node Slurm test cluster (tests/cluster/up):
#
#   dlaunch submit --nodes 1 --spare-nodes 1 --gpus-per-node 1 --signal
#   USR1@60 --requeue --max-restarts 2, with --health-check `test
#   $SLURM_NODEID != 1` and --bench-cooldown 10m. Attempt 0's worker exits 3;
#   before round 1 the spare's (slot 1's) health check fails and node 0
#   benches it. Round 1's worker waits for the preemption warning (scancel
#   --signal=USR1), saves a checkpoint and exits 0; node 0 requeues the job
#   and, once it is pending again, sets its ExcNodeList to the benched host.
#   The second run resumes from the checkpoint on the two other hosts.
#
# Checked: node 0's line (host, reason, cooldown), the job's ExcNodeList
# holding the benched host, the second run's NodeList and its worker not on
# it, and the record file (the host, once, 10 min, added by dlaunch).
# Needs DLAUNCH_CLUSTER_DIR: the cluster fixture of tests/CMakeLists.txt
# brings the cluster up before the cluster tests and down after them.
. "$(dirname "$0")/../lib.sh"

[ -n "${DLAUNCH_CLUSTER_DIR:-}" ] && [ -f "$DLAUNCH_CLUSTER_DIR/env.sh" ] ||
  skip "no test cluster is up (DLAUNCH_CLUSTER_DIR unset or without env.sh)"
. "$DLAUNCH_CLUSTER_DIR/env.sh"
. "$DLAUNCH_CLUSTER_DIR/cluster.env"
# shellcheck source-path=SCRIPTDIR source=job_checks.sh
. "$(dirname "$0")/job_checks.sh"
require_command sbatch
require_command scancel
[ "$(id -u)" = 0 ] || skip "needs root (the job's processes in the nodes' namespaces)"
[ "${NODES:-0}" -ge 3 ] || skip "needs a cluster of 3 nodes or more (this one has ${NODES:-0})"

# A requeued job waits for its BeginTime (requeue + cred_expire, 30 s on
# the test cluster) and the next backfill pass (every 30 s).
END_LIMIT=${DLAUNCH_TEST_JOB_LIMIT:-400}
GONE_LIMIT=20
OUTPUTS=$TEST_DIR/outputs
MARKS=$TEST_DIR/marks
mkdir -p "$MARKS"
cd "$DLAUNCH_SOURCE_DIR" || exit 1

_exclude_cleanup() {
  [ -n "${JOB_ID:-}" ] && scancel "$JOB_ID" 2>/dev/null
  _lib_cleanup
}
trap _exclude_cleanup EXIT

# Each run writes its host to marks/ran.run<SLURM_RESTART_COUNT>.<attempt>.
# Run 0: attempt 0 fails once the spare's launcher says it stands by (a
# restart, so the health checks run, the spare's too), attempt 1
# waits for the preemption warning and saves a checkpoint. Run 1 exits 0
# if and only if the checkpoint is there.
WORKER=$(write_worker exclude_worker.sh <<EOF
run=\${SLURM_RESTART_COUNT:-0}
attempt=\$TORCHELASTIC_RESTART_COUNT
echo "\$SLURMD_NODENAME" >"$MARKS/ran.run\$run.\$attempt"
if [ "\$run" != 0 ]; then test -f "$MARKS/checkpoint"; exit; fi
if [ "\$attempt" = 0 ]; then
  # Fails once the spare stands by: a restart before its launcher joined
  # would leave it behind in round 0 (refused), not benched before round 1.
  log="\$OUTPUT_DIR/slurm-\$SLURM_JOB_ID.log"
  for ((i = 0; i < 1200; i++)); do grep -q "stands by as a spare" "\$log" 2>/dev/null && exit 3; sleep 0.1; done
  exit 4
fi
checkpoint() { echo saved >"$MARKS/checkpoint"; kill "\$sleeper" 2>/dev/null; exit 0; }
trap checkpoint USR1
(trap '' USR1; exec -a "\$0.sleep" sleep 600) &
sleeper=\$!
touch "$MARKS/ready"
wait "\$sleeper"
exit 1
EOF
)

job_field() { scontrol show job -o "$1" 2>/dev/null | grep -o " $2=[^ ]*" | cut -d= -f2-; }
hosts_of() { [ -n "$1" ] && [ "$1" != "(null)" ] && scontrol show hostnames "$1" | paste -sd' ' -; }

section "a spare benched by its health check before round 1, then the preemption warning"
RUN_DIR=$TEST_DIR/exclude
submit_in_background $((END_LIMIT + 60)) --nodes 1 --spare-nodes 1 --gpus-per-node 1 --signal USR1@60 --requeue \
  --max-restarts 2 --shutdown-timeout 5 --output-dir "$OUTPUTS" --run-arg=--bench-cooldown=10m \
  "--run-arg=--health-check=test \$SLURM_NODEID != 1" -- /bin/bash "$WORKER" || finish
expect_true "round 1's worker waits for the warning" wait_for_files 180 "$MARKS/ready"
first_hosts=$(hosts_of "$(job_field "$JOB_ID" NodeList)")
bad=$(awk '{print $2}' <<<"$first_hosts")
say "  first run on: $first_hosts; slot 1 (benched): ${bad:-?}"
expect_eq "the first run has 2 hosts ($first_hosts)" 2 "$(wc -w <<<"$first_hosts")"
expect_true "scancel --signal=USR1 $JOB_ID" scancel --signal=USR1 "$JOB_ID"
wait_for_job_end || finish
expect_eq "the job ends COMPLETED after the requeue" COMPLETED "$END_STATE"
expect_eq "its exit code is 0" 0 "$END_CODE"
expect_eq "Slurm started it twice (Restarts=1)" 1 "$(job_field "$JOB_ID" Restarts)"

section "the benched host is excluded from the requeued job"
expect_contains "node 0 benched slot 1's host for its health check" "$(cat "$LOG")" \
  "(${bad}) failed its health check before round 1"
expect_contains "node 0 requeues without it, saying why and for how long" "$(cat "$LOG")" \
  "requeueing job $JOB_ID without $bad (benched: health check '--health-check test \$SLURM_NODEID != 1' failed on"
expect_contains "... with the cooldown of --bench-cooldown 10m" "$(grep -F "requeueing job" "$LOG")" ", cooldown 10 min)"
expect_not_contains "no exclusion or record failed" "$(cat "$LOG")" "without its exclusions"
excluded=$(hosts_of "$(job_field "$JOB_ID" ExcNodeList)")
expect_eq "scontrol: the job's ExcNodeList is the benched host" "$bad" "$excluded"
second_hosts=$(hosts_of "$(job_field "$JOB_ID" NodeList)")
say "  second run on: $second_hosts"
expect_eq "the second run has 2 hosts ($second_hosts)" 2 "$(wc -w <<<"$second_hosts")"
expect_true "the second run's nodes ($second_hosts) leave out $bad" \
  bash -c "! grep -qw -- '$bad' <<<'$second_hosts'"
ran=$(cat "$MARKS"/ran.run1.* 2>/dev/null | sort -u)
expect_true "the second run's worker ran (on ${ran:-nothing}), not on $bad" \
  bash -c "[ -n '$ran' ] && ! grep -qw -- '$bad' <<<'$ran'"

section "the record of benched hosts in the submission folder"
record=$FOLDER/bench-record.json
expect_file "bench-record.json is in the submission folder" "$record"
field() { python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["hosts"].get(sys.argv[2], {}); print(e.get(sys.argv[3]))' "$record" "$bad" "$1"; }
expect_eq "it holds $bad, benched once" 1 "$(field times)"
expect_eq "excluded for 10 min from its benching" 600 \
  "$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["hosts"][sys.argv[2]]; print(e["excluded_until"]-e["last_benched"])' "$record" "$bad" 2>&1)"
expect_eq "dlaunch added it to ExcNodeList (so it removes it once the cooldown is over)" True "$(field added_by_dlaunch)"
expect_contains "with the reason" "$(field why)" "health check '--health-check test"
expect_nothing_left

finish
