#!/usr/bin/python3
"""The anchor of bench/rendezvous_scale: PyTorch's c10d rendezvous store.

torch.distributed.TCPStore is the store torchrun's c10d rendezvous backend
meets on. For each N, one TCPStore master (in this process) and N TCPStore
clients, split over a few forked processes with one thread per client
(constructing a client blocks until it is connected). Each client does what
a joining agent minimally does: store.add("joined", 1), and waits until all
N have: the client whose add returned N sets "all-joined", and every client
store.wait()s for that key.

Timed, like dlaunch's side: from just before the master is constructed, the
client processes being released at that moment through pipes (process and
thread start-up are not timed), to the last client's wait returning
(CLOCK_MONOTONIC, one clock for all processes). A run is checked: the
counter must read N and every client must report.

stdout: one tab-separated line per N ("N median_ms min_ms runs"); when a run
fails or takes longer than --limit seconds, a line "N STOPPED reason" and the
series ends there. stderr: every run.

Needs a Python with torch (Debian's /usr/bin/python3 here); exits 77 when
torch.distributed cannot be imported.
"""
import argparse
import os
import select
import signal
import statistics
import sys
import threading
import time
from datetime import timedelta

try:
    import torch.distributed as dist
except ImportError as error:  # the anchor is missing: a skip, not a failure
    print(f"rendezvous_scale_anchor: SKIP: cannot import torch.distributed: {error}", file=sys.stderr)
    sys.exit(77)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64,128,256,512,1024,2048,4096",
                        help="client counts N, comma-separated, in order")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per N (the median is the figure)")
    parser.add_argument("--processes", type=int, default=4, help="client processes sharing the clients")
    parser.add_argument("--limit", type=float, default=60.0,
                        help="seconds one run may take; past it the series stops at the N before")
    args = parser.parse_args()
    args.sizes = [int(n) for n in args.sizes.replace(",", " ").split()]
    return args


def raise_descriptor_limit():
    """The master holds two sockets per client (torch 1.13's TCPStore client
    opens two connections), the client processes as many: take the hard limit."""
    import resource
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def client_process(count, limit, ready_fd, go_fd, report_fd):
    """Body of one forked client process: COUNT clients, one thread each.

    The threads are started and parked on an event before this process says
    it is ready; the release (the master's port on GO_FD) sets the event.
    Reports "ok <clients done> <last done ns> <CPU ns>" or "error <what>" on REPORT_FD,
    then keeps its clients (and so their connections) until GO_FD closes.
    """
    threading.stack_size(256 * 1024)
    start = threading.Event()
    port = [0]
    done_ns = []
    errors = []
    stores = []
    lock = threading.Lock()
    total = [0]

    def join():
        start.wait()
        try:
            store = dist.TCPStore("127.0.0.1", port[0], None, False, timedelta(seconds=limit))
            if store.add("joined", 1) == total[0]:
                store.set("all-joined", "1")
            store.wait(["all-joined"])
            finished = time.monotonic_ns()
            with lock:
                done_ns.append(finished)
                stores.append(store)
        except Exception as error:  # reported to the parent, which fails the run
            with lock:
                errors.append(str(error))

    threads = [threading.Thread(target=join, daemon=True) for _ in range(count)]
    for thread in threads:
        thread.start()
    os.write(ready_fd, b"r")
    message = os.read(go_fd, 64).decode().split()
    port[0], total[0] = int(message[0]), int(message[1])
    cpu_start = time.process_time_ns()
    start.set()
    for thread in threads:
        thread.join()
    cpu_ns = time.process_time_ns() - cpu_start
    if errors:
        report = f"error {errors[0]}"
    else:
        report = f"ok {len(done_ns)} {max(done_ns)} {cpu_ns}"
    os.write(report_fd, (report[:3000] + "\n").encode())
    while os.read(go_fd, 64):  # hold the connections until the parent is done
        pass
    os._exit(0)


def split(n, processes):
    """Client counts per process, as even as possible."""
    return [n * (c + 1) // processes - n * c // processes for c in range(processes)]


def readable(fd, deadline):
    """Whether FD has something to read before DEADLINE (monotonic seconds).
    poll, not select: descriptors may be numbered beyond select's 1024."""
    left = deadline - time.monotonic()
    if left <= 0:
        return False
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(left * 1000))


def read_line(fd, deadline):
    """One line from FD before DEADLINE, else None."""
    data = b""
    while not data.endswith(b"\n"):
        if not readable(fd, deadline):
            return None
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        data += chunk
    return data.decode().strip()


