#!/bin/bash
# dlaunch run --check-only: everything run would check, nothing started.
# Valid options give one line (nodes, workers, program) and exit 0 without
# a worker; a mistake gives run's own error and exit code.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

cd "$TEST_DIR" || exit 1
WORKER=$(write_worker worker.sh <<'EOF2'
touch "$DIR/worker_ran"
EOF2
)

section "valid options: one line, exit 0, no worker"
expect_exit 0 "$DLAUNCH" run --check-only --nproc-per-node 3 --max-restarts 1 -- "$WORKER"
line=$(cat "$OUT")
expect_contains "it says the options are valid" "$line" "dlaunch run: the options are valid: 1 node(s)"
expect_contains "the workers and where their count came from" "$line" "3 worker(s) on this node (--nproc-per-node)"
expect_contains "the program" "$line" "program $WORKER; nothing was started"
expect_eq "one line" 1 "$(wc -l <"$OUT")"
expect_true "no worker ran" test ! -e "$TEST_DIR/worker_ran"
expect_exit 0 "$DLAUNCH" run --check-only --nnodes 2 --spare-nodes 1 --node-rank 2 --master-addr 127.0.0.1 \
  --nproc-per-node 2 -- "$WORKER"
expect_contains "a spare's slot, without a rendezvous" "$(cat "$OUT")" "2 node(s) and 1 spare(s)"
expect_true "still no worker" test ! -e "$TEST_DIR/worker_ran"

section "mistakes: run's error and exit code"
expect_exit 2 "$DLAUNCH" run --check-only --bogus -- "$WORKER"
expect_contains "an unknown option" "$(cat "$ERR")" "unknown option '--bogus' for dlaunch run"
expect_exit 2 "$DLAUNCH" run --nproc-per-node 0 -- "$WORKER"
run_says=$(cat "$ERR")
expect_exit 2 "$DLAUNCH" run --check-only --nproc-per-node 0 -- "$WORKER"
expect_eq "the very words run says" "$run_says" "$(cat "$ERR")"
expect_exit 2 "$DLAUNCH" run --check-only --prefix '{bogus' -- "$WORKER"
expect_contains "a prefix template is read now" "$(cat "$ERR")" "--prefix '{bogus' is not a valid template"
expect_true "no worker ran for a mistake" test ! -e "$TEST_DIR/worker_ran"
no_leftovers

finish
