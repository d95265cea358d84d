#!/bin/bash
# Where dlaunch run is started (issue 35), with the real binary under faked
# SLURM_* and SKYPILOT_* environments:
#   - each place where the job cannot form (a multi-node Slurm job outside a
#     step, several tasks a node, a size the step does not have, a loopback
#     rendezvous across a step's hosts, more launchers than a job takes, a
#     malformed SkyPilot value) exits 2 at once (under `timeout 10`; the old
#     behaviour waited 300 s or trained on one node), names the variable or
#     flag and the fix, and starts no worker (the worker leaves a mark);
#     dlaunch env refuses with the same words; the escape next to each
#     refusal is taken (the worker runs);
#   - a real 2-node job on 127.0.0.1 placed by SKYPILOT_* variables alone
#     gives every worker, variable by variable, what the same job placed by
#     torchrun's flags gives it, and so does one placed by PET_* variables.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

# The only variables a launcher here sees besides a case's own: nothing of
# the caller's Slurm job, SkyPilot task or PET_* settings reaches a case.
BASE=(PATH=/usr/bin:/bin HOME="$HOME" TMPDIR="$TEST_DIR" LANG=C.UTF-8)
MARKER=$TEST_DIR/worker_ran
WORKER=$(write_worker w.sh <<EOF
touch $(printf '%q' "$MARKER")
EOF
)
BOUND=10

# in_env VARIABLES... -- COMMAND...: COMMAND with only BASE and VARIABLES set.
in_env() {
  local -a variables=()
  while [ "$1" != -- ]; do variables+=("$1"); shift; done
  shift
  env -i "${BASE[@]}" "${variables[@]}" "$@"
}

# refused LABEL VARIABLES... -- DLAUNCH_ARGS... -- NEEDLE...: the run exits 2
# within BOUND seconds, its stderr holds every NEEDLE, and no worker ran.
refused() {
  local label=$1
  shift
  local -a variables=() args=()
  while [ "$1" != -- ]; do variables+=("$1"); shift; done
  shift
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  section "refused: $label"
  rm -f "$MARKER"
  start_clock
  in_env "${variables[@]}" -- timeout -k 5 "$BOUND" "$DLAUNCH" run "${args[@]}" "$WORKER" >"$OUT" 2>"$ERR"
  STATUS=$?
  stop_clock
  expect_eq "exit status 2 (not a wait cut by timeout $BOUND: 124)" 2 "$STATUS"
  expect_within "refused at once, within the bound" "$BOUND"
  local needle
  for needle in "$@"; do expect_contains "names: $needle" "$(cat "$ERR")" "$needle"; done
  expect_true "no worker started" test ! -e "$MARKER"
  [ "$STATUS" = 2 ] || show_last_output
}

# accepted LABEL VARIABLES... -- DLAUNCH_ARGS...: the run exits 0 and its worker ran.
accepted() {
  local label=$1
  shift
  local -a variables=()
  while [ "$1" != -- ]; do variables+=("$1"); shift; done
  shift
  section "accepted: $label"
  rm -f "$MARKER"
  in_env "${variables[@]}" -- timeout -k 5 "$RUN_LIMIT" "$DLAUNCH" run "$@" "$WORKER" >"$OUT" 2>"$ERR"
  STATUS=$?
  expect_eq "exit status 0" 0 "$STATUS"
  expect_true "the worker ran" test -e "$MARKER"
  [ "$STATUS" = 0 ] || show_last_output
}

# The batch script of `sbatch -N 2` (Slurm sets SLURM_NODEID=0 there, no SLURM_STEP_ID).
BATCH=(SLURM_JOB_ID=77 SLURM_NODEID=0 SLURM_JOB_NUM_NODES=2 SLURM_NNODES=2 'SLURM_JOB_NODELIST=n[1-2]')
# Node 0 of a step srun started on this one node.
STEP1=(SLURM_JOB_ID=78 SLURM_STEP_ID=0 SLURM_NODEID=0 SLURM_STEP_NUM_NODES=1 SLURM_JOB_NUM_NODES=1
  SLURM_STEP_NODELIST=localhost SLURM_STEP_TASKS_PER_NODE=1)
