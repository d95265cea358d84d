#!/bin/bash
# dlaunch submit without a Slurm cluster: fake sbatch and scontrol first in
# PATH, or none at all. When sbatch is missing nothing is made; when it
# refuses, the user reads sbatch's own words, its exit code and the folder,
# and `dlaunch jobs`, `status` and `cancel` call the folder NOT-SUBMITTED,
# never an unknown job or a --srun run. `submit --dry-run` shows the job's
# name (its script or module, not its last argument) and its resources (CPUs
# per worker by default, the partition's DefCpuPerGPU when scontrol says, a
# GPU or CPU request in --sbatch-arg in place of dlaunch's own). What the
# nodes would refuse (their dlaunch run's options, the setup lines, the
# program, a sweep, the job's shape) is refused before sbatch is called,
# and each refusal's accepted neighbour is submitted.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

cd "$TEST_DIR" || exit 1
printf 'print("train")\n' >train.py
mkdir -p mypkg empty
: >mypkg/__init__.py
printf 'print("mypkg.train")\n' >mypkg/train.py

# fake_command NAME BODY: an executable NAME in $TEST_DIR/fake running BODY (sh).
FAKE=$TEST_DIR/fake
mkdir -p "$FAKE"
fake_command() {
  printf '#!/bin/sh\n%s\n' "$2" >"$FAKE/$1"
  chmod +x "$FAKE/$1"
}
# Commands run with only these folders in PATH: none, or the fakes.
NO_SLURM=(env PATH="$TEST_DIR/empty")
FAKE_SLURM=(env PATH="$FAKE")
FAKE_SCONTROL=(env PATH="$FAKE:/usr/bin:/bin")
folders() { find "$1" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l; }

section "sbatch missing: a clear error, no folder, no ghost"
expect_exit 1 "${NO_SLURM[@]}" "$DLAUNCH" submit --output-dir out_missing -- train.py
expect_contains "it names sbatch and PATH" "$(cat "$ERR")" "'sbatch' is not in PATH on this machine"
expect_contains "it says nothing was made, and how to see the script" "$(cat "$ERR")" \
  "Nothing was submitted and no folder was made; dlaunch submit --dry-run prints the job script"
expect_eq "no submission folder" 0 "$(folders out_missing)"
# Not even the output folder was made, so jobs finds no such folder (a ghost would be listed).
expect_exit 2 "${NO_SLURM[@]}" "$DLAUNCH" jobs --output-dir out_missing
expect_contains "jobs lists no ghost" "$(cat "$ERR")" "--output-dir out_missing: there is no such folder"
expect_exit 1 "${NO_SLURM[@]}" "$DLAUNCH" submit --srun --output-dir out_missing -- train.py
expect_contains "--srun without srun: named, before any folder" "$(cat "$ERR")" "'srun' is not in PATH"
expect_eq "still no submission folder" 0 "$(folders out_missing)"

section "sbatch refuses: its words, its code, the folder kept and marked"
fake_command sbatch 'echo "sbatch: error: invalid partition specified: nosuch" >&2
echo "sbatch: error: Batch job submission failed: Invalid partition name specified" >&2
exit 1'
expect_exit 2 "${FAKE_SLURM[@]}" "$DLAUNCH" submit --partition nosuch --output-dir out_refused -- train.py
refusal=$(cat "$ERR")
expect_contains "sbatch's own words" "$refusal" "sbatch: error: Batch job submission failed: Invalid partition name specified"
expect_contains "its first line too" "$refusal" "sbatch: error: invalid partition specified: nosuch"
expect_contains "its exit code" "$refusal" "sbatch refused the job (exit code 1)"
folder=$(find "$TEST_DIR/out_refused" -mindepth 1 -maxdepth 1 -type d)
expect_contains "the folder, and what it keeps" "$refusal" "Its folder $folder keeps the job script (job.sbatch)"
expect_contains "how jobs will show it" "$refusal" "list it as NOT-SUBMITTED"
expect_file "the job script stays, to read" "$folder/job.sbatch"
expect_file "the refusal is recorded" "$folder/not_submitted.json"
expect_true "the secret no job will read is gone" test ! -e "$folder/rdzv.token"
expect_true "no job id" test ! -e "$folder/job_id"

