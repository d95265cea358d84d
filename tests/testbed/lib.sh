# shellcheck shell=bash disable=SC2034  # settings used by the beds' own libraries
# What the test beds do alike: the Slurm test cluster (tests/cluster) and the
# ssh test bed (tests/ssh) are both a bridge in the root namespace and hosts
# that are network namespaces cabled to it, in a /24 picked for their state
# folder, with daemons started in the hosts' namespaces and recorded by pid
# file, and taken down by pid file and by namespace.
#
# Sourced, never run, by tests/cluster/lib.sh and tests/ssh/lib.sh, which
# keep what is their own (names, daemons, configuration) and set first:
#   TESTBED_LABEL   the prefix of every line ("cluster" gives "[cluster] ...")
# Every name here starts with testbed_ / TESTBED_, so the beds' libraries
# can be sourced next to tests/integration/lib.sh.
#
# The layout every bed shares (NET = the first three octets of its /24,
# TAG = the bed's tag prefix and NET's third octet, e.g. dlc7 or dls42):
#   bridge   ${TAG}br  NET.1/24 in the root namespace; its alias
#                      (ip link ... alias) names the bed's state folder
#   host K   netns ${TAG}-PREFIXK at NET.(10+K) on its eth0, cabled to the
#            bridge by the veth ${TAG}LETTERK
#   STATE_DIR/ a settings file records NET, the host count and a stamp of
#            the scripts that made the bed

set -u

TESTBED_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The daemons, ip and nsenter live in sbin, which a non-login PATH may lack.
case :$PATH: in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin:/sbin ;; esac

# ---------------------------------------------------------------- messages

testbed_log() { printf '[%s] %s\n' "$TESTBED_LABEL" "$*" 2>/dev/null; }
testbed_warn() { printf '[%s] warning: %s\n' "$TESTBED_LABEL" "$*" >&2; }
testbed_die() {
  printf '[%s] error: %s\n' "$TESTBED_LABEL" "$*" >&2
  exit 1
}
testbed_now_ms() { date +%s%3N; }

# ----------------------------------------------------------------- the host

