#!/usr/bin/env bash
# The ssh test bed (tests/ssh) works as three hosts: each answers over ssh
# under its own name, the hosts reach each other by name over TCP, a process
# started on a host over ssh lives in that host's namespaces only (and the
# bed's helpers see and end it), and a key the bed does not know is refused
# without a prompt. ctest brings the bed up before this test (fixture
# ssh.up, DLAUNCH_SSH_DIR) and takes it down after; by hand:
#   tests/ssh/up && bash tests/integration/ssh/ssh_smoke.sh; tests/ssh/down
. "$(dirname "$0")/../lib.sh"
. "$DLAUNCH_SOURCE_DIR/tests/ssh/lib.sh"

[ "$(id -u)" = 0 ] || skip "the ssh test bed needs root"
sshbed_use "${DLAUNCH_SSH_DIR:-}" || skip "no ssh test bed is up in ${DLAUNCH_SSH_DIR:-the default folder} (tests/ssh/up)"
require_command ssh
require_command ssh-keygen
CFG=$SSHBED_CONFIG
# Every ssh of this test: bounded, never reading the test's stdin.
rssh() { timeout -k 5 60 ssh -F "$CFG" "$@" </dev/null; }

section "every host answers over ssh under its own name"
for host in "${SSHBED_HOSTS[@]}"; do
  expect_eq "ssh $host hostname" "$host" "$(rssh "$host" hostname 2>&1)"
done
k=$(sshbed_index host2)
expect_eq "host2's eth0 has host2's address (${SSHBED_ADDRS[k]})" "${SSHBED_ADDRS[k]}/24" \
  "$(rssh host2 "ip -4 -o addr show dev eth0" | awk '{print $4}')"
expect_eq "host2 resolves host1 to host1's address" "${SSHBED_ADDRS[0]}" \
  "$(rssh host2 "getent hosts host1" | awk '{print $1}')"
expect_eq "host3 resolves sshhost to the bridge" "$SSHBED_BRIDGE_ADDR" \
  "$(rssh host3 "getent hosts $SSHBED_LOCAL_NAME" | awk '{print $1}')"
expect_eq "the dlaunch under test is visible on host1" "yes" \
  "$(rssh host1 "test -x '$DLAUNCH' && echo yes")"

section "TCP from host2 to host1, by name"
port=$(( (RANDOM % 2000) + 41000 ))
# Listens on host1's address (the name host1, resolved on host1), accepts
# one connection, prints the peer's address and what it sent.
rssh host1 "$PY -c 'import socket, sys
s = socket.create_server((\"host1\", $port))
s.settimeout(30)
c, peer = s.accept()
print(peer[0], c.makefile().readline().strip(), flush=True)' $MARK.listener" >"$TEST_DIR/listener.out" 2>&1 &
listener=$!
# Connects by name from host2, retrying while the listener is starting.
# shellcheck disable=SC2016  # expanded on host2
rssh host2 'for i in $(seq 1 100); do
  if exec 3<>/dev/tcp/host1/'"$port"' 2>/dev/null; then echo "hello from $(hostname)" >&3; exit 0; fi
  sleep 0.1
done; exit 1' >"$TEST_DIR/client.out" 2>&1
expect_eq "host2 connected to host1:$port" 0 "$?"
wait_pid 30 "$listener"
expect_eq "the listener on host1 ended by itself" 0 "$STATUS"
expect_eq "host1 saw host2's address and its greeting" "${SSHBED_ADDRS[1]} hello from host2" \
  "$(cat "$TEST_DIR/listener.out")"

section "a process started on host3 over ssh lives on host3 only"
rssh host3 "setsid -f bash -c 'exec -a $MARK.sleeper sleep 300' </dev/null >/dev/null 2>&1"
expect_eq "ssh returned at once" 0 "$?"
found=()
_found_on_host3() { mapfile -t found < <(sshbed_pids "$MARK.sleeper" host3); [ "${#found[@]}" -eq 1 ]; }
wait_until 10 _found_on_host3
expect_eq "sshbed_pids finds it on host3" 1 "${#found[@]}"
expect_eq "and on neither host1 nor host2" "" "$(sshbed_pids "$MARK.sleeper" host1 host2)"
if [ "${#found[@]}" -eq 1 ]; then
  pid=${found[0]}
  expect_eq "sshbed_host_of says host3" host3 "$(sshbed_host_of "$pid")"
  expect_eq "its host name is host3" host3 "$(nsenter --target "$pid" --uts hostname)"
  expect_eq "it sees the bed's /etc/hosts" "${SSHBED_ADDRS[0]}" \
    "$(nsenter --target "$pid" --mount getent hosts host1 | awk '{print $1}')"
  kill -TERM "${found[@]}"
fi
_gone() { [ -z "$(sshbed_pids "$MARK")" ]; }
expect_true "after kill, sshbed_pids finds nothing of the test on any host" wait_until 10 _gone

section "sshbed_exec runs a command on a host without ssh"
expect_eq "sshbed_exec host2 hostname" host2 "$(sshbed_exec host2 hostname)"
expect_eq "in host2's network namespace" "${SSHBED_ADDRS[1]}/24" \
  "$(sshbed_exec host2 ip -4 -o addr show dev eth0 | awk '{print $4}')"

section "a key the bed does not know is refused, without a prompt"
ssh-keygen -q -t ed25519 -N '' -f "$TEST_DIR/stranger" >/dev/null
sed "s|^\([[:space:]]*IdentityFile\) .*|\1 $TEST_DIR/stranger|" "$CFG" >"$TEST_DIR/stranger_config"
expect_contains "the copy of ssh_config names the stranger's key" "$(cat "$TEST_DIR/stranger_config")" \
  "IdentityFile $TEST_DIR/stranger"
expect_exit 255 timeout -k 5 30 ssh -F "$TEST_DIR/stranger_config" host1 true </dev/null
expect_contains "ssh says why" "$(cat "$ERR")" "Permission denied (publickey)"
# And a host key that does not match known_hosts stops ssh too.
printf 'host1,%s %s\n' "${SSHBED_ADDRS[0]}" "$(grep '^host2,' "$SSHBED_KNOWN_HOSTS" | cut -d' ' -f2,3)" \
  >"$TEST_DIR/wrong_known_hosts"
sed "s|^\([[:space:]]*UserKnownHostsFile\) .*|\1 $TEST_DIR/wrong_known_hosts|" "$CFG" >"$TEST_DIR/wrong_hosts_config"
expect_exit 255 timeout -k 5 30 ssh -F "$TEST_DIR/wrong_hosts_config" host1 true </dev/null
expect_contains "ssh says why" "$(cat "$ERR")" "Host key verification failed"

section "nothing of the test is left on the hosts"
# Only the listening sshd remains in each host's namespace (sessions end a
# moment after their client).
_only_sshds() {
  local host k
  for ((k = 0; k < ${#SSHBED_HOSTS[@]}; k++)); do
    host=${SSHBED_HOSTS[k]}
    [ "$(ip netns pids "${SSHBED_NS[k]}")" = "$(sshbed_sshd_pid "$host")" ] || return 1
  done
}
if wait_until 10 _only_sshds; then
  pass "each host runs its sshd and nothing else"
else
  fail "each host runs its sshd and nothing else" \
    "$(for ns in "${SSHBED_NS[@]}"; do
      for p in $(ip netns pids "$ns"); do printf '%s %s %s; ' "$ns" "$p" "$(tr '\0' ' ' <"/proc/$p/cmdline")"; done
    done)"
fi
no_leftovers

finish
