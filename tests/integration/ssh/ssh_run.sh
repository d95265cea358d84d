#!/usr/bin/env bash
# dlaunch ssh on the ssh test bed (three hosts in network namespaces, each
# with its own sshd): PyTorch all-reduce across the hosts, hostfiles with
# slots, comments and hostlists (uneven too), --include/--exclude, an
# unreachable host, a host without dlaunch, a failing worker on one host,
# and Ctrl-C. After every case nothing of the test runs on any host.
# ctest brings the bed up first (fixture ssh.up); by hand:
#   tests/ssh/up && bash tests/integration/ssh/ssh_run.sh; tests/ssh/down
. "$(dirname "$0")/../lib.sh"
. "$DLAUNCH_SOURCE_DIR/tests/ssh/lib.sh"
# shellcheck source-path=SCRIPTDIR source=host_checks.sh
. "$(dirname "$0")/host_checks.sh"

[ "$(id -u)" = 0 ] || skip "the ssh test bed needs root"
sshbed_use "${DLAUNCH_SSH_DIR:-}" || skip "no ssh test bed is up in ${DLAUNCH_SSH_DIR:-the default folder} (tests/ssh/up)"
require_command ssh
SSH_ARGS=(--ssh-arg -F --ssh-arg "$SSHBED_CONFIG")
cd "$TEST_DIR" || exit 1

# ranks_seen FILE: the "RANK LOCAL GROUP WORLD HOST" lines a show-ranks job printed, sorted by rank.
SHOW_RANKS=$(write_worker show_ranks.sh <<'EOF'
echo "$RANK $LOCAL_RANK $GROUP_RANK $WORLD_SIZE $(hostname) ${CUDA_VISIBLE_DEVICES:--}"
EOF
)
ranks_seen() { sed -n 's/^\[[^]]*\]://p' "$1" | sort -n | tr '\n' ';'; }

section "PyTorch gloo all-reduce over three hosts at 2 workers each: every rank passes"
require_torch
expect_exit 0 "$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" --nproc-per-node 2 --python "$PY" \
  -- "$DLAUNCH_SOURCE_DIR/examples/allreduce.py"
for rank in 0 1 2 3 4 5; do
  host=host$((rank / 2 + 1))
  expect_contains "rank $rank on $host passes, its line prefixed [$host:rank$rank]:" "$(cat "$OUT")" \
    "[$host:rank$rank]:rank $rank/6 local $((rank % 2)) on $host: all_reduce sum 15 == 15 OK"
done
nothing_left_on_hosts

section "a hostfile with slots, comments and a hostlist: node ranks and uneven worker counts"
cat >"$TEST_DIR/hosts.txt" <<'EOF'
# the test hosts
host[1-2] slots=2   # a hostlist expression, two workers each

host3 slots=1       # and one more
EOF
expect_exit 0 "$DLAUNCH" ssh --hostfile "$TEST_DIR/hosts.txt" "${SSH_ARGS[@]}" -- "$SHOW_RANKS"
expect_eq "ranks 0-1 on host1, 2-3 on host2, 4 on host3; world 5" \
  "0 0 0 5 host1 -;1 1 0 5 host1 -;2 0 1 5 host2 -;3 1 1 5 host2 -;4 0 2 5 host3 -;" "$(ranks_seen "$OUT")"
nothing_left_on_hosts

section "--host-log-dir: each host's output in its own file, none on the console"
expect_exit 0 "$DLAUNCH" ssh --hosts host1,host2 "${SSH_ARGS[@]}" --host-log-dir "$TEST_DIR/hostlogs" \
  -- "$SHOW_RANKS"
expect_eq "the console has no worker line" "" "$(cat "$OUT")"
expect_contains "host1.log has host1's rank" "$(cat "$TEST_DIR/hostlogs/host1.log")" "[host1:rank0]:0 0 0 2 host1"
expect_contains "host2.log has host2's rank" "$(cat "$TEST_DIR/hostlogs/host2.log")" "[host2:rank1]:1 0 1 2 host2"
nothing_left_on_hosts

section "--exclude a host and --include some slots: the node ranks follow"
expect_exit 0 "$DLAUNCH" ssh --hostfile "$TEST_DIR/hosts.txt" --exclude host1 --include 'host2:1@host3' \
  "${SSH_ARGS[@]}" -- "$SHOW_RANKS"
expect_eq "host2 is node 0 with its slot 1 only, host3 node 1" \
  "0 0 0 2 host2 1;1 0 1 2 host3 -;" "$(ranks_seen "$OUT")"
