#!/usr/bin/env bash
# dlaunch check on the real multi-node Slurm test cluster: the check across
# 3 hosts, and --pairs finding a node whose link was slowed with tc.
. "$(dirname "$0")/../lib.sh"

[ -n "${DLAUNCH_CLUSTER_DIR:-}" ] && [ -f "$DLAUNCH_CLUSTER_DIR/env.sh" ] ||
  skip "no test cluster is up (DLAUNCH_CLUSTER_DIR unset or without env.sh)"
. "$DLAUNCH_CLUSTER_DIR/env.sh"
. "$DLAUNCH_CLUSTER_DIR/cluster.env"
require_command sbatch
require_command tc
RUN_LIMIT=${DLAUNCH_TEST_RUN_LIMIT:-300}
OUTPUTS=$TEST_DIR/outputs
export LANG=C.UTF-8

section "dlaunch submit --nodes 3 --gpus-per-node 2 --wait -- dlaunch check"
expect_exit 0 "$DLAUNCH" submit --nodes 3 --gpus-per-node 2 --wait --output-dir "$OUTPUTS" -- "$DLAUNCH" check
log=$(ls "$OUTPUTS"/*/slurm-*.log | head -n 1)
expect_eq "6 ranks passed" 6 "$(grep -cE ': ✓ all-reduce sum 15 == 15' "$log")"
expect_eq "on 3 different hosts" 3 "$(sed -n 's/.* on \([^:]*\): ✓ .*/\1/p' "$log" | sort -u | wc -l)"
expect_contains "rank 0's banner: 3 nodes, 2 ranks each" "$(cat "$log")" "world size 6, 3 node(s), ranks per node: node1=2, node2=2, node3=2"
expect_contains "and it passed" "$(cat "$log")" "dlaunch check: ✓ PASSED"

section "--pairs: a 3x3 matrix, and node3 flagged once its link is slowed to 100 Mbit/s"
veth=dlc${NET##*.}n3
netns=dlc${NET##*.}-node3
slow_down() {
  tc qdisc add dev "$veth" root tbf rate 100mbit burst 32kbit latency 400ms &&
    nsenter --net="/run/netns/$netns" tc qdisc add dev eth0 root tbf rate 100mbit burst 32kbit latency 400ms
}
restore() {
  tc qdisc del dev "$veth" root 2>/dev/null
  nsenter --net="/run/netns/$netns" tc qdisc del dev eth0 root 2>/dev/null
  true
}
trap 'restore; _lib_cleanup' EXIT
expect_true "tc tbf slows node3's link both ways" slow_down
expect_exit 0 "$DLAUNCH" submit --srun --nodes 3 --gpus-per-node 1 --output-dir "$OUTPUTS" \
  -- "$DLAUNCH" check --pairs --pair-bytes 2000000
matrix=$(sed -n 's/^\[rank0\]://p' "$OUT")
expect_contains "the matrix has a header row of the 3 nodes" "$matrix" "node1   node2   node3"
expect_eq "it has 3 rows" 3 "$(grep -cE '^  node[1-3] ' <<<"$matrix")"
expect_contains "node3 is the slowest node" "$matrix" "# slowest node: node3"
expect_eq "node3's row is marked slow" 1 "$(grep -cE '^  node3 .*<-- slow$' <<<"$matrix")"
expect_contains "the slowest link touches node3" "$(grep 'slowest link' <<<"$matrix")" "node3"
restore

finish
