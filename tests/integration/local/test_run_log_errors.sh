#!/bin/bash
# dlaunch run with --log-dir on a full file system: a 1 MiB tmpfs, and
# workers that write more than that. Logs must not kill training, and no
# output may be lost silently: the job goes on and exits 0, the launcher
# names the file, the error and the bytes lost at once and again at the
# end, and every line still reaches the console, also for streams that
# -r sent to the files only. With --log-dir-required the job stops instead,
# naming the rank and the file. Needs root (mount); skipped otherwise.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" = 0 ] || skip "mounting a 1 MiB tmpfs needs root"
FULL=$TEST_DIR/full
mkdir "$FULL"
mount -t tmpfs -o size=1m tmpfs "$FULL" 2>/dev/null || skip "cannot mount a tmpfs here"
# Unmounted whatever happens, before lib.sh removes the test folder.
trap 'umount "$FULL" 2>/dev/null; _lib_cleanup' EXIT
# empty_disk: a fresh, empty 1 MiB file system for the next run.
empty_disk() { rm -rf "${FULL:?}"/*; }

# Writes $LINES (10000) lines of 64 bytes (640 KB) to the stream in
# $STREAM (1 or 2): two workers write 1.28 MB in all, more than the file
# system holds.
FLOOD=$(write_worker flood.sh <<'EOF'
awk -v r="$RANK" -v lines="${LINES:-10000}" 'BEGIN { for (n = 0; n < lines; n++) printf "rank %d line %05d %s\n", r, n, "................................................" }' >&"${STREAM:-1}"
[ "${THEN:-}" = sleep ] && marked_sleep 300
exit "${EXIT:-0}"
EOF
)

# count_lines FILE RANK: how many whole lines of rank RANK are in FILE.
count_lines() { grep -Ec "^(\[rank$2\]:)?rank $2 line [0-9]{5} \.{48}$" "$1"; }

section "--log-dir on a full disk: the job goes on, says so, and the console has everything"
empty_disk
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 --log-dir "$FULL" -- "$FLOOD"
err=$(cat "$ERR")
expect_true "the error names a log file on the full disk and ENOSPC" \
  grep -Eq "^dlaunch: rank [01]'s stdout log $FULL/attempt_0/rank[01]/stdout.log could not be written: No space left on device; [0-9]+ bytes of its output are not in that file, which holds only its first [0-9]+ bytes\. dlaunch writes nothing more to it; rank [01]'s stdout goes to the console instead$" <<<"$err"
expect_true "the end of the run lists the incomplete file, from which byte, and why" \
  grep -Eq "^dlaunch:   $FULL/attempt_0/rank[01]/stdout.log: rank [01]'s stdout from byte [0-9]+ on is missing \(No space left on device\); [0-9]+ bytes were not filed$" <<<"$err"
expect_contains "the summary's heading" "$err" "incomplete:"
for rank in 0 1; do
  expect_eq "rank $rank: every line reached the console" 10000 "$(count_lines "$OUT" "$rank")"
done
# The file holds a prefix of the output and nothing after the failure: no hole.
for rank in 0 1; do
  file=$FULL/attempt_0/rank$rank/stdout.log
  expected=$(awk -v r="$rank" 'BEGIN { for (n = 0; n < 10000; n++) printf "rank %d line %05d %s\n", r, n, "................................................" }' | head -c "$(stat -c %s "$file")")
  expect_true "rank $rank's log is an uncut prefix of its output" [ "$(cat "$file")" == "$expected" ]
done

section "-r 3 on a full disk: what the file missed goes to the console, from that line's start"
empty_disk
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 -r 3 --log-dir "$FULL" -- "$FLOOD"
for rank in 0 1; do
  # The file may end in the part of a line it could take: a newline keeps
  # that apart from the console's first line.
  covered=$({ cat "$FULL/attempt_0/rank$rank/stdout.log"; echo; sed -n "s/^\[rank$rank\]://p" "$OUT"; } |
    grep -Eo "^rank $rank line [0-9]{5} \.{48}$" | sort -u | wc -l)
  expect_eq "rank $rank: every line is in its file or on the console" 10000 "$covered"
done
expect_eq "no half line on the console" "" "$(grep -Ev '^\[rank[01]\]:rank [01] line [0-9]{5} \.{48}$' "$OUT" | head -n 3)"
expect_true "some lines only reached the console" grep -q '^\[rank' "$OUT"

section "the failure summary marks a failed worker's incomplete log"
empty_disk
# One worker, 1.28 MB to stderr: its own stderr.log is the one cut.
expect_exit 3 env STREAM=2 EXIT=3 LINES=20000 "$DLAUNCH" run --nproc-per-node 1 --log-dir "$FULL" -- "$FLOOD"
expect_true "its log file line says it is incomplete" \
  grep -Eq "^dlaunch:   log file    $FULL/attempt_0/rank0/stderr.log \(incomplete: everything from byte [0-9]+ on is missing: No space left on device\)$" "$ERR"

section "--log-dir-required: a log file that cannot be written stops the job"
empty_disk
start_clock
expect_exit 1 env THEN=sleep "$DLAUNCH" run --nproc-per-node 2 --log-dir "$FULL" --log-dir-required \
  --shutdown-timeout 5 -- "$FLOOD"
stop_clock
expect_within "it stopped the workers (they would sleep for 300 s)" 60
expect_true "the first failure names the rank and the file" \
  grep -Eq "^dlaunch: first failure: rank ([01]) on .+ \(node 0\): its stdout log $FULL/attempt_0/rank\1/stdout.log could not be written \(No space left on device\), and --log-dir-required stops the job when a log file fails$" "$ERR"
expect_contains "the notice says the job stops" "$(cat "$ERR")" "--log-dir-required: stopping the job"
PET_LOG_DIR_REQUIRED=1 "$DLAUNCH" env --log-dir "$FULL" >"$OUT" 2>&1
expect_true "dlaunch env shows it" grep -Eq '^ *log files required +yes ' "$OUT"

no_leftovers
finish