# testbed_abs_dir DIR: DIR as an absolute path without trailing slashes, so
# a state folder has one spelling everywhere (pid checks, bridge alias)
# whatever way the user typed it.
testbed_abs_dir() {
  local dir=$1
  case $dir in
    /*) ;;
    *) dir=$PWD/$dir ;;
  esac
  while [ "${#dir}" -gt 1 ] && [ "${dir%/}" != "$dir" ]; do dir=${dir%/}; done
  printf '%s' "$dir"
}

# testbed_require_root WHY: dies unless root; WHY says what needs it.
testbed_require_root() {
  [ "$(id -u)" = 0 ] || testbed_die "must run as root ($1)"
}

# testbed_missing_commands COMMANDS: those of the space-separated COMMANDS
# that are neither in PATH nor in /usr/sbin.
testbed_missing_commands() {
  local cmd missing=""
  for cmd in $1; do
    command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing="$missing $cmd"
  done
  printf '%s' "${missing# }"
}

# testbed_ensure_packages COMMANDS PACKAGE...: installs Debian's PACKAGEs
# when one of COMMANDS is missing. Package scripts do not start the beds'
# daemons: up starts its own, with its own settings.
testbed_ensure_packages() {
  local commands=$1 missing
  shift
  missing=$(testbed_missing_commands "$commands")
  [ -z "$missing" ] && return 0
  command -v apt-get >/dev/null 2>&1 || testbed_die "missing commands ($missing) and no apt-get to install them"
  testbed_log "installing $* (missing: $missing)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null || testbed_die "apt-get update failed"
  apt-get install -y -q --no-install-recommends "$@" >/dev/null || testbed_die "apt-get install $* failed"
  missing=$(testbed_missing_commands "$commands")
  [ -z "$missing" ] || testbed_die "still missing after install: $missing"
}

# --------------------------------------------------------------- processes

# testbed_read_pid FILE: the pid in FILE, or nothing.
testbed_read_pid() {
  [ -r "$1" ] && tr -dc '0-9' <"$1"
}

# testbed_running PID: alive and not a zombie (waiting for its parent to
# reap it). Builtins only: up and down call it often, and forks are slow on
# a busy 2-core machine.
testbed_running() {
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

# testbed_cmdline PID: the command line of PID, arguments joined by spaces
# (nothing for a zombie or a gone process).
testbed_cmdline() {
  local -a args=()
  { mapfile -d '' args <"/proc/$1/cmdline"; } 2>/dev/null
  printf '%s' "${args[*]}"
}

# testbed_pid_is_ours PID DIR: PID runs (not a zombie) and its command line
# names the state folder DIR, so a pid file never makes a bed touch a
# recycled pid of someone else.
testbed_pid_is_ours() {
  [[ $1 =~ ^[0-9]+$ ]] || return 1
  testbed_running "$1" || return 1
  [[ "$(testbed_cmdline "$1")" == *"$2/"* ]]
}

# testbed_start_in_host NS HOSTNAME HOSTS_FILE PROPAGATION OUT PIDFILE COMMAND...:
# starts COMMAND in the network namespace NS, in UTS and mount namespaces of
# its own (mount propagation PROPAGATION: private or slave), with host name
# HOSTNAME and HOSTS_FILE bound over /etc/hosts, in a session of its own,
# stdin from /dev/null and output appended to OUT; records its pid in
# PIDFILE. nsenter --net (not `ip netns exec`, which mounts a fresh /sys and
# so hides /sys/fs/cgroup); no tool in the chain forks, so the pid is
# COMMAND's own.
testbed_start_in_host() {
  local ns=$1 host=$2 hosts_file=$3 propagation=$4 out=$5 pidfile=$6
  shift 6
  (
    trap - PIPE INT TERM
    # shellcheck disable=SC2016  # expanded by that sh
    exec setsid nsenter --net="/run/netns/$ns" unshare --uts --mount --propagation "$propagation" \
      /bin/sh -c 'hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"' \
      sh "$host" "$hosts_file" "$@"
  ) </dev/null >>"$out" 2>&1 &
  echo $! >"$pidfile"
}

# ----------------------------------------------------------------- settings

# testbed_stamp FILE...: a checksum of the scripts that make a bed (its up,
# its lib.sh, this file): a running bed made by another version of them is
# restarted by up.
testbed_stamp() {
  cat "$@" "$TESTBED_LIB_DIR/lib.sh" 2>/dev/null | cksum | cut -d' ' -f1
}

# testbed_setting FILE KEY: the value of KEY=... in the settings FILE.
testbed_setting() {
  sed -n "s/^$2=//p" "$1"
}

# ------------------------------------------------------------------ network

# testbed_names NET TAG PREFIX LETTER COUNT: the names of COUNT hosts
# PREFIX1.. in TESTBED_HOST_NAMES, their namespaces (TAG-PREFIXK) in
# TESTBED_HOST_NS, their host-side veths (TAG LETTER K) in
# TESTBED_HOST_VETHS and their addresses (NET.(10+K)) in TESTBED_HOST_ADDRS
# (index K-1 for host K).
testbed_names() {
  local net=$1 tag=$2 prefix=$3 letter=$4 count=$5 k
  TESTBED_HOST_NAMES=()
  TESTBED_HOST_NS=()
  TESTBED_HOST_VETHS=()
  TESTBED_HOST_ADDRS=()
  for ((k = 1; k <= count; k++)); do
    TESTBED_HOST_NAMES+=("$prefix$k")
    TESTBED_HOST_NS+=("$tag-$prefix$k")
    TESTBED_HOST_VETHS+=("$tag$letter$k")
    TESTBED_HOST_ADDRS+=("$net.$((10 + k))")
  done
}

# testbed_bridge_of_dir TAG_PREFIX ALIAS: the bridge TAG_PREFIX*br whose
# alias is ALIAS (up marks its bridge so), if any.
testbed_bridge_of_dir() {
  local link
  for link in /sys/class/net/"$1"*br; do
    [ -e "$link" ] || continue
    if [ "$(cat "$link/ifalias" 2>/dev/null)" = "$2" ]; then
      basename "$link"
      return 0
    fi
  done
  return 1
}

# testbed_subnet_taken BASE TAG_PREFIX OCTET ALIAS: true if BASE.OCTET.0/24
# (BASE e.g. 10.213) is taken on this machine by something that is not the
# bridge whose alias is ALIAS.
testbed_subnet_taken() {
  local base=$1 tag=$2$3 octet=$3 alias=$4
  if [ -e "/sys/class/net/${tag}br" ]; then
    [ "$(cat "/sys/class/net/${tag}br/ifalias" 2>/dev/null)" = "$alias" ] && return 1
    return 0
  fi
  ip -4 -o addr show 2>/dev/null | grep -qF " $base.$octet." && return 0
  ip netns list 2>/dev/null | grep -q "^$tag-" && return 0
  return 1
}

# testbed_pick_net BASE TAG_PREFIX ALIAS FORCE_NAME FORCED FIRST_OCTET TRIES:
# sets TESTBED_NET to the bed's /24 in BASE.0.0/16. FORCED (the value of the
# variable FORCE_NAME, e.g. DLAUNCH_CLUSTER_NET=10.213.9), when not empty,
# is the one, and must be free; otherwise the first free one of TRIES from
# FIRST_OCTET on (wrapping from 254 to 1).
testbed_pick_net() {
  local base=$1 tag=$2 alias=$3 force_name=$4 forced=$5 octet=$6 tries=$7 try
  if [ -n "$forced" ]; then
    if ! [[ $forced =~ ^${base//./\\.}\.([0-9]+)$ ]] ||
      [ "${BASH_REMATCH[1]}" -lt 1 ] || [ "${BASH_REMATCH[1]}" -gt 254 ]; then
      testbed_die "$force_name must look like $base.N (1 <= N <= 254)"
    fi
    testbed_subnet_taken "$base" "$tag" "${BASH_REMATCH[1]}" "$alias" &&
      testbed_die "subnet $forced.0/24 is already in use"
    TESTBED_NET=$forced
    return 0
  fi
  for ((try = 0; try < tries; try++)); do
    if ! testbed_subnet_taken "$base" "$tag" "$octet" "$alias"; then
      TESTBED_NET=$base.$octet
      return 0
    fi
    octet=$((octet % 254 + 1))
  done
  testbed_die "no free subnet in $base.0.0/16"
}

# testbed_octet_of_dir DIR: an octet from 16 to 239 derived from the path DIR.
testbed_octet_of_dir() {
  printf '%d' $((16 + $(printf '%s' "$1" | cksum | cut -d' ' -f1) % 224))
}

# testbed_make_bridge BRIDGE ADDR ALIAS: the bridge with ADDR/24, marked
# with ALIAS (the state folder it belongs to), up.
testbed_make_bridge() {
  ip link add "$1" type bridge || testbed_die "cannot create bridge $1"
  ip link set "$1" alias "$3"
  ip addr add "$2/24" dev "$1" || testbed_die "cannot address $1"
  ip link set "$1" up
}

# testbed_add_host BRIDGE NS VETH ADDR: a namespace with ADDR on eth0,
# cabled to BRIDGE.
testbed_add_host() {
  local bridge=$1 ns=$2 veth=$3 addr=$4
  ip netns add "$ns" || testbed_die "ip netns add $ns failed"
  ip link add "$veth" type veth peer name eth0 netns "$ns" || testbed_die "veth $veth for $ns failed"
  ip link set "$veth" master "$bridge" up || testbed_die "cannot attach $veth to $bridge"
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$addr/24" dev eth0 || testbed_die "cannot give $ns the address $addr"
  ip -n "$ns" link set eth0 up
}

# ----------------------------------------------------------------- teardown

# testbed_owns_network BRIDGE ALIAS: false once the bed is down and another
# state folder's bed took the same subnet: its bridge then names that
# folder, and its network is not ours.
testbed_owns_network() {
  ! [ -e "/sys/class/net/$1" ] || [ "$(cat "/sys/class/net/$1/ifalias" 2>/dev/null)" = "$2" ]
}

# testbed_present_namespaces TAG NS...: sets TESTBED_PRESENT_NS to those of
# the namespaces NS and of any other namespace TAG-* (a bed that was up
# with more hosts) that exist.
testbed_present_namespaces() {
  local tag=$1 ns
  shift
  local -a namespaces=()
  mapfile -t namespaces < <(
    {
      [ $# -gt 0 ] && printf '%s\n' "$@"
      ip netns list 2>/dev/null | awk '{print $1}' | grep "^$tag-"
    } | sort -u
  )
  TESTBED_PRESENT_NS=()
  for ns in "${namespaces[@]}"; do
    [ -e "/run/netns/$ns" ] && TESTBED_PRESENT_NS+=("$ns")
  done
}

# testbed_ns_pids NS...: "PID NS" for every live process in the namespaces NS.
testbed_ns_pids() {
  local ns pid
  for ns in "$@"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
      testbed_running "$pid" && printf '%s %s\n' "$pid" "$ns"
    done
  done
}

# testbed_stop LIMIT_S PID...: stops the processes PID in that order, each
# labelled in the associative array TESTBED_STOP_LABEL (the caller's):
# "process in NS" ones with KILL when TESTBED_KILL_STRAYS=1, the others
# with TERM. Then waits at most LIMIT_S seconds and KILLs what is left.
testbed_stop() {
  local limit_s=$1 pid limit
  shift
  local -a order=("$@") alive
  for pid in "${order[@]}"; do
    if [ "${TESTBED_KILL_STRAYS:-0}" = 1 ] && [[ ${TESTBED_STOP_LABEL[$pid]} == "process in "* ]]; then
      testbed_log "killing ${TESTBED_STOP_LABEL[$pid]} (pid $pid)"
      kill -KILL "$pid" 2>/dev/null
    else
      testbed_log "stopping ${TESTBED_STOP_LABEL[$pid]} (pid $pid)"
      kill -TERM "$pid" 2>/dev/null
    fi
  done
  limit=$(($(testbed_now_ms) + limit_s * 1000))
  while :; do
    alive=()
    for pid in "${order[@]}"; do testbed_running "$pid" && alive+=("$pid"); done
    [ "${#alive[@]}" -eq 0 ] && return 0
    if [ "$(testbed_now_ms)" -ge "$limit" ]; then
      for pid in "${alive[@]}"; do
        testbed_log "killing ${TESTBED_STOP_LABEL[$pid]} (pid $pid), still there after $limit_s s"
        kill -KILL "$pid" 2>/dev/null
      done
      sleep 0.1
      return 0
    fi
    sleep 0.05
  done
}

# testbed_kill_left NS...: KILLs what still runs in the namespaces NS
# (started meanwhile: a session being set up, a job step, a child of a
# process that ignored TERM) until none is left; warns if some stay.
testbed_kill_left() {
  local round left pid ns
  for ((round = 0; round < 20; round++)); do
    left=$(testbed_ns_pids "$@")
    [ -z "$left" ] && return 0
    while read -r pid ns; do
      testbed_log "killing process $pid left in $ns"
      kill -KILL "$pid" 2>/dev/null
    done <<<"$left"
    sleep 0.1
  done
  left=$(testbed_ns_pids "$@")
  [ -z "$left" ] || testbed_warn "processes are still running in the namespaces: $(tr '\n' ' ' <<<"$left")"
}

# testbed_delete_network OWN BRIDGE VETH_GLOBS NS...: deletes the
# namespaces NS and, when OWN is 1, the veths matching the space-separated
# VETH_GLOBS (names in /sys/class/net) and the bridge. Deleting a namespace
# deletes the veth in it and so its peer; the globs are for peers left
# without a namespace.
testbed_delete_network() {
  local own=$1 bridge=$2 glob ns link
  local -a globs=()
  read -ra globs <<<"$3"
  shift 3
  for ns in "$@"; do
    testbed_log "deleting netns $ns"
    ip netns del "$ns" 2>/dev/null || testbed_warn "cannot delete netns $ns"
  done
  [ "$own" = 1 ] || return 0
  for glob in "${globs[@]}"; do
    # shellcheck disable=SC2231  # the glob is the caller's
    for link in /sys/class/net/$glob; do
      [ -e "$link" ] || continue
      testbed_log "deleting veth ${link##*/}"
      ip link del "${link##*/}" 2>/dev/null
    done
  done
  if [ -e "/sys/class/net/$bridge" ]; then
    testbed_log "deleting bridge $bridge"
    ip link del "$bridge" 2>/dev/null || testbed_warn "cannot delete bridge $bridge"
  fi
}

