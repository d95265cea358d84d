#!/usr/bin/env bash
# dlaunch stacks on a dlaunch ssh job, on the ssh test bed: dlaunch ssh keeps
# a private folder on this machine with node 0's rendezvous address and the
# job's token while the job runs; dlaunch stacks FOLDER shows both hosts'
# ranks, grouped, and the job then completes; the folder goes with the job.
# ctest brings the bed up first (fixture ssh.up); by hand:
#   tests/ssh/up && bash tests/integration/ssh/ssh_stacks.sh; tests/ssh/down
. "$(dirname "$0")/../lib.sh"
. "$DLAUNCH_SOURCE_DIR/tests/ssh/lib.sh"

[ "$(id -u)" = 0 ] || skip "the ssh test bed needs root"
sshbed_use "${DLAUNCH_SSH_DIR:-}" || skip "no ssh test bed is up in ${DLAUNCH_SSH_DIR:-the default folder} (tests/ssh/up)"
require_command ssh
require_command eu-stack
require_torch
SSH_ARGS=(--ssh-arg -F --ssh-arg "$SSHBED_CONFIG")
cd "$TEST_DIR" || exit 1
DEMO=$TEST_DIR/hang_demo.py
cp "$DLAUNCH_SOURCE_DIR/examples/hang_demo.py" "$DEMO"

# This machine knows the bed's hosts by their ssh aliases only: node 0's
# rendezvous is given by address, as it would be without DNS.
host1=$(awk '$2 == "host1" {print $1; exit}' "$SSHBED_HOSTS_FILE")

section "dlaunch ssh on two hosts, dlaunch stacks on its folder"
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" ssh --hosts 'host[1-2]' "${SSH_ARGS[@]}" --nproc-per-node 1 \
  --master-addr "${host1:-host1}" \
  --env OMP_NUM_THREADS=1 -- "$PY" "$DEMO" --steps 200 --step-time 0.1 >"$OUT" 2>"$ERR" &
job=$!
folder_named() { sed -n "s/^dlaunch ssh: 'dlaunch stacks \(.*\)' shows where every rank is.*/\1/p" "$ERR" | grep -q .; }
expect_true "dlaunch ssh names its stacks folder" wait_until 30 folder_named
folder=$(sed -n "s/^dlaunch ssh: 'dlaunch stacks \(.*\)' shows where every rank is.*/\1/p" "$ERR")
expect_eq "the token in it is readable by its owner only" 600 "$(stat -c %a "$folder/rdzv.token" 2>/dev/null)"
both_started() { [ "$(grep -c 'of 2 starts' "$OUT")" -ge 2 ]; }
expect_true "both workers started" wait_until 60 both_started
DLAUNCH_TEST_STACKS_OUT=$TEST_DIR/stacks.out
timeout -k 10 60 "$DLAUNCH" stacks "$folder" >"$DLAUNCH_TEST_STACKS_OUT" 2>"$TEST_DIR/stacks.err"
status=$?
expect_eq "dlaunch stacks exits 0" 0 "$status"
[ "$status" = 0 ] || say "  dlaunch stacks said: $(cat "$TEST_DIR/stacks.err")"
expect_contains "both hosts' ranks, grouped" "$(cat "$DLAUNCH_TEST_STACKS_OUT")" "stacks of 2 ranks in"
expect_contains "in the training loop" "$(cat "$DLAUNCH_TEST_STACKS_OUT")" "<module> > main > train"
wait_pid "$RUN_LIMIT" "$job"
expect_eq "the job then completed (exit 0)" 0 "$STATUS"
expect_true "the folder went with the job" test ! -e "$folder"
no_leftovers

finish