expect_exit 0 "${FAKE_SLURM[@]}" "$DLAUNCH" jobs --output-dir out_refused
row=$(grep -F "$folder" "$OUT")
expect_contains "jobs: NOT-SUBMITTED with sbatch's verdict" "$row" \
  "NOT-SUBMITTED (sbatch refused it, exit code 1: sbatch: error: Batch job submission failed: Invalid partition name specified)"
expect_not_contains "jobs: not UNKNOWN" "$row" "UNKNOWN"

expect_exit 1 "${FAKE_SLURM[@]}" "$DLAUNCH" status last --output-dir out_refused
expect_contains "status last: never submitted" "$(cat "$OUT")" "train (never submitted: no Slurm job id): NOT-SUBMITTED"
expect_contains "status last: sbatch said" "$(cat "$OUT")" "sbatch said: sbatch: error: invalid partition specified: nosuch"
expect_not_contains "status last: not called a --srun run" "$(cat "$OUT")" "srun"
expect_exit 1 "${FAKE_SLURM[@]}" "$DLAUNCH" status "$folder" --json --output-dir out_refused
expect_eq "status --json: the state" "NOT-SUBMITTED" \
  "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["state"])' "$OUT")"
expect_exit 2 "${FAKE_SLURM[@]}" "$DLAUNCH" cancel last --output-dir out_refused
expect_contains "cancel: nothing to cancel, and why" "$(cat "$ERR")" "has no Slurm job id (sbatch refused it, exit code 1"

section "sbatch takes the job: its id is read from a wrapper's words too"
fake_command sbatch 'echo "notice: accounting is on"; echo "Submitted batch job 4242"'
expect_exit 0 "${FAKE_SLURM[@]}" "$DLAUNCH" submit --output-dir out_taken -- train.py
expect_contains "the job id" "$(cat "$OUT")" "Submitted job 4242"
expect_eq "job_id is recorded" 4242 "$(cat out_taken/*/job_id)"
expect_true "the secret stays for the job" test -e "$(echo out_taken/*/rdzv.token)"

section "sbatch exits 0 without a job id: the job may be queued, its folder stays whole"
fake_command sbatch 'echo "all good"'
expect_exit 1 "${FAKE_SLURM[@]}" "$DLAUNCH" submit --output-dir out_no_id -- train.py
expect_contains "it says so, and where to look" "$(cat "$ERR")" "sbatch exited 0 but printed no job id"
expect_contains "squeue names the job" "$(cat "$ERR")" "squeue --me --name train"
expect_true "the secret stays for a queued job" test -e "$(echo out_no_id/*/rdzv.token)"
expect_exit 0 "${FAKE_SLURM[@]}" "$DLAUNCH" status last --output-dir out_no_id
expect_contains "status: no job id, and why" "$(cat "$OUT")" "train (sbatch printed no job id: no Slurm job id): UNKNOWN"
expect_contains "status: sbatch's words" "$(cat "$OUT")" "sbatch exited 0 but printed no job id: all good"

section "job names: the script or module, not the last argument"
dry=("${NO_SLURM[@]}" "$DLAUNCH" submit --dry-run)
# job_name_line: the #SBATCH line of the name in the last dry run.
job_name_line() { grep -- '--job-name' "$OUT"; }
# expect_line DESCRIPTION LINE: the last output holds LINE, whole.
expect_line() {
  if grep -qxF -- "$2" "$OUT"; then pass "$1"; else fail "$1" "no line: $2" "in: $(grep -F '#SBATCH' "$OUT" | paste -sd'|')"; fi
}
expect_exit 0 "${dry[@]}" -- /usr/bin/python3 -m mypkg.train --epochs 3
expect_eq "-m mypkg.train --epochs 3" "#SBATCH --job-name=mypkg.train" "$(job_name_line)"
expect_exit 0 "${dry[@]}" -- train.py --cfg 'x y'
expect_eq "train.py --cfg 'x y'" "#SBATCH --job-name=train" "$(job_name_line)"
expect_exit 0 "${dry[@]}" -- /usr/bin/env OMP_NUM_THREADS=2 /usr/bin/python3 -u train.py 7
expect_eq "env and python in front" "#SBATCH --job-name=train" "$(job_name_line)"
expect_exit 0 "${dry[@]}" --job-name 'my run' -- train.py
expect_eq "--job-name is the user's own" "#SBATCH '--job-name=my run'" "$(job_name_line)"

