#!/usr/bin/env bash
# The console relay under srun on the real Slurm test cluster: 8 workers
# under one `srun -N1 dlaunch run` print a 3,000-line burst each at once
# (2.4 MB in all, far more than srun's I/O path takes without a pause),
# and every line of every rank must reach srun's stdout, whole and in
# order. Three runs read by a plain pipe, and one whose reader comes only
# once the workers wait in their writes: backpressure from srun's stdout
# through slurmstepd and the launcher to the workers, nothing lost.
. "$(dirname "$0")/../lib.sh"

[ -n "${DLAUNCH_CLUSTER_DIR:-}" ] && [ -f "$DLAUNCH_CLUSTER_DIR/env.sh" ] ||
  skip "no test cluster is up (DLAUNCH_CLUSTER_DIR unset or without env.sh)"
. "$DLAUNCH_CLUSTER_DIR/env.sh"
require_command srun
RUN_LIMIT=${DLAUNCH_TEST_RUN_LIMIT:-300}
WORKERS=8
LINES=3000

# LINES lines of 100 bytes ($1, 3,000 by default), written at once
# through stdio's buffer.
BURST=$(write_worker burst.sh <<'EOF'
pad=$(printf '%*s' 70 '' | tr ' ' x)
exec seq -f "rank $RANK line %04g $pad" 0 $((${1:-3000} - 1))
EOF
)

# check_burst FILE [LINES]: every rank's LINES lines are in FILE, whole, in order.
check_burst() {
  local verdict lines=${2:-$LINES}
  verdict=$(awk -v ranks="$WORKERS" -v lines="$lines" '
    {
      if (match($0, /^\[rank[0-9]+\]:rank [0-9]+ line [0-9]+ x+$/) == 0) { print "torn or foreign line " NR ": " substr($0, 1, 80); bad = 1; exit }
      split($0, f, " ")
      r = f[2] + 0; n = f[4] + 0
      if (substr($0, 1, length("[rank" r "]:")) != "[rank" r "]:") { print "prefix of another rank at line " NR; bad = 1; exit }
      if (n != next_line[r]) { print "rank " r ": line " n " where " next_line[r] " was due"; bad = 1; exit }
      next_line[r] = n + 1
    }
    END {
      if (bad) exit
      for (r = 0; r < ranks; r++) if (next_line[r] != lines) { print "rank " r ": " next_line[r] + 0 " of " lines " lines"; exit }
      print "complete"
    }' "$1")
  expect_eq "every rank's $lines lines arrived, whole and in order" complete "$verdict"
}

for run in 1 2 3; do
  section "run $run/3: srun -N1 dlaunch run --nproc-per-node $WORKERS, 8 simultaneous bursts, read by a pipe"
  timeout -k 10 "$RUN_LIMIT" srun -N1 -n1 "$DLAUNCH" run --nproc-per-node "$WORKERS" -- "$BURST" \
    2>"$TEST_DIR/run$run.err" | cat >"$TEST_DIR/run$run.out"
  expect_eq "srun exits 0" 0 "${PIPESTATUS[0]}"
  check_burst "$TEST_DIR/run$run.out"
  expect_not_contains "nothing was dropped" "$(cat "$TEST_DIR/run$run.err")" "dropped"
done

section "srun's stdout stalls until the workers wait in their writes; then every line arrives"
# 30,000 lines (3 MB) a worker: more than its pipe (1 MiB) and its share of
# the launcher's backlog hold, so every worker ends up waiting.
BIG=30000
FIFO=$TEST_DIR/stalled.fifo
mkfifo "$FIFO"
exec 3<>"$FIFO"  # held open, never read: srun's writes stall once it is full
timeout -k 10 "$RUN_LIMIT" srun -N1 -n1 "$DLAUNCH" run --nproc-per-node "$WORKERS" -- "$BURST" "$BIG" \
  >"$FIFO" 2>"$TEST_DIR/stalled.err" 3>&- &
srun_pid=$!
# A worker's seq blocks in a pipe write once its pipe, the launcher's
# backlog, slurmstepd's buffers (several MB: some workers finish into them)
# and the FIFO are full.
writers_waiting() {
  local pid waiting=0
  for pid in $(pgrep -f "seq -f rank .* line"); do
    grep -q pipe "/proc/$pid/wchan" 2>/dev/null && waiting=$((waiting + 1))
  done
  echo "$waiting"
}
some_writer_waits() { [ "$(writers_waiting)" -ge 1 ]; }
if wait_until 60 some_writer_waits; then
  pass "the workers wait in their writes while nobody reads srun's stdout ($(writers_waiting) of $WORKERS)"
else
  fail "the workers wait in their writes while nobody reads srun's stdout"
fi
expect_true "srun still runs" kill -0 "$srun_pid"
cat "$FIFO" >"$TEST_DIR/stalled.out" 3<&- &
reader=$!
wait_pid "$RUN_LIMIT" "$srun_pid"
expect_eq "srun exits 0" 0 "$STATUS"
exec 3<&-
wait_pid 30 "$reader"
check_burst "$TEST_DIR/stalled.out" "$BIG"
expect_not_contains "nothing was dropped" "$(cat "$TEST_DIR/stalled.err")" "dropped"
no_leftovers

finish
