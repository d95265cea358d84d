# shellcheck shell=bash disable=SC2034  # settings used by up, down and tests
# Shared settings and helpers of tests/ssh/up, tests/ssh/down and of the
# tests that use the ssh test bed (see README.md beside this file).
#
# Sourced, never run. Every name it defines starts with sshbed_ / SSHBED_,
# so a test can source it next to tests/integration/lib.sh. A test does:
#
#   . "$DLAUNCH_SOURCE_DIR/tests/ssh/lib.sh"
#   sshbed_use || skip "no ssh test bed is up"      # DLAUNCH_SSH_DIR or the default
#   ssh -F "$SSHBED_CONFIG" host2 hostname           # host2
#   sshbed_pids "$MARK" host3                        # pids of marked processes on host3
#   sshbed_exec host1 ss -ltn                        # a command on host1, without ssh
#
# Layout of one bed (NET = the first three octets of its /24, e.g.
# 10.214.42; TAG = "dls" + third octet, e.g. dls42):
#   bridge   ${TAG}br   NET.1/24 in the root namespace, host name "sshhost"
#   host K   hostK      NET.(10+K) in netns ${TAG}-hostK, sshd on port 22,
#                       host-side veth ${TAG}hK
# Everything the bed writes lives under its state folder.

set -u

SSHBED_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SSHBED_REPO_DIR=$(cd "$SSHBED_LIB_DIR/../.." && pwd)
# sshd, ip and nsenter live in sbin, which a non-login PATH may lack.
case :$PATH: in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin:/sbin ;; esac

SSHBED_DEFAULT_DIR=$SSHBED_REPO_DIR/build/test-ssh
SSHBED_HOST_PREFIX=host
# The name of the root namespace's bridge address in every host's /etc/hosts.
SSHBED_LOCAL_NAME=sshhost
SSHBED_SSHD=/usr/sbin/sshd
# Debian packages the bed needs, and commands they provide.
SSHBED_PACKAGES=(openssh-server openssh-client iproute2 util-linux procps)
SSHBED_COMMANDS="sshd ssh ssh-keygen ip unshare nsenter setsid pgrep"

sshbed_log() { printf '[ssh] %s\n' "$*" 2>/dev/null; }
sshbed_warn() { printf '[ssh] warning: %s\n' "$*" >&2; }
sshbed_die() {
  printf '[ssh] error: %s\n' "$*" >&2
  exit 1
}
sshbed_now_ms() { date +%s%3N; }

