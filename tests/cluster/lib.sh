# shellcheck shell=bash disable=SC2034  # settings used by up and down
# Shared settings and helpers of tests/cluster/up and tests/cluster/down.
#
# Sourced, never run. The caller sets STATE_DIR (or leaves it empty for the
# default) before calling cluster_init. See README.md beside this file.
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
# The daemons live in sbin, which a non-login PATH may lack.
case :$PATH: in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin:/sbin ;; esac

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

log() { printf '[cluster] %s\n' "$*" 2>/dev/null; }
warn() { printf '[cluster] warning: %s\n' "$*" >&2; }
die() {
  printf '[cluster] error: %s\n' "$*" >&2
  exit 1
}

now_ms() { date +%s%3N; }

# cluster_init [STATE_DIR]: sets STATE_DIR (absolute) and the paths below it.
cluster_init() {
  local dir=${1:-${DLAUNCH_CLUSTER_DIR:-$CLUSTER_DEFAULT_DIR}}
  case $dir in
    /*) ;;
    *) dir=$PWD/$dir ;;
  esac
  # Strip trailing slashes, so the path is one spelling everywhere (pgrep,
  # bridge alias) whatever way the user typed it.
  while [ "${#dir}" -gt 1 ] && [ "${dir%/}" != "$dir" ]; do dir=${dir%/}; done
  STATE_DIR=$dir
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

require_root() {
  [ "$(id -u)" = 0 ] || die "must run as root (namespaces, bridge, mknod, daemons as root)"
}

missing_commands() {
  local cmd missing=""
  for cmd in $CLUSTER_COMMANDS; do
    command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing="$missing $cmd"
  done
  printf '%s' "${missing# }"
}

# Installs Debian's packages if a command is missing. Package scripts do not
# start services here: up starts its own daemons with its own settings.
ensure_packages() {
  local missing
  missing=$(missing_commands)
  [ -z "$missing" ] && return 0
  command -v apt-get >/dev/null 2>&1 || die "missing commands ($missing) and no apt-get to install them"
  log "installing ${CLUSTER_PACKAGES[*]} (missing: $missing)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null || die "apt-get update failed"
  apt-get install -y -q --no-install-recommends "${CLUSTER_PACKAGES[@]}" >/dev/null ||
    die "apt-get install ${CLUSTER_PACKAGES[*]} failed"
  missing=$(missing_commands)
  [ -z "$missing" ] || die "still missing after install: $missing"
}

# cluster_names: from NET and NODES, sets TAG, BRIDGE, CTL_NS, CTL_ADDR,
# NODE_NAMES (array), NODE_NS (array), NODE_ADDRS (array), NODELIST.
cluster_names() {
  local octet=${NET##*.} k
  TAG=dlc$octet
  BRIDGE=${TAG}br
  BRIDGE_ADDR=$NET.1
  CTL_NS=$TAG-ctl
  CTL_VETH=${TAG}c
  CTL_ADDR=$NET.2
  NODE_NAMES=()
  NODE_NS=()
  NODE_VETHS=()
  NODE_ADDRS=()
  for ((k = 1; k <= NODES; k++)); do
    NODE_NAMES+=("$CLUSTER_NODE_PREFIX$k")
    NODE_NS+=("$TAG-$CLUSTER_NODE_PREFIX$k")
    NODE_VETHS+=("${TAG}n$k")
    NODE_ADDRS+=("$NET.$((10 + k))")
  done
  if [ "$NODES" -eq 1 ]; then NODELIST=${CLUSTER_NODE_PREFIX}1
  else NODELIST="${CLUSTER_NODE_PREFIX}[1-$NODES]"; fi
}

# load_settings: reads NET and NODES recorded by the last `up` of STATE_DIR;
# false if there are none.
load_settings() {
  [ -r "$SETTINGS_FILE" ] || return 1
  NET=$(sed -n 's/^NET=//p' "$SETTINGS_FILE")
  NODES=$(sed -n 's/^NODES=//p' "$SETTINGS_FILE")
  [[ $NET =~ ^10\.213\.[0-9]+$ && $NODES =~ ^[0-9]+$ ]] || return 1
  cluster_names
}

# A checksum of the scripts that write the configuration: a running cluster
# made by another version of them is restarted by up.
scripts_stamp() {
  cat "$CLUSTER_LIB_DIR/up" "$CLUSTER_LIB_DIR/lib.sh" 2>/dev/null | cksum | cut -d' ' -f1
}

save_settings() {
  printf 'NET=%s\nNODES=%s\nSTAMP=%s\n' "$NET" "$NODES" "$(scripts_stamp)" >"$SETTINGS_FILE"
}

# The bridge whose alias names STATE_DIR (up marks its bridge so), if any.
bridge_of_state_dir() {
  local link
  for link in /sys/class/net/dlc*br; do
    [ -e "$link" ] || continue
    if [ "$(cat "$link/ifalias" 2>/dev/null)" = "dlaunch-cluster:$STATE_DIR" ]; then
      basename "$link"
      return 0
    fi
  done
  return 1
}

# True if 10.213.OCTET.0/24 is taken on this machine by something that is
# not the bridge of STATE_DIR.
subnet_taken() {
  local octet=$1 net=10.213.$1
  if [ -e "/sys/class/net/dlc${octet}br" ]; then
    [ "$(cat "/sys/class/net/dlc${octet}br/ifalias" 2>/dev/null)" = "dlaunch-cluster:$STATE_DIR" ] && return 1
    return 0
  fi
  ip -4 -o addr show 2>/dev/null | grep -qF " $net." && return 0
  ip netns list 2>/dev/null | grep -q "^dlc${octet}-" && return 0
  return 1
}

# pick_net: the subnet for STATE_DIR. DLAUNCH_CLUSTER_NET (e.g. 10.213.9)
# forces one; the default folder gets 10.213.7; any other folder a subnet
# derived from its path; a taken one moves to the next free.
pick_net() {
  if [ -n "${DLAUNCH_CLUSTER_NET:-}" ]; then
    if ! [[ $DLAUNCH_CLUSTER_NET =~ ^10\.213\.([0-9]+)$ ]] ||
      [ "${BASH_REMATCH[1]}" -lt 1 ] || [ "${BASH_REMATCH[1]}" -gt 254 ]; then
      die "DLAUNCH_CLUSTER_NET must look like 10.213.N (1 <= N <= 254)"
    fi
    subnet_taken "${BASH_REMATCH[1]}" && die "subnet $DLAUNCH_CLUSTER_NET.0/24 is already in use"
    NET=$DLAUNCH_CLUSTER_NET
    return 0
  fi
  local octet tries
  if [ "$STATE_DIR" = "$CLUSTER_DEFAULT_DIR" ]; then
    octet=${CLUSTER_DEFAULT_NET##*.}
  else
    octet=$((16 + $(printf '%s' "$STATE_DIR" | cksum | cut -d' ' -f1) % 224))
  fi
  for ((tries = 0; tries < 240; tries++)); do
    if ! subnet_taken "$octet"; then
      NET=10.213.$octet
      return 0
    fi
    octet=$((octet % 254 + 1))
  done
  die "no free subnet in 10.213.0.0/16"
}

# pid_is_ours PID: the process is alive and its command line names STATE_DIR
# (so a pid file never makes us touch a recycled pid of someone else).
pid_is_ours() {
  local pid=$1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$STATE_DIR/"
}

# read_pid FILE: the pid in FILE, or nothing.
read_pid() {
  [ -r "$1" ] && tr -dc '0-9' <"$1"
}

# The daemons of the cluster, as "LABEL PIDFILE" lines.
daemon_pid_files() {
  local k
  printf 'munged %s\n' "$RUN_DIR/munged.pid"
  printf 'slurmctld %s\n' "$RUN_DIR/slurmctld.pid"
  for ((k = 0; k < NODES; k++)); do
    printf 'slurmd(%s) %s\n' "${NODE_NAMES[k]}" "$RUN_DIR/slurmd-${NODE_NAMES[k]}.pid"
  done
}