def run_once(n, processes, limit):
    """One timed run for N clients, or raises: (milliseconds to all joined,
    the master's CPU ms, all clients' CPU ms). The master's figure is this
    process's CPU time over the run: its main thread only waits meanwhile."""
    counts = [c for c in split(n, min(processes, n)) if c > 0]
    pids, go_fds, report_fds = [], [], []
    ready_read, ready_write = os.pipe()
    try:
        for count in counts:
            go_read, go_write = os.pipe()
            report_read, report_write = os.pipe()
            pid = os.fork()
            if pid == 0:
                # Only its own ends: a sibling's GO kept open here would
                # keep that sibling from seeing its EOF.
                for fd in [ready_read, go_write, report_read] + go_fds + report_fds:
                    os.close(fd)
                try:
                    client_process(count, limit, ready_write, go_read, report_write)
                finally:
                    os._exit(3)
            os.close(go_read)
            os.close(report_write)
            pids.append(pid)
            go_fds.append(go_write)
            report_fds.append(report_read)
        os.close(ready_write)
        deadline = time.monotonic() + limit
        for _ in counts:
            if not read_ready(ready_read, deadline):
                raise RuntimeError("a client process did not get ready")

        cpu_start = time.process_time_ns()
        start_ns = time.monotonic_ns()
        master = dist.TCPStore("127.0.0.1", 0, None, True, timedelta(seconds=limit), wait_for_workers=False)
        release = f"{master.port} {n}\n".encode()
        for fd in go_fds:
            os.write(fd, release)

        deadline = time.monotonic() + limit
        last_ns, joined, clients_cpu_ns = 0, 0, 0
        for fd in report_fds:
            line = read_line(fd, deadline)
            if line is None:
                raise TimeoutError(f"not all {n} clients had joined within {limit:.0f} s")
            if not line.startswith("ok "):
                raise RuntimeError(f"a client failed: {line[6:]}")
            _, count, done_ns, cpu_ns = line.split()
            joined += int(count)
            last_ns = max(last_ns, int(done_ns))
            clients_cpu_ns += int(cpu_ns)
        master_cpu_ns = time.process_time_ns() - cpu_start
        counter = master.add("joined", 0)
        if joined != n or counter != n:
            raise RuntimeError(f"{joined} clients reported and the counter reads {counter}, not {n}")
        return (last_ns - start_ns) / 1e6, master_cpu_ns / 1e6, clients_cpu_ns / 1e6
    finally:
        for fd in go_fds + report_fds + [ready_read]:
            os.close(fd)
        for pid in pids:  # normally they exit when GO closes; a stuck one is killed
            try:
                if os.waitpid(pid, os.WNOHANG) == (0, 0):
                    wait_or_kill(pid, 5.0)
            except ChildProcessError:
                pass


def read_ready(fd, deadline):
    """One client process's "ready" byte from FD before DEADLINE."""
    return readable(fd, deadline) and bool(os.read(fd, 1))


def wait_or_kill(pid, grace):
    end = time.monotonic() + grace
    while time.monotonic() < end:
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def main():
    args = parse_args()
    raise_descriptor_limit()
    import torch
    print(f"rendezvous_scale_anchor: torch {torch.__version__} ({os.path.dirname(torch.__file__)}), "
          f"{args.processes} client processes, {args.runs} runs per N (+1 untimed warm-up), "
          f"limit {args.limit:.0f} s per run", file=sys.stderr)
    run_once(args.sizes[0], args.processes, args.limit)  # warm-up
    print("# N\tmedian_ms\tmin_ms\truns\tmaster_cpu_ms\tclients_cpu_ms", flush=True)
    for n in args.sizes:
        times, master_cpu, clients_cpu = [], [], []
        try:
            for run in range(1, args.runs + 1):
                ms, master, clients = run_once(n, args.processes, args.limit)
                times.append(ms)
                master_cpu.append(master)
                clients_cpu.append(clients)
                print(f"  N={n:<5} run {run}/{args.runs}: {ms:10.2f} ms  master CPU {master:8.1f} ms  "
                      f"clients CPU {clients:8.1f} ms", file=sys.stderr, flush=True)
        except Exception as error:
            reason = f"{type(error).__name__}: {error}".replace("\n", " ").replace("\t", " ")
            print(f"  N={n}: stopped: {reason}", file=sys.stderr, flush=True)
            print(f"{n}\tSTOPPED\t{reason}", flush=True)
            return 0
        print(f"{n}\t{statistics.median(times):.3f}\t{min(times):.3f}\t{len(times)}\t"
              f"{statistics.median(master_cpu):.1f}\t{statistics.median(clients_cpu):.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
