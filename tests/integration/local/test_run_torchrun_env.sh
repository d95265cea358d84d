#!/bin/bash
# dlaunch run gives its workers the environment torchrun gives them. The
# same script (examples/print_env.py) runs under Debian's torchrun and under
# dlaunch; the variables torchrun adds are found by diffing its workers'
# environment against the parent's, so a variable torchrun sets and dlaunch
# does not is caught. Values must be equal per rank, except MASTER_PORT,
# TORCHELASTIC_RUN_ID and TORCHELASTIC_ERROR_FILE (present, may differ).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TORCHRUN=/usr/bin/torchrun
[ -x "$TORCHRUN" ] || skip "$TORCHRUN is not installed"
require_torch

# Both launchers decide OMP_NUM_THREADS themselves (1 for several workers).
unset OMP_NUM_THREADS NCCL_ASYNC_ERROR_HANDLING
# The script's copy lives in the test folder: its path carries the marker.
SCRIPT=$TEST_DIR/print_env.py
cp "$DLAUNCH_SOURCE_DIR/examples/print_env.py" "$SCRIPT"

# The variables the brief of torchrun compatibility names; torchrun must add
# them all (else this torchrun differs from the one the test was written for).
DOCUMENTED="LOCAL_RANK RANK GROUP_RANK ROLE_RANK ROLE_NAME LOCAL_WORLD_SIZE WORLD_SIZE
GROUP_WORLD_SIZE ROLE_WORLD_SIZE MASTER_ADDR MASTER_PORT TORCHELASTIC_RESTART_COUNT
TORCHELASTIC_MAX_RESTARTS TORCHELASTIC_RUN_ID TORCHELASTIC_USE_AGENT_STORE
TORCHELASTIC_ERROR_FILE OMP_NUM_THREADS NCCL_ASYNC_ERROR_HANDLING"
MAY_DIFFER="MASTER_PORT TORCHELASTIC_RUN_ID TORCHELASTIC_ERROR_FILE"

# Compares the workers' environments. Prints "PASS|check" or
# "FAIL|check|detail" lines, and "INFO|text".
cat >"$TEST_DIR/compare.py" <<'EOF'
import json, re, sys

parent_file, torchrun_file, dlaunch_file, documented, may_differ = sys.argv[1:6]
documented, may_differ = documented.split(), set(may_differ.split())

def report(ok, check, detail=""):
    print(("PASS|" if ok else "FAIL|") + check + ("|" + detail if detail else ""))

def worker_environments(path):
    found = {}
    for line in open(path, errors="replace"):
        match = re.match(r"^\[(?:default|rank)(\d+)\]:env (\S+) (\{.*\})$", line.rstrip("\n"))
        if match:
            found[int(match.group(1))] = json.loads(match.group(3))
    return found

parent = json.loads(open(parent_file).read().split(" ", 2)[2])
torchrun = worker_environments(torchrun_file)
dlaunch = worker_environments(dlaunch_file)
report(sorted(torchrun) == [0, 1], "torchrun's 2 workers printed their environment", f"got ranks {sorted(torchrun)}")
report(sorted(dlaunch) == [0, 1], "dlaunch's 2 workers printed their environment", f"got ranks {sorted(dlaunch)}")

# "_" is the shell's record of the last command it ran, not a launcher's variable.
added = sorted({name for env in torchrun.values() for name, value in env.items()
                if parent.get(name) != value and name != "_"})
print("INFO|torchrun adds: " + " ".join(added))
missing_in_torchrun = [name for name in documented if name not in added]
report(not missing_in_torchrun, "torchrun adds every documented variable", f"not added: {missing_in_torchrun}")

