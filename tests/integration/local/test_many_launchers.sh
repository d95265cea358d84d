#!/bin/bash
# Every multi-node path at N = 128 real launchers on this machine (issue 28):
# bench/many_launchers --check, which starts 128 `dlaunch run` processes on
# 127.0.0.1, each its own node rank with one worker, and checks that
#   start  every worker ran and every launcher exited 0
#   fail   after one worker exits 3, every launcher exited with 3
#   spare  with --spare-nodes 1, after node rank 1's launcher is killed, the
#          spare took its place and all 128 workers of the next attempt ran
#   hang   with --hang-timeout, every launcher exited with 124 and the
#          report names rank 127 as the one that differs, with every rank's
#          stack
#   gate   with --gate, every node passed the gate and every worker ran
# Not timed: the figures are bench/many_launchers' business; this only
# fails when a path breaks at N. Then, that nothing of it is left, and what
# node 0 said of the network survey of one machine.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_command cc
N=128
# Node 0 holds a connection per launcher, and each launcher a few files.
[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge $((N + 256)) ] ||
  skip "the open-file hard limit ($(ulimit -Hn)) is below $((N + 256))"

SWARM_OUT=$TEST_DIR/swarm
section "bench/many_launchers --check at N=$N: start, fail, spare, hang and gate"
DLAUNCH=$DLAUNCH "$DLAUNCH_SOURCE_DIR/bench/many_launchers" --check --sizes "$N" --gate-sizes "$N" \
  --hang-timeout 5 --out "$SWARM_OUT" >"$OUT" 2>"$ERR"
STATUS=$?
cat "$OUT"
expect_eq "every path ended as it must" 0 "$STATUS"
[ "$STATUS" -eq 0 ] || show_last_output
for path in start fail spare hang gate; do
  expect_contains "the $path path was measured at N=$N" "$(cat "$OUT")" "$(printf '%-6s %6s' "$path" "$N")"
done

section "what the runs left behind"
expect_eq "all $N ranks of the start have their logs" "$N" \
  "$(find "$SWARM_OUT/dlaunch-start-$N-1/logs/attempt_0" -name stdout.log | wc -l)"
expect_file "the spare's attempt has logs" "$SWARM_OUT/dlaunch-spare-$N-1/logs/attempt_1"
expect_contains "the hang names rank $((N - 1))" "$(cat "$SWARM_OUT/dlaunch-hang-$N-1/node.0.log")" \
  "rank $((N - 1)) on"
# One machine is surveyed once: one line for all its launchers.
survey_lines=$(grep -c "rendezvous: network: " "$SWARM_OUT/dlaunch-start-$N-1/node.0.log")
expect_eq "node 0 printed one network line for the machine" 1 "$survey_lines"
expect_contains "the line speaks for all $N launchers" "$(cat "$SWARM_OUT/dlaunch-start-$N-1/node.0.log")" \
  "(for its $N launchers)"
no_leftovers
finish