# ------------------------------------------------- decoys and slow links
# What the network tests (tests/integration/cluster/cluster_network.sh,
# tests/integration/ssh/ssh_gate.sh) do to a bed's hosts: interfaces that
# a program which does not choose its interface takes for the real one, and
# a slow link. Each is undone by its pair; none touches the root namespace
# but for the host-side end of a shaped link.

# Where the hosts files of hosts with decoys live (shared file system; each
# host's daemon binds its own over /etc/hosts in its mount namespace).
TESTBED_DECOY_DIR=${TESTBED_DECOY_DIR:-/run/dlaunch-testbed-decoys}

# testbed_decoy_addr K: the decoy address of host K, 10.254.K.1 (on
# decoy0/24, so no host reaches another's, and nothing routes there).
testbed_decoy_addr() { printf '10.254.%d.1' "$1"; }

# testbed_host_daemon NS: the pid of the host's daemon (slurmd, sshd) that
# testbed_start_in_host started in NS, whose mount and UTS namespaces every
# job or session it starts shares: of the processes in NS whose parent is
# outside NS and whose mount namespace is not the machine's, the one that
# started first (a later `ip netns exec` has a mount namespace of its own).
testbed_host_daemon() {
  local pid ppid stat start best="" best_start=""
  local -A in_ns=()
  local -a pids=() fields=()
  mapfile -t pids < <(ip netns pids "$1" 2>/dev/null)
  for pid in "${pids[@]}"; do in_ns[$pid]=1; done
  for pid in "${pids[@]}"; do
    testbed_running "$pid" || continue
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
    # After the command's name in parentheses: state, ppid, ... starttime (20th).
    read -ra fields <<<"${stat##*) }"
    ppid=${fields[1]:-} start=${fields[19]:-}
    if [ -n "$ppid" ] && [ -n "${in_ns[$ppid]:-}" ]; then continue; fi
    [ "$(readlink "/proc/$pid/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] || continue
    if [ -z "$best" ] || [ "$start" -lt "$best_start" ]; then best=$pid best_start=$start; fi
  done
  [ -n "$best" ] && printf '%s' "$best"
}

