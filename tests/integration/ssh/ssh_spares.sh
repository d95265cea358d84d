#!/usr/bin/env bash
# dlaunch ssh with a hot spare on the ssh test bed: three hosts, --nnodes 2,
# so host1 (node 0) and one more host train and the third stands by (which
# of host2 and host3 trains is the first to join node 0's rendezvous).
# Killing training node 1's launcher (kill -9) ends its host's session;
# dlaunch ssh keeps the other hosts, the rendezvous restarts the workers
# with the spare in node 1's place, and the job ends with node 0's code. After it nothing of the test runs on any
# host. Also: more --nnodes than hosts is refused.
# ctest brings the bed up first (fixture ssh.up); by hand:
#   tests/ssh/up && bash tests/integration/ssh/ssh_spares.sh; tests/ssh/down
. "$(dirname "$0")/../lib.sh"
. "$DLAUNCH_SOURCE_DIR/tests/ssh/lib.sh"
# shellcheck source-path=SCRIPTDIR source=host_checks.sh
. "$(dirname "$0")/host_checks.sh"

[ "$(id -u)" = 0 ] || skip "the ssh test bed needs root"
sshbed_use "${DLAUNCH_SSH_DIR:-}" || skip "no ssh test bed is up in ${DLAUNCH_SSH_DIR:-the default folder} (tests/ssh/up)"
require_command ssh
[ "${#SSHBED_HOSTS[@]}" -ge 3 ] || skip "the bed has ${#SSHBED_HOSTS[@]} hosts; this test needs 3"
SSH_ARGS=(--ssh-arg -F --ssh-arg "$SSHBED_CONFIG")
cd "$TEST_DIR" || exit 1

# Attempt 0: each worker says where it runs in started.0.RANK ("PID PPID
# HOST RANK"; PPID is its launcher) and waits to be stopped (bounded: it
# gives up after 60 s, which fails the test). Attempt 1 and later: it says
# so in started.N.RANK and succeeds. A file appears whole (written, then
# renamed), so a reader never sees half of one.
SPARE_WORKER=$(write_worker spare_worker.sh <<'EOF'
attempt=${TORCHELASTIC_RESTART_COUNT:-0}
started() {
  echo "$$ $PPID $(hostname) $RANK" >"$DIR/.started.$attempt.$RANK"
  mv "$DIR/.started.$attempt.$RANK" "$DIR/started.$attempt.$RANK"
}
if [ "$attempt" -ge 1 ]; then
  started
  exit 0
fi
trap 'kill $! 2>/dev/null; exit 143' TERM
started
marked_sleep 60
echo "worker $RANK: attempt 0 was never stopped" >&2
exit 1
EOF
)

section "--nnodes 2 on three hosts: the spare takes the place of training node 1, whose launcher is killed"
set -m
"$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" --nnodes 2 --nproc-per-node 2 --max-restarts 1 \
  -- "$SPARE_WORKER" >"$OUT" 2>"$ERR" &
job=$!
set +m
if ! expect_true "attempt 0's four workers started" wait_for_files 60 "$TEST_DIR"/started.0.{0,1,2,3}; then
  show_last_output
  kill -KILL "$job" 2>/dev/null
  finish
fi
# Round 0 trains node 0 (host1) and the first of host2 and host3 to join
# the rendezvous; the other stands by.
hosts_of() { local file; for file in "$@"; do read -r _ _ host _ <"$file"; echo "$host"; done | sort -u | tr '\n' ' '; }
read -r _ launcher lost _ <"$TEST_DIR/started.0.2"
case $lost in
  host2) spare=host3 ;;
  host3) spare=host2 ;;
  *) spare=none ;;
esac
say "  ($lost trains as node 1, $spare stands by)"
expect_eq "attempt 0 ran on host1 and one other host" "host1 $lost " "$(hosts_of "$TEST_DIR"/started.0.{0,1,2,3})"
expect_eq "rank 2's parent, its launcher, is in $lost's namespace" "$lost" "$(sshbed_host_of "$launcher")"
expect_contains "the launcher was told of the spare" "$(sshbed_cmdline "$launcher")" "--nnodes 2 --node-rank"
expect_contains "... --spare-nodes 1" "$(sshbed_cmdline "$launcher")" "--spare-nodes 1"
kill -KILL "$launcher"
wait_pid 60 "$job"
expect_eq "dlaunch ssh exits 0, node 0's code" 0 "$STATUS"
[ "$STATUS" = 0 ] || show_last_output
output=$(cat "$OUT" "$ERR")
expect_contains "it says the job goes on without the lost host" "$output" "the job goes on without it"
expect_contains "... naming the host" "$(grep -F "the job goes on without it" <<<"$output")" "dlaunch ssh: $lost (slot "
expect_contains "the rendezvous names the spare that takes node rank 1" "$output" "$spare (spare) takes node rank 1"
if expect_true "attempt 1's four workers ran" files_exist "$TEST_DIR"/started.1.{0,1,2,3}; then
  expect_eq "attempt 1 ran on host1 and the spare, $spare" "$(printf '%s\n' host1 "$spare" | sort | tr '\n' ' ')" \
    "$(hosts_of "$TEST_DIR"/started.1.{0,1,2,3})"
  expect_eq "rank 2 of attempt 1 runs on the spare" "$spare" "$(hosts_of "$TEST_DIR/started.1.2" | tr -d ' ')"
fi
expect_eq "no third attempt" "" "$(cd "$TEST_DIR" && ls started.2.* 2>/dev/null)"
nothing_left_on_hosts

section "--nnodes above the host count is refused before anything starts"
rm -f "$TEST_DIR"/started.*
expect_exit 2 "$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" --nnodes 4 -- "$SPARE_WORKER"
expect_contains "the message says why and what to do" "$(cat "$ERR")" \
  "--nnodes 4 asks for more nodes than the 3 hosts given; give at most 3, or more hosts"
expect_eq "no worker ran" "" "$(cd "$TEST_DIR" && ls started.* 2>/dev/null)"
nothing_left_on_hosts

finish