# Node 0 of a step of 2 nodes.
STEP2=(SLURM_JOB_ID=79 SLURM_STEP_ID=0 SLURM_NODEID=0 SLURM_STEP_NUM_NODES=2 SLURM_JOB_NUM_NODES=2
  'SLURM_STEP_NODELIST=n[1-2]' 'SLURM_STEP_TASKS_PER_NODE=1(x2)')
SRUN_FIX="srun --nodes 2 --ntasks-per-node 1 dlaunch run [OPTIONS] $WORKER"

refused "the batch script of a 2-node job" "${BATCH[@]}" -- -- \
  "SLURM_JOB_NUM_NODES=2 but SLURM_STEP_ID is unset" "$SRUN_FIX" "dlaunch submit --srun"
refused "the same without SLURM_NODEID (an salloc shell; it trained on one node and exited 0)" \
  SLURM_JOB_ID=77 SLURM_JOB_NUM_NODES=2 -- -- "SLURM_JOB_NUM_NODES=2 but SLURM_STEP_ID is unset" "$SRUN_FIX"
refused "the batch step by its id (Slurm 20.11 and later)" "${BATCH[@]}" SLURM_STEP_ID=4294967291 -- -- \
  "SLURM_STEP_ID=4294967291 is a step Slurm runs itself" "$SRUN_FIX"
accepted "the batch script with --nnodes 1: the user placed the launcher" "${BATCH[@]}" -- --nnodes 1

section "dlaunch env refuses the batch script with dlaunch run's words"
rm -f "$MARKER"
in_env "${BATCH[@]}" -- timeout -k 5 "$BOUND" "$DLAUNCH" run "$WORKER" >/dev/null 2>"$TEST_DIR/run.err"
in_env "${BATCH[@]}" -- timeout -k 5 "$BOUND" "$DLAUNCH" env "$WORKER" >"$OUT" 2>"$ERR"
expect_eq "dlaunch env exits 2" 2 "$?"
expect_eq "with the same message" "$(cat "$TEST_DIR/run.err")" "$(cat "$ERR")"
expect_true "and starts nothing" test ! -e "$MARKER"

refused "two tasks on a node" "${STEP1[@]/SLURM_STEP_TASKS_PER_NODE=1/SLURM_STEP_TASKS_PER_NODE=2}" -- -- \
  "SLURM_STEP_TASKS_PER_NODE=2: this srun step runs 2 tasks on a node" \
  "srun --nodes 1 --ntasks-per-node 1 dlaunch run" "dlaunch exec"
refused "two tasks on the other node, in Slurm's repeat format" "${STEP2[@]}" 'SLURM_STEP_TASKS_PER_NODE=1,2' \
  -- -- "SLURM_STEP_TASKS_PER_NODE=1,2" "--ntasks-per-node 1"
accepted "one task per node" "${STEP1[@]}" --

refused "--nnodes 4 in a 1-node step" "${STEP1[@]}" -- --nnodes 4 -- \
  "--nnodes 4 asks for 4 launchers, but this Slurm step has 1 node (SLURM_STEP_NUM_NODES=1)" \
  "srun --nodes 4 --ntasks-per-node 1 dlaunch run"
refused "PET_NNODES=4 in a 1-node step" "${STEP1[@]}" PET_NNODES=4 -- -- "PET_NNODES=4 asks for 4 launchers"
refused "a node rank that is not SLURM_NODEID" "${STEP2[@]}" -- --node-rank 1 -- \
  "--node-rank 1 is not this node's SLURM_NODEID=0" "leave out --node-rank"
accepted "--nnodes 1 in a 1-node step" "${STEP1[@]}" -- --nnodes 1

refused "a loopback rendezvous across a step's 2 hosts" "${STEP2[@]}" -- --master-addr 127.0.0.1 -- \
  "--master-addr 127.0.0.1 is a loopback address" "this Slurm step spans 2 nodes" "leave out --master-addr"
refused "localhost from PET_MASTER_ADDR" "${STEP2[@]}" PET_MASTER_ADDR=localhost -- -- \
  "PET_MASTER_ADDR=localhost is a loopback address"

refused "a million spares" -- --spare-nodes 1000000 -- \
  "--spare-nodes 1000000 make 1000001 launchers" "more than the 16384 one job takes" "fewer spare nodes"