# testbed_add_decoys NS K: in host K's network namespace NS, interfaces
# that come before eth0 and lead nowhere, as on a real machine with a
# container runtime and a second network:
#   decoy0 (10.254.K.1/24), a veth whose peer decoy0p is in NS too (both
#          up, so it has carrier); no other host has a route to it;
#   docker0 (172.17.0.1/16), a bridge with one port (veth vethdocker0, its
#          peer vethdocker0p), so it is up with carrier like Docker's;
# and, in the mount namespace of the host's daemon (and so of every job or
# session it starts), a hosts file bound over /etc/hosts in which the host's
# own name maps to 10.254.K.1 and the other hosts keep their addresses. A
# program that does not choose its interface then takes the decoy: PyTorch's
# gloo binds the address its host name resolves to, which no peer reaches.
# Run it again and it starts over. Undone by testbed_remove_decoys.
testbed_add_decoys() {
  local ns=$1 k=$2 addr daemon host copy
  addr=$(testbed_decoy_addr "$k")
  testbed_remove_decoys "$ns" "$k"
  ip -n "$ns" link add decoy0 type veth peer name decoy0p || { testbed_warn "decoy0 in $ns failed"; return 1; }
  if ! { ip -n "$ns" addr add "$addr/24" dev decoy0 && ip -n "$ns" link set decoy0p up &&
    ip -n "$ns" link set decoy0 up; }; then
    testbed_warn "cannot set decoy0 up in $ns"
    return 1
  fi
  if ! { ip -n "$ns" link add docker0 type bridge && ip -n "$ns" addr add 172.17.0.1/16 dev docker0 &&
    ip -n "$ns" link add vethdocker0 type veth peer name vethdocker0p &&
    ip -n "$ns" link set vethdocker0 master docker0 up && ip -n "$ns" link set vethdocker0p up &&
    ip -n "$ns" link set docker0 up; }; then
    testbed_warn "cannot make docker0 in $ns"
    return 1
  fi
  daemon=$(testbed_host_daemon "$ns") || { testbed_warn "no daemon runs in $ns"; return 1; }
  host=$(nsenter --uts --target "$daemon" hostname) || return 1
  mkdir -p "$TESTBED_DECOY_DIR" || return 1
  copy=$TESTBED_DECOY_DIR/$ns.hosts
  # The hosts file the daemon sees now, with its own name moved to the decoy.
  nsenter --mount --target "$daemon" cat /etc/hosts |
    awk -v host="$host" -v addr="$addr" '
      /^[[:space:]]*#/ || NF < 2 { print; next }
      { for (i = 2; i <= NF; i++) if ($i == host) { $1 = addr; break } print }' >"$copy" || return 1
  grep -qE "^${addr//./\\.}[[:space:]](.*[[:space:]])?$host([[:space:]]|\$)" "$copy" || { testbed_warn "$host is not in its hosts file"; return 1; }
  nsenter --mount --target "$daemon" mount --bind "$copy" /etc/hosts ||
    { testbed_warn "cannot bind $copy over /etc/hosts for $host"; return 1; }
  testbed_log "$host ($ns): decoy0 $addr/24, docker0 172.17.0.1/16; its name resolves to $addr there"
}

