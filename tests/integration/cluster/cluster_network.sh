#!/usr/bin/env bash
# How dlaunch picks each host's network on the real 3-node Slurm test cluster
# (tests/cluster/up), and its pre-start gate. Every node gets decoys for the
# whole test (testbed_add_decoys, removed by the exit trap): decoy0
# (10.254.K.1/24, which no other node reaches), a docker0 bridge, and its own
# host name resolving to the decoy in the jobs' /etc/hosts, as on a machine
# whose name maps to the wrong network.
#   0  the decoys bite: plain PyTorch gloo across 2 nodes (MASTER_ADDR and
#      RANK set by hand, no GLOO_SOCKET_IFNAME) all-reduces before they are
#      added and fails (or hangs, cut at 30 s) once they are
#   a  dlaunch submit --nodes 3 with no network setting: the gloo all-reduce
#      completes; every worker got GLOO_SOCKET_IFNAME=eth0,
#      NCCL_SOCKET_IFNAME==eth0 (the value =eth0) and one numeric MASTER_ADDR, the eth0 address
#      of rank 0's node; node 0's log has a network: line per host choosing
#      eth0, reaching 2/2 peers, with decoy0 skipped; `dlaunch env` in a
#      3-node step shows docker0 skipped as a container runtime's bridge
#   b  NCCL_SOCKET_IFNAME=nope exported for the job: it fails its preflight
#      within 30 s, one line naming the host, nope and its interfaces; no
#      worker starts
#   c  node3's link shaped to 100 Mbit/s each way: --nodes 2 --spare-nodes 1
#      --gate benches node3 (its Gb/s in the console and in the report), the
#      workers run on node1 and node2, benched-hosts holds node3
#   d  the same with node1's link shaped (the host of node 0's launcher): it
#      is benched and the job completes on node2 and node3
# After each job no process of it is left on any node. Needs root
# (namespaces, tc, the daemons' mount namespaces), a cluster of 3 nodes and
# /usr/bin/python3 with torch. About 2 to 3 minutes.
. "$(dirname "$0")/../lib.sh"

[ -n "${DLAUNCH_CLUSTER_DIR:-}" ] && [ -f "$DLAUNCH_CLUSTER_DIR/env.sh" ] ||
  skip "no test cluster is up (DLAUNCH_CLUSTER_DIR unset or without env.sh)"
. "$DLAUNCH_CLUSTER_DIR/env.sh"
. "$DLAUNCH_CLUSTER_DIR/cluster.env"
# shellcheck source-path=SCRIPTDIR source=job_checks.sh
. "$(dirname "$0")/job_checks.sh"
# shellcheck disable=SC2034  # read by tests/testbed/lib.sh
TESTBED_LABEL=network
# shellcheck source-path=SCRIPTDIR source=../../testbed/lib.sh
. "$DLAUNCH_SOURCE_DIR/tests/testbed/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (decoy interfaces, tc, the nodes' mount namespaces)"
require_command sbatch
require_command srun
require_command scancel
require_command ip
require_command tc
require_command nsenter
require_torch
[ "${NODES:-0}" -ge 3 ] || skip "needs a cluster of 3 nodes or more (this one has ${NODES:-0})"

export OMP_NUM_THREADS=1
# Safety nets, never timing assertions (but case b's 30 s): a job ends, its
# processes vanish.
END_LIMIT=150
GONE_LIMIT=20
# The preflight stops a job whose interface setting names no interface
# within seconds; 30 s leaves room for sbatch, srun and --wait's polling.
PREFLIGHT_LIMIT=30
SLOW_RATE=100mbit
OUTPUTS=$TEST_DIR/outputs
cd "$DLAUNCH_SOURCE_DIR" || exit 1

# The worker, copied into the test folder so that its command line carries
# the marker (expect_nothing_left finds it on the nodes).
WORKER=$TEST_DIR/network_worker.py
cp "$DLAUNCH_SOURCE_DIR/tests/integration/cluster/network_worker.py" "$WORKER"

