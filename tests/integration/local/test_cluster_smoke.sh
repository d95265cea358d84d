#!/bin/bash
# Smoke test of the local Slurm cluster (tests/cluster/up and down).
#
# Brings a 3-node cluster up in a private state folder, checks that it
# behaves like a small GPU cluster (distinct hosts, fake GPUs through GRES,
# name resolution inside jobs, two jobs sharing nodes, TCP between nodes),
# takes it down and checks that nothing of it is left. `down` also runs on
# any exit, failures included.
#
# Environment (set by ctest): DLAUNCH, DLAUNCH_SOURCE_DIR. Exit 77 (skip)
# when not root, or without unshare/ip or the right to make namespaces.
# Needs Debian's Slurm 22.05 and munge: `up` installs them when missing.

# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, bridge, daemons)"
require_command unshare
require_command ip
unshare --net --uts --mount true 2>/dev/null || skip "cannot create namespaces here"

CLUSTER=$DLAUNCH_SOURCE_DIR/tests/cluster
# Under $TEST_DIR (lib.sh points TMPDIR there), so its path carries $MARK.
STATE=$(mktemp -d)
JOBS=$STATE/jobs
mkdir -p "$JOBS"

# shellcheck disable=SC2317  # run by the EXIT trap
cluster_cleanup() {
  "$CLUSTER/down" "$STATE" >>"$TEST_DIR/down-on-exit.log" 2>&1
  _lib_cleanup
}
trap cluster_cleanup EXIT

# running PID: alive and not a zombie.
running() {
  local state
  state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

ms() { echo $(($(now_ns) / 1000000)); }

# ------------------------------------------------------------------- up
section "up"
t0=$(ms)
if ! expect_exit 0 env -u DLAUNCH_CLUSTER_NODES "$CLUSTER/up" "$STATE"; then
  say "        --- slurmctld.log"
  tail -n 20 "$STATE/log/slurmctld.log" 2>/dev/null | sed 's/^/        | /'
  finish
fi
up_ms=$(($(ms) - t0))
say "  (up took $up_ms ms)"
expect_contains "up prints the line to export" "$(cat "$OUT")" "export SLURM_CONF=$STATE/etc/slurm.conf"
expect_file "up writes env.sh" "$STATE/env.sh"
# shellcheck source=/dev/null
. "$STATE/env.sh"
expect_eq "env.sh sets SLURM_CONF" "$STATE/etc/slurm.conf" "${SLURM_CONF:-}"
NET=$(sed -n 's/^NET=//p' "$STATE/cluster.env")
TAG=dlc${NET##*.}

# Address of each node, as the controller knows it.
declare -A ADDR=()
for node in node1 node2 node3; do
  ADDR[$node]=$(scontrol show node "$node" 2>/dev/null | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')
done
expect_eq "node addresses are distinct" 3 "$(printf '%s\n' "${ADDR[@]}" | sort -u | grep -c .)"

t0=$(ms)
expect_exit 0 "$CLUSTER/up" "$STATE"
expect_contains "a second up finds the cluster running" "$(cat "$OUT")" "already running"
say "  (second up took $(($(ms) - t0)) ms)"

# ------------------------------------------------------------------ sinfo
section "sinfo"
expect_exit 0 sinfo -h -N -o '%N %t %G'
expect_eq "sinfo: 3 idle nodes with 4 GPUs each" \
  "$(printf 'node%s idle gpu:4\n' 1 2 3)" "$(sort -u "$OUT")"
expect_exit 0 scontrol show partition debug
expect_contains "partition debug is the default" "$(cat "$OUT")" "Default=YES"
expect_contains "partition debug oversubscribes" "$(cat "$OUT")" "OverSubscribe=YES"

# ------------------------------------------------------------------- hosts
section "srun -N3 hostname"
expect_exit 0 srun -N3 hostname
expect_eq "3 distinct node names" "$(printf 'node%s\n' 1 2 3)" "$(sort -u "$OUT")"

section "fake GPUs in steps"
expect_exit 0 srun -N2 --gpus-per-node=2 --label env
for task in 0 1; do
  cvd=$(sed -n "s/^$task: CUDA_VISIBLE_DEVICES=//p" "$OUT")
  expect_eq "task $task: CUDA_VISIBLE_DEVICES has 2 entries ($cvd)" 2 "$(tr ',' '\n' <<<"$cvd" | grep -c .)"
  step=$(sed -n "s/^$task: SLURM_STEP_GPUS=//p" "$OUT")
  expect_true "task $task: SLURM_STEP_GPUS is set ($step)" test -n "$step"
  on=$(sed -n "s/^$task: SLURM_GPUS_ON_NODE=//p" "$OUT")
  expect_eq "task $task: SLURM_GPUS_ON_NODE" 2 "$on"
done

# ------------------------------------------------------ batch job, resolution
section "sbatch --wait -N2 --gres=gpu:2, name resolution inside the job"
cat >"$JOBS/resolve.sh" <<'EOF'
#!/bin/bash
# One task per node: resolves every node, the controller and the first node
# of the job, as PyTorch would resolve MASTER_ADDR.
out=$1/resolve.$(hostname)
first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
{
  echo "self $(hostname) $SLURMD_NODENAME"
  for name in node1 node2 node3 ctl "$first"; do
    echo "resolve $name $(getent hosts "$name" | awk '{print $1}')"
  done
  echo "first $first"
} >"$out.tmp"
mv "$out.tmp" "$out"
EOF
cat >"$JOBS/batch.sh" <<'EOF'
#!/bin/bash
echo "$SLURM_JOB_GPUS" >"$1/job_gpus"
echo "$(hostname)" >"$1/batch_host"
srun bash "$1/resolve.sh" "$1"
EOF
t0=$(ms)
expect_exit 0 sbatch --wait -N2 --gres=gpu:2 -D "$JOBS" -o "$JOBS/batch.out" "$JOBS/batch.sh" "$JOBS"
say "  (2-node batch job took $(($(ms) - t0)) ms)"
job_gpus=$(cat "$JOBS/job_gpus" 2>/dev/null)
expect_eq "batch step: SLURM_JOB_GPUS has 2 entries ($job_gpus)" 2 "$(tr ',' '\n' <<<"$job_gpus" | grep -c .)"
expect_eq "batch step runs on the first node" node1 "$(cat "$JOBS/batch_host" 2>/dev/null)"
for node in node1 node2; do
  file=$JOBS/resolve.$node
  if [ ! -s "$file" ]; then
    fail "step on $node reported" "missing $file" "$(cat "$JOBS/batch.out" 2>/dev/null)"
    continue
  fi
  expect_eq "$node: host name is the node name" "self $node $node" "$(grep '^self' "$file")"
  for name in node1 node2 node3; do
    expect_eq "$node resolves $name" "resolve $name ${ADDR[$name]}" "$(grep "^resolve $name " "$file" | head -n 1)"
  done
  ctl=$(sed -n 's/^resolve ctl //p' "$file")
  expect_true "$node resolves ctl ($ctl)" test -n "$ctl"
  expect_eq "$node resolves the first node of the job" "resolve node1 ${ADDR[node1]}" "$(tail -n 2 "$file" | head -n 1)"
done

# --------------------------------------------------------- overlapping jobs
section "two jobs at once on overlapping nodes"
cat >"$JOBS/overlap.sh" <<'EOF'
#!/bin/bash
# Marks itself started, then waits (bounded) for the other job to start:
# both succeed only if they run at the same time.
dir=$1 me=$2 other=$3
touch "$dir/started.$me"
for _ in $(seq 1 300); do
  [ -e "$dir/started.$other" ] && { srun true; exit $?; }
  sleep 0.1
done
echo "job $me: job $other never ran beside me" >&2
exit 1
EOF
sbatch --wait -N2 -n4 -w node1,node2 --gres=gpu:2 -D "$JOBS" -o "$JOBS/overlap.a.out" \
  "$JOBS/overlap.sh" "$JOBS" a b >"$JOBS/submit.a" 2>&1 &
pid_a=$!
sbatch --wait -N2 -n4 -w node2,node3 --gres=gpu:2 -D "$JOBS" -o "$JOBS/overlap.b.out" \
  "$JOBS/overlap.sh" "$JOBS" b a >"$JOBS/submit.b" 2>&1 &
pid_b=$!
wait_pid 90 "$pid_a"
status_a=$STATUS
wait_pid 90 "$pid_b"
status_b=$STATUS
expect_eq "job a (node1,node2, 4 tasks) ran beside job b" 0 "$status_a"
expect_eq "job b (node2,node3, 4 tasks) ran beside job a" 0 "$status_b"
[ "$status_a$status_b" = 00 ] || cat "$JOBS"/submit.* "$JOBS"/overlap.*.out 2>/dev/null | sed 's/^/        | /'

# ------------------------------------------------------------ TCP across nodes
section "TCP from node2 to node1"
cat >"$JOBS/tcp.sh" <<'EOF'
#!/bin/bash
# Task 0 (node1) listens; task 1 (node2) connects to node1 by name, as gloo
# does to MASTER_ADDR.
dir=$1 port=23456
if [ "$SLURM_PROCID" = 0 ]; then
  exec /usr/bin/python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[2])))
