#!/bin/bash
# dlaunch run --log-dir and links planted in it (issue 24): a user who made
# the log folder, or could write in it, planted symbolic links at a rank's
# stdout.log, its .times and the temporary names records were written
# through, and a root run overwrote the files they named. Now nothing is
# written through a link (the log goes to the console instead, and the
# notice names the file), records replace the link instead of following it,
# temporaries have random names, and a log folder of another user, or one
# everyone may write without the sticky bit, is refused before anything
# runs.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

HOST=$(hostname)
VICTIMS=$TEST_DIR/victims
mkdir -p "$VICTIMS"
for name in stdout times stderr node0 result rendezvous temporary rank1_times; do
  printf 'precious %s\n' "$name" >"$VICTIMS/$name"
done
(cd "$VICTIMS" && sha256sum -- *) >"$TEST_DIR/victims.sum"
victims_untouched() { (cd "$VICTIMS" && sha256sum --quiet -c "$TEST_DIR/victims.sum"); }

WORKER=$(write_worker worker.sh <<'EOF'
echo "out of rank $RANK"
echo "err of rank $RANK" >&2
touch "$DIR/ran.$RANK"
EOF
)

# plant LOGS: the links of the issue, and temporary names of every shape
# dlaunch ever used for the next pids (".<pid>.tmp", ".<host>.<pid>.<n>.tmp").
plant() {
  local logs=$1 pid base
  mkdir -p "$logs/attempt_0/rank0" "$logs/attempt_0/rank1"
  ln -s "$VICTIMS/stdout" "$logs/attempt_0/rank0/stdout.log"
  ln -s "$VICTIMS/times" "$logs/attempt_0/rank0/stdout.times"
  ln "$VICTIMS/stderr" "$logs/attempt_0/rank0/stderr.log" # a hard link: the same file
  ln -s "$VICTIMS/rank1_times" "$logs/attempt_0/rank1/stdout.times"
  ln -s "$VICTIMS/node0" "$logs/attempt_0/node0.json"
  ln -s "$VICTIMS/result" "$logs/result.json"
  ln -s "$VICTIMS/rendezvous" "$logs/rendezvous.json"
  for pid in $(seq $$ $(($$ + 150))); do
    for base in "$logs/rendezvous.json" "$logs/attempt_0/node0.json" "$logs/result.json"; do
      ln -s "$VICTIMS/temporary" "$base.$pid.tmp"
      ln -s "$VICTIMS/temporary" "$base.$HOST.$pid.0.tmp"
    done
  done
}

section "links planted in a log folder of ours: 2 nodes, nothing written through them"
LOGS=$TEST_DIR/logs
plant "$LOGS"
links_before=$(find "$LOGS" -type l | wc -l)
port=$(free_port)
common=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" --log-dir "$LOGS")
timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 1 -- "$WORKER" \
  >"$TEST_DIR/node1.out" 2>"$TEST_DIR/node1.err" &
node1=$!
expect_exit 0 "$DLAUNCH" run "${common[@]}" --node-rank 0 -- "$WORKER"
wait "$node1"
expect_eq "node 1 ends well too" 0 $?
node0_err=$(cat "$ERR")
expect_true "every victim file is unchanged" victims_untouched
expect_contains "rank 0's stdout.log is refused, named, and why" "$node0_err" \
  "rank 0's stdout log $LOGS/attempt_0/rank0/stdout.log could not be created: it is a symbolic link, and dlaunch never writes through one"
expect_contains "rank 0's stderr.log, a hard link, is refused" "$node0_err" \
  "rank 0's stderr log $LOGS/attempt_0/rank0/stderr.log could not be created: it has 2 names (hard links)"
expect_contains "rank 0's output goes to the console instead" "$(cat "$OUT")" "[rank0]:out of rank 0"
expect_contains "and its stderr too" "$node0_err" "[rank0]:err of rank 0"
expect_contains "rank 1's time index is refused and named" "$(cat "$TEST_DIR/node1.err")" \
  "rank 1's time index $LOGS/attempt_0/rank1/stdout.times is not written: it is a symbolic link"
expect_eq "rank 1's log is written, as a plain file" "out of rank 1" "$(cat "$LOGS/attempt_0/rank1/stdout.log")"
expect_true "rank 0's stdout.log is still the link, not followed" test -L "$LOGS/attempt_0/rank0/stdout.log"
expect_true "node0.json replaced the link planted there" test -f "$LOGS/attempt_0/node0.json" -a ! -L "$LOGS/attempt_0/node0.json"
expect_contains "node0.json is the record" "$(cat "$LOGS/attempt_0/node0.json")" '"node_rank": 0'
expect_true "result.json replaced the link planted there" test -f "$LOGS/result.json" -a ! -L "$LOGS/result.json"
expect_true "rendezvous.json replaced the link planted there" test -f "$LOGS/rendezvous.json" -a ! -L "$LOGS/rendezvous.json"
links_after=$(find "$LOGS" -type l | wc -l)
expect_eq "the planted temporary links are all still links (none was used)" $((links_before - 3)) "$links_after"
expect_eq "no temporary of this run is left" "" "$(find "$LOGS" -name '*.tmp' ! -type l)"

section "--log-dir-required: a planted link stops the job, and is named"
LOGS=$TEST_DIR/logs_required
plant "$LOGS"
expect_exit 1 "$DLAUNCH" run --nproc-per-node 1 --log-dir "$LOGS" --log-dir-required -- "$WORKER"
expect_true "every victim file is unchanged" victims_untouched
expect_contains "the failure names the file and why" "$(cat "$ERR")" \
  "its stdout log $LOGS/attempt_0/rank0/stdout.log could not be created (it is a symbolic link"

section "a log folder everyone may write, without the sticky bit, is refused"
OPEN=$TEST_DIR/open
mkdir "$OPEN"
chmod 0777 "$OPEN"
rm -f "$TEST_DIR"/ran.*
expect_exit 2 "$DLAUNCH" run --nproc-per-node 1 --log-dir "$OPEN" -- "$WORKER"
expect_contains "the refusal names the folder, what is wrong and the fix" "$(cat "$ERR")" \
  "--log-dir '$OPEN' may be written by every user and has no sticky bit: another user could plant symbolic links there that dlaunch would write through. Choose a folder only you may write, or: chmod o-w $OPEN"
expect_true "no worker ran" test ! -e "$TEST_DIR/ran.0"
expect_eq "nothing was written in it" "" "$(ls -A "$OPEN")"
chmod 1777 "$OPEN"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 1 --log-dir "$OPEN" -- "$WORKER"
expect_eq "with the sticky bit (as /tmp) it is taken" "out of rank 0" "$(cat "$OPEN/attempt_0/rank0/stdout.log")"

section "the issue's case: root, and a log folder another user made and planted"
if [ "$(id -u)" -ne 0 ]; then
  say "  skip  (needs root to give a folder to another user)"
else
  THEIRS=$TEST_DIR/theirs
  plant "$THEIRS"
  chown -R -h nobody "$THEIRS"
  rm -f "$TEST_DIR"/ran.*
  expect_exit 2 "$DLAUNCH" run --nproc-per-node 2 --log-dir "$THEIRS" -- "$WORKER"
  expect_contains "the refusal names the folder and its owner" "$(cat "$ERR")" \
    "--log-dir '$THEIRS' belongs to another user (uid $(id -u nobody)), not to you (uid 0)"
  expect_contains "and says what to do" "$(cat "$ERR")" "Choose a folder you own"
  expect_true "no worker ran" test ! -e "$TEST_DIR/ran.0"
  expect_true "every victim file is unchanged" victims_untouched
fi

finish
