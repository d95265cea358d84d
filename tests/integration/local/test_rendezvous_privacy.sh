#!/bin/bash
# The rendezvous link against someone on the path and a second user on the
# host (issue 24): through a relay that records every byte, a job with a
# token runs and the relay reads nothing of it (no run id, no host name),
# while without a token it reads the job in clear and node 0 says so; the
# workers never see the token, neither in their environment nor in their
# launcher's (/proc/$PPID/environ); and, in a private mount namespace whose
# /etc/hosts maps one name to ::1 before 127.0.0.1, a user who holds
# [::1]:PORT cannot sit between the launchers: node 0 refuses a port held
# on either family, and once node 0 listens nobody can take [::1]:PORT.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

[ -z "${DLAUNCH_RDZV_TOKEN:-}" ] || skip "DLAUNCH_RDZV_TOKEN is set in the test's environment"

RELAY=$TEST_DIR/relay.py
cat >"$RELAY" <<'EOF_RELAY'
# A relay that records both directions: relay.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT CAPTURE
import socket, sys, threading
listen_host, listen_port = sys.argv[1], int(sys.argv[2])
target_host, target_port, capture = sys.argv[3], int(sys.argv[4]), sys.argv[5]
family = socket.AF_INET6 if ":" in listen_host else socket.AF_INET
server = socket.socket(family, socket.SOCK_STREAM)
if family == socket.AF_INET6:
    server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
try:
    server.bind((listen_host, listen_port))
except OSError as error:
    print("cannot bind:", error, flush=True)
    sys.exit(3)
server.listen(64)
print("listening", flush=True)
lock = threading.Lock()
def pump(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            with lock, open(capture, "ab") as out:
                out.write(data)
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
while True:
    client, _ = server.accept()
    try:
        upstream = socket.create_connection((target_host, target_port))
    except OSError:
        client.close()
        continue
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
EOF_RELAY

SECRET="privacy-secret-$RANDOM$RANDOM-0123456789"
RUN_ID="privacy-run-$MARK"
# Each rank says whether it sees the token, and whether its launcher's
# initial environment still holds it.
WORKER=$(write_worker privacy_worker.sh <<EOF_WORKER
echo "rank \$RANK token in env: \${DLAUNCH_RDZV_TOKEN:+yes}"
if tr '\0' '\n' <"/proc/\$PPID/environ" | grep -q "$SECRET"; then echo "rank \$RANK token in launcher's environ"
else echo "rank \$RANK launcher's environ clean"; fi
EOF_WORKER
)

# relay_up CAPTURE LISTEN_HOST LISTEN_PORT TARGET_PORT: the relay in the
# background (RELAY_PID); true once it listens.
relay_up() {
  "$PY" "$RELAY" "$2" "$3" 127.0.0.1 "$4" "$1" >"$1.out" 2>&1 &
  RELAY_PID=$!
  wait_until 10 grep -q listening "$1.out"
}
relay_down() {
  kill "$RELAY_PID" 2>/dev/null
  wait "$RELAY_PID" 2>/dev/null
}

# two_nodes_through_relay CAPTURE [TOKEN]: node 0 on a port of its own,
# node 1 dialling the relay to it; outputs in $TEST_DIR/node{0,1}.{out,err}.
two_nodes_through_relay() {
  local capture=$1 token=${2:-} port relay_port node0
  port=$(free_port)
  relay_port=$(free_port)
  relay_up "$capture" 127.0.0.1 "$relay_port" "$port" || {
    fail "the relay listens" "$(cat "$capture.out")"
    return 1
  }
  local common=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --rdzv-id "$RUN_ID" --rdzv-timeout 60)
  DLAUNCH_RDZV_TOKEN=$token timeout -k 10 "$RUN_LIMIT" "$DLAUNCH" run "${common[@]}" --node-rank 0 \
    --master-port "$port" -- "$WORKER" >"$TEST_DIR/node0.out" 2>"$TEST_DIR/node0.err" &
  node0=$!
  DLAUNCH_RDZV_TOKEN=$token expect_exit 0 "$DLAUNCH" run "${common[@]}" --node-rank 1 \
    --master-port "$relay_port" -- "$WORKER"
  cp "$OUT" "$TEST_DIR/node1.out"
  cp "$ERR" "$TEST_DIR/node1.err"
  wait_pid 60 "$node0"
  expect_eq "node 0 exits 0" 0 "$STATUS"
  relay_down
}

no_grep() { ! grep -qaF -- "$1" "$2"; }

section "through a relay on the path, with a token: the job runs, the relay reads none of it"
two_nodes_through_relay "$TEST_DIR/sealed.capture" "$SECRET"
expect_true "the relay carried the rendezvous (it recorded bytes)" test -s "$TEST_DIR/sealed.capture"
expect_true "the relay read no run id" no_grep "$RUN_ID" "$TEST_DIR/sealed.capture"
expect_true "the relay read no host name" no_grep "$(hostname)" "$TEST_DIR/sealed.capture"
expect_true "the relay read no token" no_grep "$SECRET" "$TEST_DIR/sealed.capture"
all=$(cat "$TEST_DIR"/node0.out "$TEST_DIR"/node1.out "$TEST_DIR"/node0.err "$TEST_DIR"/node1.err)
for rank in 0 1; do
  expect_contains "rank $rank runs" "$all" "rank $rank token in env:"
  expect_not_contains "rank $rank does not see the token in its environment" "$all" "rank $rank token in env: yes"
  expect_contains "rank $rank does not find the token in its launcher's environ" "$all" \
    "rank $rank launcher's environ clean"
