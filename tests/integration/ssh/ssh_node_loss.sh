#!/usr/bin/env bash
# dlaunch ssh when a host is lost for real, on the ssh test bed (three hosts,
# each a network namespace with its own sshd): the job ends when its
# verdict is in, whatever the lost host does, and nothing lingers anywhere.
#   1  --spare-nodes 1 (2 train), training node 1's host frozen (SIGSTOP of
#      every process on it, its sshd too): the spare takes its place, the
#      job completes, dlaunch ssh exits 0 without waiting for the frozen
#      host's session; thawed, nothing of the job is left there
#   2  the same with training node 1's link cut (eth0 down)
#   3  three hosts, --nnodes 2, a job that ends before the spare joins
#      (/bin/true): dlaunch ssh exits 0 at once, the spare's launcher too
#   4  --nnodes and --spare-nodes that do not add up to the hosts are refused
#      before anything starts; --nnodes 2 --spare-nodes 1 on three hosts is
#      one job (it passed --spare-nodes twice to every host, which refused it)
# ctest brings the bed up first (fixture ssh.up); by hand:
#   tests/ssh/up && bash tests/integration/ssh/ssh_node_loss.sh; tests/ssh/down
. "$(dirname "$0")/../lib.sh"
. "$DLAUNCH_SOURCE_DIR/tests/ssh/lib.sh"
# shellcheck source-path=SCRIPTDIR source=host_checks.sh
. "$(dirname "$0")/host_checks.sh"

[ "$(id -u)" = 0 ] || skip "the ssh test bed needs root"
sshbed_use "${DLAUNCH_SSH_DIR:-}" || skip "no ssh test bed is up in ${DLAUNCH_SSH_DIR:-the default folder} (tests/ssh/up)"
require_command ssh
[ "${#SSHBED_HOSTS[@]}" -ge 3 ] || skip "the bed has ${#SSHBED_HOSTS[@]} hosts; this test needs 3"
SSH_ARGS=(--ssh-arg -F --ssh-arg "$SSHBED_CONFIG")
HEARTBEAT=3
# A safety net, not a timing assertion: dlaunch ssh ends within the
# heartbeat timeout + a minute of the fault.
END_LIMIT=$((HEARTBEAT + 60))
cd "$TEST_DIR" || exit 1

# Attempt 0 says where it runs (started.0.RANK: its host) and waits to be
# stopped; a later attempt says so too and succeeds.
WORKER=$(write_worker loss_worker.sh <<'EOF'
attempt=${TORCHELASTIC_RESTART_COUNT:-0}
hostname >"$DIR/.started.$attempt.$RANK" && mv "$DIR/.started.$attempt.$RANK" "$DIR/started.$attempt.$RANK"
[ "$attempt" != 0 ] && exit 0
trap 'exit 143' TERM
marked_sleep 600
EOF
)

LOST_NS=""
UNDO=""
restore() {
  [ -n "$LOST_NS" ] || return 0
  case $UNDO in
    thaw) testbed_thaw_ns "$LOST_NS" >/dev/null ;;
    uncut) testbed_link_up "$LOST_NS" "$LOST_ADDR" >/dev/null ;;
  esac
  LOST_NS=""
}
_loss_cleanup() { restore; _lib_cleanup; }
trap _loss_cleanup EXIT

# lose FAULT: runs a job on the three hosts, 2 training, and inflicts FAULT
# (freeze or cut) on node rank 1's host once attempt 0 runs.
lose() {
  local fault=$1 host k
  rm -f "$TEST_DIR"/started.*
  "$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" --nnodes 2 --spare-nodes 1 --max-restarts 2 \
    --heartbeat-timeout "$HEARTBEAT" --shutdown-timeout 2 -- "$WORKER" >"$OUT" 2>"$ERR" &
  local job=$!
  if ! wait_for_files 60 "$TEST_DIR/started.0.0" "$TEST_DIR/started.0.1"; then
    fail "attempt 0's two workers started"
    show_last_output
    kill -KILL "$job" 2>/dev/null
    return
  fi
  host=$(cat "$TEST_DIR/started.0.1")
  k=$(sshbed_index "$host")
  LOST_NS=${SSHBED_NS[k]} LOST_ADDR=${SSHBED_ADDRS[k]}
  say "  $fault of $host (node rank 1)"
  case $fault in
    freeze) UNDO=thaw; testbed_freeze_ns "$LOST_NS" >/dev/null ;;
    cut) UNDO=uncut; testbed_link_down "$LOST_NS" >/dev/null ;;
  esac
  wait_pid "$END_LIMIT" "$job"
  expect_eq "dlaunch ssh exits 0 within ${END_LIMIT} s, the verdict's code, without waiting for $host" 0 "$STATUS"
  [ "$STATUS" = 0 ] || show_last_output
  local output
  output=$(cat "$OUT" "$ERR")
  expect_contains "node 0 says the job's verdict" "$output" "dlaunch: the job's verdict: COMPLETED with exit code 0 [verdict "
  expect_contains "dlaunch ssh says it stopped the host that did not end" "$output" \
    "and $host (slot $k) had not ended 5 s later"
  local after
  after=$(cat "$TEST_DIR"/started.1.* 2>/dev/null | sort -u | tr '\n' ' ')
  expect_true "attempt 1 ran on two hosts without $host ($after)" \
    bash -c "[ \$(wc -w <<<'$after') = 2 ] && ! grep -qw '$host' <<<'$after'"
  restore
  nothing_left_on_hosts
}

section "1: --spare-nodes 1, node rank 1's host frozen: the job completes; dlaunch ssh does not wait for it"
lose freeze

section "2: --spare-nodes 1, node rank 1's link cut: the same"
lose cut

section "3: three hosts, --nnodes 2, a job over before the spare joins"
"$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" --nnodes 2 -- /bin/true >"$OUT" 2>"$ERR" &
wait_pid "$END_LIMIT" $!
expect_eq "dlaunch ssh exits 0 (the spare does not hold it up for --rdzv-timeout)" 0 "$STATUS"
[ "$STATUS" = 0 ] || show_last_output
expect_contains "the job's verdict is what ends it" "$(cat "$ERR")" "the job's verdict: COMPLETED with exit code 0"
nothing_left_on_hosts

section "4: --nnodes and --spare-nodes must add up to the hosts"
rm -f "$TEST_DIR"/started.*
expect_exit 2 "$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" --nnodes 2 --spare-nodes 2 -- "$WORKER"
expect_contains "the refusal names both and the host count" "$(cat "$ERR")" \
  "--nnodes 2 and --spare-nodes 2 make 4 hosts, but 3 are given"
expect_exit 2 "$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" --spare-nodes 3 -- "$WORKER"
expect_contains "no host left to train is refused" "$(cat "$ERR")" "--spare-nodes 3 leaves none of the 3 hosts given to train"
expect_eq "no worker ran" "" "$(cd "$TEST_DIR" && ls started.* 2>/dev/null)"
expect_exit 0 "$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" --spare-nodes 1 -- /bin/true
expect_contains "--spare-nodes 1 on three hosts: 2 train" "$(cat "$ERR")" "2 train, 1 stand by as spares"
nothing_left_on_hosts

finish
