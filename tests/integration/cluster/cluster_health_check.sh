#!/usr/bin/env bash
# Health checks between restarts on the real multi-node Slurm test cluster
# (tests/cluster/up; issue 27's acceptance): a failing --health-check
# benches its node for a spare between rounds.
# tests/integration/local/test_run_health_check.sh runs the same story with
# three launchers on one machine.
#
#   1  --nodes 2 --spare-nodes 1 --max-restarts 1, 2 workers per node: in
#      attempt 0 rank 2 (node rank 1) marks its host bad in the shared test
#      folder and exits 3; before round 1 the health check (`! test -e
#      bad.$SLURMD_NODENAME`) fails on that host only, node 0 benches it,
#      the spare runs node rank 1; COMPLETED, 0, and attempt 1 ran on node
#      0's host and the spare's, not on the benched one
# After the job no process of it is left on any node.
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

END_LIMIT=150
GONE_LIMIT=20
OUTPUTS=$TEST_DIR/outputs
MARKS=$TEST_DIR/marks
mkdir -p "$MARKS"
cd "$DLAUNCH_SOURCE_DIR" || exit 1

_health_cleanup() {
  [ -n "${JOB_ID:-}" ] && scancel "$JOB_ID" 2>/dev/null
  _lib_cleanup
}
trap _health_cleanup EXIT

# Each rank writes "HOST" to marks/ran.RANK.ATTEMPT; rank 2 of attempt 0
# marks its host bad and fails; the others of attempt 0 wait to be stopped.
WORKER=$(write_worker health_worker.sh <<EOF
attempt=\$TORCHELASTIC_RESTART_COUNT
echo "\$SLURMD_NODENAME" >"$MARKS/ran.\$RANK.\$attempt"
if [ "\$attempt" = 0 ]; then
  if [ "\$RANK" = 2 ]; then touch "$MARKS/bad.\$SLURMD_NODENAME"; exit 3; fi
  marked_sleep 300
fi
exit 0
EOF
)

section "1: --nodes 2 --spare-nodes 1: the host whose check fails before round 1 is benched for the spare"
RUN_DIR=$TEST_DIR/health
if submit_in_background $((END_LIMIT + 60)) --nodes 2 --spare-nodes 1 --gpus-per-node 2 --max-restarts 1 \
  --shutdown-timeout 5 --output-dir "$OUTPUTS" \
  --run-arg="--health-check=! test -e $MARKS/bad.\$SLURMD_NODENAME" -- /bin/bash "$WORKER"; then
  if wait_for_job_end; then
    expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
    expect_eq "its exit code is 0" 0 "$END_CODE"
    bad=$(cat "$MARKS/ran.2.0" 2>/dev/null)
    expect_true "attempt 0's rank 2 marked its host bad (${bad:-none})" test -e "$MARKS/bad.$bad"
    after=$(cat "$MARKS"/ran.*.1 2>/dev/null | sort -u | paste -sd' ' -)
    expect_true "attempt 1 did not run on the benched host $bad ($after)" bash -c "! grep -qw '$bad' <<<'$after'"
    expect_eq "attempt 1 ran on 2 hosts ($after)" 2 "$(wc -w <<<"$after")"
    grep -qF "failed its health check before round 1" "$LOG" &&
      pass "node 0 names the node that failed its check" ||
      fail "node 0 names the node that failed its check" "$(grep -F dlaunch "$LOG" | tail -n 20)"
    grep -qF "is benched because its health check failed" "$LOG" &&
      pass "the benched launcher says why" ||
      fail "the benched launcher says why" "$(grep -F dlaunch "$LOG" | tail -n 20)"
  fi
  expect_nothing_left
fi

finish