done
expect_not_contains "no note of a rendezvous without a token" "$all" "has no token"
no_leftovers

section "the same relay without a token reads the job in clear, and node 0 says so"
two_nodes_through_relay "$TEST_DIR/clear.capture"
expect_true "the relay read the run id (so the check above can see clear text)" \
  grep -qaF -- "$RUN_ID" "$TEST_DIR/clear.capture"
expect_contains "node 0 says the rendezvous is readable on the path" "$(cat "$TEST_DIR/node0.err")" \
  "readable by anyone on the path"
no_leftovers

section "a name on ::1 and 127.0.0.1: a user holding [::1]:PORT cannot relay the job"
why_not=""
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
  why_not="needs root and unshare (a private mount namespace with its own /etc/hosts)"
elif ! "$PY" -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
  why_not="this host has no IPv6 loopback"
fi
if [ -n "$why_not" ]; then
  say "  skipped: $why_not"
else
  printf '::1 dualhost\n127.0.0.1 dualhost\n' >"$TEST_DIR/hosts"
  port=$(free_port)
  # In the private namespace: the squatter first, then node 0 alone; then
  # node 0 first, the squatter after it, and node 1 through the name.
  cat >"$TEST_DIR/dual.sh" <<EOF_DUAL
mount --bind "$TEST_DIR/hosts" /etc/hosts || { echo "no private /etc/hosts"; exit 1; }
getent ahosts dualhost | head -n 1 >"$TEST_DIR/dual.first"
"$PY" "$RELAY" ::1 $port 127.0.0.1 $port "$TEST_DIR/dual.capture" >"$TEST_DIR/squat1.out" 2>&1 &
squatter=\$!
for i in \$(seq 100); do grep -q listening "$TEST_DIR/squat1.out" && break; sleep 0.05; done
timeout 60 "$DLAUNCH" run --nnodes 1 --nproc-per-node 1 --master-addr dualhost --master-port $port \
  --rdzv-id "$RUN_ID" -- "$WORKER" >"$TEST_DIR/dual0.out" 2>"$TEST_DIR/dual0.err"
echo \$? >"$TEST_DIR/dual0.status"
kill \$squatter
wait \$squatter 2>/dev/null
common="--nnodes 2 --nproc-per-node 1 --master-addr dualhost --master-port $port --rdzv-id $RUN_ID --rdzv-timeout 60"
DLAUNCH_RDZV_TOKEN="$SECRET" timeout 60 "$DLAUNCH" run \$common --node-rank 0 -- "$WORKER" \
  >"$TEST_DIR/dual1.out" 2>"$TEST_DIR/dual1.err" &
node0=\$!
for i in \$(seq 200); do grep -q "waiting for" "$TEST_DIR/dual1.err" 2>/dev/null && break; sleep 0.05; done
"$PY" "$RELAY" ::1 $port 127.0.0.1 $port "$TEST_DIR/dual.capture" >"$TEST_DIR/squat2.out" 2>&1
echo \$? >"$TEST_DIR/squat2.status"
DLAUNCH_RDZV_TOKEN="$SECRET" timeout 60 "$DLAUNCH" run \$common --node-rank 1 -- "$WORKER" \
  >"$TEST_DIR/dual2.out" 2>"$TEST_DIR/dual2.err"
echo \$? >"$TEST_DIR/dual2.status"
wait \$node0
echo \$? >"$TEST_DIR/dual1.status"
EOF_DUAL
  timeout -k 10 "$RUN_LIMIT" unshare -m bash "$TEST_DIR/dual.sh" >"$TEST_DIR/dual.log" 2>&1
  if grep -q "no private /etc/hosts" "$TEST_DIR/dual.log"; then
    say "  skipped: /etc/hosts cannot be replaced in a private mount namespace here"
  else
    expect_contains "the name resolves to ::1 first" "$(cat "$TEST_DIR/dual.first")" "::1"
    expect_eq "node 0 does not start beside a squatter on [::1]:$port" 1 "$(cat "$TEST_DIR/dual0.status")"
    expect_contains "node 0 says another process holds the port" "$(cat "$TEST_DIR/dual0.err")" \
      "another process holds it"
    expect_true "nothing went through the squatter" test ! -s "$TEST_DIR/dual.capture"
    expect_contains "once node 0 listens, nobody can bind [::1]:$port" "$(cat "$TEST_DIR/squat2.out")" \
      "cannot bind"
    expect_eq "node 0 of the job through the name exits 0" 0 "$(cat "$TEST_DIR/dual1.status")"
    expect_eq "node 1, dialling ::1 first, reached node 0 and exits 0" 0 "$(cat "$TEST_DIR/dual2.status")"
  fi
fi
no_leftovers

finish
