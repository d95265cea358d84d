# shellcheck shell=bash disable=SC2034  # settings used by up, down and tests
# Shared settings and helpers of tests/ssh/up, tests/ssh/down and of the
# tests that use the ssh test bed (see README.md beside this file).
#
# Sourced, never run. What the bed does like the Slurm test cluster (the
# bridge and namespaces, the subnet for the state folder, pid files,
# teardown) is in tests/testbed/lib.sh, which it sources. Every name either
# defines starts with sshbed_ / SSHBED_ or testbed_ / TESTBED_, so a test
# can source it next to tests/integration/lib.sh. A test does:
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
TESTBED_LABEL=ssh
# shellcheck source-path=SCRIPTDIR source=../testbed/lib.sh
. "$SSHBED_LIB_DIR/../testbed/lib.sh"

SSHBED_DEFAULT_DIR=$SSHBED_REPO_DIR/build/test-ssh
SSHBED_HOST_PREFIX=host
# The name of the root namespace's bridge address in every host's /etc/hosts.
SSHBED_LOCAL_NAME=sshhost
SSHBED_SSHD=/usr/sbin/sshd
# Debian packages the bed needs, and commands they provide.
SSHBED_PACKAGES=(openssh-server openssh-client iproute2 util-linux procps)
SSHBED_COMMANDS="sshd ssh ssh-keygen ip unshare nsenter setsid pgrep"

sshbed_log() { testbed_log "$@"; }
sshbed_warn() { testbed_warn "$@"; }
sshbed_die() { testbed_die "$@"; }
sshbed_now_ms() { testbed_now_ms; }

# sshbed_init [STATE_DIR]: sets SSHBED_DIR (absolute; default
# $DLAUNCH_SSH_DIR, else build/test-ssh in the repository) and the paths
# below it.
sshbed_init() {
  local dir
  dir=$(testbed_abs_dir "${1:-${DLAUNCH_SSH_DIR:-$SSHBED_DEFAULT_DIR}}")
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

sshbed_require_root() { testbed_require_root "namespaces, bridge, sshd listening on port 22"; }

sshbed_missing_commands() { testbed_missing_commands "$SSHBED_COMMANDS"; }

# Installs Debian's packages if a command is missing (as tests/cluster/up
# does). openssh-server's postinst makes /etc/ssh host keys and asks
# invoke-rc.d to start the system's sshd; on a machine without an init
# system (a container, CI) that start is refused, and if a system sshd does
# run, it does not matter: the bed's sshds listen only on the namespaces'
# addresses.
sshbed_ensure_packages() { testbed_ensure_packages "$SSHBED_COMMANDS" "${SSHBED_PACKAGES[@]}"; }

# sshbed_names: from SSHBED_NET and SSHBED_NHOSTS, sets SSHBED_TAG,
# SSHBED_BRIDGE, SSHBED_BRIDGE_ADDR and the arrays SSHBED_HOSTS (names),
# SSHBED_NS, SSHBED_VETHS, SSHBED_ADDRS (index K-1 for hostK).
sshbed_names() {
  SSHBED_TAG=dls${SSHBED_NET##*.}
  SSHBED_BRIDGE=${SSHBED_TAG}br
  SSHBED_BRIDGE_ADDR=$SSHBED_NET.1
  testbed_names "$SSHBED_NET" "$SSHBED_TAG" "$SSHBED_HOST_PREFIX" h "$SSHBED_NHOSTS"
  SSHBED_HOSTS=("${TESTBED_HOST_NAMES[@]}")
  SSHBED_NS=("${TESTBED_HOST_NS[@]}")
  SSHBED_VETHS=("${TESTBED_HOST_VETHS[@]}")
  SSHBED_ADDRS=("${TESTBED_HOST_ADDRS[@]}")
}

# sshbed_load: reads NET and NHOSTS recorded by the last `up` of the state
# folder and sets the names; false if there is no record.
sshbed_load() {
  [ -r "$SSHBED_SETTINGS" ] || return 1
  SSHBED_NET=$(testbed_setting "$SSHBED_SETTINGS" NET)
  SSHBED_NHOSTS=$(testbed_setting "$SSHBED_SETTINGS" NHOSTS)
  [[ $SSHBED_NET =~ ^10\.214\.[0-9]+$ && $SSHBED_NHOSTS =~ ^[0-9]+$ ]] || return 1
  sshbed_names
}

# A checksum of the scripts that make the bed: a running bed made by another
# version of them is restarted by up.
sshbed_stamp() { testbed_stamp "$SSHBED_LIB_DIR/up" "$SSHBED_LIB_DIR/lib.sh"; }

sshbed_save_settings() {
  printf 'NET=%s\nNHOSTS=%s\nSTAMP=%s\n' "$SSHBED_NET" "$SSHBED_NHOSTS" "$(sshbed_stamp)" >"$SSHBED_SETTINGS"
}

sshbed_alias() { printf 'dlaunch-ssh:%s' "$SSHBED_DIR"; }

# The bridge whose alias names the state folder (up marks its bridge so).
sshbed_bridge_of_dir() { testbed_bridge_of_dir dls "$(sshbed_alias)"; }

# True if 10.214.OCTET.0/24 is taken on this machine by something that is
# not the bridge of this state folder.
sshbed_subnet_taken() { testbed_subnet_taken 10.214 dls "$1" "$(sshbed_alias)"; }

# sshbed_pick_net: the subnet for the state folder. DLAUNCH_SSH_NET (e.g.
# 10.214.9) forces one; otherwise it is derived from the folder's path
# (10.214.16 to 10.214.239), moving on to the next free one if taken. The
# Slurm test cluster uses 10.213.x, so the two never meet.
sshbed_pick_net() {
  testbed_pick_net 10.214 dls "$(sshbed_alias)" DLAUNCH_SSH_NET "${DLAUNCH_SSH_NET:-}" \
    "$(testbed_octet_of_dir "$SSHBED_DIR")" 254
  SSHBED_NET=$TESTBED_NET
}

# sshbed_read_pid FILE: the pid in FILE, or nothing.
sshbed_read_pid() { testbed_read_pid "$1"; }

# sshbed_pid_is_ours PID: alive, not a zombie, and its command line names
# the state folder (a pid file never makes us touch a recycled pid).
sshbed_pid_is_ours() { testbed_pid_is_ours "$1" "$SSHBED_DIR"; }

# sshbed_cmdline PID: the command line of PID, arguments joined by spaces
# (nothing for a zombie or a gone process).
sshbed_cmdline() { testbed_cmdline "$1"; }

# sshbed_running PID: alive and not a zombie.
sshbed_running() { testbed_running "$1"; }

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