section "resources: CPUs per worker, and the user's requests in place of dlaunch's"
expect_exit 0 "${dry[@]}" -- train.py
expect_line "one CPU per worker by default (no Slurm here)" "#SBATCH --cpus-per-task=1"
expect_exit 0 "${dry[@]}" --gpus-per-node 8 -- train.py
expect_line "--launch node: the node's task gets one per worker" "#SBATCH --cpus-per-task=8"
expect_contains "and the step too" "$(cat "$OUT")" "--gpus-per-node=8 --cpus-per-task=8"
expect_exit 0 "${dry[@]}" --launch task --gpus-per-node 4 -- train.py
expect_line "--launch task: one per task" "#SBATCH --cpus-per-task=1"
expect_exit 0 "${dry[@]}" --gpus-per-node 4 --cpus-per-gpu 6 -- train.py
expect_line "--cpus-per-gpu" "#SBATCH --cpus-per-task=24"
expect_exit 0 "${dry[@]}" --exclusive -- train.py
expect_not_contains "--exclusive: no CPU count" "$(cat "$OUT")" "--cpus-per-task"
expect_exit 0 "${dry[@]}" --sbatch-arg=--gres=gpu:8 -- train.py
script=$(cat "$OUT")
expect_contains "the user's --gres" "$script" "#SBATCH --gres=gpu:8"
expect_not_contains "in place of dlaunch's --gpus-per-node" "$script" "--gpus-per-node"
expect_contains "the CPUs follow the 8 workers" "$script" "#SBATCH --cpus-per-task=8"
expect_exit 0 "${dry[@]}" --sbatch-arg=--cpus-per-task=16 -- train.py
expect_line "the user's CPU request" "#SBATCH --cpus-per-task=16"
expect_eq "in place of dlaunch's" 0 "$(grep -cxF '#SBATCH --cpus-per-task=1' "$OUT")"
expect_contains "and for the step" "$(cat "$OUT")" "--gpus-per-node=1 --cpus-per-task=16"
expect_exit 2 "${dry[@]}" --gpus-per-node 4 --sbatch-arg=--gres=gpu:8 -- train.py
expect_contains "disagreeing GPU counts are refused, naming both" "$(cat "$ERR")" \
  "sbatch-arg '--gres=gpu:8' (from --sbatch-arg) gives each node 8 GPU(s), but gpus-per-node (from --gpus-per-node) says 4"

section "the partition's DefCpuPerGPU, when scontrol says"
fake_command scontrol 'echo "PartitionName=debug Default=YES JobDefaults=(null) State=UP"
echo "PartitionName=gpu Default=NO JobDefaults=DefCpuPerGPU=6,DefMemPerGPU=1024 State=UP"'
expect_exit 0 "${FAKE_SCONTROL[@]}" "$DLAUNCH" submit --dry-run --partition gpu --gpus-per-node 2 -- train.py
expect_line "6 per GPU x 2 GPUs" "#SBATCH --cpus-per-task=12"
expect_exit 0 "${FAKE_SCONTROL[@]}" "$DLAUNCH" submit --print-config --partition gpu
expect_contains "--print-config names where it came from" "$(cat "$OUT")" "DefCpuPerGPU of the partition 'gpu'"
expect_exit 0 "${FAKE_SCONTROL[@]}" "$DLAUNCH" submit --dry-run --gpus-per-node 2 -- train.py
expect_line "the default partition says nothing: one per worker" "#SBATCH --cpus-per-task=2"
fake_command scontrol 'exec sleep 30'
start_clock
expect_exit 0 "${FAKE_SCONTROL[@]}" "$DLAUNCH" submit --dry-run --partition gpu -- train.py
stop_clock
expect_within "a scontrol that hangs is given up on" 15
expect_line "and the built-in default holds" "#SBATCH --cpus-per-task=1"

