#!/usr/bin/python3
"""Hostile peers on a dlaunch rendezvous port, for the integration tests.

  hostile_peer.py impostor PORT READY [--token-required] [--workers 1,200]
      Holds PORT as node 0 would, speaks rendezvous protocol v7 without the
      token: greets every connection, ignores the Join's proof, answers with
      an unsealed Welcome and a World of its choosing.
  hostile_peer.py silent PORT READY
      Holds PORT and never says a word (connections complete in the kernel).
  hostile_peer.py flood PORT READY --connections N [--host ADDR]
      Opens N idle connections to ADDR:PORT (node 0's rendezvous; default
      127.0.0.1) and keeps them open, reopening every one the other end
      closes, until killed. Counts reopenings in READY.reopened.

READY is a file written once the peer is in place. Runs until killed.
"""
import argparse
import os
import selectors
import socket
import struct
import sys

MAGIC = 0x444C5256  # "DLRV"
VERSION = 13  # src/wire/protocol.h kVersion
CHALLENGE, WELCOME, WORLD, SEALED_JOIN = 8, 10, 2, 23


def frame(kind, payload, generation=0):
    # Protocol 7: the sender's generation (its round) after the type.
    return struct.pack(">IHBII", MAGIC, VERSION, kind, generation, len(payload)) + payload


def text(value):
    data = value.encode()
    return struct.pack(">I", len(data)) + data


def world_payload(workers):
    runs = [(1, n) for n in workers]
    body = struct.pack(">I", 0) + text("127.0.0.1") + struct.pack(">I", 31337) + text("none")
    body += struct.pack(">I", 30000) + text("0123456789abcdef")  # the heartbeat, the job's incarnation
    body += struct.pack(">I", len(runs))
    for count, nproc in runs:
        body += struct.pack(">II", count, nproc)
    body += struct.pack(">III", 1, 0, len(workers))  # node slots: one run, 0..N-1
    body += struct.pack(">IIIII", 0, 0, 0, 0, 0)  # no spare or benched slots, addresses or interfaces
    return body


def ready(path):
    with open(path + ".tmp", "w") as out:
        out.write("ready\n")
    os.rename(path + ".tmp", path)


def listener(port):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen(64)
    return server


def skip_strings(data, count):
    for _ in range(count):
        (length,) = struct.unpack(">I", data[:4])
        data = data[4 + length:]
    return data


def joined_slot(join):
    """The slot a Join (or a SealedJoin) names: the Welcome names it back.
    A SealedJoin: nonce, slot. A Join: proof, nonce, run id, round, slot."""
    try:
        payload = join[15:]
        if join[6] == SEALED_JOIN:
            rest = skip_strings(payload, 1)
        else:
            rest = skip_strings(payload, 3)[4:]
        (slot,) = struct.unpack(">I", rest[:4])
        return slot
    except (IndexError, struct.error):
        return 0  # a Join cut short (the launcher hung up): any slot will do


def impostor(args):
    server = listener(args.port)
    ready(args.ready)
    workers = [int(n) for n in args.workers.split(",")]
    held = []
    while True:
        peer, _ = server.accept()
        held.append(peer)
        challenge = struct.pack(">I", 32) + os.urandom(32)  # a fresh nonce, as node 0 sends
        payload = challenge + bytes([1 if args.token_required else 0]) + struct.pack(">I", 30000)
        peer.sendall(frame(CHALLENGE, payload))
        peer.settimeout(5)
        try:
            join = peer.recv(65536)  # the Join: its proof is never checked
            peer.sendall(frame(WELCOME, struct.pack(">II", 30000, joined_slot(join))))
            peer.sendall(frame(WORLD, world_payload(workers)))
        except OSError:
            pass


def silent(args):
    server = listener(args.port)
    ready(args.ready)
    held = []
    while True:  # accepts, so the kernel's backlog never fills; never speaks
        peer, _ = server.accept()
        held.append(peer)


def flood(args):
    selector = selectors.DefaultSelector()
    reopened = 0

    def open_one():
        sock = socket.create_connection((args.host, args.port))
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)

    for _ in range(args.connections):
        open_one()
    ready(args.ready)
    while True:
        for key, _ in selector.select():
            sock = key.fileobj
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if data:
                continue  # a challenge: never answered
            selector.unregister(sock)
            sock.close()
            try:
                open_one()
                reopened += 1
                with open(args.ready + ".reopened", "w") as out:
                    out.write("%d\n" % reopened)
            except OSError:
                pass  # node 0 is gone: the job is over


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["impostor", "silent", "flood"])
    parser.add_argument("port", type=int)
    parser.add_argument("ready")
    parser.add_argument("--token-required", action="store_true")
    parser.add_argument("--workers", default="1,1")
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    {"impostor": impostor, "silent": silent, "flood": flood}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
