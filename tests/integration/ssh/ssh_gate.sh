#!/usr/bin/env bash
# dlaunch ssh on the ssh test bed's three hosts, each with decoys for the
# whole test (testbed_add_decoys, removed by the exit trap): decoy0
# (10.254.K.1/24, which no other host reaches), a docker0 bridge, and its own
# host name resolving to the decoy in the sessions' /etc/hosts, so that
# gloo's default device would take an address no peer reaches.
#   1  --nnodes 3, no network setting: the gloo all-reduce of
#      tests/integration/cluster/network_worker.py completes; every worker got
#      GLOO_SOCKET_IFNAME=eth0 and a numeric MASTER_ADDR, the eth0 address
#      of rank 0's host
#   2  host2's link shaped to 100 Mbit/s each way, --nnodes 2 --gate: the
#      gate benches host2 (its Gb/s in the console and in gate/report.txt
#      under --log-dir), the job completes with exit 0 on host1 and host3
# After each run nothing of the test runs on any host.
# ctest brings the bed up first (fixture ssh.up); by hand:
#   tests/ssh/up && bash tests/integration/ssh/ssh_gate.sh; tests/ssh/down
. "$(dirname "$0")/../lib.sh"
. "$DLAUNCH_SOURCE_DIR/tests/ssh/lib.sh"
# shellcheck source-path=SCRIPTDIR source=host_checks.sh
. "$(dirname "$0")/host_checks.sh"

[ "$(id -u)" = 0 ] || skip "the ssh test bed needs root"
sshbed_use "${DLAUNCH_SSH_DIR:-}" || skip "no ssh test bed is up in ${DLAUNCH_SSH_DIR:-the default folder} (tests/ssh/up)"
require_command ssh
require_command tc
require_command nsenter
require_torch
[ "${#SSHBED_HOSTS[@]}" -ge 3 ] || skip "the bed has ${#SSHBED_HOSTS[@]} hosts; this test needs 3"
SSH_ARGS=(--ssh-arg -F --ssh-arg "$SSHBED_CONFIG")
SLOW_RATE=100mbit
# shellcheck disable=SC2034  # read by ../lib.sh (expect_exit)
RUN_LIMIT=150
cd "$TEST_DIR" || exit 1

# The worker, in the test folder so that its command line carries the marker.
WORKER=$TEST_DIR/network_worker.py
cp "$DLAUNCH_SOURCE_DIR/tests/integration/cluster/network_worker.py" "$WORKER"

host_addr() { local k; k=$(sshbed_index "$1") && printf '%s' "${SSHBED_ADDRS[k]}"; }

