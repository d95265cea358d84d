#!/bin/bash
# dlaunch run: the workers' output. Line prefixes on stdout and stderr, the
# --prefix template, whole lines under heavy concurrent output, --log-dir,
# -r / -t, --local-ranks-filter, a last line without newline; and `dlaunch
# env` (text and JSON) in a fake Slurm step, with PET_ and flag overrides.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

BOTH_STREAMS=$(write_worker both_streams.sh <<'EOF'
echo "out of rank $RANK"
echo "err of rank $RANK" >&2
echo "second out of rank $RANK"
EOF
)

section "prefixes [rankN]: on stdout and stderr"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 -- "$BOTH_STREAMS"
stdout=$(cat "$OUT")
stderr=$(cat "$ERR")
for rank in 0 1; do
  expect_contains "stdout has rank $rank's line, prefixed" "$stdout" "[rank$rank]:out of rank $rank"
  expect_contains "stderr has rank $rank's line, prefixed" "$stderr" "[rank$rank]:err of rank $rank"
done
expect_not_contains "no stderr line on stdout" "$stdout" "err of rank"
expect_not_contains "no stdout line on stderr" "$stderr" "out of rank"
expect_eq "per-rank order kept" "[rank1]:out of rank 1,[rank1]:second out of rank 1" \
  "$(grep -F '[rank1]:' "$OUT" | paste -sd,)"

section "--prefix template"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 --prefix '{host}:{rank}>' -- "$BOTH_STREAMS"
host=$(hostname)
expect_contains "stdout lines start with host:rank>" "$(cat "$OUT")" "$host:1>out of rank 1"
expect_contains "stderr lines start with host:rank>" "$(cat "$ERR")" "$host:0>err of rank 0"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 --prefix '<{role}/{node_rank}/{local_rank}> ' -- "$BOTH_STREAMS"
expect_contains "{role} {node_rank} {local_rank} fields" "$(cat "$OUT")" "<default/0/1> out of rank 1"
expect_exit nonzero "$DLAUNCH" run --nproc-per-node 1 --prefix '{nope}' -- "$BOTH_STREAMS"
expect_contains "an unknown field is refused" "$(cat "$ERR")" "--prefix"