for rank in sorted(set(torchrun) & set(dlaunch)):
    theirs, ours = torchrun[rank], dlaunch[rank]
    absent = [name for name in added if name in theirs and name not in ours]
    report(not absent, f"rank {rank}: dlaunch sets every variable torchrun adds", f"absent: {absent}")
    differing = [f"{name}: torchrun {theirs[name]!r}, dlaunch {ours[name]!r}"
                 for name in added
                 if name in theirs and name in ours and name not in may_differ and theirs[name] != ours[name]]
    report(not differing, f"rank {rank}: equal values ({len(added) - len(may_differ)} variables)", "; ".join(differing))
    removed = [name for name in parent if name not in ours and name in theirs]
    report(not removed, f"rank {rank}: dlaunch keeps the parent's variables", f"dropped: {removed}")
    error_file = ours.get("TORCHELASTIC_ERROR_FILE", "")
    report(error_file.endswith("error.json"), f"rank {rank}: TORCHELASTIC_ERROR_FILE names an error.json", error_file)
    extra = sorted(name for name, value in ours.items()
                   if parent.get(name) != value and name not in added and name != "_")
    if extra:
        print(f"INFO|rank {rank}: dlaunch also sets: " + " ".join(extra))

for name, launcher in (("torchrun", torchrun), ("dlaunch", dlaunch)):
    for variable in ("MASTER_PORT", "TORCHELASTIC_RUN_ID"):
        values = {env.get(variable) for env in launcher.values()}
        report(len(values) == 1 and None not in values, f"{name}: one {variable} for all ranks", f"got {values}")

if dlaunch:
    print("INFO|dlaunch's TORCHELASTIC_MAX_RESTARTS: " + dlaunch[0].get("TORCHELASTIC_MAX_RESTARTS", "-"))
EOF

# compare LABEL TORCHRUN_OUTPUT DLAUNCH_OUTPUT: turns compare.py's verdicts into checks.
compare() {
  local kind check detail
  while IFS='|' read -r kind check detail; do
    case $kind in
      PASS) pass "$1: $check" ;;
      FAIL) fail "$1: $check" "$detail" ;;
      INFO) say "  info  $1: $check" ;;
      *) fail "$1: compare.py said: $kind $check" ;;
    esac
  done < <("$PY" "$TEST_DIR/compare.py" "$TEST_DIR/parent.env" "$2" "$3" "$DOCUMENTED" "$MAY_DIFFER" 2>&1)
}

# The parent's environment: the script run directly, in the same shell.
"$PY" "$SCRIPT" >"$TEST_DIR/parent.env"

# run_both LABEL EXTRA_TORCHRUN_ARGS...: runs the script under both launchers.
run_both() {
  local label=$1
  shift
  section "$label: torchrun vs dlaunch"
  # Debian's torchrun 1.13 takes only underscore flags and needs -r 1 -t 1.
  expect_exit 0 "$TORCHRUN" --standalone --nproc_per_node 2 -r 1 -t 1 "$@" "$SCRIPT"
  cat "$OUT" "$ERR" >"$TEST_DIR/torchrun.$label"
  expect_exit 0 "$DLAUNCH" run --standalone --nproc-per-node 2 --python "$PY" "$@" "$SCRIPT"
  cat "$OUT" "$ERR" >"$TEST_DIR/dlaunch.$label"
  compare "$label" "$TEST_DIR/torchrun.$label" "$TEST_DIR/dlaunch.$label"
  no_leftovers
}

run_both defaults
run_both max_restarts_2 --max_restarts 2
expect_contains "dlaunch with --max_restarts 2: TORCHELASTIC_MAX_RESTARTS=2" \
  "$(cat "$TEST_DIR/dlaunch.max_restarts_2")" '"TORCHELASTIC_MAX_RESTARTS": "2"'

section "dlaunch with the dashed spelling --max-restarts 2"
expect_exit 0 "$DLAUNCH" run --standalone --nproc-per-node 2 --max-restarts 2 --python "$PY" "$SCRIPT" --torchrun-only
expect_contains "TORCHELASTIC_MAX_RESTARTS=2" "$(cat "$OUT")" '"TORCHELASTIC_MAX_RESTARTS": "2"'
expect_contains "--torchrun-only prints the variables" "$(cat "$OUT")" '[rank1]:env 1 {"GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1", "LOCAL_RANK": "1"'
no_leftovers

finish