nothing_left_on_hosts

section "an unreachable host: the preflight names it, nothing starts anywhere"
expect_exit nonzero "$DLAUNCH" ssh --hosts host1,nohost.invalid,host3 "${SSH_ARGS[@]}" --connect-timeout 5 \
  -- "$SHOW_RANKS"
expect_contains "the message names the host and why" "$(cat "$ERR")" "nohost.invalid: unreachable over ssh"
expect_not_contains "no worker ran" "$(cat "$OUT")" "host1"
nothing_left_on_hosts

section "a host without dlaunch: the preflight names it and says what to do"
sshbed_exec host2 mount --bind /dev/null "$DLAUNCH"
expect_exit nonzero "$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" -- "$SHOW_RANKS"
sshbed_exec host2 umount "$DLAUNCH"
expect_contains "host2 is named, with the fix" "$(cat "$ERR")" \
  "host2: dlaunch is not at $DLAUNCH there; install the same dlaunch on every host"
expect_not_contains "host1 and host3 are fine" "$(cat "$ERR")" "host1:"
nothing_left_on_hosts

section "a missing program: named per host before anything starts"
expect_exit nonzero "$DLAUNCH" ssh --hosts host1,host2 "${SSH_ARGS[@]}" -- "$TEST_DIR/no-such-program"
expect_contains "host1 says so" "$(cat "$ERR")" "host1: cannot find '$TEST_DIR/no-such-program' there"
expect_contains "host2 says so" "$(cat "$ERR")" "host2: cannot find '$TEST_DIR/no-such-program' there"
nothing_left_on_hosts

section "what every host's dlaunch run would refuse: refused here, before any ssh"
# A host name that resolves nowhere: a connection tried would fail otherwise.
expect_exit 2 "$DLAUNCH" ssh --hosts host1,nohost.invalid "${SSH_ARGS[@]}" --min-nodes 3 --nnodes 2 -- "$SHOW_RANKS"
expect_contains "run's own words" "$(cat "$ERR")" "--min-nodes must be from 1 to --nnodes (2), got 3"
expect_contains "before ssh" "$(cat "$ERR")" "before ssh: nothing was started"
expect_not_contains "no host was asked" "$(cat "$ERR")" "unreachable over ssh"
expect_exit 2 "$DLAUNCH" ssh --hosts host1,host2 "${SSH_ARGS[@]}" --console-overflow lossy -- "$SHOW_RANKS"
expect_contains "a value run refuses" "$(cat "$ERR")" "--console-overflow must be"
nothing_left_on_hosts

section "a failing worker on host2: every host stops, the exit code and summary are the worker's"
FAIL_ON_HOST2=$(write_worker fail_on_host2.sh <<'EOF'
if [ "$(hostname)" = host2 ] && [ "$LOCAL_RANK" = 0 ]; then
  wait_files "$DIR/started.0" "$DIR/started.1" "$DIR/started.3" "$DIR/started.4" "$DIR/started.5"
  echo "rank $RANK on host2 gives up"
  exit 3
fi
touch "$DIR/started.$RANK"
marked_sleep 300
EOF
)
expect_exit 3 "$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" --nproc-per-node 2 -- "$FAIL_ON_HOST2"
expect_contains "the summary names rank 2 on host2" "$(cat "$ERR")" "first failure: rank 2 (local rank 0) on host2"
expect_contains "the worker's last words are shown" "$(cat "$ERR")" "rank 2 on host2 gives up"
nothing_left_on_hosts

section "Ctrl-C (SIGINT to dlaunch ssh) stops every worker on every host"
rm -f "$TEST_DIR"/started.*
LONG=$(write_worker long.sh <<'EOF'
touch "$DIR/started.$RANK"
marked_sleep 300
EOF
)
# Job control gives the job its own process group, so a background job
# does not start with SIGINT ignored, as it would in a plain script.
set -m
"$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" --nproc-per-node 2 --shutdown-timeout 10 -- "$LONG" \
  >"$TEST_DIR/interrupted.out" 2>&1 &
job=$!
set +m
expect_true "all six workers started" wait_for_files 60 "$TEST_DIR"/started.{0,1,2,3,4,5}
start_clock
kill -INT "$job"
wait_pid 60 "$job"
stop_clock
expect_eq "dlaunch ssh exits 130 (SIGINT)" 130 "$STATUS"
expect_within "the hosts stopped within their shutdown timeout" 25
expect_contains "it says why" "$(cat "$TEST_DIR/interrupted.out")" "stopped every host: received SIGINT"
nothing_left_on_hosts

finish
