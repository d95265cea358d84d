#!/bin/bash
# The mistakes users make, every command (issue 26's acceptance): each row of
# mistakes.txt beside this file is a mistaken command line and what a clear
# answer holds. Per row: no crash (no signal, no "terminate called"), the
# exit code the row names (never 0 for nonsense), a message on stderr that
# names the input and says what to do (the row's fixed strings), and nothing
# submitted or started: recording stand-ins for sbatch, srun, ssh and
# scancel come first in PATH, and train.py and ./w.sh leave a mark if they
# run. scontrol, squeue and sacct stand-ins answer as a Slurm that knows no
# job, and may be asked. Prints the rows per command and a table of failures.
# Set MISTAKES_ONLY=REGEX to walk only the rows whose words match.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TABLE=$DLAUNCH_SOURCE_DIR/tests/integration/local/mistakes.txt
[ -r "$TABLE" ] || { say "cannot read $TABLE"; exit 1; }
ROW_LIMIT=${DLAUNCH_MISTAKE_ROW_LIMIT:-30}

cd "$TEST_DIR" || exit 1
mkdir -p d
slurm_stand_ins "Submitted batch job 1" "slurm_load_jobs error: Invalid job id specified"
export PATH=$TEST_DIR/bin:$PATH
# No dlaunch.toml of the user's or Slurm job of the caller's reaches a row.
export XDG_CONFIG_HOME=$TEST_DIR/xdg
unset SLURM_JOB_ID SLURM_NODEID SLURM_PROCID SLURM_STEP_ID SLURM_JOB_NODELIST PET_NPROC_PER_NODE \
  PET_NNODES WORLD_SIZE RANK LOCAL_RANK MASTER_ADDR MASTER_PORT DLAUNCH_RDZV_TOKEN

# Python's quoting, not the shell's (%q leaves a plain path bare, which is
# no Python): dlaunch submit compiles the script before sbatch.
printf 'open(%s, "w").close()\n' "$(printf '%s' "$TEST_DIR/worker_ran" | "$PY" -c 'import sys; print(repr(sys.stdin.read()))')" >train.py
printf '#!/bin/sh\ntouch %q\n' "$TEST_DIR/worker_ran" >w.sh
chmod +x w.sh
printf 'secret\n' >tok
chmod 600 tok
printf 'node1 slots=4\nnode2 slots=4\n' >hosts.txt
printf 'node1:4\nnode2:4\n' >horovod_hosts.txt
printf 'node1 slots=x\n' >bad_slots.txt
printf 'node1 slots=4\nnode1 slots=4\n' >twice.txt
printf '[defaults]\npartition = "gpu"\n\n[profiles.big]\nnodes = 4\n' >good.toml
printf '[defaults]\npartition = gpu\n' >bad_syntax.toml
printf '[defaults]\npartitoin = "gpu"\n' >typo_key.toml
printf '[defaults]\nnodes = "two"\n' >wrong_type.toml
printf '[defaults]\nnodes = 0\n' >out_of_range.toml
printf 'nodes = 2\n' >top_level.toml
printf '[profile.big]\nnodes = 2\n' >profile_singular.toml
printf '[defaults]\nsignal = "TERM@60"\n' >bad_signal.toml
printf '[defaults]\nsweep = ["lr=0.1;0.01"]\n' >bad_sweep.toml

# The signs of a crash, whatever the exit code.
CRASH_SIGNS=("terminate called" "Segmentation fault" "Aborted" "core dumped" "munmap_chunk" "double free"
  "AddressSanitizer" "what():")