section "checked before it leaves: what the nodes would refuse never reaches sbatch"
# Recording stand-ins (lib.sh): $TEST_DIR/called holds every sbatch call.
# bash and python3 stay in PATH: the setup lines and a script are checked with them.
slurm_stand_ins "4243" ""
STAND_INS=(env PATH="$TEST_DIR/bin:/usr/bin:/bin")
# refused_before_sbatch DESCRIPTION NEEDLE ARGS...: submit ARGS exits 2 saying NEEDLE, and sbatch is never called.
refused_before_sbatch() {
  local description=$1 needle=$2
  shift 2
  rm -f "$TEST_DIR/called"
  expect_exit 2 "${STAND_INS[@]}" "$DLAUNCH" submit --output-dir out_checked "$@"
  expect_contains "$description: refused" "$(cat "$ERR")" "$needle"
  expect_true "$description: sbatch was not called" test ! -e "$TEST_DIR/called"
}
# submitted DESCRIPTION ARGS...: the accepted neighbour reaches sbatch.
submitted() {
  local description=$1
  shift
  rm -f "$TEST_DIR/called"
  expect_exit 0 "${STAND_INS[@]}" "$DLAUNCH" submit --output-dir out_checked "$@"
  expect_true "$description: sbatch was called" test -s "$TEST_DIR/called"
}
refused_before_sbatch "an unknown --run-arg" "(given as run-arg '--bogus-option' (from --run-arg))" \
  --run-arg=--bogus-option -- train.py
expect_contains "said as the nodes would say it" "$(cat "$ERR")" \
  "Checked as every node's dlaunch run will read it, before sbatch: nothing was submitted"
submitted "a --run-arg the nodes take" --run-arg=--console-overflow=drop -- train.py
printf '[defaults]\nrun-args = ["--bogus"]\n' >bogus_run_args.toml
printf '[defaults]\nrun-args = ["--console-overflow=drop"]\n' >good_run_args.toml
refused_before_sbatch "dlaunch.toml run-args" "(given as run-arg '--bogus' (from bogus_run_args.toml:2 [defaults]))" \
  --config bogus_run_args.toml -- train.py
submitted "dlaunch.toml run-args the nodes take" --config good_run_args.toml -- train.py
refused_before_sbatch "a prefix run refuses" "--prefix '{bogus' is not a valid template" --prefix '{bogus' -- train.py
submitted "a prefix run takes" --prefix '[{rank}]' -- train.py
refused_before_sbatch "a restart option without restarts" "--max-restarts is 0 (its default)" \
  --retry-repeated-failures -- train.py
submitted "--retry-repeated-failures with restarts" --retry-repeated-failures --max-restarts 2 -- train.py
expect_true "it reaches the nodes' dlaunch run" grep -q -- "--retry-repeated-failures" out_checked/*/job.sbatch
refused_before_sbatch "more spares than the step's nodes" "leaves no node to train" --run-arg=--spare-nodes=1 -- train.py
submitted "spares submit takes" --spare-nodes 1 -- train.py
refused_before_sbatch "setup lines bash cannot read" "setup (from --setup) is not valid bash" \
  --setup "touch $TEST_DIR/setup_ran" --setup 'if true; then' -- train.py
expect_true "bash -n ran no line" test ! -e "$TEST_DIR/setup_ran"
submitted "setup lines bash reads" --setup 'export A=1' -- train.py
printf 'def f(:\n    pass\n' >broken.py
refused_before_sbatch "a script with a syntax error" "SyntaxError" -- broken.py
expect_true "its check wrote no bytecode" test ! -e __pycache__
printf '#!/bin/sh\n' >tool.sh
refused_before_sbatch "a program that is not executable" "chmod +x ./tool.sh" -- ./tool.sh
chmod +x tool.sh
submitted "the same program made executable" -- ./tool.sh
refused_before_sbatch "a bracketed sweep" "--sweep lr=0.1,0.01" --sweep 'lr=[0.1,0.01]' -- train.py
submitted "the bare sweep" --sweep 'lr=0.1,0.01' -- train.py
refused_before_sbatch "an sbatch-arg that sets the node count" "contradicts dlaunch's own --nodes=2" \
  --nodes 2 --sbatch-arg=--nodes=3 -- train.py
submitted "the node count as dlaunch's" --nodes 3 -- train.py
refused_before_sbatch "a run option submit has no setting for" "--run-arg=--bench-cooldown=1h" \
  --bench-cooldown 1h -- train.py
expect_not_contains "not advised to sbatch" "$(cat "$ERR")" "--sbatch-arg"

finish