# testbed_remove_decoys NS K: undoes testbed_add_decoys NS K (any part of
# it that is there): the hosts file bound over /etc/hosts in the daemon's
# mount namespace (every one of ours, if bound twice), decoy0, docker0 and
# their veths. Safe to run when none is there.
testbed_remove_decoys() {
  local ns=$1 daemon round link
  if daemon=$(testbed_host_daemon "$ns"); then
    for ((round = 0; round < 5; round++)); do
      # The top mount on /etc/hosts, as the mount namespace's table lists it
      # last; its root field names the file bound there.
      awk '$5 == "/etc/hosts" {root = $4} END {print root}' "/proc/$daemon/mountinfo" 2>/dev/null |
        grep -qF "$ns.hosts" || break
      nsenter --mount --target "$daemon" umount /etc/hosts || break
    done
  fi
  for link in decoy0 docker0 vethdocker0; do
    ip -n "$ns" link show "$link" >/dev/null 2>&1 && ip -n "$ns" link del "$link"
  done
  rm -f "$TESTBED_DECOY_DIR/$ns.hosts"
  return 0
}

# testbed_link_peer NS: the name, in the root namespace, of the other end
# of NS's eth0 (its host-side veth on the bridge).
testbed_link_peer() {
  local peer
  peer=$(ip -n "$1" -o link show eth0 2>/dev/null | sed -n 's/^[0-9]*: eth0@if\([0-9]*\):.*/\1/p')
  [ -n "$peer" ] || return 1
  ip -o link show 2>/dev/null | sed -n "s/^$peer: \\([^:@]*\\)[:@].*/\\1/p"
}