# The commands `dlaunch --help` lists: a row is counted under its first word
# when that is one, else under "(first word)".
mapfile -t COMMANDS < <("$DLAUNCH" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF {print $1}')
declare -A ROWS_PER_COMMAND=()
FAILURES=()
ROWS=0

# row_failed LINE_NUMBER WORDS PROBLEM: one line of the failure table.
row_failed() {
  FAILURES+=("$(printf '%4s  %-58.58s  %s' "$1" "$2" "$3")")
}

# walk_row LINE_NUMBER EXIT WORDS NEEDLE...: runs one row, checks it.
walk_row() {
  local line=$1 want=$2 text=$3
  shift 3
  local -a words=()
  eval "words=($text)" || { row_failed "$line" "$text" "table: the words do not parse"; return; }
  if [ "$#" -lt 2 ]; then
    row_failed "$line" "$text" "table: a row needs the input named and a hint of what to do"
    return
  fi
  rm -f called worker_ran
  timeout -k 5 "$ROW_LIMIT" "$DLAUNCH" "${words[@]}" >"$OUT" 2>"$ERR" </dev/null
  local status=$? err problems=()
  err=$(cat "$ERR")
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then problems+=("hung (killed after ${ROW_LIMIT} s)")
  elif [ "$status" -ge 128 ]; then problems+=("crashed: signal $((status - 128))"); fi
  local sign needle
  for sign in "${CRASH_SIGNS[@]}"; do
    grep -qF -- "$sign" <<<"$err" && problems+=("crash sign on stderr: $sign")
  done
  if [ "$status" -eq 0 ] && [ "$want" -ne 0 ]; then problems+=("silent: accepted with exit 0")
  elif [ "$status" -ne "$want" ]; then problems+=("exit $status, want $want"); fi
  if [ -z "$err" ]; then
    problems+=("nothing on stderr")
  else
    for needle in "$@"; do
      grep -qF -- "$needle" <<<"$err" || problems+=("stderr lacks: $needle")
    done
  fi
  [ -e called ] && problems+=("submitted or started: $(head -n 1 called | cut -c1-80)")
  [ -e worker_ran ] && problems+=("a worker ran")
  if [ "${#problems[@]}" -eq 0 ]; then
    PASSED=$((PASSED + 1))
    return
  fi
  FAILED=$((FAILED + 1))
  local problem
  for problem in "${problems[@]}"; do row_failed "$line" "$text" "$problem"; done
  row_failed "" "" "stderr: $(head -n 2 "$ERR" | tr '\n' ' ' | cut -c1-200)"
}

section "walking $(basename "$TABLE")"
line_number=0
while IFS= read -r row || [ -n "$row" ]; do
  line_number=$((line_number + 1))
  [[ "$row" =~ ^[[:space:]]*(#|$) ]] && continue
  [ -n "${MISTAKES_ONLY:-}" ] && ! [[ "$row" =~ $MISTAKES_ONLY ]] && continue
  # EXIT | WORDS | NEEDLE | NEEDLE ...: fields split at " | ".
  fields=()
  rest=$row
  while [[ "$rest" == *" | "* ]]; do
    fields+=("${rest%% | *}")
    rest=${rest#* | }
  done
  fields+=("$rest")
  want=$(tr -d '[:space:]' <<<"${fields[0]}")
  words=${fields[1]:-}
  words=${words#"${words%%[![:space:]]*}"}
  if ! [[ "$want" =~ ^[0-9]+$ ]] || [ "${#fields[@]}" -lt 2 ]; then
    row_failed "$line_number" "$row" "table: expected 'EXIT | WORDS | NEEDLE | NEEDLE...'"
    FAILED=$((FAILED + 1))
    continue
  fi
  ROWS=$((ROWS + 1))
  command=${words%% *}
  [[ " ${COMMANDS[*]} " == *" $command "* ]] || command="(first word)"
  ROWS_PER_COMMAND[$command]=$((${ROWS_PER_COMMAND[$command]:-0} + 1))
  walk_row "$line_number" "$want" "$words" "${fields[@]:2}"
done <"$TABLE"

section "rows per command"
mapfile -t counted < <(printf '%s\n' "${!ROWS_PER_COMMAND[@]}" | sort)
for command in "${counted[@]}"; do
  printf '  %-14s %3d\n' "$command" "${ROWS_PER_COMMAND[$command]}"
done
printf '  %-14s %3d\n' total "$ROWS"

# Every command dlaunch lists has rows (unless only some rows were walked).
if [ -z "${MISTAKES_ONLY:-}" ]; then
  for command in "${COMMANDS[@]}"; do
    case $command in help | version) continue ;; esac
    [ -n "${ROWS_PER_COMMAND[$command]:-}" ] || { row_failed "-" "$command" "table: no row for this command"
      FAILED=$((FAILED + 1)); }
  done
  [ "$ROWS" -ge 150 ] || { row_failed "-" "$(basename "$TABLE")" "table: $ROWS rows, fewer than 150"
    FAILED=$((FAILED + 1)); }
fi

if [ "${#FAILURES[@]}" -gt 0 ]; then
  section "failures (line of $(basename "$TABLE"), words after dlaunch, problem)"
  printf '%s\n' "${FAILURES[@]}"
fi
finish
