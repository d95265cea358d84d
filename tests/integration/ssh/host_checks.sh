# Checks on the ssh test bed's hosts, shared by the ssh tests (ssh_run.sh,
# ssh_spares.sh), which source it after ../lib.sh and tests/ssh/lib.sh.
# Not a test itself: ctest runs ssh_*.sh only.
# shellcheck shell=bash

# nothing_left_on_hosts: no process of this test on any host of the bed.
_hosts_clear() { [ -z "$(sshbed_pids "$MARK")" ]; }
nothing_left_on_hosts() {
  if wait_until 30 _hosts_clear; then pass "nothing of the test is left on any host"
  else fail "nothing of the test is left on any host" "still running: $(sshbed_pids "$MARK" | tr '\n' ' ')"; fi
  no_leftovers "nothing of the test is left here"
}
