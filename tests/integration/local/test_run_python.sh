#!/bin/bash
# dlaunch run: which Python the workers run. A python3 first in PATH that
# lacks torch (a pyenv, a conda base) is named with its full path at the
# start, in dlaunch env and in the failure summary, and the failure points
# at the interpreter on this node that has the module.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
require_torch

# A stand-in for a pyenv's python3 without torch: the probe dlaunch sends
# (python3 -c CODE MODULE) finds nothing, and a script fails at its import
# the way Python 3 says it.
FAKE_BIN=$TEST_DIR/pyenv/bin
mkdir -p "$FAKE_BIN"
cat >"$FAKE_BIN/python3" <<'EOF_PY'
#!/bin/sh
if [ "$1" = "-c" ]; then exit 3; fi
echo "Traceback (most recent call last):" >&2
echo "  File \"train.py\", line 1, in <module>" >&2
echo "ModuleNotFoundError: No module named 'torch'" >&2
exit 1
EOF_PY
chmod +x "$FAKE_BIN/python3"
TRAIN=$TEST_DIR/train.py
printf 'import torch\nprint("torch", torch.__version__)\n' >"$TRAIN"

section "a python3 in PATH without torch: named, and the one with torch pointed at"
PATH="$FAKE_BIN:$PATH" expect_exit 1 "$DLAUNCH" run --nproc-per-node 1 "$TRAIN"
err=$(cat "$ERR")
expect_contains "the start names the interpreter and its source" "$err" "dlaunch: python: $FAKE_BIN/python3 (python3 in PATH)"
expect_contains "the summary names it" "$err" "python      $FAKE_BIN/python3 (python3 in PATH)"
expect_contains "the summary says what it lacks" "$err" "which has no module 'torch'"
expect_contains "and which interpreter here has it" "$err" "$PY on this node has it: give --python $PY"

section "dlaunch env names it too"
PATH="$FAKE_BIN:$PATH" expect_exit 0 "$DLAUNCH" env --json "$TRAIN"
expect_contains "env --json: the full path" "$(cat "$OUT")" "\"value\": \"$FAKE_BIN/python3\""
PATH="$FAKE_BIN:$PATH" expect_exit 0 "$DLAUNCH" env "$TRAIN"
expect_contains "env: the full path and its source" "$(cat "$OUT")" "$FAKE_BIN/python3 (python3 in PATH)"

section "--python with the interpreter it pointed at: the job runs"
PATH="$FAKE_BIN:$PATH" expect_exit 0 "$DLAUNCH" run --nproc-per-node 1 --python "$PY" "$TRAIN"
expect_contains "the worker imported torch" "$(cat "$OUT")" "torch "
expect_contains "the start names the chosen one" "$(cat "$ERR")" "dlaunch: python: $PY (--python)"

section "dlaunch submit --dry-run says which python3 the nodes' PATH finds (here)"
PATH="$FAKE_BIN:$PATH" expect_exit 0 "$DLAUNCH" submit --dry-run --output-dir "$TEST_DIR/out" -- "$TRAIN"
expect_contains "the dry run names this machine's python3 and --python" "$(cat "$OUT")" \
  "runs with python3 as each node's PATH finds it when the job starts (here: $FAKE_BIN/python3); --python FILE chooses one"
expect_contains "and says it writes nothing" "$(cat "$OUT")" "# job script (--dry-run writes nothing; it would be"
expect_true "and writes nothing" test ! -e "$TEST_DIR/out"
PATH="$FAKE_BIN:$PATH" expect_exit 0 "$DLAUNCH" submit --dry-run --output-dir "$TEST_DIR/out" --python "$PY" -- "$TRAIN"
expect_not_contains "--python given: no guess" "$(cat "$OUT")" "runs with python3 as each node's PATH"

section "a program that is not Python: no interpreter line"
expect_exit 0 "$DLAUNCH" run --nproc-per-node 1 /bin/true
expect_not_contains "no python line" "$(cat "$ERR")" "dlaunch: python:"

no_leftovers
finish
