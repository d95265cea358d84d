#!/bin/bash
# The README's examples copy-paste and run (issue 26's acceptance): every
# line of its ```sh blocks runs here as written, in a folder with train.py,
# ./my_trainer and the README's own dlaunch.toml, with `dlaunch` first in
# PATH and recording stand-ins for sbatch, srun, ssh and scancel. A submit
# line gets --dry-run when it has none, so nothing is queued. A line runs
# unless SKIPPED below names why it cannot run on one machine, so a new
# example is run by default. Where the README shows what a line prints
# (hostlist's comments, `dlaunch env`'s table) the output is compared.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

README=$DLAUNCH_SOURCE_DIR/README.md
[ -r "$README" ] || { say "cannot read $README"; exit 1; }

# Examples that need what one machine has not: "PREFIX|why". A line that
# starts with PREFIX is listed as skipped, with the reason.
SKIPPED=(
  "scripts/demo|builds dlaunch and starts a Slurm cluster of containers (scripts/demo is its own test)"
  "scripts/test|builds and runs every test"
  "cmake --install|installs into /usr/local (test_package builds the .deb instead)"
  "cd build && cpack|builds the package (test_package)"
  "man dlaunch|needs dlaunch installed with its man pages"
  "srun |needs a Slurm allocation"
  "dlaunch run --nnodes 2 --node-rank|two machines, each with its own node rank"
  "dlaunch run --nnodes 2 --nproc-per-node 8 --rdzv-id job7|two machines, the same command on each (test_run_by_arrival runs it on one)"
  "dlaunch ssh |hosts reached over ssh (the ssh test bed's tests run these)"
  "dlaunch logs 12|a job of a Slurm cluster"
  "dlaunch cancel 12|a job of a Slurm cluster"
  "dlaunch stacks |a running job"
)
# Synopses show a command's shape, not a command line.
is_synopsis() { [[ "$1" == *"[options]"* || "$1" == *"[--json]"* ]]; }

cd "$TEST_DIR" || exit 1
mkdir -p home
slurm_stand_ins 12 ""
ln -s "$DLAUNCH" bin/dlaunch
export PATH=$TEST_DIR/bin:$PATH HOME=$TEST_DIR/home XDG_CONFIG_HOME=$TEST_DIR/home/.config
unset SLURM_JOB_ID SLURM_NODEID SLURM_PROCID SLURM_STEP_ID SLURM_JOB_NODELIST WORLD_SIZE RANK LOCAL_RANK \
  MASTER_ADDR MASTER_PORT DLAUNCH_RDZV_TOKEN
mkdir -p home/.zfunc

# The programs the examples start: they print their arguments.
printf 'import os, sys\nprint("rank", os.environ.get("RANK"), sys.argv[1:])\n' >train.py
printf '#!/bin/sh\necho "rank $RANK: $*"\n' >my_trainer
chmod +x my_trainer
# The README's own dlaunch.toml, so --profile big and the [defaults] apply.
awk '/^```toml/{f=1; next} /^```/{f=0} f' "$README" >dlaunch.toml
[ -s dlaunch.toml ] || { fail "the README shows a dlaunch.toml"; finish; }
# One submission (through the stand-in sbatch, which answers job 12), so
# `dlaunch jobs` and `dlaunch status last` have a job to show.
run_dlaunch submit --nodes 2 train.py
expect_eq "a stand-in submission for jobs and status" 0 "$STATUS"
rm -f called