node_addr() { printf '%s.%d' "$NET" $((10 + ${1#node})); }

remove_all_decoys() {
  local k
  for ((k = 1; k <= NODES; k++)); do
    testbed_unshape_link "$(node_ns "$k")"
    testbed_remove_decoys "$(node_ns "$k")" "$k"
  done
}

_network_cleanup() {
  [ -n "${SUBMITTER:-}" ] && kill "$SUBMITTER" 2>/dev/null
  [ -n "${JOB_ID:-}" ] && scancel "$JOB_ID" 2>/dev/null
  remove_all_decoys >/dev/null 2>&1
  _lib_cleanup
}
trap _network_cleanup EXIT

# submit NAME ARGS...: dlaunch submit --wait ARGS -- the worker, in the
# background (submit_in_background); sets FOLDER, JOB_ID, LOG, SUBMITTER.
submit() {
  RUN_DIR=$TEST_DIR/$1
  shift
  submit_in_background $((END_LIMIT + 30)) --gpus-per-node 1 --shutdown-timeout 5 \
    --output-dir "$OUTPUTS/${RUN_DIR##*/}" "$@" -- /usr/bin/python3 "$WORKER"
}

end_case() {
  [ -n "${SUBMITTER:-}" ] && { kill "$SUBMITTER" 2>/dev/null; wait "$SUBMITTER" 2>/dev/null; }
  [ -n "${JOB_ID:-}" ] && scancel "$JOB_ID" 2>/dev/null
  JOB_ID="" SUBMITTER=""
}

# The workers' "net rank R/W on HOST: GLOO_SOCKET_IFNAME=G NCCL_SOCKET_IFNAME=N
# MASTER_ADDR=M" lines in the job's log as "R HOST G N M", sorted by rank.
env_lines() {
  grep -oE 'net rank [0-9]+/[0-9]+ on [^: ]+: GLOO_SOCKET_IFNAME=[^ ]* NCCL_SOCKET_IFNAME=[^ ]* MASTER_ADDR=[^ ]*' \
    "$LOG" 2>/dev/null |
    sed 's/^net rank \([0-9]*\)\/[0-9]* on \([^:]*\): GLOO_SOCKET_IFNAME=\([^ ]*\) NCCL_SOCKET_IFNAME=\([^ ]*\) MASTER_ADDR=\([^ ]*\)$/\1 \2 \3 \4 \5/' |
    sort -n -u
}
# The hosts whose workers all-reduced, sorted, space-separated; and how many did.
ok_hosts() {
  grep -oE 'net rank [0-9]+/[0-9]+ on [^: ]+: all_reduce OK' "$LOG" 2>/dev/null |
    awk '{print $5}' | tr -d ':' | sort -u | paste -sd' ' -
}
ok_count() { grep -cE 'net rank [0-9]+/[0-9]+ on [^: ]+: all_reduce OK' "$LOG" 2>/dev/null; }

show_log() { tail -n 25 "$LOG" 2>/dev/null; }

# expect_line DESCRIPTION FILE PATTERN NEEDLE...: some line of FILE matches
# the extended regex PATTERN and holds every NEEDLE (fixed strings).
expect_line() {
  local description=$1 file=$2 pattern=$3 needle
  shift 3
  local lines
  lines=$(grep -E -- "$pattern" "$file" 2>/dev/null)
  for needle in "$@"; do lines=$(grep -F -- "$needle" <<<"$lines"); done
  if [ -n "$lines" ]; then
    pass "$description"
  else
    fail "$description" "no line of $file matches /$pattern/ and holds: $*" \
      "lines that match /$pattern/:" "$(grep -E -- "$pattern" "$file" 2>/dev/null | head -n 10)"
  fi
}

# ------------------------------------------------------------------- case 0

# Plain PyTorch on 2 nodes, the way a job script without a launcher that
# chooses does it: RANK from Slurm, MASTER_ADDR=node1, gloo's default device
# (the address the host's own name resolves to).
PLAIN=$TEST_DIR/plain_gloo.py
cat >"$PLAIN" <<'EOF'
import datetime, os, socket
import torch, torch.distributed as dist
rank, world = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
print(f"plain rank {rank} on {socket.gethostname()}, which resolves to "
      f"{socket.gethostbyname(socket.gethostname())}", flush=True)
dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=20))
value = torch.tensor([rank + 1])
dist.all_reduce(value)
print(f"plain rank {rank}: all_reduce {int(value.item())} OK", flush=True)
EOF
# plain_gloo OUT: runs it (at most 30 s: a hang counts as a failure), sets STATUS.
plain_gloo() {
  timeout -k 5 30 srun -K -N2 --ntasks-per-node=1 -w "node[1-2]" \
    --export="ALL,MASTER_ADDR=node1,MASTER_PORT=$((29500 + RANDOM % 400))" \
    /usr/bin/python3 -u "$PLAIN" >"$1" 2>&1
  STATUS=$?
}

section "0: the decoys bite: plain gloo all-reduces without them and fails with them"
plain_gloo "$TEST_DIR/plain_before.out"
expect_eq "without decoys, plain gloo across node1 and node2 all-reduces (srun exits 0)" 0 "$STATUS"
expect_eq "... both ranks say OK" 2 "$(grep -c 'all_reduce 3 OK' "$TEST_DIR/plain_before.out")"
[ "$STATUS" = 0 ] || sed 's/^/        | /' "$TEST_DIR/plain_before.out" | tail -n 15

decoys_ok=yes
for ((k = 1; k <= NODES; k++)); do
  testbed_add_decoys "$(node_ns "$k")" "$k" || decoys_ok=no
done
expect_eq "decoys added on node1..node$NODES" yes "$decoys_ok"
expect_eq "in a job on node2, node2 resolves to its decoy" "$(testbed_decoy_addr 2)" \
  "$(timeout 30 srun -N1 -w node2 getent hosts node2 | awk '{print $1}')"
expect_eq "... and node1 to its real address" "$(node_addr node1)" \
  "$(timeout 30 srun -N1 -w node2 getent hosts node1 | awk '{print $1}')"
start_clock
plain_gloo "$TEST_DIR/plain_with_decoys.out"
stop_clock
say "  plain gloo with decoys: exit $STATUS after ${ELAPSED_MS} ms (124: cut at 30 s)"
expect_true "with decoys, plain gloo fails or hangs (srun exit $STATUS)" test "$STATUS" != 0
expect_eq "... no rank all-reduces" 0 "$(grep -c 'all_reduce 3 OK' "$TEST_DIR/plain_with_decoys.out")"
grep -E 'resolves to|Error' "$TEST_DIR/plain_with_decoys.out" | cut -c1-160 | sed 's/^/        | /'

# ------------------------------------------------------------------- case a

section "a: --nodes 3, no network setting: every worker gets eth0 and a numeric MASTER_ADDR"
failed_before=$FAILED
if submit choose --nodes 3 && wait_for_job_end; then
  expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
  expect_eq "its exit code is 0" 0 "$END_CODE"
  expect_eq "dlaunch submit --wait exits 0" 0 "$STATUS"
  expect_eq "3 workers all-reduced" 3 "$(ok_count)"
  expect_eq "... on node1, node2 and node3" "node1 node2 node3" "$(ok_hosts)"
  lines=$(env_lines)
  expect_eq "3 workers said what they got" 3 "$(grep -c . <<<"$lines")"
  expect_eq "every worker's GLOO_SOCKET_IFNAME is eth0" eth0 "$(awk '{print $3}' <<<"$lines" | sort -u | paste -sd, -)"
  expect_eq "every worker's NCCL_SOCKET_IFNAME is =eth0 (NCCL's exact match)" "=eth0" \
    "$(awk '{print $4}' <<<"$lines" | sort -u | paste -sd, -)"
  master=$(awk '{print $5}' <<<"$lines" | sort -u | paste -sd, -)
  rank0_host=$(awk '$1 == 0 {print $2}' <<<"$lines")
  expect_true "MASTER_ADDR is one numeric IPv4 address (got '$master')" \
    grep -qE '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$' <<<"$master"
  expect_eq "MASTER_ADDR is the eth0 address of rank 0's node (${rank0_host:-?})" \
    "$(node_addr "${rank0_host:-node0}")" "$master"
  for ((k = 1; k <= NODES; k++)); do
    expect_line "node 0's log: node$k chose eth0, which reaches 2/2 peers, and skipped decoy0" "$LOG" \
      "network: .*\\bnode$k\\b" eth0 "reaches 2/2" "decoy0 skipped"
  done
  [ "$FAILED" -eq "$failed_before" ] || show_log | sed 's/^/        | /'
fi
expect_nothing_left
end_case

section "a: dlaunch env in a 3-node step: each node's interfaces and their verdicts"
timeout -k 5 60 srun -N3 --ntasks-per-node=1 -l "$DLAUNCH" env >"$OUT" 2>"$ERR"
expect_eq "srun -N3 dlaunch env exits 0" 0 "$?"
expect_eq "every node's network section shows docker0 skipped as a container runtime's bridge" 3 \
  "$(grep -F docker0 "$OUT" | grep -F "a container runtime's bridge" | sed 's/:.*//' | sort -u | wc -l)"
expect_eq "... and lists decoy0 and eth0" 3 \
  "$(grep -E '\bdecoy0\b' "$OUT" | sed 's/:.*//' | sort -u | wc -l)"
[ "$FAILED" -eq 0 ] || show_last_output

# ------------------------------------------------------------------- case b

section "b: NCCL_SOCKET_IFNAME=nope: the job fails its preflight within seconds"
export NCCL_SOCKET_IFNAME=nope
failed_before=$FAILED
start_clock
if submit nope --nodes 2 && wait_for_job_end; then
  stop_clock
  expect_within "the job ended, and dlaunch submit --wait with it, within ${PREFLIGHT_LIMIT} s" "$PREFLIGHT_LIMIT"
  expect_true "the job did not complete (it ended ${END_STATE:-?}, exit code ${END_CODE:-?})" \
    test "${END_STATE:-?}" != COMPLETED -a "${END_CODE:-0}" != 0
  expect_true "dlaunch submit --wait exits non-zero (got $STATUS)" test "$STATUS" != 0
  expect_line "the log says which host failed its preflight, naming nope and the host's interfaces" "$LOG" \
    "failed its preflight.*\\bnode[1-3]\\b|\\bnode[1-3]\\b.*failed its preflight" nope eth0
  expect_eq "no worker started" 0 "$(grep -cE 'net rank [0-9]+/' "$LOG")"
  [ "$FAILED" -eq "$failed_before" ] || show_log | sed 's/^/        | /'
fi
unset NCCL_SOCKET_IFNAME
expect_nothing_left
end_case

# ---------------------------------------------------------------- cases c, d

# gate_case SLOW_NODE TRAINING_HOSTS: SLOW_NODE's link shaped, --nodes 2
# --spare-nodes 1 --gate; the gate benches it and the job trains on
# TRAINING_HOSTS ("nodeA nodeB").
gate_case() {
  local slow=$1 training=$2 report benched failed_before=$FAILED
  if ! testbed_shape_link "$(node_ns "${slow#node}")" "$SLOW_RATE"; then
    fail "shaped $slow's link to $SLOW_RATE"
    return
  fi
  if submit "gate_$slow" --nodes 2 --spare-nodes 1 --gate && wait_for_job_end; then
    expect_eq "the job ends COMPLETED" COMPLETED "$END_STATE"
    expect_eq "its exit code is 0" 0 "$END_CODE"
    expect_eq "dlaunch submit --wait exits 0" 0 "$STATUS"
    expect_line "the console's gate lines name $slow with its link speed in Gb/s" "$LOG" \
      "dlaunch: (rendezvous: )?gate: .*\\b$slow\\b" "Gb/s"
    expect_eq "2 workers all-reduced" 2 "$(ok_count)"
    expect_eq "... on $training only" "$training" "$(ok_hosts)"
    expect_eq "no worker ran on $slow" 0 "$(grep -cE "net rank [0-9]+/[0-9]+ on $slow:" "$LOG")"
    report=$FOLDER/logs/gate/report.txt
    if [ -f "$report" ]; then
      expect_line "gate/report.txt names $slow with its Gb/s" "$report" "\\b$slow\\b" "Gb/s"
      expect_line "gate/report.txt says $slow is benched" "$report" "\\b$slow\\b.*bench|bench.*\\b$slow\\b"
    else
      fail "the gate's report is in the submission folder's logs/gate/report.txt" \
        "found: $(cd "$FOLDER" && find . -path '*gate*' | paste -sd' ' -)"
    fi
    expect_true "gate/report.json is JSON naming $slow" "$PY" -c \
      'import json, sys; text = open(sys.argv[1]).read(); json.loads(text); sys.exit(sys.argv[2] not in text)' \
      "$FOLDER/logs/gate/report.json" "$slow"
    benched=$(cat "$FOLDER/benched-hosts" 2>/dev/null)
    expect_eq "benched-hosts (for --exclude) holds $slow" "$slow" "$(tr -d '[:space:]' <<<"$benched")"
    [ -f "$FOLDER/benched-hosts" ] || say "        (no $FOLDER/benched-hosts; logs/gate/benched-hosts holds" \
      "'$(cat "$FOLDER/logs/gate/benched-hosts" 2>/dev/null)')"
    [ "$FAILED" -eq "$failed_before" ] || show_log | sed 's/^/        | /'
  fi
  testbed_unshape_link "$(node_ns "${slow#node}")"
  expect_nothing_left
  end_case
}

section "c: node3's link at $SLOW_RATE: --nodes 2 --spare-nodes 1 --gate benches it"
gate_case node3 "node1 node2"

section "d: node1's link (node 0's host) at $SLOW_RATE: the gate benches it, the job runs on the others"
gate_case node1 "node2 node3"

section "the decoys go"
remove_all_decoys
left=""
for ((k = 1; k <= NODES; k++)); do
  ip -n "$(node_ns "$k")" -o link show 2>/dev/null | grep -qE ': (decoy0|docker0)[:@]' && left="$left node$k"
done
expect_eq "no decoy is left on any node" "" "$left"
expect_eq "node2 resolves to its own address again in a job" "$(node_addr node2)" \
  "$(timeout 30 srun -N1 -w node2 getent hosts node2 | awk '{print $1}')"

finish
