# shellcheck shell=bash disable=SC2034  # settings used by up and down
# Shared settings and helpers of tests/cluster/up, down and node.
#
# Sourced, never run. The caller sets STATE_DIR (or leaves it empty for the
# default) before calling cluster_init. See README.md beside this file. What
# the cluster does like the ssh test bed (the bridge and namespaces, the
# subnet for the state folder, pid files, starting a daemon in a host,
# teardown) is in tests/testbed/lib.sh, which it sources.
#
# Layout of one cluster (NET = the first three octets of its /24, e.g.
# 10.213.7; TAG = "dlc" + third octet, e.g. dlc7):
#   bridge      ${TAG}br   NET.1/24 in the root namespace (the submit host)
#   controller  ctl        NET.2  in netns ${TAG}-ctl,    port 6817
#   node K      nodeK      NET.(10+K) in netns ${TAG}-nodeK, port 6818
#   munged      root namespace, unix socket STATE_DIR/munge/munge.socket
# Everything the cluster writes lives under STATE_DIR.

set -u

CLUSTER_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TESTBED_LABEL=cluster
# shellcheck source-path=SCRIPTDIR source=../testbed/lib.sh
. "$CLUSTER_LIB_DIR/../testbed/lib.sh"

# Default state folder; the subnet of a cluster in it is 10.213.7.0/24.
CLUSTER_DEFAULT_DIR=/tmp/dlaunch-cluster
CLUSTER_DEFAULT_NET=10.213.7
CLUSTER_CTL_NAME=ctl
CLUSTER_NODE_PREFIX=node
CLUSTER_GPUS_PER_NODE=4
CLUSTER_CPUS_PER_NODE=8
CLUSTER_CTLD_PORT=6817
CLUSTER_SLURMD_PORT=6818
# Packages the cluster needs, and a command each provides.
CLUSTER_PACKAGES=(slurmctld slurmd slurm-client munge iproute2 util-linux procps)
CLUSTER_COMMANDS="slurmctld slurmd slurmstepd sinfo scontrol munged munge ip unshare nsenter pgrep"

log() { testbed_log "$@"; }
warn() { testbed_warn "$@"; }
die() { testbed_die "$@"; }
now_ms() { testbed_now_ms; }

# cluster_init [STATE_DIR]: sets STATE_DIR (absolute) and the paths below it.
cluster_init() {
  STATE_DIR=$(testbed_abs_dir "${1:-${DLAUNCH_CLUSTER_DIR:-$CLUSTER_DEFAULT_DIR}}")
  ETC_DIR=$STATE_DIR/etc
  RUN_DIR=$STATE_DIR/run
  LOG_DIR=$STATE_DIR/log
  MUNGE_DIR=$STATE_DIR/munge
  DEV_DIR=$STATE_DIR/dev
  SLURM_CONF_FILE=$ETC_DIR/slurm.conf
  HOSTS_FILE=$ETC_DIR/hosts
  MUNGE_SOCKET=$MUNGE_DIR/munge.socket
  SETTINGS_FILE=$STATE_DIR/cluster.env
  ENV_FILE=$STATE_DIR/env.sh
}

require_root() { testbed_require_root "namespaces, bridge, mknod, daemons as root"; }

# Installs Debian's packages if a command is missing.
ensure_packages() { testbed_ensure_packages "$CLUSTER_COMMANDS" "${CLUSTER_PACKAGES[@]}"; }

