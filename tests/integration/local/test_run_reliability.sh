#!/bin/bash
# dlaunch run: the authenticated rendezvous and the heartbeat, with real
# launchers on loopback. Strangers (no token, a wrong token, random bytes, a
# connection that stalls mid-message) are refused while the job starts for
# its own launchers; a frozen launcher (SIGSTOP: its TCP connection stays
# open, as when a host hangs) is noticed within --heartbeat-timeout, on node
# 0 and on the other nodes, and nothing of the job is left afterwards. A
# failure on one node restarts every node's workers (--max-restarts).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
OTHER_TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
TRUE_WORKER=$(write_worker true.sh <<'EOF'
exit 0
EOF
)
# Marks itself started, then runs until stopped.
LONG_WORKER=$(write_worker long.sh <<'EOF'
touch "$DIR/started.$RANK"
marked_sleep 300
EOF
)

# node0 ARGS...: starts node 0 in the background (pid in NODE0), output in node0.{out,err}.
node0() {
  timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run --nnodes 2 --node-rank 0 --master-addr 127.0.0.1 \
    --master-port "$port" "$@" >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
  NODE0=$!
}

section "with a token: launchers without it or with another are refused, the job still runs"
port=$(free_port)
common=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 60)
DLAUNCH_RDZV_TOKEN=$TOKEN node0 --nproc-per-node 1 --rdzv-timeout 60 -- "$TRUE_WORKER"
expect_exit nonzero env -u DLAUNCH_RDZV_TOKEN "$DLAUNCH" run "${common[@]}" --node-rank 1 -- "$TRUE_WORKER"
expect_contains "no token: this node is told what to give" "$(cat "$ERR")" \
  "node 0's rendezvous requires a token and node 1 has none"
# A launcher with another token cannot tell node 0 from a stranger holding
# its port (node 0 cannot seal its refusal): it says what it saw at once and
# keeps trying until its --rdzv-timeout.
expect_exit nonzero env DLAUNCH_RDZV_TOKEN="$OTHER_TOKEN" "$DLAUNCH" run "${common[@]:0:8}" --node-rank 1 \
  --rdzv-timeout 2 -- "$TRUE_WORKER"
expect_contains "wrong token: refused" "$(cat "$ERR")" "its rendezvous token is wrong"
expect_contains "wrong token: the refusal is not believed blindly" "$(cat "$ERR")" \
  "refused this launcher without proving it holds the job's token"
expect_eq "wrong token: said once, not once per try" 1 "$(grep -c "trying again until" "$ERR")"
expect_not_contains "the token never appears in messages" "$(cat "$ERR")" "$OTHER_TOKEN"
# Random bytes, and a connection that stops halfway through a frame header.
head -c 4096 /dev/urandom >"/dev/tcp/127.0.0.1/$port" 2>/dev/null
exec 7<>"/dev/tcp/127.0.0.1/$port"
printf 'DLRV\000' >&7
expect_exit 0 env DLAUNCH_RDZV_TOKEN="$TOKEN" "$DLAUNCH" run "${common[@]}" --node-rank 1 -- "$TRUE_WORKER"
exec 7>&-
wait_pid 60 "$NODE0"
expect_eq "node 0 ran the job with its own node 1 (exit 0)" 0 "$STATUS"
node0_log=$(cat "$TEST_DIR/node0.err")
expect_contains "node 0 logged the launcher without a token" "$node0_log" "presented no rendezvous token"
expect_contains "node 0 logged the wrong token" "$node0_log" "its rendezvous token is wrong"
expect_contains "node 0 logged the random bytes" "$node0_log" "not a dlaunch rendezvous peer"
expect_not_contains "node 0 never logs a token" "$node0_log" "$TOKEN"
no_leftovers

section "a token file readable by others is refused before anything starts"
printf '%s\n' "$TOKEN" >"$TEST_DIR/token"
chmod 644 "$TEST_DIR/token"
expect_exit 2 "$DLAUNCH" run --nnodes 2 --node-rank 1 --master-addr 127.0.0.1 --master-port 1 \
  --rdzv-token-file "$TEST_DIR/token" -- "$TRUE_WORKER"
expect_contains "the message says what to do" "$(cat "$ERR")" "run chmod 600 on it"
no_leftovers

