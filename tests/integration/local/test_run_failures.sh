#!/bin/bash
# dlaunch run: failures and signals. A failing worker stops the others (on
# one node and across nodes), a worker killed by a signal, signals sent to
# the launcher (stopped, forwarded, SIGKILL), a worker that ignores SIGTERM,
# a program that does not exist, and restarts. After every case nothing of
# the test may be left running.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

reset_markers() { rm -f "$TEST_DIR"/started.* "$TEST_DIR"/term.* "$TEST_DIR"/usr1.* "$TEST_DIR"/seen.*; }

# Workers of the "one fails, the others are stopped" cases: the worker whose
# RANK is $FAIL_RANK waits until every other worker has started (so each has
# its SIGTERM trap in place), then exits 3; the others record SIGTERM.
STOPPABLE=$(write_worker stoppable.sh <<'EOF'
trap 'echo term > "$DIR/term.$RANK"; exit 143' TERM
if [ "$RANK" = "$FAIL_RANK" ]; then
  others=()
  for ((r = 0; r < WORLD_SIZE; r++)); do
    [ "$r" = "$RANK" ] || others+=("$DIR/started.$r")
  done
  wait_files "${others[@]}"
  echo "rank $RANK fails now"
  exit 3
fi
touch "$DIR/started.$RANK"
marked_sleep 300
echo "rank $RANK was not stopped" >&2
exit 0
EOF
)

section "(a) one worker of four exits 3: the others get SIGTERM, dlaunch exits 3"
reset_markers
FAIL_RANK=2 expect_exit 3 "$DLAUNCH" run --nproc-per-node 4 -- "$STOPPABLE"
for rank in 0 1 3; do expect_file "rank $rank received SIGTERM" "$TEST_DIR/term.$rank"; done
summary=$(cat "$ERR")
expect_contains "summary names the failed rank" "$summary" "first failure: rank 2 (local rank 2)"
expect_contains "summary gives its exit code" "$summary" "exit code   3"
expect_contains "summary shows its last output" "$summary" "rank 2 fails now"
no_leftovers

section "(b) two nodes: node 1's worker (rank 3) exits 3, both launchers stop"
reset_markers
port=$(free_port)
node_args=(--nnodes 2 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60)
FAIL_RANK=3 timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${node_args[@]}" --node-rank 0 -- "$STOPPABLE" \
  >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
node0=$!
FAIL_RANK=3 timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${node_args[@]}" --node-rank 1 -- "$STOPPABLE" \
  >"$TEST_DIR/node1.out" 2>"$TEST_DIR/node1.err"
status1=$?
wait "$node0"
status0=$?
expect_eq "node 1's launcher exits 3" 3 "$status1"
expect_eq "node 0's launcher exits 3 too" 3 "$status0"
for rank in 0 1 2; do expect_file "rank $rank received SIGTERM" "$TEST_DIR/term.$rank"; done
expect_contains "node 0's summary names rank 3" "$(cat "$TEST_DIR/node0.err")" "first failure: rank 3 (local rank 1)"
expect_contains "node 0's summary gives the exit code" "$(cat "$TEST_DIR/node0.err")" "exit code   3"
# Once per job: node 1 adds nothing, since node 0's summary names its worker.
expect_not_contains "node 1 prints no summary of its own" "$(cat "$TEST_DIR/node1.err")" "job failed"
no_leftovers

section "(c) a worker killed by SIGKILL: exit 137, the summary says SIGKILL"
SUICIDE=$(write_worker suicide.sh <<'EOF'
trap 'exit 143' TERM
if [ "$RANK" = 1 ]; then
  wait_files "$DIR/started.0"
  kill -9 $$
fi
touch "$DIR/started.$RANK"
marked_sleep 300
EOF
)
reset_markers
expect_exit 137 "$DLAUNCH" run --nproc-per-node 2 -- "$SUICIDE"
summary=$(cat "$ERR")
expect_contains "summary names rank 1" "$summary" "first failure: rank 1"
expect_contains "summary says SIGKILL" "$summary" "SIGKILL"
no_leftovers

