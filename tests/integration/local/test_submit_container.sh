#!/bin/bash
# dlaunch submit into a pyxis container image, without a Slurm cluster:
# fake sbatch and srun first in PATH. The step runs the image's dlaunch, or
# this machine's mounted read-only at /opt/dlaunch/bin/dlaunch, in one
# --container-mounts with the user's own mounts and the submission folder;
# the step guard stays on the batch host. What cannot work is refused
# before a folder is made; a dlaunch under /tmp gets one warning.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

cd "$TEST_DIR" || exit 1
printf 'print("train")\n' >train.py
FAKE=$TEST_DIR/fake
mkdir -p "$FAKE"
# A fake sbatch that takes every job; a fake srun that records its words.
printf '#!/bin/sh\necho 77\n' >"$FAKE/sbatch"
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >"%s/srun.args"\nexit 0\n' "$TEST_DIR" >"$FAKE/srun"
chmod +x "$FAKE/sbatch" "$FAKE/srun"
FAKE_SLURM=(env PATH="$FAKE:/usr/bin:/bin")
folders() { find "$1" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l; }

section "--container-image: the image runs this machine's dlaunch, mounted read-only"
expect_exit 0 "$DLAUNCH" submit --dry-run --output-dir out --container-image /images/pt.sqsh \
  --srun-arg=--container-mounts=/data:/data train.py
script=$(cat "$OUT")
folder=$(sed -n 's/^# job script (--dry-run writes nothing; it would be \(.*\)\/job.sbatch):$/\1/p' <<<"$script")
expect_contains "the step guard runs here, with this machine's dlaunch" "$script" "$DLAUNCH __run-step"
expect_contains "the image and one merged --container-mounts, then the dlaunch in the image" "$script" \
  "--container-image=/images/pt.sqsh --container-mounts=/data:/data,$folder:$folder,$DLAUNCH:/opt/dlaunch/bin/dlaunch:ro /opt/dlaunch/bin/dlaunch run"
expect_eq "one --container-mounts only" 1 "$(grep -o -- '--container-mounts' <<<"$script" | wc -l)"
expect_contains "the script says where the step runs" "$script" \
  "# The step runs in the container image /images/pt.sqsh (pyxis)"
expect_contains "the dry run names what the image must have" "$script" \
  "is dynamically linked: the image /images/pt.sqsh must have its loader"
expect_contains "... glibc and the libraries" "$script" "libc.so.6"
# A build under a node-local folder (a CI clone in /tmp) is warned of, rightly.
case "$(readlink -f "$DLAUNCH")" in
  /tmp/* | /var/tmp/* | /dev/shm/* | /run/*) say "  this build itself lies under a node-local folder: its warning is right, not checked" ;;
  *) expect_not_contains "no node-local warning for a dlaunch outside /tmp" "$(cat "$ERR")" "warning" ;;
esac

section "the README's old way, --srun-arg=--container-image, works the same"
expect_exit 0 "$DLAUNCH" submit --dry-run --output-dir out --srun-arg=--container-image=/images/pt.sqsh train.py
expect_contains "dlaunch in the image" "$(cat "$OUT")" \
  "--container-image=/images/pt.sqsh --container-mounts="
expect_contains "... is the mounted one" "$(cat "$OUT")" "/opt/dlaunch/bin/dlaunch run"

section "--container-dlaunch: the image's own dlaunch, nothing mounted for it"
expect_exit 0 "$DLAUNCH" submit --dry-run --output-dir out --container-image img --container-dlaunch /usr/local/bin/dlaunch train.py
expect_contains "the image's dlaunch runs the step" "$(cat "$OUT")" " /usr/local/bin/dlaunch run --log-dir"
expect_not_contains "this machine's is not mounted" "$(cat "$OUT")" ":/opt/dlaunch/bin/dlaunch:ro"

section "what cannot work is refused before anything is made"
expect_exit 2 "$DLAUNCH" submit --output-dir out_refused --container-image img \
  --srun-arg=--container-mounts=/mine/dlaunch:/opt/dlaunch/bin/dlaunch train.py
expect_contains "a mount onto dlaunch's place, named" "$(cat "$ERR")" \
  "mounts '/mine/dlaunch' onto /opt/dlaunch/bin/dlaunch, where dlaunch mounts this machine's dlaunch"
expect_exit 2 "$DLAUNCH" submit --output-dir out_refused --container-image a --srun-arg=--container-image=b train.py
expect_contains "two images" "$(cat "$ERR")" "name different images"
expect_exit 2 "$DLAUNCH" submit --output-dir out_refused --sbatch-arg=--container-image=a train.py
expect_contains "an image for the batch script" "$(cat "$ERR")" "would run the job script itself in the image"
expect_exit 2 "$DLAUNCH" submit --output-dir out_refused --container-dlaunch dlaunch train.py
expect_contains "--container-dlaunch alone" "$(cat "$ERR")" "needs a container image"
expect_eq "no submission folder" 0 "$(folders out_refused)"

section "a submission: the job script and --srun's srun run the step in the image"
expect_exit 0 "${FAKE_SLURM[@]}" "$DLAUNCH" submit --output-dir out_batch --container-image img train.py
folder=$(find "$TEST_DIR/out_batch" -mindepth 1 -maxdepth 1 -type d)
expect_contains "job.sbatch runs the image's dlaunch" "$(cat "$folder/job.sbatch")" \
  "--container-image=img --container-mounts=$folder:$folder,$DLAUNCH:/opt/dlaunch/bin/dlaunch:ro /opt/dlaunch/bin/dlaunch run"
expect_contains "submit names what the image must have" "$(cat "$ERR")" "is dynamically linked: the image img must have"
"${FAKE_SLURM[@]}" "$DLAUNCH" submit --srun --output-dir out_srun --container-image img train.py >"$OUT" 2>"$ERR"
expect_file "srun ran" "$TEST_DIR/srun.args"
srun_args=$(cat "$TEST_DIR/srun.args" 2>/dev/null)
expect_contains "srun got the image" "$srun_args" "--container-image=img"
expect_contains "srun runs the mounted dlaunch" "$srun_args" "/opt/dlaunch/bin/dlaunch"

section "a dlaunch under /tmp: one warning, naming it and what to do"
case $TEST_DIR in
  /tmp/*)
    mkdir -p "$TEST_DIR/bin"
    cp "$DLAUNCH" "$TEST_DIR/bin/dlaunch"
    expect_exit 0 "$TEST_DIR/bin/dlaunch" submit --dry-run --output-dir out train.py
    expect_contains "the warning names the path and why" "$(cat "$ERR")" \
      "dlaunch: warning: the job runs this machine's dlaunch $TEST_DIR/bin/dlaunch by that path"
    expect_contains "... and what to do" "$(cat "$ERR")" "Install dlaunch where every node sees the same path"
    expect_exit 0 "${FAKE_SLURM[@]}" "$TEST_DIR/bin/dlaunch" submit --output-dir out_tmp train.py
    expect_eq "warned once at submit" 1 "$(grep -c 'dlaunch: warning: the job runs' "$ERR")"
    ;;
  *) say "  skip  the test folder $TEST_DIR is not under /tmp" ;;
esac

finish