# sshbed_init [STATE_DIR]: sets SSHBED_DIR (absolute; default
# $DLAUNCH_SSH_DIR, else build/test-ssh in the repository) and the paths
# below it.
sshbed_init() {
  local dir=${1:-${DLAUNCH_SSH_DIR:-$SSHBED_DEFAULT_DIR}}
  case $dir in
    /*) ;;
    *) dir=$PWD/$dir ;;
  esac
  # One spelling everywhere (pid checks, bridge alias).
  while [ "${#dir}" -gt 1 ] && [ "${dir%/}" != "$dir" ]; do dir=${dir%/}; done
  SSHBED_DIR=$dir
  SSHBED_ETC=$dir/etc
  SSHBED_RUN=$dir/run
  SSHBED_LOGS=$dir/log
  SSHBED_KEYS=$dir/keys
  SSHBED_HOMES=$dir/home
  SSHBED_CONFIG=$dir/ssh_config
  SSHBED_KNOWN_HOSTS=$dir/known_hosts
  SSHBED_AUTHORIZED_KEYS=$dir/authorized_keys
  SSHBED_CLIENT_KEY=$dir/keys/client_ed25519
  SSHBED_HOSTS_FILE=$dir/etc/hosts
  SSHBED_SETTINGS=$dir/bed.env
  SSHBED_ENV=$dir/env.sh
}

sshbed_require_root() {
  [ "$(id -u)" = 0 ] || sshbed_die "must run as root (namespaces, bridge, sshd listening on port 22)"
}

sshbed_missing_commands() {
  local cmd missing=""
  for cmd in $SSHBED_COMMANDS; do
    command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing="$missing $cmd"
  done
  printf '%s' "${missing# }"
}

# Installs Debian's packages if a command is missing (as tests/cluster/up
# does). openssh-server's postinst makes /etc/ssh host keys and asks
# invoke-rc.d to start the system's sshd; on a machine without an init
# system (a container, CI) that start is refused, and if a system sshd does
# run, it does not matter: the bed's sshds listen only on the namespaces'
# addresses.
sshbed_ensure_packages() {
  local missing
  missing=$(sshbed_missing_commands)
  [ -z "$missing" ] && return 0
  command -v apt-get >/dev/null 2>&1 || sshbed_die "missing commands ($missing) and no apt-get to install them"
  sshbed_log "installing ${SSHBED_PACKAGES[*]} (missing: $missing)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null || sshbed_die "apt-get update failed"
  apt-get install -y -q --no-install-recommends "${SSHBED_PACKAGES[@]}" >/dev/null ||
    sshbed_die "apt-get install ${SSHBED_PACKAGES[*]} failed"
  missing=$(sshbed_missing_commands)
  [ -z "$missing" ] || sshbed_die "still missing after install: $missing"
}

# sshbed_names: from SSHBED_NET and SSHBED_NHOSTS, sets SSHBED_TAG,
# SSHBED_BRIDGE, SSHBED_BRIDGE_ADDR and the arrays SSHBED_HOSTS (names),
# SSHBED_NS, SSHBED_VETHS, SSHBED_ADDRS (index K-1 for hostK).
sshbed_names() {
  local k
  SSHBED_TAG=dls${SSHBED_NET##*.}
  SSHBED_BRIDGE=${SSHBED_TAG}br
  SSHBED_BRIDGE_ADDR=$SSHBED_NET.1
  SSHBED_HOSTS=()
  SSHBED_NS=()
  SSHBED_VETHS=()
  SSHBED_ADDRS=()
  for ((k = 1; k <= SSHBED_NHOSTS; k++)); do
    SSHBED_HOSTS+=("$SSHBED_HOST_PREFIX$k")
    SSHBED_NS+=("$SSHBED_TAG-$SSHBED_HOST_PREFIX$k")
    SSHBED_VETHS+=("${SSHBED_TAG}h$k")
    SSHBED_ADDRS+=("$SSHBED_NET.$((10 + k))")
  done
}

# sshbed_load: reads NET and NHOSTS recorded by the last `up` of the state
# folder and sets the names; false if there is no record.
sshbed_load() {
  [ -r "$SSHBED_SETTINGS" ] || return 1
  SSHBED_NET=$(sed -n 's/^NET=//p' "$SSHBED_SETTINGS")
  SSHBED_NHOSTS=$(sed -n 's/^NHOSTS=//p' "$SSHBED_SETTINGS")
  [[ $SSHBED_NET =~ ^10\.214\.[0-9]+$ && $SSHBED_NHOSTS =~ ^[0-9]+$ ]] || return 1
  sshbed_names
}

# A checksum of the scripts that make the bed: a running bed made by another
# version of them is restarted by up.
sshbed_stamp() {
  cat "$SSHBED_LIB_DIR/up" "$SSHBED_LIB_DIR/lib.sh" 2>/dev/null | cksum | cut -d' ' -f1
}

sshbed_save_settings() {
  printf 'NET=%s\nNHOSTS=%s\nSTAMP=%s\n' "$SSHBED_NET" "$SSHBED_NHOSTS" "$(sshbed_stamp)" >"$SSHBED_SETTINGS"
}

sshbed_alias() { printf 'dlaunch-ssh:%s' "$SSHBED_DIR"; }

# The bridge whose alias names the state folder (up marks its bridge so).
sshbed_bridge_of_dir() {
  local link
  for link in /sys/class/net/dls*br; do
    [ -e "$link" ] || continue
    if [ "$(cat "$link/ifalias" 2>/dev/null)" = "$(sshbed_alias)" ]; then
      basename "$link"
      return 0
    fi
  done
  return 1
}

# True if 10.214.OCTET.0/24 is taken on this machine by something that is
# not the bridge of this state folder.
sshbed_subnet_taken() {
  local octet=$1
  if [ -e "/sys/class/net/dls${octet}br" ]; then
    [ "$(cat "/sys/class/net/dls${octet}br/ifalias" 2>/dev/null)" = "$(sshbed_alias)" ] && return 1
    return 0
  fi
  ip -4 -o addr show 2>/dev/null | grep -qF " 10.214.$octet." && return 0
  ip netns list 2>/dev/null | grep -q "^dls${octet}-" && return 0
  return 1
}

# sshbed_pick_net: the subnet for the state folder. DLAUNCH_SSH_NET (e.g.
# 10.214.9) forces one; otherwise it is derived from the folder's path
# (10.214.16 to 10.214.239), moving on to the next free one if taken. The
# Slurm test cluster uses 10.213.x, so the two never meet.
sshbed_pick_net() {
  if [ -n "${DLAUNCH_SSH_NET:-}" ]; then
    if ! [[ $DLAUNCH_SSH_NET =~ ^10\.214\.([0-9]+)$ ]] ||
      [ "${BASH_REMATCH[1]}" -lt 1 ] || [ "${BASH_REMATCH[1]}" -gt 254 ]; then
      sshbed_die "DLAUNCH_SSH_NET must look like 10.214.N (1 <= N <= 254)"
    fi
    sshbed_subnet_taken "${BASH_REMATCH[1]}" && sshbed_die "subnet $DLAUNCH_SSH_NET.0/24 is already in use"
    SSHBED_NET=$DLAUNCH_SSH_NET
    return 0
  fi
  local octet tries
  octet=$((16 + $(printf '%s' "$SSHBED_DIR" | cksum | cut -d' ' -f1) % 224))
  for ((tries = 0; tries < 254; tries++)); do
    if ! sshbed_subnet_taken "$octet"; then
      SSHBED_NET=10.214.$octet
      return 0
    fi
    octet=$((octet % 254 + 1))
  done
  sshbed_die "no free subnet in 10.214.0.0/16"
}

# sshbed_read_pid FILE: the pid in FILE, or nothing.
sshbed_read_pid() {
  [ -r "$1" ] && tr -dc '0-9' <"$1"
}

# sshbed_pid_is_ours PID: alive, not a zombie, and its command line names
# the state folder (a pid file never makes us touch a recycled pid).
sshbed_pid_is_ours() {
  local pid=$1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  sshbed_running "$pid" || return 1
  [[ "$(sshbed_cmdline "$pid")" == *"$SSHBED_DIR/"* ]]
}

# sshbed_cmdline PID: the command line of PID, arguments joined by spaces
# (nothing for a zombie or a gone process). Builtins only: up and down call
# it often, and forks are slow on a busy 2-core machine.
sshbed_cmdline() {
  local -a args=()
  { mapfile -d '' args <"/proc/$1/cmdline"; } 2>/dev/null
  printf '%s' "${args[*]}"
}

# sshbed_running PID: alive and not a zombie.
sshbed_running() {
  local key state
  [[ $1 =~ ^[0-9]+$ ]] || return 1
  while read -r key state _; do
    if [ "$key" = State: ]; then
      [ "$state" != Z ] && [ "$state" != X ]
      return
    fi
  done 2>/dev/null <"/proc/$1/status"
  return 1
}

# sshbed_index HOST: K-1 for hostK of this bed; false for any other name.
sshbed_index() {
  local k
  for ((k = 0; k < ${#SSHBED_HOSTS[@]}; k++)); do
    [ "${SSHBED_HOSTS[k]}" = "$1" ] && { printf '%d' "$k"; return 0; }
  done
  return 1
}

sshbed_pid_file() { printf '%s/sshd-%s.pid' "$SSHBED_RUN" "$1"; }

# sshbed_sshd_pid HOST: the pid of HOST's sshd (the listener), if it runs.
sshbed_sshd_pid() {
  local pid
  pid=$(sshbed_read_pid "$(sshbed_pid_file "$1")")
  sshbed_pid_is_ours "$pid" || return 1
  printf '%s\n' "$pid"
}

# ------------------------------------------------------ helpers for tests

# sshbed_use [STATE_DIR]: for a test; sets everything above for the bed in
# STATE_DIR (default $DLAUNCH_SSH_DIR, else build/test-ssh). False (with a
# line on stderr) when that bed was never brought up or its sshds are not
# running; `up` makes it.
sshbed_use() {
  sshbed_init "${1:-}"
  if ! sshbed_load || [ ! -r "$SSHBED_ENV" ]; then
    printf '[ssh] no ssh test bed in %s (run tests/ssh/up)\n' "$SSHBED_DIR" >&2
    return 1
  fi
  local host
  for host in "${SSHBED_HOSTS[@]}"; do
    sshbed_sshd_pid "$host" >/dev/null || {
      printf '[ssh] the sshd of %s in %s is not running (run tests/ssh/up)\n' "$host" "$SSHBED_DIR" >&2
      return 1
    }
  done
}

# sshbed_pids PATTERN [HOST...]: the pids (one a line) of the processes in
# the network namespaces of the given hosts (default: every host of the
# bed) whose command line (arguments joined by spaces) matches the extended
# regular expression PATTERN, as `pgrep -f` would. A process started over
# ssh, or by sshbed_exec, on hostK is in hostK's namespace; the ssh client
# that started it is not. Needs root (it reads /proc/PID/ns/net).
sshbed_pids() {
  local pattern=$1 host k pid cmd
  shift
  [ $# -gt 0 ] || set -- "${SSHBED_HOSTS[@]}"
  for host in "$@"; do
    k=$(sshbed_index "$host") || { printf '[ssh] sshbed_pids: no host %s\n' "$host" >&2; return 2; }
    [ -e "/run/netns/${SSHBED_NS[k]}" ] || continue
    for pid in $(ip netns pids "${SSHBED_NS[k]}" 2>/dev/null); do
      cmd=$(sshbed_cmdline "$pid")
      [ -n "$cmd" ] || continue
      [[ $cmd =~ $pattern ]] && printf '%s\n' "$pid"
    done
  done
  return 0
}

# sshbed_host_of PID: the name of the bed's host whose network namespace
# PID is in; false if it is in none of them.
sshbed_host_of() {
  local k
  for ((k = 0; k < ${#SSHBED_HOSTS[@]}; k++)); do
    [ -e "/run/netns/${SSHBED_NS[k]}" ] || continue
    if ip netns pids "${SSHBED_NS[k]}" 2>/dev/null | grep -qx -- "$1"; then
      printf '%s\n' "${SSHBED_HOSTS[k]}"
      return 0
    fi
  done
  return 1
}

# sshbed_exec HOST COMMAND...: runs COMMAND on HOST without ssh, for test
# setup: in HOST's network, UTS (host name) and mount (its /etc/hosts)
# namespaces, those of HOST's sshd, as root, in the current folder, with the
# caller's environment and standard streams. Returns COMMAND's status (or 1
# if HOST's sshd is not running). Like `ip netns exec NS` plus the host's
# UTS and mount namespaces, but without ip's fresh /sys mount.
sshbed_exec() {
  local host=$1 pid
  shift
  sshbed_index "$host" >/dev/null || { printf '[ssh] sshbed_exec: no host %s\n' "$host" >&2; return 1; }
  pid=$(sshbed_sshd_pid "$host") || { printf '[ssh] sshbed_exec: the sshd of %s is not running\n' "$host" >&2; return 1; }
  nsenter --target "$pid" --net --uts --mount --wd="$PWD" -- "$@"
}