# testbed_shape_link NS RATE: host NS's link to the bridge carries at most
# RATE (tc's spelling: 100mbit) each way: a token bucket (tbf) on eth0 in
# NS (what it sends) and on the host-side veth (what it receives).
testbed_shape_link() {
  local ns=$1 rate=$2 peer
  testbed_unshape_link "$ns"
  tc -n "$ns" qdisc add dev eth0 root tbf rate "$rate" burst 32kbit latency 400ms ||
    { testbed_warn "cannot shape eth0 in $ns"; return 1; }
  peer=$(testbed_link_peer "$ns")
  [ -n "$peer" ] || { testbed_warn "no host-side veth of $ns"; return 1; }
  tc qdisc add dev "$peer" root tbf rate "$rate" burst 32kbit latency 400ms ||
    { testbed_warn "cannot shape $peer"; return 1; }
  testbed_log "$ns: its link carries at most $rate each way (eth0 and $peer)"
}

# testbed_unshape_link NS: undoes testbed_shape_link NS (safe when not shaped).
testbed_unshape_link() {
  local peer
  tc -n "$1" qdisc del dev eth0 root 2>/dev/null
  peer=$(testbed_link_peer "$1") && [ -n "$peer" ] && tc qdisc del dev "$peer" root 2>/dev/null
  return 0
}

# ------------------------------------------------------- whole-host faults
# What a test does to a whole host (a network namespace of a bed) to play a
# machine failing: freeze it (every process stopped, as a hung kernel or a
# driver stuck in D state leaves them), power it off (every process killed,
# the daemon and its jobs), cut its link. Each has its undoing: thaw, the
# bed's own daemon start, link up. tests/cluster/node is their command
# line for the Slurm test cluster. They only read /proc and send signals
# from the root namespace (`ip netns pids` does not enter the namespace),
# so none of them is ever caught by its own freeze. They return 1 with a
# warning when they fail, and never exit: the caller decides.
#
# A freeze catches every process in the namespace, whoever started it: a
# command run in it with `ip netns exec` or nsenter meanwhile is stopped too.

# testbed_proc_state PID: sets TESTBED_PROC_STATE to the state letter of PID
# (R, S, D, T, t, Z, ... the third field of /proc/PID/stat); false if PID is
# gone. Builtins only, no fork: a freeze must be quicker than a fork loop.
testbed_proc_state() {
  local stat=""
  TESTBED_PROC_STATE=""
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  # The command name, in parentheses, may hold spaces and ")": the state
  # follows the last ") ".
  stat=${stat##*) }
  TESTBED_PROC_STATE=${stat%% *}
  [ -n "$TESTBED_PROC_STATE" ]
}

# testbed_ns_census NS: counts the processes in the namespace NS:
# TESTBED_NS_LIVE (alive, not zombies), TESTBED_NS_STOPPED (of those, how
# many are stopped: state T, or t for one stopped by a tracer) and
# TESTBED_NS_STOPPED_PIDS, TESTBED_NS_RUNNING_PIDS (the others, as
# space-separated lists).
testbed_ns_census() {
  local pid
  local -a pids=()
  TESTBED_NS_LIVE=0 TESTBED_NS_STOPPED=0 TESTBED_NS_STOPPED_PIDS="" TESTBED_NS_RUNNING_PIDS=""
  mapfile -t pids < <(ip netns pids "$1" 2>/dev/null)
  for pid in "${pids[@]}"; do
    testbed_proc_state "$pid" || continue
    case $TESTBED_PROC_STATE in
      Z | X) ;;
      T | t)
        TESTBED_NS_LIVE=$((TESTBED_NS_LIVE + 1)) TESTBED_NS_STOPPED=$((TESTBED_NS_STOPPED + 1))
        TESTBED_NS_STOPPED_PIDS+="${TESTBED_NS_STOPPED_PIDS:+ }$pid"
        ;;
      *)
        TESTBED_NS_LIVE=$((TESTBED_NS_LIVE + 1))
        TESTBED_NS_RUNNING_PIDS+="${TESTBED_NS_RUNNING_PIDS:+ }$pid"
        ;;
    esac
  done
}