section "SIGKILL to the launcher's whole process group leaves no worker or worker child"
rm -f "$TEST_DIR"/started.*
PARENT_WORKER=$(write_worker parent.sh <<'EOF'
(exec -a "$0.child" sleep 300) &
touch "$DIR/started.$RANK"
wait
EOF
)
setsid "$DLAUNCH" run --nproc-per-node 2 -- "$PARENT_WORKER" >"$TEST_DIR/group.out" 2>&1 &
launcher=$!
wait_for_files 30 "$TEST_DIR/started.0" "$TEST_DIR/started.1" || fail "both workers started"
kill -KILL -- "-$launcher"
wait "$launcher" 2>/dev/null
no_leftovers "the watchdog (in a group of its own) killed the workers' groups"

# freeze_case WHO: both nodes run LONG_WORKER; WHO's launcher is frozen with
# SIGSTOP once every worker started; the other launcher must stop its
# workers and exit 1 within the heartbeat timeout, naming the frozen node.
HEARTBEAT=3
freeze_case() {
  local who=$1 other
  rm -f "$TEST_DIR"/started.*
  port=$(free_port)
  common=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port"
    --heartbeat-timeout "$HEARTBEAT" --shutdown-timeout 5)
  timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 0 -- "$LONG_WORKER" \
    >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
  local pids=($!)
  timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 1 -- "$LONG_WORKER" \
    >"$TEST_DIR/node1.out" 2>"$TEST_DIR/node1.err" &
  pids+=($!)
  wait_for_files 30 "$TEST_DIR/started.0" "$TEST_DIR/started.1" || fail "the workers of both nodes started"
  # The launcher is timeout's child: freeze the dlaunch process itself.
  local frozen
  frozen=$(pgrep -P "${pids[$who]}" -x dlaunch)
  other=$((1 - who))
  start_clock
  kill -STOP "$frozen"
  wait_pid $((HEARTBEAT * 5)) "${pids[$other]}"
  stop_clock
  expect_eq "node $other's launcher exits 1" 1 "$STATUS"
  expect_within "it notices within the heartbeat timeout (+ its shutdown)" $((HEARTBEAT * 3))
  expect_contains "node $other names the silent node" "$(cat "$TEST_DIR/node$other.err")" \
    "node $who ($( [ "$who" = 0 ] && echo "127.0.0.1:$port" || hostname)) sent nothing for $HEARTBEAT s"
  # Thawed, the frozen launcher finds itself alone and ends its part too.
  kill -CONT "$frozen"
  wait_pid 30 "${pids[$who]}"
  expect_true "node $who's launcher exits non-zero once thawed" [ "$STATUS" != 0 ]
  no_leftovers
}

section "--max-restarts across nodes: a failure on node 2 restarts the workers of all three nodes"
rm -f "$TEST_DIR"/seen.* "$TEST_DIR"/started.*
FLAKY=$(write_worker flaky.sh <<'EOF'
echo "$TORCHELASTIC_RESTART_COUNT" >>"$DIR/seen.$RANK"
[ "$TORCHELASTIC_RESTART_COUNT" = 0 ] || exit 0
if [ "$RANK" = 2 ]; then
  wait_files "$DIR/started.0" "$DIR/started.1"
  echo "rank 2 fails in the first round"
  exit 4
fi
touch "$DIR/started.$RANK"
marked_sleep 300
EOF
)
port=$(free_port)
common=(--nnodes 3 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" --max-restarts 1)
pids=()
for node in 0 1 2; do
  timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank "$node" -- "$FLAKY" \
    >"$TEST_DIR/node$node.out" 2>"$TEST_DIR/node$node.err" &
  pids+=($!)
done
for node in 0 1 2; do
  wait_pid 60 "${pids[$node]}"
  expect_eq "node $node's launcher exits 0 after the restart" 0 "$STATUS"
  expect_eq "rank $node ran in rounds 0 and 1" "0 1" "$(tr '\n' ' ' <"$TEST_DIR/seen.$node" | sed 's/ $//')"
done
expect_contains "node 0 reports the restart and its cause" "$(cat "$TEST_DIR/node0.err")" \
  "rank 2 (local rank 0) on $(hostname) (node 2) exited with code 4; restarting every worker (restart 1 of 1)"
expect_eq "the restart is reported once for the job, by node 0" 1 \
  "$(cat "$TEST_DIR"/node[012].err | grep -c "restarting every worker")"
no_leftovers

section "a frozen node 1 (its host hung) is noticed by node 0 within --heartbeat-timeout"
freeze_case 1

section "a frozen node 0 is noticed by node 1 within --heartbeat-timeout"
freeze_case 0

finish
