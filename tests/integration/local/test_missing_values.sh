#!/bin/bash
# A value left out never swallows the next option (issue 26, item 1): the
# exact lines users typed are refused with exit code 2 and a message naming
# the option, and nothing runs: no sbatch (a fake one first in PATH records
# any call), no ssh, no worker. What is a value stays one (--opt=--value,
# -1, PROGRAM's own words after it). And dlaunch's first word (issue 26,
# item 11): bare `dlaunch` exits 2 with its usage on stderr, a program or a
# run option first suggests `dlaunch run`, a misspelt --version is named;
# `dlaunch logs --json` prints one JSON object per line.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

cd "$TEST_DIR" || exit 1

# Fakes of the programs a swallowed option would have reached: each records
# that it ran.
mkdir -p bin
for program in sbatch srun ssh scontrol; do
  printf '#!/bin/sh\necho "$0 $*" >>%q/called\necho "Submitted batch job 1"\n' "$TEST_DIR" >"bin/$program"
  chmod +x "bin/$program"
done
export PATH=$TEST_DIR/bin:$PATH
nothing_ran() { expect_true "nothing ran (sbatch, srun, ssh, a worker)" test ! -e called -a ! -e worker_ran; }

printf 'print("train")\n' >train.py
WORKER=$(write_worker w.sh <<'EOF'
echo "$@" >"$DIR/worker_ran"
EOF
)
# The program the swallowed value would have made of "2".
printf '#!/bin/sh\ntouch %q/worker_ran\n' "$TEST_DIR" >2
chmod +x 2

section "dlaunch submit --partition --dry-run -- train.py"
expect_exit 2 "$DLAUNCH" submit --partition --dry-run -- train.py
expect_contains "names the option and the word it met" "$(cat "$ERR")" \
  "dlaunch: error: dlaunch submit: --partition needs a value (NAME), got the option --dry-run;"
expect_contains "says how to mean it" "$(cat "$ERR")" "write --partition=--dry-run if you mean that text"
nothing_ran

section "dlaunch submit --job-name --dry-run -- train.py, and sbatch's short spelling"
expect_exit 2 "$DLAUNCH" submit --job-name --dry-run -- train.py
expect_contains "names --job-name" "$(cat "$ERR")" "--job-name needs a value (NAME), got the option --dry-run"
expect_exit 2 "$DLAUNCH" submit -p -N 2 train.py
expect_contains "a short option of submit is no value" "$(cat "$ERR")" "-p needs a value (NAME), got the option -N"
expect_exit 2 "$DLAUNCH" submit --sbatch-arg --exclusive --dry-run train.py
expect_contains "a pass-through option's --value takes '='" "$(cat "$ERR")" "write --sbatch-arg=--exclusive"
nothing_ran

section "dlaunch run --log-dir --nproc-per-node 2 w.sh"
expect_exit 2 "$DLAUNCH" run --log-dir --nproc-per-node 2 "$WORKER"
expect_contains "names --log-dir" "$(cat "$ERR")" \
  "dlaunch run: --log-dir needs a value (DIR), got the option --nproc-per-node"
expect_exit 2 "$DLAUNCH" run --prefix --log-dir logs "$WORKER"
expect_contains "names --prefix" "$(cat "$ERR")" "--prefix needs a value (TEMPLATE), got the option --log-dir"
expect_exit 2 "$DLAUNCH" run --log-dir -- "$WORKER"
expect_contains "'--' is no value either" "$(cat "$ERR")" "--log-dir needs a value (DIR), got '--'"
expect_exit 2 "$DLAUNCH" run --log-dir -m mypkg.train
expect_contains "nor is run's -m" "$(cat "$ERR")" "--log-dir needs a value (DIR), got the option -m"
nothing_ran