# testbed_describe_pids PID...: "PID(NAME,STATE)" for each PID still there,
# for messages.
testbed_describe_pids() {
  local pid comm out=""
  for pid in "$@"; do
    testbed_proc_state "$pid" || continue
    comm=""
    { read -r comm <"/proc/$pid/comm"; } 2>/dev/null
    out+="${out:+ }$pid($comm,$TESTBED_PROC_STATE)"
  done
  printf '%s' "$out"
}

# testbed_freeze_ns NS [PASSES]: SIGSTOPs every process in the network
# namespace NS. A process may fork while the loop runs (a job step being
# started, a shell's child): each pass lists the namespace again and stops
# what is not stopped yet, until two passes in a row find nothing to stop
# (the second makes sure no child forked just before its parent stopped
# was missed by the first pass's listing). At most PASSES passes (default
# 50, 50 ms apart while some are not stopped yet); false if it does not
# settle, e.g. a process stuck in D state, which stops only once its
# system call returns. A namespace with no process is frozen at once.
testbed_freeze_ns() {
  local ns=$1 passes=${2:-50} pass clean=0 pid sent=0
  [ -e "/run/netns/$ns" ] || { testbed_warn "no network namespace $ns"; return 1; }
  for ((pass = 1; pass <= passes; pass++)); do
    testbed_ns_census "$ns"
    if [ -z "$TESTBED_NS_RUNNING_PIDS" ]; then
      clean=$((clean + 1))
      if [ "$clean" -ge 2 ]; then
        testbed_log "$ns: frozen: $TESTBED_NS_STOPPED processes stopped ($sent SIGSTOPs, $pass passes)"
        return 0
      fi
      continue
    fi
    clean=0
    for pid in $TESTBED_NS_RUNNING_PIDS; do
      kill -STOP "$pid" 2>/dev/null && sent=$((sent + 1))
    done
    sleep 0.05
  done
  testbed_ns_census "$ns"
  # shellcheck disable=SC2086  # a list of pids
  testbed_warn "$ns: not frozen after $passes passes: still not stopped: $(testbed_describe_pids $TESTBED_NS_RUNNING_PIDS)"
  return 1
}

# testbed_thaw_ns NS [PASSES]: SIGCONTs every process in the namespace NS
# (stopped or not: a CONT to a running process does nothing unless it
# handles the signal), then again any still stopped, until a pass finds
# none stopped by a signal (T; one stopped by a tracer, t, only its tracer
# can resume). At most PASSES passes (default 50, 50 ms apart); false if
# some stay stopped (a process that stops itself again).
testbed_thaw_ns() {
  local ns=$1 passes=${2:-50} pass pid stopped
  [ -e "/run/netns/$ns" ] || { testbed_warn "no network namespace $ns"; return 1; }
  for ((pass = 1; pass <= passes; pass++)); do
    testbed_ns_census "$ns"
    stopped=()
    for pid in $TESTBED_NS_STOPPED_PIDS; do
      testbed_proc_state "$pid" && [ "$TESTBED_PROC_STATE" = T ] && stopped+=("$pid")
    done
    if [ "$pass" -gt 1 ] && [ "${#stopped[@]}" -eq 0 ]; then
      testbed_log "$ns: thawed: $TESTBED_NS_LIVE processes, none stopped"
      return 0
    fi
    if [ "$pass" -eq 1 ]; then
      # shellcheck disable=SC2086  # lists of pids
      set -- $TESTBED_NS_RUNNING_PIDS $TESTBED_NS_STOPPED_PIDS
    else
      set -- "${stopped[@]}"
    fi
    for pid in "$@"; do kill -CONT "$pid" 2>/dev/null; done
    [ "$pass" -gt 1 ] && sleep 0.05
  done
  testbed_warn "$ns: still stopped after $passes passes: $(testbed_describe_pids "${stopped[@]}")"
  return 1
}

