#!/usr/bin/env bash
# Where dlaunch run is started, on the real Slurm test cluster (issue 35):
# Slurm's own variables, not faked ones (test_run_where.sh fakes them).
#   - the batch script of `sbatch -N 2` calling dlaunch run directly: the
#     job ends at once, exit code 2, its output naming SLURM_JOB_NUM_NODES
#     and the srun line; no worker ran;
#   - `srun --ntasks-per-node 2 dlaunch run`: every task exits 2 naming the
#     tasks-per-node variable and dlaunch exec;
#   - `srun -N1 dlaunch run --nnodes 4`: exit 2 naming the step's 1 node;
#   - `srun -N2 dlaunch run --master-addr 127.0.0.1`: exit 2, loopback;
#   - and the right way, `srun -N2 --ntasks-per-node 1 dlaunch run`, runs
#     both nodes' workers.
# Each refusal is bounded by `timeout 30`: it must not wait on a rendezvous
# (300 s by default).
. "$(dirname "$0")/../lib.sh"

[ -n "${DLAUNCH_CLUSTER_DIR:-}" ] && [ -f "$DLAUNCH_CLUSTER_DIR/env.sh" ] ||
  skip "no test cluster is up (DLAUNCH_CLUSTER_DIR unset or without env.sh)"
. "$DLAUNCH_CLUSTER_DIR/env.sh"
require_command sbatch
require_command srun
cancel_leftovers() { [ -f "$TEST_DIR/jobs" ] && xargs -r scancel <"$TEST_DIR/jobs" 2>/dev/null; }
trap 'cancel_leftovers; _lib_cleanup' EXIT
BOUND=30
cd "$TEST_DIR" || exit 1

# A worker that leaves one mark per rank in the (shared) test folder.
WORKER=$(write_worker mark.sh <<'EOF'
touch "$DIR/ran.$RANK"
EOF
)
marks() { find "$TEST_DIR" -maxdepth 1 -name 'ran.*' | wc -l; }

# refused_srun LABEL SRUN_ARGS... -- DLAUNCH_ARGS... -- NEEDLE...: srun exits
# 2 within BOUND seconds, its output holds every NEEDLE, no worker ran.
refused_srun() {
  local label=$1
  shift
  local -a srun_args=() args=()
  while [ "$1" != -- ]; do srun_args+=("$1"); shift; done
  shift
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  section "refused: $label"
  rm -f "$TEST_DIR"/ran.*
  timeout -k 5 "$BOUND" srun "${srun_args[@]}" "$DLAUNCH" run "${args[@]}" "$WORKER" >"$OUT" 2>"$ERR"
  STATUS=$?
  expect_eq "srun exits 2 (124: it waited)" 2 "$STATUS"
  local needle
  for needle in "$@"; do expect_contains "names: $needle" "$(cat "$OUT" "$ERR")" "$needle"; done
  expect_eq "no worker ran" 0 "$(marks)"
  [ "$STATUS" = 2 ] || show_last_output
}

section "the batch script of sbatch -N 2 calls dlaunch run directly"
rm -f "$TEST_DIR"/ran.*
cat >batch.sh <<EOF
#!/bin/bash
$(printf '%q' "$DLAUNCH") run $(printf '%q' "$WORKER")
EOF
timeout -k 5 120 sbatch --parsable --wait -N 2 -o "$TEST_DIR/batch.out" batch.sh >"$OUT" 2>"$ERR"
STATUS=$?
cut -d';' -f1 "$OUT" >>"$TEST_DIR/jobs"
expect_eq "the job failed (sbatch --wait exits 2, the script's code)" 2 "$STATUS"
expect_contains "its output names SLURM_JOB_NUM_NODES" "$(cat "$TEST_DIR/batch.out")" \
  "SLURM_JOB_NUM_NODES=2 but SLURM_STEP_ID is unset"
expect_contains "... and the srun line to use" "$(cat "$TEST_DIR/batch.out")" \
  "srun --nodes 2 --ntasks-per-node 1 dlaunch run"
expect_eq "no worker ran" 0 "$(marks)"

refused_srun "two tasks on a node" -N1 --ntasks-per-node 2 -- -- \
  "this srun step runs 2 tasks on a node" "--ntasks-per-node 1" "dlaunch exec"
refused_srun "--nnodes 4 in a 1-node step" -N1 --ntasks-per-node 1 -- --nnodes 4 -- \
  "--nnodes 4 asks for 4 launchers, but this Slurm step has 1 node"
refused_srun "a loopback rendezvous across 2 nodes" -N2 --ntasks-per-node 1 -- --master-addr 127.0.0.1 -- \
  "--master-addr 127.0.0.1 is a loopback address" "this Slurm step spans 2 nodes"

section "the right way: srun -N2 --ntasks-per-node 1 dlaunch run"
rm -f "$TEST_DIR"/ran.*
timeout -k 5 120 srun -N2 --ntasks-per-node 1 "$DLAUNCH" run "$WORKER" >"$OUT" 2>"$ERR"
expect_eq "srun exits 0" 0 "$?"
expect_eq "both nodes' workers ran" 2 "$(marks)"
finish