undo_hosts() {
  local k
  for ((k = 0; k < ${#SSHBED_HOSTS[@]}; k++)); do
    testbed_unshape_link "${SSHBED_NS[k]}"
    testbed_remove_decoys "${SSHBED_NS[k]}" $((k + 1))
  done
}
_gate_cleanup() {
  undo_hosts >/dev/null 2>&1
  _lib_cleanup
}
trap _gate_cleanup EXIT

# The workers' "net rank R/W on HOST: GLOO_SOCKET_IFNAME=G NCCL_SOCKET_IFNAME=N
# MASTER_ADDR=M" lines in the last output as "R HOST G N M", sorted by rank.
env_lines() {
  cat "$OUT" "$ERR" |
    grep -oE 'net rank [0-9]+/[0-9]+ on [^: ]+: GLOO_SOCKET_IFNAME=[^ ]* NCCL_SOCKET_IFNAME=[^ ]* MASTER_ADDR=[^ ]*' |
    sed 's/^net rank \([0-9]*\)\/[0-9]* on \([^:]*\): GLOO_SOCKET_IFNAME=\([^ ]*\) NCCL_SOCKET_IFNAME=\([^ ]*\) MASTER_ADDR=\([^ ]*\)$/\1 \2 \3 \4 \5/' |
    sort -n -u
}
ok_hosts() {
  cat "$OUT" "$ERR" | grep -oE 'net rank [0-9]+/[0-9]+ on [^: ]+: all_reduce OK' |
    awk '{print $5}' | tr -d ':' | sort -u | paste -sd' ' -
}
ok_count() { cat "$OUT" "$ERR" | grep -cE 'net rank [0-9]+/[0-9]+ on [^: ]+: all_reduce OK'; }

section "decoys on every host"
decoys_ok=yes
for ((k = 0; k < ${#SSHBED_HOSTS[@]}; k++)); do
  testbed_add_decoys "${SSHBED_NS[k]}" $((k + 1)) || decoys_ok=no
done
expect_eq "decoys added on ${SSHBED_HOSTS[*]}" yes "$decoys_ok"
expect_eq "over ssh, host2 resolves its own name to its decoy" "$(testbed_decoy_addr 2)" \
  "$(ssh -F "$SSHBED_CONFIG" host2 getent hosts host2 </dev/null | awk '{print $1}')"
expect_eq "... and host1 to host1's address" "$(host_addr host1)" \
  "$(ssh -F "$SSHBED_CONFIG" host2 getent hosts host1 </dev/null | awk '{print $1}')"
expect_true "host2 has decoy0 and docker0" sshbed_exec host2 sh -c \
  'ip -o link show decoy0 >/dev/null && ip -o link show docker0 >/dev/null'

section "1: --nnodes 3, no network setting: the all-reduce completes over eth0"
failed_before=$FAILED
expect_exit 0 "$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" --nproc-per-node 1 \
  -- /usr/bin/python3 -u "$WORKER"
expect_eq "3 workers all-reduced" 3 "$(ok_count)"
expect_eq "... on host1, host2 and host3" "host1 host2 host3" "$(ok_hosts)"
lines=$(env_lines)
expect_eq "every worker's GLOO_SOCKET_IFNAME is eth0" eth0 "$(awk '{print $3}' <<<"$lines" | sort -u | paste -sd, -)"
expect_eq "every worker's NCCL_SOCKET_IFNAME is =eth0 (NCCL's exact match)" "=eth0" "$(awk '{print $4}' <<<"$lines" | sort -u | paste -sd, -)"
master=$(awk '{print $5}' <<<"$lines" | sort -u | paste -sd, -)
rank0_host=$(awk '$1 == 0 {print $2}' <<<"$lines")
expect_eq "MASTER_ADDR is the eth0 address of rank 0's host (${rank0_host:-?})" \
  "$(host_addr "${rank0_host:-none}")" "$master"
[ "$FAILED" -eq "$failed_before" ] || show_last_output
nothing_left_on_hosts

section "2: host2's link at $SLOW_RATE, --nnodes 2 --gate: host2 is benched, host1 and host3 train"
failed_before=$FAILED
if testbed_shape_link "${SSHBED_NS[1]}" "$SLOW_RATE"; then
  LOGS=$TEST_DIR/logs
  expect_exit 0 "$DLAUNCH" ssh --hosts 'host[1-3]' "${SSH_ARGS[@]}" --nnodes 2 --nproc-per-node 1 \
    --gate --log-dir "$LOGS" -- /usr/bin/python3 -u "$WORKER"
  output=$(cat "$OUT" "$ERR")
  gate_lines=$(grep -E 'dlaunch: (rendezvous: )?gate:' <<<"$output")
  expect_contains "the console's gate lines name host2 ..." "$(grep -wF host2 <<<"$gate_lines")" "host2"
  expect_contains "... with its link speed in Gb/s" "$(grep -wF host2 <<<"$gate_lines")" "Gb/s"
  expect_eq "2 workers all-reduced" 2 "$(ok_count)"
  expect_eq "... on host1 and host3 only" "host1 host3" "$(ok_hosts)"
  mapfile -t reports < <(find "$LOGS" -path '*/gate/report.txt' 2>/dev/null)
  expect_eq "one gate/report.txt under --log-dir" 1 "${#reports[@]}"
  if [ "${#reports[@]}" -eq 1 ]; then
    expect_true "it names host2 as benched" grep -qE '\bhost2\b.*bench|bench.*\bhost2\b' "${reports[0]}"
    expect_true "... with its Gb/s" grep -qE '\bhost2\b.*Gb/s' "${reports[0]}"
    expect_file "gate/report.json is beside it" "$(dirname "${reports[0]}")/report.json"
  fi
  [ "$FAILED" -eq "$failed_before" ] || show_last_output
  testbed_unshape_link "${SSHBED_NS[1]}"
else
  fail "shaped host2's link to $SLOW_RATE"
fi
nothing_left_on_hosts

section "the decoys go"
undo_hosts
left=""
for host in "${SSHBED_HOSTS[@]}"; do
  sshbed_exec "$host" ip -o link show 2>/dev/null | grep -qE ': (decoy0|docker0)[:@]' && left="$left $host"
done
expect_eq "no decoy is left on any host" "" "$left"
expect_eq "host2 resolves its own name to its address again" "$(host_addr host2)" \
  "$(ssh -F "$SSHBED_CONFIG" host2 getent hosts host2 </dev/null | awk '{print $1}')"

finish