# testbed_kill_ns NS [PASSES]: SIGKILLs every process in the namespace NS,
# as a power loss ends them (no TERM first, nothing may clean up), its
# daemon included, and again what is left or was forked meanwhile, until
# none is alive (a killed process whose parent has not reaped it yet is a
# zombie: it counts as gone). At most PASSES passes (default 50, 50 ms
# apart); false if some stay (stuck in D state).
# A power loss ends every process at the same instant; kills one by one
# leave each survivor a few milliseconds to react to the others' deaths,
# which no real host gives (CI saw srun's shepherd, outliving srun, kill
# the step on every node). So every process is frozen first (SIGSTOP: it
# can react to nothing), then killed deepest in the process tree first: a
# parent killed before its stopped children would orphan their process
# group, and the kernel wakes such a group with SIGHUP and SIGCONT (srun
# then ends the step on every node just the same).
testbed_kill_ns() {
  local ns=$1 passes=${2:-50} pass pid killed=0
  [ -e "/run/netns/$ns" ] || { testbed_warn "no network namespace $ns"; return 1; }
  testbed_freeze_ns "$ns" "$passes" >/dev/null || testbed_warn "$ns: not every process froze before the kill"
  for ((pass = 1; pass <= passes; pass++)); do
    testbed_ns_census "$ns"
    if [ "$TESTBED_NS_LIVE" -eq 0 ]; then
      testbed_log "$ns: off: no process left ($killed SIGKILLs, $pass passes)"
      return 0
    fi
    # shellcheck disable=SC2086  # lists of pids
    for pid in $(testbed_deepest_first $TESTBED_NS_RUNNING_PIDS $TESTBED_NS_STOPPED_PIDS); do
      kill -KILL "$pid" 2>/dev/null && killed=$((killed + 1))
    done
    sleep 0.05
  done
  testbed_ns_census "$ns"
  # shellcheck disable=SC2086  # lists of pids
  testbed_warn "$ns: processes left after $passes passes: $(testbed_describe_pids $TESTBED_NS_RUNNING_PIDS $TESTBED_NS_STOPPED_PIDS)"
  return 1
}

# testbed_deepest_first PID...: the PIDs, one a line, those deepest in the
# process tree (counting only parents among the PIDs) first.
testbed_deepest_first() {
  local -A parent_of=()
  local pid stat depth up
  for pid in "$@"; do
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
    stat=${stat##*) }  # after "PID (COMM) ", which may hold spaces
    set -- $stat
    parent_of[$pid]=$2
  done
  for pid in "${!parent_of[@]}"; do
    depth=0 up=$pid
    while [ -n "${parent_of[${parent_of[$up]}]:-}" ] && [ "$depth" -lt 64 ]; do
      up=${parent_of[$up]} depth=$((depth + 1))
    done
    printf '%s %s\n' "$depth" "$pid"
  done | sort -rn | cut -d' ' -f2
}

# testbed_link_is_up NS: true if eth0 in the namespace NS is up
# (administratively: its flags have UP).
testbed_link_is_up() {
  ip -n "$1" -o link show eth0 2>/dev/null | grep -q '[<,]UP[,>]'
}

# testbed_link_down NS: takes eth0, the host's end of its cable to the
# bridge, down inside the namespace NS, as
# tests/integration/cluster/cluster_faults.sh case 13 does: the host is
# unreachable and reaches nobody (its host-side veth loses its carrier),
# its processes run on. Its address stays; the kernel drops its route
# while the link is down.
testbed_link_down() {
  ip -n "$1" link set eth0 down || { testbed_warn "cannot take eth0 down in $1"; return 1; }
  testbed_log "$1: eth0 down (host-side veth $(testbed_link_peer "$1" || echo '?')): cut off"
}

# testbed_link_up NS ADDR: undoes testbed_link_down NS: eth0 up in NS, with
# the address ADDR/24 and the route to its /24 as testbed_add_host made
# them (both are put back if they went missing).
testbed_link_up() {
  local ns=$1 addr=$2 net
  net=${addr%.*}.0/24
  ip -n "$ns" link set eth0 up || { testbed_warn "cannot bring eth0 up in $ns"; return 1; }
  if ! ip -n "$ns" -4 -o addr show dev eth0 2>/dev/null | grep -qF " inet $addr/24 "; then
    ip -n "$ns" addr add "$addr/24" dev eth0 || { testbed_warn "cannot give $ns the address $addr"; return 1; }
  fi
  if [ -z "$(ip -n "$ns" -4 route show "$net" dev eth0 2>/dev/null)" ]; then
    ip -n "$ns" route replace "$net" dev eth0 proto kernel scope link src "$addr" ||
      { testbed_warn "cannot route $net through eth0 in $ns"; return 1; }
  fi
  testbed_log "$ns: eth0 up, $addr/24, route $net"
}

# testbed_answers FROM ADDR [TRIES]: true once ADDR answers a ping (one
# echo request, 1 s to answer) sent from the local address FROM (the
# bridge's), trying at most TRIES times (default 5). Needs ping
# (iputils-ping).
testbed_answers() {
  local from=$1 addr=$2 tries=${3:-5} i
  for ((i = 0; i < tries; i++)); do
    ping -n -q -c 1 -W 1 -I "$from" "$addr" >/dev/null 2>&1 && return 0
  done
  return 1
}
