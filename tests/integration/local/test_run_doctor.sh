#!/bin/bash
# dlaunch run: the failure doctor (issue 27). A bug that fails the same way
# on every attempt stops after the second with exit code 3 (do not
# requeue), naming the root rank, its exception and its file:line; a
# failure that does not repeat is still restarted; --retry-repeated-failures
# spends every restart; a cascade (peers that lose their connection, ranks
# stopped by dlaunch) is counted behind its root; and node 0's service
# applies the same rule across two launchers.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

PYTHON=/usr/bin/python3
require_command "$PYTHON"

# Each worker notes its attempt; rank $BAD_RANK raises the same ValueError
# in load_config on every attempt (or only on attempt 0 with ONLY_FIRST=1),
# the others wait to be stopped.
BUGGY=$TEST_DIR/buggy.py
cat >"$BUGGY" <<'EOF_PY'
import os, sys, time

def load_config(rank):
    raise ValueError(f"learning rate must be positive (rank {rank})")

rank = int(os.environ["RANK"])
attempt = os.environ["TORCHELASTIC_RESTART_COUNT"]
open(os.path.join(os.environ["DIR"], f"attempt.{attempt}.{rank}"), "w").close()
if rank == int(os.environ["BAD_RANK"]) and (os.environ.get("ONLY_FIRST") != "1" or attempt == "0"):
    load_config(rank)
if os.environ.get("ONLY_FIRST") == "1":
    sys.exit(0)
time.sleep(300)
EOF_PY
LOAD_CONFIG_LINE=4  # the raise in load_config

# Distinct attempts any rank started in (the failing rank always does; a
# peer may be stopped before Python has run a line).
attempts_made() { find "$TEST_DIR" -maxdepth 1 -name "attempt.*" -printf '%f\n' | cut -d. -f2 | sort -u | wc -l; }
reset_markers() { rm -f "$TEST_DIR"/attempt.* "$TEST_DIR"/closed.*; }
export DIR=$TEST_DIR

section "(a) rank 2 of 4 raises the same ValueError on every attempt: two attempts, exit 3"
reset_markers
BAD_RANK=2 expect_exit 3 "$DLAUNCH" run --nproc-per-node 4 --max-restarts 5 --log-dir "$TEST_DIR/logs_a" \
  -- "$PYTHON" "$BUGGY"
expect_eq "two attempts were made, not six" 2 "$(attempts_made)"
summary=$(cat "$ERR")
expect_contains "the root is rank 2's ValueError at its line" "$summary" \
  "root cause: rank 2: ValueError at $BUGGY:$LOAD_CONFIG_LINE: learning rate must be positive (rank 2)"
expect_contains "the other ranks are counted as its cascade" "$summary" "3 ranks failed as a consequence"
expect_contains "dlaunch says why it does not retry" "$summary" \
  "not retrying: the same ValueError at $BUGGY:$LOAD_CONFIG_LINE in attempts 0 and 1"
expect_contains "the root's traceback is shown" "$summary" "in load_config"
expect_exit 0 "$DLAUNCH" status "$TEST_DIR/logs_a"
expect_contains "status leads with the root" "$(cat "$OUT")" "root cause: rank 2: ValueError at $BUGGY:$LOAD_CONFIG_LINE"
expect_exit 0 "$DLAUNCH" status "$TEST_DIR/logs_a" --json
root=$("$PYTHON" -c 'import json, sys; r = json.load(sys.stdin)["root"]
print(r["rank"], r["kind"], r["exception"], r["line"], r["consequences"], r["traceback"][-1])' <"$OUT")
expect_eq "status --json has the root" "2 python_exception ValueError $LOAD_CONFIG_LINE 3 ValueError: learning rate must be positive (rank 2)" "$root"
no_leftovers

section "(b) a failure on attempt 0 only is restarted and the job completes"
reset_markers
BAD_RANK=1 ONLY_FIRST=1 expect_exit 0 "$DLAUNCH" run --nproc-per-node 4 --max-restarts 5 -- "$PYTHON" "$BUGGY"
expect_eq "two attempts were made" 2 "$(attempts_made)"
no_leftovers

section "(c) --retry-repeated-failures: all six attempts run, as torchrun would"
reset_markers
BAD_RANK=2 expect_exit 1 "$DLAUNCH" run --nproc-per-node 4 --max-restarts 5 --retry-repeated-failures \
  -- "$PYTHON" "$BUGGY"
expect_eq "six attempts were made" 6 "$(attempts_made)"
expect_not_contains "no deterministic stop" "$(cat "$ERR")" "not retrying"
no_leftovers

section "(d) a cascade: rank 0 raises, rank 1 loses its peer first, ranks 2 and 3 are stopped"
# Rank 0 prints its traceback and tears down slowly; rank 1 notices first
# and exits with gloo's message, so the first exit is a consequence.
CASCADE=$TEST_DIR/cascade.py
cat >"$CASCADE" <<'EOF_PY'
import os, sys, time, traceback

def train_step():
    raise ValueError("shape mismatch: (8, 512) vs (8, 256)")

rank = int(os.environ["RANK"])
closed = os.path.join(os.environ["DIR"], "closed.0")
if rank == 0:
    try:
        train_step()
    except ValueError:
        traceback.print_exc()
        sys.stderr.flush()
        open(closed, "w").close()
        time.sleep(30)
        sys.exit(1)
if rank == 1:
    while not os.path.exists(closed):
        time.sleep(0.02)
    print("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
          "[127.0.0.1]:29500", file=sys.stderr)
    sys.exit(1)
time.sleep(300)
EOF_PY
reset_markers
expect_exit nonzero "$DLAUNCH" run --nproc-per-node 4 -- "$PYTHON" "$CASCADE"
summary=$(cat "$ERR")
expect_contains "the root is rank 0's exception, not rank 1's lost peer" "$summary" \
  "root cause: rank 0: ValueError at $CASCADE:4: shape mismatch"
expect_contains "the three others are its cascade" "$summary" "3 ranks failed as a consequence"
no_leftovers

section "(e) two launchers: node 0's service stops the repeated ValueError of rank 2 after two attempts"
reset_markers
port=$(free_port)
node_args=(--nnodes 2 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60
  --max-restarts 5)
BAD_RANK=2 timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${node_args[@]}" --node-rank 0 -- "$PYTHON" "$BUGGY" \
  >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
node0=$!
BAD_RANK=2 timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${node_args[@]}" --node-rank 1 -- "$PYTHON" "$BUGGY" \
  >"$TEST_DIR/node1.out" 2>"$TEST_DIR/node1.err"
status1=$?
wait "$node0"
status0=$?
expect_eq "node 0's launcher exits 3" 3 "$status0"
expect_eq "node 1's launcher exits 3" 3 "$status1"
expect_eq "two attempts were made" 2 "$(attempts_made)"
node0_err=$(cat "$TEST_DIR/node0.err")
expect_contains "node 0's summary names rank 2's ValueError as root" "$node0_err" \
  "root cause: rank 2: ValueError at $BUGGY:$LOAD_CONFIG_LINE"
expect_contains "node 0 says why it does not retry" "$node0_err" "not retrying: the same ValueError"
expect_contains "both nodes' stopped ranks are counted (protocol 11)" "$node0_err" "3 ranks failed as a consequence"
no_leftovers

finish