# Workers that record the signals they get and otherwise wait a long time.
SIGNALLED=$(write_worker signalled.sh <<'EOF'
trap 'echo term > "$DIR/term.$RANK"; exit 143' TERM
trap 'echo usr1 > "$DIR/usr1.$RANK"' USR1
# A grandchild in the worker's group, to be cleaned up with it.
(exec -a "$0.grandchild" sleep 300) &
touch "$DIR/started.$RANK"
# Until SIGUSR1 arrives (short sleeps: a signal that lands between the test
# and the wait costs at most one of them).
until [ -e "$DIR/usr1.$RANK" ]; do marked_sleep 0.2; done
echo "rank $RANK continues after SIGUSR1"
kill %1 2>/dev/null
exit 0
EOF
)
started_files() { local r; for ((r = 0; r < $1; r++)); do printf '%s\n' "$TEST_DIR/started.$r"; done; }

section "(d) SIGTERM to the launcher: every worker gets SIGTERM, dlaunch exits 143"
reset_markers
"$DLAUNCH" run --nproc-per-node 3 -- "$SIGNALLED" >"$OUT" 2>"$ERR" &
launcher=$!
mapfile -t started < <(started_files 3)
if wait_for_files 60 "${started[@]}"; then pass "all 3 workers started"; else fail "all 3 workers started"; fi
kill -TERM "$launcher"
wait_pid 60 "$launcher"
expect_eq "dlaunch exits 143" 143 "$STATUS"
for rank in 0 1 2; do expect_file "rank $rank received SIGTERM" "$TEST_DIR/term.$rank"; done
expect_contains "the summary says the launcher got SIGTERM" "$(cat "$ERR")" "received SIGTERM"
no_leftovers "no worker nor grandchild is left"

section "(e) SIGKILL to the launcher: no worker survives, nor a worker's child"
reset_markers
"$DLAUNCH" run --nproc-per-node 2 -- "$SIGNALLED" >"$OUT" 2>"$ERR" &
launcher=$!
mapfile -t started < <(started_files 2)
if wait_for_files 60 "${started[@]}"; then pass "both workers started"; else fail "both workers started"; fi
# The grandchild shows its marked name once its subshell has exec'd sleep.
# shellcheck disable=SC2317  # called through wait_until
two_grandchildren() { [ "$(pgrep -f "$MARK.*grandchild" | wc -l)" -eq 2 ]; }
expect_true "each worker has its grandchild running" wait_until 10 two_grandchildren
kill -KILL "$launcher"
wait "$launcher" 2>/dev/null
no_leftovers "no worker nor grandchild survives the launcher"

section "(f) SIGUSR1 to the launcher is forwarded and the job goes on"
reset_markers
"$DLAUNCH" run --nproc-per-node 2 -- "$SIGNALLED" >"$OUT" 2>"$ERR" &
launcher=$!
mapfile -t started < <(started_files 2)
if wait_for_files 60 "${started[@]}"; then pass "both workers started"; else fail "both workers started"; fi
kill -USR1 "$launcher"
wait_pid 60 "$launcher"
expect_eq "dlaunch exits 0" 0 "$STATUS"
for rank in 0 1; do
  expect_file "rank $rank received SIGUSR1" "$TEST_DIR/usr1.$rank"
  expect_contains "rank $rank went on" "$(cat "$OUT")" "[rank$rank]:rank $rank continues after SIGUSR1"
done
no_leftovers

