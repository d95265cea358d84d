#!/bin/bash
# Slurm's commands installed but not configured (no slurm.conf, SLURM_CONF
# unset): status, logs, cancel, stacks and submit say so in dlaunch's
# words, with what to do, instead of scontrol's "resolve_ctls_from_dns_srv
# ... fatal: Could not establish a configuration source"; for a job id,
# whether a submission folder knows it. Stand-ins print Slurm 22.05's exact
# words; where the real scontrol is installed and unconfigured, it is
# asked too, and a SLURM_CONF naming no file is said at once, not after
# scontrol's 60 s of retries.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

cd "$TEST_DIR" || exit 1
unset SLURM_CONF

# The stand-ins: each Slurm command fails as an unconfigured one does.
FAKE=$TEST_DIR/fake_slurm
mkdir -p "$FAKE"
for program in scontrol sbatch scancel sacct srun; do
  cat >"$FAKE/$program" <<EOF
#!/bin/sh
echo "$program: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host" >&2
echo "$program: error: fetch_config: DNS SRV lookup failed" >&2
echo "$program: error: _establish_config_source: failed to fetch config" >&2
echo "$program: fatal: Could not establish a configuration source" >&2
exit 1
EOF
  chmod +x "$FAKE/$program"
done
# What dlaunch says depends on whether this machine has a slurm.conf.
if [ -e /etc/slurm/slurm.conf ]; then
  SAID="Slurm's configuration on this machine, /etc/slurm/slurm.conf, cannot be used"
else
  SAID="Slurm is not configured on this machine (SLURM_CONF is unset and /etc/slurm/slurm.conf does not exist)"
fi
with_fakes() { PATH="$FAKE:$PATH" "$@"; }
OUTPUTS=$TEST_DIR/slurm-outputs

# expect_clear DESCRIPTION: the last command's stderr says it in dlaunch's
# words, not Slurm's lookups.
expect_clear() {
  expect_contains "$1: said plainly" "$(cat "$ERR")" "$SAID"
  expect_not_contains "$1: not Slurm's DNS lookups" "$(cat "$ERR")" "resolve_ctls_from_dns_srv"
}

section "a job id no folder knows: Slurm's state, and that no folder knows it"
for command in status logs cancel; do
  with_fakes expect_exit 1 "$DLAUNCH" "$command" 12 --output-dir "$OUTPUTS"
  expect_clear "$command 12"
  expect_contains "$command 12: no folder knows job 12 either" "$(cat "$ERR")" \
    "No submission folder in $OUTPUTS knows job 12 either"
done
with_fakes expect_exit 1 "$DLAUNCH" stacks 12
expect_clear "stacks 12"
expect_contains "stacks 12: what to do" "$(cat "$ERR")" "set SLURM_CONF to the cluster's slurm.conf"

section "a job id a folder knows: the folder's record, and why Slurm was not asked"
SUB=$OUTPUTS/20261203_140509
mkdir -p "$SUB"
printf '{"settings": {}, "command": ["train.py"], "timestamp": "20261203_140509", "job_name": "train"}\n' \
  >"$SUB/config.json"
echo 12 >"$SUB/job_id"
with_fakes expect_exit 0 "$DLAUNCH" status 12 --output-dir "$OUTPUTS"
expect_contains "status 12: the folder's job" "$(cat "$OUT")" "job 12 (train)"
expect_contains "status 12: why Slurm was not asked" "$(cat "$OUT")" "Slurm could not be asked: $SAID"
with_fakes expect_exit 1 "$DLAUNCH" cancel 12 --output-dir "$OUTPUTS"
expect_clear "cancel 12 (scancel)"

section "submit: sbatch's failure, said plainly"
WORKER=$(write_worker w.sh <<'EOF'
echo "rank $RANK"
EOF
)
with_fakes expect_exit 1 "$DLAUNCH" submit --nodes 1 --output-dir "$OUTPUTS/submit" -- "$WORKER"
expect_clear "submit"

section "a SLURM_CONF naming no file: said at once"
start_clock
SLURM_CONF=$TEST_DIR/nowhere/slurm.conf expect_exit 1 "$DLAUNCH" status 13 --output-dir "$OUTPUTS"
stop_clock
expect_within "without scontrol's 60 s of retries" 10
expect_contains "the file SLURM_CONF names" "$(cat "$ERR")" \
  "SLURM_CONF names $TEST_DIR/nowhere/slurm.conf, which does not exist"
SLURM_CONF=$TEST_DIR/nowhere/slurm.conf expect_exit 1 "$DLAUNCH" submit --nodes 1 --output-dir "$OUTPUTS/s2" -- "$WORKER"
expect_contains "submit: before any folder is made" "$(cat "$ERR")" "SLURM_CONF names"
expect_true "no submission folder was made" test ! -e "$OUTPUTS/s2"

section "the real scontrol, unconfigured"
if command -v scontrol >/dev/null && [ ! -e /etc/slurm/slurm.conf ] && ! scontrol ping >/dev/null 2>&1; then
  expect_exit 1 "$DLAUNCH" status 14 --output-dir "$OUTPUTS"
  expect_clear "the real scontrol"
else
  say "(no unconfigured scontrol on this machine: the stand-ins above stand for it)"
fi

no_leftovers
finish