s.listen(1)
open(sys.argv[1] + "/tcp.ready", "w").close()
s.settimeout(60)
c, peer = s.accept()
data = c.recv(100).decode().strip()
c.sendall(b"pong\n")
print("listener on %s got %r from %s" % (socket.gethostname(), data, peer[0]))
' "$dir" "$port"
else
  for _ in $(seq 1 300); do [ -e "$dir/tcp.ready" ] && break; sleep 0.1; done
  exec 3<>"/dev/tcp/node1/$port" || exit 1
  echo "ping from $(hostname)" >&3
  read -r -t 30 reply <&3
  echo "client on $(hostname) got $reply"
fi
EOF
expect_exit 0 srun -N2 -n2 -w node1,node2 --label bash "$JOBS/tcp.sh" "$JOBS"
expect_contains "node1 accepted a connection from node2's address" "$(cat "$OUT")" \
  "0: listener on node1 got 'ping from node2' from ${ADDR[node2]}"
expect_contains "node2 got the reply" "$(cat "$OUT")" "1: client on node2 got pong"

# ------------------------------------------------------------------- down
section "down"
mapfile -t PIDS < <(cat "$STATE"/run/*.pid 2>/dev/null)
expect_eq "up recorded munged, slurmctld and 3 slurmd" 5 "${#PIDS[@]}"
t0=$(ms)
expect_exit 0 "$CLUSTER/down" "$STATE"
down_ms=$(($(ms) - t0))
say "  (down took $down_ms ms)"
left=()
for pid in "${PIDS[@]}"; do running "$pid" && left+=("$pid"); done
expect_eq "no recorded daemon is running" "" "${left[*]}"
expect_eq "no process names the state folder" "" "$(pgrep -af "$STATE/")"
expect_eq "no namespace of the cluster is left" "" "$(ip netns list | grep "^$TAG-")"
expect_true "the bridge is gone" test ! -e "/sys/class/net/${TAG}br"

expect_exit 0 "$CLUSTER/down" "$STATE"
expect_contains "a second down has nothing to do" "$(cat "$OUT")" "no process of the cluster is running"
no_leftovers

finish