section "lines are never torn: 4 workers, 20000 lines each, of varying length"
# Line n of rank r: "r<r> n<n> " then L(n) x's, L(n) = (n*7919) % 700, and a
# 300000-byte line every 2000 lines (more than one read of the launcher).
# awk block-buffers its output, so lines reach the pipe cut at any byte.
CHATTY=$(write_worker chatty.sh <<'EOF'
exec awk -v r="$RANK" 'BEGIN {
  x = "x"; while (length(x) < 300000) x = x x
  for (n = 0; n < 20000; n++) {
    len = (n % 2000 == 1999) ? 300000 : (n * 7919) % 700
    print "r" r " n" n " " substr(x, 1, len)
  }
}'
EOF
)
expect_exit 0 "$DLAUNCH" run --nproc-per-node 4 -- "$CHATTY"
# Prints one complaint per bad line (at most 5) and the lines counted per rank.
verdict=$(awk '
  function bad(why) { if (++errors <= 5) print "line " NR ": " why ": " substr($0, 1, 80) }
  {
    if (!match($0, /^\[rank[0-3]\]:/)) { bad("no prefix"); next }
    r = substr($0, 6, 1); body = substr($0, 9)
    split(body, part, " ")
    if (part[1] != "r" r) { bad("rank " r " printed " part[1]); next }
    n = substr(part[2], 2) + 0
    if ((r in last) ? n != last[r] + 1 : n != 0) bad("rank " r " line " n " out of order")
    last[r] = n; count[r]++
    len = (n % 2000 == 1999) ? 300000 : (n * 7919) % 700
    expected = "r" r " n" n " "
    if (length(body) != length(expected) + len || substr(body, 1, length(expected)) != expected ||
        (len > 0 && body !~ / x+$/)) bad("torn or mixed line")
  }
  END { print "errors " errors + 0; for (r = 0; r < 4; r++) print "rank" r " " count[r] + 0 }
' "$OUT")
expect_eq "every console line is whole, prefixed and in order" "errors 0" "$(grep -v '^rank' <<<"$verdict" | tail -n 1)"
[ "$(grep -c '^line' <<<"$verdict")" -gt 0 ] && say "$(grep '^line' <<<"$verdict")"
for rank in 0 1 2 3; do
  expect_eq "rank $rank: 20000 lines" "rank$rank 20000" "$(grep "^rank$rank " <<<"$verdict")"
done

section "--log-dir writes unprefixed files per attempt and rank"
LOGS=$TEST_DIR/logs
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 --log-dir "$LOGS" -- "$BOTH_STREAMS"
for rank in 0 1; do
  expect_eq "rank $rank stdout.log" "out of rank $rank
second out of rank $rank" "$(cat "$LOGS/attempt_0/rank$rank/stdout.log" 2>&1)"
  expect_eq "rank $rank stderr.log" "err of rank $rank" "$(cat "$LOGS/attempt_0/rank$rank/stderr.log" 2>&1)"
done
expect_contains "the console still shows stdout" "$(cat "$OUT")" "[rank0]:out of rank 0"
expect_contains "the console still shows stderr" "$(cat "$ERR")" "[rank1]:err of rank 1"

section "-r 3 keeps the output off the console, in the files"
LOGS=$TEST_DIR/logs_r3
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 -r 3 --log-dir "$LOGS" -- "$BOTH_STREAMS"
expect_not_contains "no worker line on stdout" "$(cat "$OUT")" "of rank"
expect_not_contains "no worker line on stderr" "$(cat "$ERR")" "of rank"
expect_contains "stdout.log has it" "$(cat "$LOGS/attempt_0/rank1/stdout.log" 2>&1)" "out of rank 1"
expect_contains "stderr.log has it" "$(cat "$LOGS/attempt_0/rank1/stderr.log" 2>&1)" "err of rank 1"
# Without --log-dir the files go to a kept temporary folder that dlaunch names.
expect_exit 0 "$DLAUNCH" run --nproc-per-node 1 -r 3 -- "$BOTH_STREAMS"
folder=$(sed -n 's/^dlaunch: worker logs are in //p' "$ERR")
expect_contains "dlaunch says where the logs are" "$(cat "$ERR")" "worker logs are in $TEST_DIR/"
expect_contains "that folder has rank 0's stdout" "$(cat "$folder/attempt_0/rank0/stdout.log" 2>&1)" "out of rank 0"

section "-r 0:1 (per rank): only rank 0's stdout is redirected"
LOGS=$TEST_DIR/logs_r01
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 -r 0:1 --log-dir "$LOGS" -- "$BOTH_STREAMS"
expect_not_contains "rank 0's stdout is off the console" "$(cat "$OUT")" "[rank0]:"
expect_contains "rank 0's stderr is on the console" "$(cat "$ERR")" "[rank0]:err of rank 0"
expect_contains "rank 1's stdout is on the console" "$(cat "$OUT")" "[rank1]:out of rank 1"
expect_contains "rank 0's stdout.log has it" "$(cat "$LOGS/attempt_0/rank0/stdout.log" 2>&1)" "out of rank 0"

section "--redirects 3 (long form)"
LOGS=$TEST_DIR/logs_redirects
expect_exit 0 "$DLAUNCH" run --nproc-per-node 1 --redirects 3 --log-dir "$LOGS" -- "$BOTH_STREAMS"
expect_not_contains "no worker line on the console" "$(cat "$OUT" "$ERR")" "of rank"
expect_contains "stderr.log has it" "$(cat "$LOGS/attempt_0/rank0/stderr.log" 2>&1)" "err of rank 0"

section "-t 1 tees stdout"
LOGS=$TEST_DIR/logs_t1
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 -t 1 --log-dir "$LOGS" -- "$BOTH_STREAMS"
expect_contains "stdout on the console" "$(cat "$OUT")" "[rank1]:out of rank 1"
expect_contains "stderr on the console" "$(cat "$ERR")" "[rank1]:err of rank 1"
expect_eq "stdout in stdout.log" "out of rank 1
second out of rank 1" "$(cat "$LOGS/attempt_0/rank1/stdout.log" 2>&1)"

section "--local-ranks-filter 0 shows only rank 0"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 3 --local-ranks-filter 0 -- "$BOTH_STREAMS"
expect_contains "rank 0's stdout shown" "$(cat "$OUT")" "[rank0]:out of rank 0"
expect_contains "rank 0's stderr shown" "$(cat "$ERR")" "[rank0]:err of rank 0"
expect_not_contains "rank 1 hidden (stdout)" "$(cat "$OUT")" "[rank1]"
expect_not_contains "rank 2 hidden (stderr)" "$(cat "$ERR")" "[rank2]"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 3 --local-ranks-filter 0,2 -- "$BOTH_STREAMS"
expect_eq "--local-ranks-filter 0,2 shows ranks 0 and 2" "[rank0] [rank2]" \
  "$(grep -o '^\[rank[0-9]\]' "$OUT" | sort -u | paste -sd' ')"

section "a last line without newline is shown"
NO_NEWLINE=$(write_worker no_newline.sh <<'EOF'
echo "first line"
printf 'last words, no newline'
printf 'error, no newline' >&2
EOF
)
expect_exit 0 "$DLAUNCH" run --nproc-per-node 1 -- "$NO_NEWLINE"
expect_eq "stdout ends with the prefixed line" "[rank0]:last words, no newline" "$(tail -n 1 "$OUT")"
expect_eq "stdout's last byte is a newline" "0a" "$(tail -c 1 "$OUT" | od -An -tx1 | tr -d ' ')"
expect_contains "stderr's unterminated line too" "$(cat "$ERR")" "[rank0]:error, no newline"

section "dlaunch env in a fake Slurm step"
(
  export SLURM_JOB_ID=1234 SLURM_NODEID=1 SLURM_STEP_ID=0 SLURM_STEP_NUM_NODES=2
  export SLURM_STEP_NODELIST='node[07-08]' SLURM_GPUS_ON_NODE=4
  unset SLURM_JOB_NUM_NODES SLURM_NNODES SLURM_STEP_RESV_PORTS PET_NPROC_PER_NODE PET_NNODES
  "$DLAUNCH" env >"$TEST_DIR/env.txt" 2>&1
  echo $? >"$TEST_DIR/env.txt.status"
  "$DLAUNCH" env --json >"$TEST_DIR/env.json" 2>&1
  echo $? >"$TEST_DIR/env.json.status"
  PET_NPROC_PER_NODE=3 "$DLAUNCH" env --json >"$TEST_DIR/env_pet.json" 2>&1
  PET_NPROC_PER_NODE=3 "$DLAUNCH" env --json --nproc-per-node 2 >"$TEST_DIR/env_flag.json" 2>&1
)
text=$(cat "$TEST_DIR/env.txt")
expect_eq "dlaunch env exits 0" 0 "$(cat "$TEST_DIR/env.txt.status")"
expect_true "text: 2 nodes from SLURM_STEP_NUM_NODES" grep -Eq '^ *nodes +2 .*\(SLURM_STEP_NUM_NODES\)' <<<"$text"
expect_true "text: node rank 1 from SLURM_NODEID" grep -Eq '^ *node rank +1 .*\(SLURM_NODEID\)' <<<"$text"
expect_true "text: 4 workers from SLURM_GPUS_ON_NODE" grep -Eq '^ *workers on this node +4 .*\(SLURM_GPUS_ON_NODE\)' <<<"$text"
expect_true "text: master node07 from the node list" grep -Eq '^ *master address +node07 .*SLURM_STEP_NODELIST' <<<"$text"
expect_eq "dlaunch env --json exits 0" 0 "$(cat "$TEST_DIR/env.json.status")"
expect_true "--json output is valid JSON" "$PY" -m json.tool "$TEST_DIR/env.json" /dev/null
# FILE KEY: "value (source)" of one entry of the JSON document.
json_entry() {
  "$PY" -c 'import json, sys
entry = json.load(open(sys.argv[1]))[sys.argv[2]]
print("%s (%s)" % (entry["value"], entry["source"]))' "$1" "$2" 2>&1
}
expect_eq "json: nnodes" "2 (SLURM_STEP_NUM_NODES)" "$(json_entry "$TEST_DIR/env.json" nnodes)"
expect_eq "json: node_rank" "1 (SLURM_NODEID)" "$(json_entry "$TEST_DIR/env.json" node_rank)"
expect_eq "json: nproc_per_node" "4 (SLURM_GPUS_ON_NODE)" "$(json_entry "$TEST_DIR/env.json" nproc_per_node)"
expect_contains "json: master_addr" "$(json_entry "$TEST_DIR/env.json" master_addr)" "node07 ("
expect_eq "json: run_id" "1234.0 (SLURM_JOB_ID)" "$(json_entry "$TEST_DIR/env.json" run_id)"
expect_eq "PET_NPROC_PER_NODE=3 overrides Slurm" "3 (PET_NPROC_PER_NODE)" "$(json_entry "$TEST_DIR/env_pet.json" nproc_per_node)"
expect_eq "--nproc-per-node 2 overrides PET_" "2 (--nproc-per-node)" "$(json_entry "$TEST_DIR/env_flag.json" nproc_per_node)"

no_leftovers
finish