refused "SkyPilot: fewer IPs than nodes" SKYPILOT_NODE_IPS=10.0.0.1 SKYPILOT_NODE_RANK=0 SKYPILOT_NUM_NODES=2 \
  -- -- "SKYPILOT_NODE_IPS lists 1 address but SKYPILOT_NUM_NODES=2"
refused "SkyPilot: a rank out of range" $'SKYPILOT_NODE_IPS=10.0.0.1\n10.0.0.2' SKYPILOT_NODE_RANK=2 \
  SKYPILOT_NUM_NODES=2 -- -- "SKYPILOT_NODE_RANK=2 is out of range"
refused "SkyPilot: one of the three missing" SKYPILOT_NODE_RANK=0 SKYPILOT_NUM_NODES=1 -- -- \
  "SKYPILOT_NODE_IPS is not set"
no_leftovers

# ---- The same 2-node job placed three ways: the workers' environments.
# Each worker writes its whole environment, NUL-separated, to
# envs/<placement>/rank<RANK>.
ENV_WORKER=$(write_worker env.sh <<'EOF'
mkdir -p "$DIR/envs/$PLACEMENT"
env -0 >"$DIR/envs/$PLACEMENT/rank$RANK"
EOF
)

# two_nodes PLACEMENT NODE0_VARIABLES... -- NODE1_VARIABLES... -- DLAUNCH_ARGS0... -- DLAUNCH_ARGS1...:
# both launchers of a 2-node job on this machine; the parent environment of
# each (BASE, its variables and PLACEMENT) is kept in parent/<placement>.node<N>.
two_nodes() {
  local placement=$1 node
  shift
  local -a vars0=() vars1=() args0=() args1=()
  while [ "$1" != -- ]; do vars0+=("$1"); shift; done; shift
  while [ "$1" != -- ]; do vars1+=("$1"); shift; done; shift
  while [ "$1" != -- ]; do args0+=("$1"); shift; done; shift
  args1=("$@")
  section "a 2-node job on 127.0.0.1, placed by $placement"
  mkdir -p "$TEST_DIR/parent"
  in_env "${vars0[@]}" PLACEMENT="$placement" -- env -0 >"$TEST_DIR/parent/$placement.node0"
  in_env "${vars1[@]}" PLACEMENT="$placement" -- env -0 >"$TEST_DIR/parent/$placement.node1"
  in_env "${vars0[@]}" PLACEMENT="$placement" -- timeout -k 5 "$RUN_LIMIT" "$DLAUNCH" run "${args0[@]}" \
    --rdzv-timeout 60 "$ENV_WORKER" >"$TEST_DIR/$placement.node0.out" 2>"$TEST_DIR/$placement.node0.err" &
  node=$!
  in_env "${vars1[@]}" PLACEMENT="$placement" -- timeout -k 5 "$RUN_LIMIT" "$DLAUNCH" run "${args1[@]}" \
    --rdzv-timeout 60 "$ENV_WORKER" >"$OUT" 2>"$ERR"
  STATUS=$?
  expect_eq "node 1 exits 0" 0 "$STATUS"
  [ "$STATUS" = 0 ] || show_last_output
  wait_pid 60 "$node"
  expect_eq "node 0 exits 0" 0 "$STATUS"
  [ "$STATUS" = 0 ] || tail -n 20 "$TEST_DIR/$placement.node0.err" | sed 's/^/        | /'
  expect_eq "4 workers wrote their environment" 4 "$(find "$TEST_DIR/envs/$placement" -type f | wc -l)"
}

SKY_IPS=$'127.0.0.1\n127.0.0.1'
port=$(free_port)
# Zero flags. The rendezvous port is PET_MASTER_PORT, not SkyPilot's default
# 29500: another test on this machine may hold 29500 (dlaunch env below shows
# the default).
two_nodes skypilot \
  "SKYPILOT_NODE_IPS=$SKY_IPS" SKYPILOT_NODE_RANK=0 SKYPILOT_NUM_NODES=2 SKYPILOT_NUM_GPUS_PER_NODE=2 \
  PET_MASTER_PORT="$port" -- \
  "SKYPILOT_NODE_IPS=$SKY_IPS" SKYPILOT_NODE_RANK=1 SKYPILOT_NUM_NODES=2 SKYPILOT_NUM_GPUS_PER_NODE=2 \
  PET_MASTER_PORT="$port" -- -- 
