#!/bin/bash
# dlaunch run with a console that does not keep up. By default the launcher
# never drops a line: when its console is full it stops reading the
# workers' pipes, so their writes wait as on a slow terminal, while the
# launcher goes on sending heartbeats, obeys SIGTERM within
# --shutdown-timeout and files what it read under --log-dir.
#   - 2 nodes: node 1's stdout is a FIFO read one byte a second (a stalled
#     srun or ssh I/O path, a stopped terminal, all but stopped);
#   - 1 node: a burst written while nobody reads arrives whole and complete
#     once a reader comes;
#   - --console-overflow drop: the burst's lines are dropped whole and
#     counted instead, and the workers never wait;
#   - a '\r' progress bar shows live on the console, each drawing before
#     the line's end, and the file gets the bar's bytes as written.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_command mkfifo
HEARTBEAT=3
SHUTDOWN=5

# Prints numbered lines until stopped; every 2000 lines it records how
# many it has written, which is what the test waits on. The count goes
# through a rename so a reader never sees the file truncated but not yet
# written (an empty read once failed "went on printing" in CI).
CHATTY=$(write_worker chatty.sh <<'EOF'
n=0
while :; do
  echo "rank $RANK line $n"
  n=$((n + 1))
  if [ $((n % 2000)) -eq 0 ]; then
    echo "$n" >"$DIR/progress.$RANK.next" && mv -f "$DIR/progress.$RANK.next" "$DIR/progress.$RANK"
  fi
done
EOF
)

# progress RANK: the lines rank RANK has written so far (0 before any).
progress() { cat "$TEST_DIR/progress.$1" 2>/dev/null || echo 0; }

# check_log FILE RANK: FILE holds rank RANK's lines 0, 1, ... without a
# gap, each whole, and at least as many as the worker said it wrote.
check_log() {
  local verdict
  verdict=$(awk -v r="$2" '
    $0 != "rank " r " line " NR - 1 { print "line " NR ": " substr($0, 1, 60); bad = 1; exit }
    END { if (!bad) print "lines " NR }' "$1")
  if [[ $verdict == lines* ]] && [ "${verdict#lines }" -ge "$(progress "$2")" ]; then
    pass "rank $2: every line it wrote is in its log, whole and in order (${verdict#lines })"
  else
    fail "rank $2: every line it wrote is in its log" "$verdict (the worker wrote $(progress "$2"))"
  fi
}

section "2 nodes: node 1's stdout is a FIFO read one byte a second"
FIFO=$TEST_DIR/console.fifo
mkfifo "$FIFO"
exec 3<>"$FIFO" # holds the FIFO open for the launcher's open; reads nothing
# The slow reader: one byte, then a second's pause, until it is stopped.
(while dd bs=1 count=1 status=none; do sleep 1; done) <"$FIFO" >"$TEST_DIR/slow.out" 3<&- &
slow_reader=$!
port=$(free_port)
common=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port"
  --heartbeat-timeout "$HEARTBEAT" --shutdown-timeout "$SHUTDOWN")
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 0 --log-dir "$TEST_DIR/logs0" \
  -- "$CHATTY" >/dev/null 2>"$TEST_DIR/node0.err" 3>&- &
node0=$!
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 1 --log-dir "$TEST_DIR/logs1" \
  -- "$CHATTY" >"$FIFO" 2>"$TEST_DIR/node1.err" 3>&- &
node1=$!
wait_for_files 30 "$TEST_DIR/progress.0" "$TEST_DIR/progress.1" || fail "the workers of both nodes print"

# Both launchers must live through several heartbeat timeouts while the
# console stalls (a launcher blocked on it would be lost after one).
STALL_START=$(now_ns)
stalled_long_enough() {
  # A launcher that exits ends the wait; the checks below then fail.
  kill -0 "$node0" 2>/dev/null && kill -0 "$node1" 2>/dev/null || return 0
  [ $(($(now_ns) - STALL_START)) -ge $((HEARTBEAT * 4 * 1000000000)) ]
}
wait_until $((HEARTBEAT * 10)) stalled_long_enough
expect_true "node 0's launcher still runs after $((HEARTBEAT * 4)) s" kill -0 "$node0"
expect_true "node 1's launcher (stalled console) still runs" kill -0 "$node1"
expect_not_contains "node 0 never took node 1 for lost" "$(cat "$TEST_DIR/node0.err")" "sent nothing for"
# Node 1's worker waits on the console: it wrote no more than its pipe
# (1 MiB), the launcher's backlog (1 MiB and one read of 256 KiB) and the
# FIFO hold, some 110,000 lines (18 bytes in the pipe, 26 with the prefix),
# while node 0's worker, whose console is /dev/null, went on.
held=$(progress 1)
expect_true "node 1's worker is held back by its console ($held lines written)" [ "$held" -le 200000 ]
expect_true "node 0's worker was not ($(progress 0) lines written)" [ "$(progress 0)" -gt "$held" ]

