#!/bin/bash
# dlaunch run and the processes that escape a worker's process group: a
# worker starts a daemon with `setsid -f` (a session and group of its own)
# and exits 0. By default (--kill-escaped subreaper) the launcher adopts
# the orphan and kills it once the workers have exited; with
# --kill-escaped off it survives the job, which shows that the test can
# tell. Also the option's spellings in `dlaunch env`. The cgroup mode has
# its own test (test_run_escaped_cgroup.sh): it needs a writable cgroup v2.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_command setsid

# The daemon's command line carries the marker ("$0.daemon"), so
# no_leftovers sees it; it records its pid before it becomes the sleep.
DAEMON_WORKER=$(write_worker daemon.sh <<'EOF'
setsid -f bash -c 'echo $$ >"$2.tmp"; mv "$2.tmp" "$2"; exec -a "$1" sleep 300' \
  _ "$0.daemon" "$DIR/daemon.$RANK.pid" </dev/null >/dev/null 2>&1
wait_files "$DIR/daemon.$RANK.pid"
echo "rank $RANK started a daemon"
EOF
)

section "default: the daemon a worker left behind is killed when the workers exit"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 -- "$DAEMON_WORKER"
expect_contains "the workers ran" "$(cat "$OUT")" "[rank1]:rank 1 started a daemon"
for rank in 0 1; do
  pid=$(cat "$TEST_DIR/daemon.$rank.pid")
  expect_true "rank $rank's daemon ($pid) is gone" _pid_gone "$pid"
done
no_leftovers "no daemon is left"

section "--kill-escaped off: the daemon survives the job (as before)"
rm -f "$TEST_DIR"/daemon.*.pid
expect_exit 0 "$DLAUNCH" run --nproc-per-node 1 --kill-escaped off -- "$DAEMON_WORKER"
pid=$(cat "$TEST_DIR/daemon.0.pid")
expect_true "the daemon ($pid) is still there" kill -0 "$pid"
expect_true "it carries the marker" pgrep -f "$TEST_DIR/daemon.sh.daemon"
kill -KILL "$pid"
no_leftovers

section "PET_KILL_ESCAPED, and dlaunch env shows the mode"
rm -f "$TEST_DIR"/daemon.*.pid
expect_exit 0 env PET_KILL_ESCAPED=off "$DLAUNCH" run --nproc-per-node 1 -- "$DAEMON_WORKER"
pid=$(cat "$TEST_DIR/daemon.0.pid")
expect_true "PET_KILL_ESCAPED=off: the daemon is still there" kill -0 "$pid"
kill -KILL "$pid"
expect_exit 0 "$DLAUNCH" env
expect_true "the default is shown with its source" \
  grep -Eq '^ *escaped processes +subreaper +\(default: ' "$OUT"
expect_exit 0 env PET_KILL_ESCAPED=cgroup "$DLAUNCH" env --json
expect_contains "PET_KILL_ESCAPED in --json" "$(tr -d ' \n' <"$OUT")" \
  '"kill_escaped":{"source":"PET_KILL_ESCAPED:'
expect_exit 2 "$DLAUNCH" run --kill-escaped everything -- "$DAEMON_WORKER"
expect_contains "a bad mode is refused, naming the option" "$(cat "$ERR")" \
  "--kill-escaped must be subreaper"
no_leftovers

finish
