#!/usr/bin/env bash
# Hot spare nodes on the real multi-node Slurm test cluster (tests/cluster/up),
# with a real PyTorch job: examples/resume_allreduce.py (gloo, CPU), 2 workers
# per node, which checkpoints its step after every all-reduce and resumes from
# it on a restart. In each case a launcher (dlaunch run) is killed with
# SIGKILL once the workers have made progress (the checkpoint holds step 3 or
# later):
#   1  --nodes 2 --spare-nodes 1 --max-restarts 2, node 1's launcher: the
#      spare (the node that ran nothing) takes node rank 1; the second
#      attempt's 4 ranks run on node 0's host and the spare's, resume from the
#      checkpoint and finish; node 0 names the replacement; COMPLETED, 0
#   2  the same, node 0's launcher: node 1's launcher takes over the
#      rendezvous and node rank 0 (the workers' MASTER_ADDR moves with it,
#      and gloo meets there); COMPLETED, 0
#   3  --nodes 2 --min-nodes 1 --max-restarts 1, no spare, node 1's
#      launcher: the job goes on with node 0 alone, world size 2, resumes
#      and finishes; COMPLETED, 0
# After each job no process of it is left on any node.
# Needs root (it reads the environment of the job's processes in the nodes'
# namespaces) and a cluster of 3 nodes or more.
. "$(dirname "$0")/../lib.sh"

[ -n "${DLAUNCH_CLUSTER_DIR:-}" ] && [ -f "$DLAUNCH_CLUSTER_DIR/env.sh" ] ||
  skip "no test cluster is up (DLAUNCH_CLUSTER_DIR unset or without env.sh)"
. "$DLAUNCH_CLUSTER_DIR/env.sh"
. "$DLAUNCH_CLUSTER_DIR/cluster.env"
# shellcheck source-path=SCRIPTDIR source=job_checks.sh
. "$(dirname "$0")/job_checks.sh"
require_command sbatch
require_command scancel
require_command ip
require_torch
[ "$(id -u)" = 0 ] || skip "needs root (the job's processes in the nodes' namespaces)"
[ "${NODES:-0}" -ge 3 ] || skip "needs a cluster of 3 nodes or more (this one has ${NODES:-0})"

export OMP_NUM_THREADS=1
# The program's pace: 40 steps of 0.25 s, about 10 s of training in all.
export STEPS=40 STEP_SECONDS=0.25
PER_NODE=2
# Safety nets, never timing assertions: a job's workers reach step 3, the job
# ends, its processes vanish.
PROGRESS_LIMIT=90
END_LIMIT=150
GONE_LIMIT=20

OUTPUTS=$TEST_DIR/outputs
DLAUNCH_REAL=$(readlink -f "$DLAUNCH")
cd "$DLAUNCH_SOURCE_DIR" || exit 1

_spares_cleanup() {
  [ -n "${JOB_ID:-}" ] && scancel "$JOB_ID" 2>/dev/null
  _lib_cleanup
}
trap _spares_cleanup EXIT

# ---------------------------------------------------------------- helpers

# submit NAME ARGS...: submits resume_allreduce.py in the background with
# --wait (SUBMITTER; output in $RUN_DIR/submit.{out,err}), its checkpoint in
# $CHECKPOINT (the file system is shared); sets FOLDER, JOB_ID, LOG.
submit() {
  RUN_DIR=$TEST_DIR/$1
  shift
  export CHECKPOINT=$RUN_DIR/checkpoint
  submit_in_background $((PROGRESS_LIMIT + END_LIMIT + 60)) --gpus-per-node "$PER_NODE" \
    --shutdown-timeout 10 --output-dir "$OUTPUTS" "$@" -- /usr/bin/python3 examples/resume_allreduce.py
}

# The step the checkpoint holds (0 before the first is written).
checkpoint_step() { { tr -dc '0-9' <"$CHECKPOINT"; } 2>/dev/null || true; }
progressed() { [ "$(checkpoint_step)" -ge 3 ] 2>/dev/null; }
expect_progress() {
  if wait_until "$PROGRESS_LIMIT" progressed; then
    pass "the workers made progress: the checkpoint holds step $(checkpoint_step)"
    return 0
  fi
  fail "the checkpoint reached step 3 within ${PROGRESS_LIMIT} s (it holds '$(checkpoint_step)')" \
    "$(tail -n 20 "$LOG" 2>/dev/null)"
  return 1
}