# The README's sh lines: "LINE<TAB>COMMAND<TAB>COMMENT", continuation lines
# joined, a trailing "  # comment" split off.
mapfile -t EXAMPLES < <(awk '
  /^```sh/ { block = 1; next }
  /^```/ { block = 0; next }
  !block { next }
  {
    text = $0
    sub(/^[ \t]+/, "", text)
    if (joined != "") text = joined " " text; else start = NR
    if (text ~ /\\$/) { sub(/[ \t]*\\$/, "", text); joined = text; next }
    joined = ""
    if (text == "" || text ~ /^#/) next
    comment = ""
    if (match(text, /[ \t]+#[ \t]/)) { comment = substr(text, RSTART + RLENGTH); text = substr(text, 1, RSTART - 1) }
    gsub(/[ \t]+/, " ", text)
    printf "%d\t%s\t%s\n", start, text, comment
  }' "$README")
[ "${#EXAMPLES[@]}" -ge 20 ] || { fail "found ${#EXAMPLES[@]} sh lines in the README, expected 20 or more"; finish; }

RAN=0
SKIPS=()
# check_shown LINE COMMAND COMMENT: what the README says the line prints.
check_shown() {
  local command=$2 comment=$3 first
  case $command in
    "dlaunch hostlist compress"* | "dlaunch hostlist first"* | "dlaunch hostlist count"*)
      first=${comment%%[ ,]*}
      expect_eq "README:$1 shows what it prints" "$first" "$(cat "$OUT")" ;;
    "dlaunch hostlist expand 'rack[1-2]-node[01-03]'"*)
      expect_eq "README:$1 one host a line" "rack1-node01 rack1-node02 rack1-node03 rack2-node01 rack2-node02 rack2-node03" \
        "$(tr '\n' ' ' <"$OUT" | sed 's/ $//')" ;;
    "dlaunch run --nproc-per-node 4 -- dlaunch check")
      # As the README's "Proving the fabric" shows it.
      # (✓ PASSED, or PASSED alone where the locale is not UTF-8)
      expect_true "README:$1 passes as shown" grep -qE '^\[rank0\]:# dlaunch check: (✓ )?PASSED' "$OUT"
      expect_contains "README:$1 with every rank" "$(cat "$OUT")" "passed 4/4, failed 0" ;;
  esac
}

section "the README's sh examples"
for example in "${EXAMPLES[@]}"; do
  IFS=$'\t' read -r line command comment <<<"$example"
  if is_synopsis "$command"; then continue; fi
  reason=""
  for entry in "${SKIPPED[@]}"; do
    [[ "$command" == "${entry%%|*}"* ]] && reason=${entry#*|}
  done
  if [ -n "$reason" ]; then
    SKIPS+=("$(printf 'README:%-5s %-60.60s %s' "$line" "$command" "$reason")")
    continue
  fi
  run=$command
  if [[ "$run" == "dlaunch submit "* && "$run" != *"--dry-run"* && "$run" != *"--print-config"* ]]; then
    run="dlaunch submit --dry-run ${run#dlaunch submit }"
  fi
  RAN=$((RAN + 1))
  rm -f called
  timeout -k 10 "$RUN_LIMIT" bash -c "$run" >"$OUT" 2>"$ERR" </dev/null
  STATUS=$?
  if [ "$STATUS" -eq 0 ]; then
    pass "README:$line $run"
  else
    fail "README:$line $run" "exit status $STATUS"
    show_last_output
  fi
  if [ -e called ]; then fail "README:$line submitted or started nothing" "$(head -n 3 called)"; fi
  check_shown "$line" "$command" "$comment"
done

# A shown session outside the sh blocks: `dlaunch env` in a Slurm step.
section "what the README shows dlaunch env print"
env_block=$(awk '/^\$ SLURM_JOB_ID=/{f=1} f && /^```/{exit} f' "$README")
if [ -z "$env_block" ]; then
  fail "the README shows dlaunch env in a Slurm step"
else
  env_command=$(sed -n '1,/dlaunch env/p' <<<"$env_block" | sed 's/^\$ //; s/\\$//' | tr '\n' ' ')
  timeout -k 10 "$RUN_LIMIT" bash -c "$env_command" >"$OUT" 2>"$ERR"
  expect_eq "README's dlaunch env line runs" 0 "$?"
  while IFS= read -r shown; do
    [[ "$shown" == *"..."* || -z "$shown" ]] && continue
    # Columns may be padded differently: compare the words.
    expect_contains "README's dlaunch env shows: ${shown:0:50}" "$(tr -s ' ' <"$OUT")" "$(tr -s ' ' <<<"$shown")"
  done < <(sed -n '/dlaunch env$/,$p' <<<"$env_block" | tail -n +2)
fi

section "skipped: they need more than one machine"
printf '  %s\n' "${SKIPS[@]}"
say "ran $RAN README lines, skipped ${#SKIPS[@]}"
[ "$RAN" -ge 15 ] || fail "ran only $RAN README lines"
finish
