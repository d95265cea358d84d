# shellcheck shell=bash
# Shared by the bench/ scripts that run on the local Slurm test cluster
# (tests/cluster/up): node_replacement and gate. Sourced after common.sh,
# never run. Part of bench/.
#
# Provides:
#   use_test_cluster OWN_DIR WORK
#                       a cluster of 3 nodes or more, usable: the one in
#                       $DLAUNCH_CLUSTER_DIR when it is up, else one already
#                       up in OWN_DIR (left up), else one brought up there
#                       (taken down by release_test_cluster); sources its
#                       env.sh and sets CLUSTER_DIR, OWN_CLUSTER (0/1), NET
#                       (its /24's first three octets) and NODES. WORK holds
#                       the bring-up log. Exits 77 (skip) when there is no
#                       Slurm to be had or no network namespaces.
#   release_test_cluster WORK
#                       takes down a cluster use_test_cluster brought up
#   node_ns K           the network namespace of node K
#   clock               sets NOW_US to the time in microseconds
#                       (CLOCK_REALTIME, the clock of a worker's date +%s%N)
#   wait_until SECONDS COMMAND...
#                       polls COMMAND every 20 ms; false on overrun
#   pid_gone PID        true when PID is no longer there

CLUSTER_DIR="" OWN_CLUSTER=0

slurm_commands_missing() {
  local cmd
  for cmd in sbatch scontrol sinfo slurmctld slurmd munged; do
    command -v "$cmd" >/dev/null 2>&1 || [[ -x /usr/sbin/$cmd ]] || return 0
  done
  return 1
}

# test_cluster_ready DIR: a test cluster of 3 nodes or more runs in DIR, each node usable.
test_cluster_ready() {
  [[ -f $1/env.sh && -f $1/cluster.env ]] || return 1
  local nodes states
  nodes=$(sed -n 's/^NODES=//p' "$1/cluster.env")
  [[ ${nodes:-0} -ge 3 ]] || return 1
  states=$(SLURM_CONF=$1/etc/slurm.conf timeout 10 sinfo -h -N -o '%N %t' 2>/dev/null | sort -u) || return 1
  [[ $(grep -cE ' (idle|mix|alloc|comp)$' <<<"$states") -ge 3 ]]
}

use_test_cluster() {
  local own_dir=$1 work=$2
  [[ $(id -u) == 0 ]] || skip "needs root (the test cluster: namespaces, a bridge, Slurm's daemons)"
  if [[ -n ${DLAUNCH_CLUSTER_DIR:-} ]] && test_cluster_ready "$DLAUNCH_CLUSTER_DIR"; then
    CLUSTER_DIR=$DLAUNCH_CLUSTER_DIR
  elif test_cluster_ready "$own_dir"; then
    CLUSTER_DIR=$own_dir # already up: used, and left up
  else
    [[ -n ${DLAUNCH_CLUSTER_DIR:-} ]] &&
      echo "note: no test cluster of 3 nodes is up in DLAUNCH_CLUSTER_DIR=$DLAUNCH_CLUSTER_DIR; bringing one up" >&2
    if slurm_commands_missing && ! command -v apt-get >/dev/null; then
      skip "Slurm is not installed and there is no apt-get to install it"
    fi
    echo "bringing up a test cluster in $own_dir (tests/cluster/up) ..." >&2
    OWN_CLUSTER=1
    CLUSTER_DIR=$own_dir
    if ! DLAUNCH_CLUSTER_NODES=3 timeout 600 "$REPO_ROOT/tests/cluster/up" "$own_dir" >"$work/cluster-up.log" 2>&1; then
      slurm_commands_missing && skip "no Slurm packages could be had (tests/cluster/up: $(tail -n 1 "$work/cluster-up.log"))"
      unshare --net true 2>/dev/null || skip "network namespaces cannot be made here"
      tail -n 20 "$work/cluster-up.log" >&2
      die "tests/cluster/up $own_dir failed"
    fi
  fi
  # shellcheck source=/dev/null
  . "$CLUSTER_DIR/env.sh"
  NET=$(sed -n 's/^NET=//p' "$CLUSTER_DIR/cluster.env")
  NODES=$(sed -n 's/^NODES=//p' "$CLUSTER_DIR/cluster.env")
}

release_test_cluster() {
  ((OWN_CLUSTER)) || return 0
  echo "taking down the test cluster in $CLUSTER_DIR" >&2
  "$REPO_ROOT/tests/cluster/down" "$CLUSTER_DIR" >"$1/cluster-down.log" 2>&1 ||
    { echo "tests/cluster/down $CLUSTER_DIR failed:" >&2; tail -n 20 "$1/cluster-down.log" >&2; }
  OWN_CLUSTER=0
}

node_ns() { printf 'dlc%s-node%s' "${NET##*.}" "$1"; }

# Without a fork where bash has EPOCHREALTIME.
clock() {
  if [[ -n ${EPOCHREALTIME:-} ]]; then NOW_US=${EPOCHREALTIME/[.,]/}; else NOW_US=$(($(date +%s%N) / 1000)); fi
}

# The figures come from the workers' own clocks, not from this polling.
wait_until() {
  clock
  local limit=$((NOW_US + $1 * 1000000))
  shift
  until "$@"; do
    clock
    ((NOW_US < limit)) || return 1
    sleep 0.02
  done
}

pid_gone() { ! kill -0 "$1" 2>/dev/null; }