# SIGTERM still reaches the blocked launcher (the dlaunch process under timeout).
launcher1=$(pgrep -P "$node1" -x dlaunch)
start_clock
kill -TERM "$launcher1"
wait_pid $((SHUTDOWN * 4)) "$node1"
stop_clock
expect_eq "node 1's launcher exits with the signal's code" 143 "$STATUS"
expect_within "it exits within --shutdown-timeout (+ 3 s)" $((SHUTDOWN + 3))
wait_pid 30 "$node0"
expect_eq "node 0 ends the job alike" 143 "$STATUS"
kill "$slow_reader" 2>/dev/null
pkill -P "$slow_reader" 2>/dev/null
wait "$slow_reader" 2>/dev/null
slow=$(cat "$TEST_DIR/slow.out"; printf x)
slow=${slow%x}
expected=$(printf '[rank1]:rank 1 line %d\n' $(seq 0 9); printf x)
expect_true "the slow reader got some bytes (${#slow})" [ "${#slow}" -ge 5 ]
expect_eq "what it got is the start of rank 1's lines, nothing skipped" "${expected:0:${#slow}}" "$slow"
node1_err=$(cat "$TEST_DIR/node1.err")
expect_not_contains "node 1 dropped no line while it ran" "$node1_err" "lines dropped"
expect_true "node 1 says how many lines its console never took, and where they are" \
  grep -Eq '^dlaunch: [1-9][0-9]* more lines could not be written to stdout: it did not drain before exit \(waited [0-9.]+ s\); the --log-dir files have them$' \
  <<<"$node1_err"
# The summary is said once per job, by node 0 (launch/report_duty.h).
expect_contains "node 0's summary names node 1's stop" "$(cat "$TEST_DIR/node0.err")" "(node 1) received SIGTERM"
expect_not_contains "node 1 prints no second summary" "$node1_err" "first failure:"
check_log "$TEST_DIR/logs0/attempt_0/rank0/stdout.log" 0
check_log "$TEST_DIR/logs1/attempt_0/rank1/stdout.log" 1
exec 3<&-
no_leftovers

section "1 node: a burst written while nobody reads arrives whole, every line"
# The worker writes 200000 lines (about 3.5 MB, far more than a FIFO and the
# launcher's backlog hold) while nobody reads: it waits in its write until a
# reader comes (cat), then every line arrives, whole and in order.
BURST=$(write_worker burst.sh <<'EOF'
seq -f "burst line %g" 0 199999
echo "the last line"
EOF
)
FIFO=$TEST_DIR/burst.fifo
mkfifo "$FIFO"
exec 3<>"$FIFO"
# --hang-timeout 2: a worker that waits on its console is not hung (its
# output counts as progress while it is held back).
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run --nproc-per-node 1 --hang-timeout 2 -- "$BURST" \
  >"$FIFO" 2>"$TEST_DIR/burst.err" 3>&- &
launcher=$!
# seq blocks in a pipe write once the FIFO, the backlog and its own pipe are full.
seq_waits() {
  local pid
  pid=$(pgrep -f 'seq -f burst line' | head -n 1)
  [ -n "$pid" ] && grep -q pipe "/proc/$pid/wchan" 2>/dev/null
}
expect_true "the worker waits in its write while nobody reads" wait_until 60 seq_waits
# Three hang timeouts of waiting: the launcher must not take it for a hang.
launcher_gone() { ! kill -0 "$launcher" 2>/dev/null; }
launcher_stays() { ! wait_until 6 launcher_gone; }
expect_true "the launcher still runs after 3 hang timeouts of it" launcher_stays
cat "$FIFO" >"$TEST_DIR/burst.out" 3<&- &
reader=$!
wait_pid 60 "$launcher"
expect_eq "the launcher exits 0" 0 "$STATUS"
exec 3<&-
wait_pid 10 "$reader"
out=$(cat "$TEST_DIR/burst.out")
expect_eq "every console line is whole" "" \
  "$(grep -Ev '^(\[rank0\]:burst line [0-9]+|\[rank0\]:the last line)$' <<<"$out" | head -n 3)"
expect_eq "every line arrived, in order" "" \
  "$(grep -o '^\[rank0\]:burst line [0-9]*' <<<"$out" | awk '$3 + 0 != NR - 1 { print "line " NR ": " $0; exit }')"
expect_eq "all 200000 lines arrived" 200000 "$(grep -c '^\[rank0\]:burst line' <<<"$out")"
expect_contains "and the last one" "$out" "[rank0]:the last line"
expect_not_contains "nothing was dropped" "$(cat "$TEST_DIR/burst.err")" "dropped"
no_leftovers

