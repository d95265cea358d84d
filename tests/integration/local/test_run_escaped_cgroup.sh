#!/bin/bash
# dlaunch run --kill-escaped cgroup: every worker joins a cgroup v2 child of
# the launcher's own cgroup before its exec, so a process that leaves its
# group (setsid) is still caught: at the end of the round, and by the
# watchdog when the launcher itself is killed with SIGKILL, which the
# default subreaper cannot catch. The cgroup is removed afterwards.
# Skipped (77) where cgroup v2 is not writable.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_command setsid

TRUE_WORKER=$(write_worker true.sh <<'EOF'
exit 0
EOF
)
"$DLAUNCH" run --kill-escaped cgroup -- "$TRUE_WORKER" >"$OUT" 2>"$ERR" ||
  skip "cgroup v2 is not writable here: $(cat "$ERR")"

# The folder of this shell's cgroup v2, where the launcher makes dlaunch-PID.
CGROUP_DIR=$("$PY" -c '
import sys
path = next(l[3:].strip() for l in open("/proc/self/cgroup") if l.startswith("0::"))
for line in open("/proc/self/mountinfo"):
    fields, _, rest = line.partition(" - ")
    if rest.startswith("cgroup2 "):
        f = fields.split()
        print(f[4] + (path[len(f[3]):] if f[3] != "/" else path).rstrip("/"))
        sys.exit(0)
sys.exit(1)') || skip "no cgroup v2 mount"

DAEMON_WORKER=$(write_worker daemon.sh <<'EOF'
cat /proc/self/cgroup >"$DIR/cgroup.$RANK"
setsid -f bash -c 'echo $$ >"$2.tmp"; mv "$2.tmp" "$2"; exec -a "$1" sleep 300' \
  _ "$0.daemon" "$DIR/daemon.$RANK.pid" </dev/null >/dev/null 2>&1
wait_files "$DIR/daemon.$RANK.pid"
[ "${THEN:-}" = sleep ] && marked_sleep 300
exit 0
EOF
)

# dead PID: PID is gone or a zombie (killed; its new parent, init or
# another subreaper, reaps it in its own time).
dead() { _pid_gone "$1" || [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]; }

section "the daemons are killed at the end of the round, and the cgroup is removed"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 --kill-escaped cgroup -- "$DAEMON_WORKER"
launcher_pid=$(sed -n 's|^0::.*/dlaunch-\([0-9]*\)$|\1|p' "$TEST_DIR/cgroup.0")
expect_true "the workers ran in the launcher's cgroup dlaunch-PID" [ -n "$launcher_pid" ]
for rank in 0 1; do
  expect_true "rank $rank's daemon is dead" wait_until 10 dead "$(cat "$TEST_DIR/daemon.$rank.pid")"
done
expect_true "the cgroup was removed" [ ! -e "$CGROUP_DIR/dlaunch-$launcher_pid" ]
no_leftovers

section "the launcher is killed with SIGKILL: the watchdog kills the cgroup"
rm -f "$TEST_DIR"/daemon.*.pid
timeout -k 10 "$RUN_LIMIT" env THEN=sleep "$DLAUNCH" run --nproc-per-node 1 --kill-escaped cgroup \
  -- "$DAEMON_WORKER" >"$OUT" 2>"$ERR" &
wrapper=$!
wait_for_files 30 "$TEST_DIR/daemon.0.pid" || fail "the worker started its daemon"
launcher=$(pgrep -P "$wrapper" -x dlaunch)
kill -KILL "$launcher"
wait_pid 30 "$wrapper"
no_leftovers "the daemon went with the launcher's cgroup"
expect_true "the watchdog removed the cgroup" wait_until 10 test ! -e "$CGROUP_DIR/dlaunch-$launcher"

section "where the cgroup cannot be made, the error names it and the alternative"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  # As nobody, the launcher may not write to root's cgroup.
  chmod 755 "$TEST_DIR"
  expect_exit 1 setpriv --reuid nobody --regid nogroup --clear-groups \
    "$DLAUNCH" run --kill-escaped cgroup -- "$TRUE_WORKER"
  expect_contains "it names the cgroup and the error" "$(cat "$ERR")" \
    "cannot create the cgroup $CGROUP_DIR/dlaunch-"
  expect_contains "it names the alternative" "$(cat "$ERR")" "use --kill-escaped subreaper"
else
  say "(needs root and setpriv to try as another user)"
fi

no_leftovers
finish