section "every command: env, exec, ssh, check, logs, status, stacks, cancel, jobs"
expect_exit 2 "$DLAUNCH" env --master-addr --json
expect_contains "env" "$(cat "$ERR")" "dlaunch env: --master-addr needs a value"
expect_exit 2 "$DLAUNCH" exec --nnodes --no-python w.sh
expect_contains "exec" "$(cat "$ERR")" "dlaunch exec: --nnodes needs a value"
expect_exit 2 "$DLAUNCH" ssh --hosts --nproc-per-node 2 "$WORKER"
expect_contains "ssh's own option" "$(cat "$ERR")" "dlaunch ssh: --hosts needs a value (HOSTS)"
expect_exit 2 "$DLAUNCH" ssh --hosts a,b --log-dir --nproc-per-node 2 "$WORKER"
expect_contains "a run option through ssh" "$(cat "$ERR")" "dlaunch ssh: --log-dir needs a value (DIR)"
expect_exit 2 "$DLAUNCH" check --timeout --json
expect_contains "check" "$(cat "$ERR")" "dlaunch check: --timeout needs a value"
# "OPTION COMMAND WORDS...": the line, and the option it must name.
for line in "--rank logs last --rank --follow" "--output-dir status last --output-dir --json" \
  "--timeout stacks last --timeout --json" "--signal cancel last --signal --grace 10" "--limit jobs --limit --json"; do
  read -ra words <<<"$line"
  expect_exit 2 "$DLAUNCH" "${words[@]:1}"
  expect_contains "${words[1]}" "$(cat "$ERR")" "dlaunch ${words[1]}: ${words[0]} needs a value"
done
nothing_ran

section "values that look like options are values"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 1 "$WORKER" --log-dir --x
expect_eq "PROGRAM's words are its own" "--log-dir --x" "$(cat worker_ran)"
rm -f worker_ran
expect_exit 2 "$DLAUNCH" submit --nodes -1 --dry-run train.py
expect_contains "-1 is a value, answered by the range check" "$(cat "$ERR")" "--nodes must be"
expect_not_contains "not a missing value" "$(cat "$ERR")" "needs a value"
expect_exit 0 "$DLAUNCH" submit --dry-run --job-name=--odd-- train.py
expect_contains "--opt=--value is the way to mean it" "$(cat "$OUT")" "#SBATCH --job-name=--odd--"
expect_exit 0 "$DLAUNCH" submit --dry-run --nodes 2 --sbatch-arg=--exclusive train.py
expect_contains "the README's --sbatch-arg=--value form" "$(cat "$OUT")" "--exclusive"
rm -f called  # submit --dry-run may ask scontrol about the partition

section "dlaunch's first word"
expect_exit 2 "$DLAUNCH"
expect_contains "bare dlaunch: the usage on stderr" "$(cat "$ERR")" "Usage: dlaunch COMMAND"
expect_eq "and nothing on stdout" "" "$(cat "$OUT")"
expect_exit 2 "$DLAUNCH" train.py
expect_contains "a program first" "$(cat "$ERR")" "Did you mean 'dlaunch run train.py'?"
expect_exit 2 "$DLAUNCH" --nproc-per-node 4 train.py
expect_contains "a run option first" "$(cat "$ERR")" "Did you mean 'dlaunch run --nproc-per-node 4 train.py'?"
for typo in -V --versoin; do
  expect_exit 2 "$DLAUNCH" "$typo"
  expect_contains "$typo" "$(cat "$ERR")" "Did you mean '--version'?"
done
nothing_ran

section "dlaunch logs --json: one object per line"
SUB=$TEST_DIR/sub
mkdir -p "$SUB"
printf '{"settings": {}, "command": ["w.sh"], "timestamp": "20261205_120000", "job_name": "w"}\n' >"$SUB/config.json"
LINES=$(write_worker lines.sh <<'EOF'
echo "rank $RANK says \"hi\""
echo "rank $RANK to stderr" >&2
EOF
)
expect_exit 0 "$DLAUNCH" run --nproc-per-node 2 --log-dir "$SUB/logs" "$LINES"
expect_exit 0 "$DLAUNCH" logs "$SUB" --json
expect_eq "4 lines, each a JSON object with rank, stream, time_ms and line" \
  "0 stderr rank 0 to stderr|0 stdout rank 0 says \"hi\"|1 stderr rank 1 to stderr|1 stdout rank 1 says \"hi\"" \
  "$("$PY" -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert all(list(r) == ["rank", "stream", "time_ms", "line"] and isinstance(r["time_ms"], int) for r in rows), rows
print("|".join(sorted("{} {} {}".format(r["rank"], r["stream"], r["line"]) for r in rows)))' "$OUT")"
expect_exit 0 "$DLAUNCH" logs "$SUB" --json --rank 1 --tail 1
expect_eq "--rank and --tail apply" 1 "$(wc -l <"$OUT")"

finish