# cluster_names: from NET and NODES, sets TAG, BRIDGE, CTL_NS, CTL_ADDR,
# NODE_NAMES (array), NODE_NS (array), NODE_ADDRS (array), NODELIST.
cluster_names() {
  TAG=dlc${NET##*.}
  BRIDGE=${TAG}br
  BRIDGE_ADDR=$NET.1
  CTL_NS=$TAG-ctl
  CTL_VETH=${TAG}c
  CTL_ADDR=$NET.2
  testbed_names "$NET" "$TAG" "$CLUSTER_NODE_PREFIX" n "$NODES"
  NODE_NAMES=("${TESTBED_HOST_NAMES[@]}")
  NODE_NS=("${TESTBED_HOST_NS[@]}")
  NODE_VETHS=("${TESTBED_HOST_VETHS[@]}")
  NODE_ADDRS=("${TESTBED_HOST_ADDRS[@]}")
  if [ "$NODES" -eq 1 ]; then NODELIST=${CLUSTER_NODE_PREFIX}1
  else NODELIST="${CLUSTER_NODE_PREFIX}[1-$NODES]"; fi
}

# load_settings: reads NET and NODES recorded by the last `up` of STATE_DIR;
# false if there are none.
load_settings() {
  [ -r "$SETTINGS_FILE" ] || return 1
  NET=$(testbed_setting "$SETTINGS_FILE" NET)
  NODES=$(testbed_setting "$SETTINGS_FILE" NODES)
  [[ $NET =~ ^10\.213\.[0-9]+$ && $NODES =~ ^[0-9]+$ ]] || return 1
  cluster_names
}

# A checksum of the scripts that write the configuration: a running cluster
# made by another version of them is restarted by up.
scripts_stamp() { testbed_stamp "$CLUSTER_LIB_DIR/up" "$CLUSTER_LIB_DIR/lib.sh"; }

save_settings() {
  printf 'NET=%s\nNODES=%s\nSTAMP=%s\n' "$NET" "$NODES" "$(scripts_stamp)" >"$SETTINGS_FILE"
}

# The alias up gives its bridge: it names STATE_DIR.
cluster_alias() { printf 'dlaunch-cluster:%s' "$STATE_DIR"; }

# The bridge whose alias names STATE_DIR (up marks its bridge so), if any.
bridge_of_state_dir() { testbed_bridge_of_dir dlc "$(cluster_alias)"; }

# True if 10.213.OCTET.0/24 is taken on this machine by something that is
# not the bridge of STATE_DIR.
subnet_taken() { testbed_subnet_taken 10.213 dlc "$1" "$(cluster_alias)"; }

# pick_net: the subnet for STATE_DIR. DLAUNCH_CLUSTER_NET (e.g. 10.213.9)
# forces one; the default folder gets 10.213.7; any other folder a subnet
# derived from its path (10.213.16 to 10.213.239); a taken one moves to the
# next free. The ssh test bed uses 10.214.x, so the two never meet.
pick_net() {
  local octet
  if [ "$STATE_DIR" = "$CLUSTER_DEFAULT_DIR" ]; then
    octet=${CLUSTER_DEFAULT_NET##*.}
  else
    octet=$(testbed_octet_of_dir "$STATE_DIR")
  fi
  testbed_pick_net 10.213 dlc "$(cluster_alias)" DLAUNCH_CLUSTER_NET "${DLAUNCH_CLUSTER_NET:-}" "$octet" 240
  NET=$TESTBED_NET
}

# pid_is_ours PID: the process is alive and its command line names STATE_DIR
# (so a pid file never makes us touch a recycled pid of someone else).
pid_is_ours() { testbed_pid_is_ours "$1" "$STATE_DIR"; }

# read_pid FILE: the pid in FILE, or nothing.
read_pid() { testbed_read_pid "$1"; }

# The daemons of the cluster, as "LABEL PIDFILE" lines.
daemon_pid_files() {
  local k
  printf 'munged %s\n' "$RUN_DIR/munged.pid"
  printf 'slurmctld %s\n' "$RUN_DIR/slurmctld.pid"
  for ((k = 0; k < NODES; k++)); do
    printf 'slurmd(%s) %s\n' "${NODE_NAMES[k]}" "$RUN_DIR/slurmd-${NODE_NAMES[k]}.pid"
  done
}

# ---------------------------------------------------------- daemons, nodes

# cluster_in_host NS HOSTNAME LOGFILE PIDFILE COMMAND...: starts COMMAND in
# the network namespace NS, in its own UTS and mount namespaces (mount
# propagation private), with host name HOSTNAME and the cluster's hosts
# file over /etc/hosts, in a session of its own, output to LOGFILE; records
# its pid, the daemon's own. How up starts slurmctld and every slurmd.
cluster_in_host() {
  local ns=$1 host=$2 out=$3 pidfile=$4
  shift 4
  testbed_start_in_host "$ns" "$host" "$HOSTS_FILE" private "$out" "$pidfile" "$@"
}

# cluster_slurmd_pid_file K: where the pid of node K's slurmd is recorded.
cluster_slurmd_pid_file() { printf '%s/slurmd-%s.pid' "$RUN_DIR" "${NODE_NAMES[$1 - 1]}"; }

# cluster_start_slurmd K: starts the slurmd of node K (1..NODES) in its
# namespace as host nodeK: `slurmd -D -N nodeK -f STATE/etc/slurm.conf`,
# output appended to STATE/log/slurmd-nodeK.out (Slurm's own log is
# slurmd-nodeK.log), pid in STATE/run/slurmd-nodeK.pid. up starts every
# node so, and `node on K` a powered-off node: the two are the same start.
# Does not wait for it.
cluster_start_slurmd() {
  local i=$(($1 - 1)) name
  name=${NODE_NAMES[i]}
  log "starting slurmd $name (${NODE_ADDRS[i]}:$CLUSTER_SLURMD_PORT)"
  cluster_in_host "${NODE_NS[i]}" "$name" "$LOG_DIR/slurmd-$name.out" "$(cluster_slurmd_pid_file "$1")" \
    slurmd -D -N "$name" -f "$SLURM_CONF_FILE"
}

# cluster_node_state NAME: sinfo's short state of node NAME (idle, mix,
# alloc, comp, down*, idle*, ...; a trailing * is "not responding"), then a
# tab and its reason ("none" if none); nothing if the controller does not
# answer within 10 s.
cluster_node_state() {
  SLURM_CONF=$SLURM_CONF_FILE timeout 10 sinfo -h -N -n "$1" -o $'%t\t%E' 2>/dev/null | head -n 1
}

# cluster_slurmd_start_time NAME: when node NAME's slurmd that last
# registered with the controller started (seconds since the epoch), or
# nothing.
cluster_slurmd_start_time() {
  SLURM_CONF=$SLURM_CONF_FILE SLURM_TIME_FORMAT=%s timeout 10 scontrol -o show node "$1" 2>/dev/null |
    sed -n 's/.* SlurmdStartTime=\([0-9][0-9]*\).*/\1/p'
}

# cluster_wait_node_usable K SINCE LIMIT_S: waits at most LIMIT_S seconds
# until node K's slurmd (its pid file's) runs, has registered with the
# controller having started at SINCE (seconds since the epoch) or later,
# and sinfo shows the node usable: idle, mix or alloc, responding. (With
# ReturnToService=2 a node that was down for not responding comes back by
# itself once its slurmd registers.) Dies if the slurmd exits or at the
# limit.
cluster_wait_node_usable() {
  local k=$1 since=$2 limit_s=$3 name limit state="" start pidfile
  name=${NODE_NAMES[k - 1]}
  pidfile=$(cluster_slurmd_pid_file "$k")
  limit=$(($(now_ms) + limit_s * 1000))
  while :; do
    state=$(cluster_node_state "$name")
    if [[ ${state%%$'\t'*} =~ ^(idle|mix|alloc)$ ]]; then
      start=$(cluster_slurmd_start_time "$name")
      [ "${start:-0}" -ge "$since" ] && return 0
    fi
    # Alive is enough: until its subshell has exec'd slurmd, the pid's
    # command line is not yet ours (pid_is_ours), though it is starting.
    if ! testbed_running "$(read_pid "$pidfile")"; then
      tail -n 20 "$LOG_DIR/slurmd-$name.log" "$LOG_DIR/slurmd-$name.out" >&2 2>/dev/null
      die "slurmd of $name exited (logs: $LOG_DIR/slurmd-$name.log, .out)"
    fi
    if [ "$(now_ms)" -ge "$limit" ]; then
      die "$name not usable after ${limit_s}s (sinfo: ${state:-no answer}; log: $LOG_DIR/slurmd-$name.log)"
    fi
    sleep 0.5
  done
}