port=$(free_port)
flags=(--nnodes 2 --master-addr 127.0.0.1 --nproc-per-node 2 --master-port "$port")
two_nodes flags -- -- "${flags[@]}" --node-rank 0 -- "${flags[@]}" --node-rank 1
port=$(free_port)
pet=(PET_NNODES=2 PET_MASTER_ADDR=127.0.0.1 PET_NPROC_PER_NODE=2 PET_MASTER_PORT="$port")
two_nodes pet "${pet[@]}" PET_NODE_RANK=0 -- "${pet[@]}" PET_NODE_RANK=1 -- --

# What a launcher adds to its workers' environment is what differs from its
# parent's; the two placements must add the same, variable by variable.
# MASTER_PORT is the free port node 0 picked for the workers and
# TORCHELASTIC_ERROR_FILE lies in each run's own log folder: present in
# both, their values may differ.
cat >"$TEST_DIR/compare.py" <<'EOF'
import os, sys

folder, theirs_name, ours_name = sys.argv[1:4]
may_differ = {"MASTER_PORT", "TORCHELASTIC_ERROR_FILE"}

def read(path):
    entries = open(path, "rb").read().decode(errors="replace").split("\0")
    return dict(entry.split("=", 1) for entry in entries if "=" in entry)

def added(placement):
    parents = [read(f"{folder}/parent/{placement}.node{node}") for node in (0, 1)]
    workers = {}
    for name in os.listdir(f"{folder}/envs/{placement}"):
        env = read(f"{folder}/envs/{placement}/{name}")
        parent = parents[int(env.get("GROUP_RANK", "0"))]
        workers[name] = {key: value for key, value in env.items() if parent.get(key) != value and key != "_"}
    return workers

theirs, ours = added(theirs_name), added(ours_name)
print(("PASS|" if sorted(theirs) == sorted(ours) else "FAIL|") + f"the same ranks ran|{sorted(theirs)} vs {sorted(ours)}")
for rank in sorted(set(theirs) & set(ours)):
    a, b = theirs[rank], ours[rank]
    missing = sorted(set(a) ^ set(b))
    print(("PASS|" if not missing else "FAIL|") + f"{rank}: the same {len(a)} variables added|only in one: {missing}")
    differing = [f"{key}: {theirs_name} {a[key]!r}, {ours_name} {b[key]!r}"
                 for key in sorted(set(a) & set(b)) if key not in may_differ and a[key] != b[key]]
    print(("PASS|" if not differing else "FAIL|") + f"{rank}: equal values|" + "; ".join(differing))
    print(f"INFO|{rank}: compared " + " ".join(f"{key}={a[key]}" for key in sorted(a) if key not in may_differ))
EOF

# compare THEIRS OURS: compare.py's verdicts as checks.
compare() {
  local kind check detail
  while IFS='|' read -r kind check detail; do
    case $kind in
      PASS) pass "$2 vs $1: $check" ;;
      FAIL) fail "$2 vs $1: $check" "$detail" ;;
      INFO) say "  info  $check" ;;
      *) fail "compare.py said: $kind $check" ;;
    esac
  done < <("$PY" "$TEST_DIR/compare.py" "$TEST_DIR" "$1" "$2" 2>&1)
}

section "every worker gets the same environment from SKYPILOT_* as from the flags"
compare flags skypilot
section "... and from PET_* as from the flags"
compare flags pet

section "dlaunch env names SkyPilot's variables, and torchrun's default port"
in_env "SKYPILOT_NODE_IPS=$SKY_IPS" SKYPILOT_NODE_RANK=1 SKYPILOT_NUM_NODES=2 SKYPILOT_NUM_GPUS_PER_NODE=2 -- \
  timeout -k 5 "$BOUND" "$DLAUNCH" env >"$OUT" 2>"$ERR"
expect_eq "dlaunch env exits 0" 0 "$?"
for shown in "(SKYPILOT_NUM_NODES)" "(SKYPILOT_NODE_RANK)" "(SKYPILOT_NUM_GPUS_PER_NODE)" \
  "(first of SKYPILOT_NODE_IPS)"; do
  expect_contains "shows $shown" "$(cat "$OUT")" "$shown"
done
expect_true "rendezvous port 29500" grep -Eq '^ *rendezvous port +29500 ' "$OUT"
no_leftovers
finish