section "--console-overflow drop: the burst's lines are dropped whole and counted, then the notice"
# The old way, as a choice: the worker never waits; what the console cannot
# take is dropped in whole lines, and a notice takes their place once the
# console drains. The worker's last line comes once the notice is out, that
# is once the console drained: written while the backlog was still full, it
# would be dropped like the burst.
BURST=$(write_worker burst_drop.sh <<'EOF'
seq -f "burst line %g" 0 199999
touch "$DIR/burst.done"
wait_files "$DIR/console.drained"
echo "after the reader came: the last line"
EOF
)
FIFO=$TEST_DIR/burst_drop.fifo
mkfifo "$FIFO"
exec 3<>"$FIFO"
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run --nproc-per-node 1 --console-overflow drop -- "$BURST" \
  >"$FIFO" 2>"$TEST_DIR/burst.err" 3>&- &
launcher=$!
wait_for_files 60 "$TEST_DIR/burst.done" || fail "the worker wrote its burst without waiting"
# A reader of its own (read-only), which sees the end once every writer,
# the launcher and this shell's fd 3, is gone.
cat "$FIFO" >"$TEST_DIR/burst.out" 3<&- &
reader=$!
drained() { grep -q '^dlaunch: console stalled, [0-9]* lines dropped' "$TEST_DIR/burst.out"; }
wait_until 60 drained || fail "the console drained and said how many lines it dropped"
touch "$TEST_DIR/console.drained"
wait_pid 60 "$launcher"
expect_eq "the launcher exits 0" 0 "$STATUS"
exec 3<&-
wait_pid 10 "$reader"
out=$(cat "$TEST_DIR/burst.out")
expect_eq "every console line is whole" "" \
  "$(grep -Ev '^(\[rank0\]:burst line [0-9]+|\[rank0\]:after the reader came: the last line|dlaunch: console stalled, [0-9]+ lines dropped; .*)$' <<<"$out" | head -n 3)"
expect_eq "the lines that came are in order" "" \
  "$(grep -o '^\[rank0\]:burst line [0-9]*' <<<"$out" | awk '{ n = $3 + 0; if (NR > 1 && n <= last) print "out of order at " n; last = n }' | head -n 3)"
shown=$(grep -c '^\[rank0\]:burst line' <<<"$out")
dropped=$(sed -n 's/^dlaunch: console stalled, \([0-9]*\) lines dropped; .*/\1/p' <<<"$out" | awk '{ s += $1 } END { print s + 0 }')
expect_true "some lines were dropped, and said so" [ "$dropped" -gt 0 ]
expect_eq "shown + dropped = the 200000 lines written" 200000 $((shown + dropped))
expect_contains "the notice says they were not filed" "$out" \
  "lines dropped; they were not filed: pass --log-dir to keep every line"
expect_contains "lines after the stall still arrive" "$out" "[rank0]:after the reader came: the last line"
expect_true "the total is repeated on stderr at the end" \
  grep -q "^dlaunch: console stalled, $dropped lines dropped in all (stdout); they were not filed" "$TEST_DIR/burst.err"
no_leftovers

section "a '\r' progress bar shows live, each drawing before the line's end"
# The worker draws the bar six times and ends the line only after the
# sixth; it draws the next only once this shell saw the last on the console.
BAR=$(write_worker bar.sh <<'EOF'
for step in 1 2 3 4 5 6; do
  printf '\r step %d/6 |%s' "$step" "$(printf '%*s' "$step" '' | tr ' ' '#')"
  wait_files "$DIR/seen.$step"
done
printf ' done\n'
EOF
)
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run --nproc-per-node 1 --log-dir "$TEST_DIR/barlogs" --tee 3 -- "$BAR" \
  >"$TEST_DIR/bar.out" 2>"$TEST_DIR/bar.err" &
launcher=$!
latencies=()
for step in 1 2 3 4 5 6; do
  start_clock
  shows() { grep -q "step $step/6" "$TEST_DIR/bar.out"; }
  if wait_until 30 shows; then
    stop_clock
    latencies+=("${ELAPSED_MS}ms")
    pass "drawing $step/6 is on the console before the line ends"
  else
    fail "drawing $step/6 is on the console before the line ends" "$(cat -A "$TEST_DIR/bar.out" | tail -c 300)"
  fi
  expect_true "and in the log file, as written" grep -q "step $step/6" "$TEST_DIR/barlogs/attempt_0/rank0/stdout.log"
  touch "$TEST_DIR/seen.$step"
done
say "each drawing reached the console after: ${latencies[*]}"
wait_pid 30 "$launcher"
expect_eq "the launcher exits 0" 0 "$STATUS"
expected_console=$(printf '[rank0]: step 1/6 |#')
for step in 2 3 4 5 6; do
  expected_console+=$(printf '\r[rank0]: step %d/6 |%s' "$step" "$(printf '%*s' "$step" '' | tr ' ' '#')")
done
expected_console+=' done'
expect_eq "the bar is redrawn under its prefix, then ended" "$expected_console" "$(cat "$TEST_DIR/bar.out")"
expect_eq "the log file holds the bytes the worker wrote" \
  "$(printf '\r step %d/6 |%s' 1 '#' 2 '##' 3 '###' 4 '####' 5 '#####' 6 '######'; printf ' done')" \
  "$(cat "$TEST_DIR/barlogs/attempt_0/rank0/stdout.log")"
no_leftovers

finish