section "(g) --shutdown-timeout 1: a worker that survives SIGTERM is SIGKILLed"
STUBBORN=$(write_worker stubborn.sh <<'EOF'
if [ "$RANK" = 1 ]; then
  wait_files "$DIR/started.0"
  exit 3
fi
# Rank 0 notes SIGTERM and carries on; only SIGKILL ends it.
trap 'echo term >> "$DIR/term.$RANK"' TERM
touch "$DIR/started.$RANK"
while :; do marked_sleep 300; done
EOF
)
reset_markers
expect_exit 3 "$DLAUNCH" run --nproc-per-node 2 --shutdown-timeout 1 -- "$STUBBORN"
expect_file "rank 0 received SIGTERM and went on" "$TEST_DIR/term.0"
expect_contains "summary names rank 1" "$(cat "$ERR")" "first failure: rank 1"
no_leftovers "the stubborn worker was killed"

section "(h) a program that does not exist"
missing=$TEST_DIR/no_such_program
expect_exit nonzero "$DLAUNCH" run --nproc-per-node 2 -- "$missing" --flag
expect_contains "the error names the program" "$(cat "$ERR")" "$missing"
expect_exit nonzero "$DLAUNCH" run --nproc-per-node 2 -- "no_such_program_$MARK"
expect_contains "the error names a program not in PATH" "$(cat "$ERR")" "no_such_program_$MARK"
NOT_EXECUTABLE=$TEST_DIR/not_executable.sh
printf 'echo hi\n' >"$NOT_EXECUTABLE"
expect_exit nonzero "$DLAUNCH" run --nproc-per-node 2 -- "$NOT_EXECUTABLE"
expect_contains "the error names a file that is not executable" "$(cat "$ERR")" "$NOT_EXECUTABLE"
# Executable, but exec itself fails (its interpreter is missing): found only
# after the workers were forked, so the ones already started must be stopped.
BAD_SHEBANG=$TEST_DIR/bad_shebang.sh
printf '#!%s/no/such/interpreter\necho hi\n' "$TEST_DIR" >"$BAD_SHEBANG"
chmod +x "$BAD_SHEBANG"
expect_exit 1 "$DLAUNCH" run --nproc-per-node 3 -- "$BAD_SHEBANG"
expect_contains "a failed exec names the program and the reason" "$(cat "$ERR")" \
  "cannot execute worker program '$BAD_SHEBANG': No such file or directory"
no_leftovers

section "(i) --max-restarts 2: a worker failing on the first attempt only"
FLAKY=$(write_worker flaky.sh <<'EOF'
echo "$TORCHELASTIC_RESTART_COUNT" >> "$DIR/seen.$RANK"
if [ "$RANK" = 1 ] && [ "$TORCHELASTIC_RESTART_COUNT" = 0 ]; then
  echo "rank 1 fails on attempt 0"
  exit 3
fi
echo "rank $RANK attempt $TORCHELASTIC_RESTART_COUNT max $TORCHELASTIC_MAX_RESTARTS done"
EOF
)
reset_markers
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 --max-restarts 2 -- "$FLAKY"
expect_eq "rank 1 saw restart counts 0 then 1" "0 1" "$(tr '\n' ' ' <"$TEST_DIR/seen.1" | sed 's/ $//')"
expect_contains "the second attempt saw TORCHELASTIC_RESTART_COUNT=1" "$(cat "$OUT")" "[rank1]:rank 1 attempt 1 max 2 done"
expect_contains "dlaunch says it restarts" "$(cat "$ERR")" "restarting every worker (restart 1 of 2)"
no_leftovers

section "(i') --max-restarts 1 with a worker that always fails: gives up with its code"
ALWAYS=$(write_worker always_fails.sh <<'EOF'
echo "$TORCHELASTIC_RESTART_COUNT" >> "$DIR/seen.$RANK"
exit 5
EOF
)
reset_markers
expect_exit 5 "$DLAUNCH" run --nproc-per-node 1 --max-restarts 1 -- "$ALWAYS"
expect_eq "two attempts were made" "0 1" "$(tr '\n' ' ' <"$TEST_DIR/seen.0" | sed 's/ $//')"
no_leftovers

finish