# find_launcher NODE_RANK: sets LAUNCHER (pid) and HOST (nodeK) of the
# launcher of this job's node rank NODE_RANK: the parent of a worker of the
# job (a python of the nodes' namespaces whose environment holds this job's
# CHECKPOINT) with GROUP_RANK=NODE_RANK. Checks that it is `dlaunch run` in
# that node's network namespace.
find_launcher() {
  local k pid environ
  LAUNCHER="" HOST=""
  for ((k = 1; k <= NODES; k++)); do
    for pid in $(ip netns pids "$(node_ns "$k")" 2>/dev/null); do
      tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF "resume_allreduce.py" || continue
      environ=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ") || continue
      grep -qxF "CHECKPOINT=$CHECKPOINT" <<<"$environ" || continue
      grep -qxF "GROUP_RANK=$1" <<<"$environ" || continue
      LAUNCHER=$(awk '/^PPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
      HOST=node$k
      break 2
    done
  done
  local args in_ns=""
  args=$(tr '\0' ' ' 2>/dev/null <"/proc/${LAUNCHER:-0}/cmdline")
  [ -n "$LAUNCHER" ] && [ "$(stat -L -c %i "/proc/$LAUNCHER/ns/net" 2>/dev/null)" = \
    "$(stat -L -c %i "/run/netns/$(node_ns "${HOST#node}")" 2>/dev/null)" ] && in_ns=yes
  if [[ $args == "$DLAUNCH_REAL run "*"$MARK"* ]] && [ "$in_ns" = yes ]; then
    pass "node $1's launcher is pid $LAUNCHER, dlaunch run in $HOST's namespace"
    return 0
  fi
  fail "found node $1's launcher, dlaunch run in its node's namespace" \
    "pid '${LAUNCHER}', host '${HOST}', args: $args" "in its namespace: ${in_ns:-no}"
  return 1
}

expect_in_log() {
  if grep -qF -- "$2" "$LOG" 2>/dev/null; then pass "$1"
  else fail "$1" "not in $LOG: $2" "$(grep -F 'dlaunch' "$LOG" 2>/dev/null | tail -n 20)"; fi
}

# The per-rank logs of attempt $1.
rank_logs() { ls "$FOLDER"/logs/attempt_"$1"/rank*/stdout.log 2>/dev/null; }
# The "rank R/W on HOST: attempt A resumed from step S" lines of attempt $1,
# one per rank, as "R W HOST A S", sorted by rank.
resumed_lines() {
  local file
  for file in $(rank_logs "$1"); do
    sed -n 's/.*rank \([0-9]*\)\/\([0-9]*\) on \([^:]*\): attempt \([0-9]*\) resumed from step \([0-9]*\)$/\1 \2 \3 \4 \5/p' "$file"
  done | sort -n
}
# The hosts of attempt $1, sorted, space-separated.
attempt_hosts() { resumed_lines "$1" | awk '{print $3}' | sort -u | paste -sd' ' -; }
# How many of attempt $1's ranks finished every step.
done_count() {
  local files
  mapfile -t files < <(rank_logs "$1")
  cat "${files[@]}" /dev/null | grep -cE "rank [0-9]+/[0-9]+ on [^:]*: done at step $STEPS\$"
}

# expect_resumed ATTEMPT RANKS WORLD FROM: attempt ATTEMPT's per-rank logs say
# ranks 0..RANKS-1 of world size WORLD ran it, resuming from step FROM or later
# (FROM > 0: from the checkpoint), the same step on every rank, and finished.
expect_resumed() {
  local attempt=$1 ranks=$2 world=$3 from=$4 lines
  lines=$(resumed_lines "$attempt")
  expect_eq "attempt $attempt: ranks 0..$((ranks - 1)) ran it" "$(seq -s, 0 $((ranks - 1)))" \
    "$(awk '{print $1}' <<<"$lines" | paste -sd, -)"
  expect_eq "attempt $attempt: every rank saw world size $world" "$world" \
    "$(awk '{print $2}' <<<"$lines" | sort -u | paste -sd, -)"
  expect_eq "attempt $attempt: TORCHELASTIC_RESTART_COUNT is $attempt on every rank" "$attempt" \
    "$(awk '{print $4}' <<<"$lines" | sort -u | paste -sd, -)"
  local steps
  steps=$(awk '{print $5}' <<<"$lines" | sort -u | paste -sd, -)
  expect_true "attempt $attempt: every rank resumed from the same step, ${from} or later (got '$steps')" \
    test -n "$steps" -a "${steps//[0-9]/}" = "" -a "${steps:-0}" -ge "$from"
  expect_eq "attempt $attempt: all $ranks ranks finished at step $STEPS" "$ranks" "$(done_count "$attempt")"
}

# end_case: a case that failed half-way leaves neither its submitter nor
# its job to the next one.
end_case() {
  [ -n "${SUBMITTER:-}" ] && { kill "$SUBMITTER" 2>/dev/null; wait "$SUBMITTER" 2>/dev/null; }
  [ -n "${JOB_ID:-}" ] && scancel "$JOB_ID" 2>/dev/null
  JOB_ID="" SUBMITTER=""
}

# ------------------------------------------------------------------- cases

section "1: --nodes 2 --spare-nodes 1, kill -9 of node 1's launcher: the spare takes its place"
if submit spare --nodes 2 --spare-nodes 1 --max-restarts 2 && expect_progress && find_launcher 1; then
  killed=$HOST
  # The checkpoint only grows: the next attempt resumes from this step or a later one.
  at_kill=$(checkpoint_step)
  say "  killing node 1's launcher (pid $LAUNCHER on $killed) with SIGKILL at step $at_kill"
  kill -KILL "$LAUNCHER"
  if wait_for_job_end; then
    expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
    expect_eq "its exit code is 0" 0 "$END_CODE"
    expect_eq "dlaunch submit --wait exits 0" 0 "$STATUS"
    before=$(attempt_hosts 0)
    after=$(attempt_hosts 1)
    spare=$(comm -13 <(tr ' ' '\n' <<<"$before") <(tr ' ' '\n' <<<"$after") | paste -sd' ' -)
    expect_eq "attempt 0 ran on 2 hosts (got '$before')" 2 "$(wc -w <<<"$before")"
    expect_true "the killed host $killed was one of them" grep -qw "$killed" <<<"$before"
    expect_eq "attempt 1 ran on 2 hosts (got '$after')" 2 "$(wc -w <<<"$after")"
    expect_eq "one of them is the spare, a host absent from attempt 0 ($after; before: $before)" 1 \
      "$(wc -w <<<"$spare")"
    expect_true "the killed host $killed is not in attempt 1 ($after)" bash -c "! grep -qw '$killed' <<<'$after'"
    expect_resumed 1 4 4 "$at_kill"
    expect_in_log "node 0 names the replacement" "${spare:-?} (spare) takes node rank 1; restart 1/2"
    expect_in_log "node 0 prints the timeline" "dlaunch: timeline:"
  fi
  expect_nothing_left
fi
end_case

section "2: --nodes 2 --spare-nodes 1, kill -9 of node 0's launcher: node 1 takes over the rendezvous"
if submit spare_node0 --nodes 2 --spare-nodes 1 --max-restarts 2 && expect_progress && find_launcher 0; then
  killed=$HOST
  at_kill=$(checkpoint_step)
  node1_host=$(resumed_lines 0 | awk '$1 == 2 {print $3}')
  say "  killing node 0's launcher (pid $LAUNCHER on $killed) with SIGKILL at step $at_kill"
  kill -KILL "$LAUNCHER"
  if wait_for_job_end; then
    expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
    expect_eq "its exit code is 0" 0 "$END_CODE"
    after=$(attempt_hosts 1)
    expect_eq "attempt 1 ran on 2 hosts (got '$after')" 2 "$(wc -w <<<"$after")"
    expect_true "the killed host $killed is not in attempt 1 ($after)" bash -c "! grep -qw '$killed' <<<'$after'"
    # Rank 0 hosts the workers' MASTER_ADDR: gloo met there, on node 1's host.
    expect_eq "attempt 1's rank 0 ran on node 1's host" "${node1_host:-?}" \
      "$(resumed_lines 1 | awk '$1 == 0 {print $3}')"
    expect_resumed 1 4 4 "$at_kill"
    expect_in_log "node 1's launcher took over the rendezvous" "the rendezvous moves to ${node1_host:-?}"
  fi
  expect_nothing_left
fi
end_case

section "3: no spare, --min-nodes 1, kill -9 of node 1's launcher: the job goes on with 1 node"
if submit min_nodes --nodes 2 --min-nodes 1 --max-restarts 1 && expect_progress && find_launcher 1; then
  killed=$HOST
  # The checkpoint only grows: the next attempt resumes from this step or a later one.
  at_kill=$(checkpoint_step)
  say "  killing node 1's launcher (pid $LAUNCHER on $killed) with SIGKILL at step $at_kill"
  kill -KILL "$LAUNCHER"
  if wait_for_job_end; then
    expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
    expect_eq "its exit code is 0" 0 "$END_CODE"
    expect_eq "dlaunch submit --wait exits 0" 0 "$STATUS"
    before=$(attempt_hosts 0)
    node0_host=$(resumed_lines 0 | awk '$1 == 0 {print $3}')
    expect_eq "attempt 0 ran on 2 hosts (got '$before')" 2 "$(wc -w <<<"$before")"
    expect_eq "attempt 1 ran on node 0's host alone" "${node0_host:-?}" "$(attempt_hosts 1)"
    expect_resumed 1 2 2 "$at_kill"
    expect_in_log "node 0 says the job goes on with fewer nodes" "the job goes on with 1 of 2 nodes (--min-nodes 1)"
  fi
  expect_nothing_left
fi
end_case

finish
