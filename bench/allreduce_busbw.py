"""bench/allreduce_busbw.py: the PyTorch side of bench/allreduce_busbw.

The same all-reduce sweep as `dlaunch check --bench`, through PyTorch's gloo
process group (torch.distributed.all_reduce, float32 sum, CPU tensors): sizes
doubling from --min-bytes to --max-bytes; per size, --warmup untimed
all-reduces, a barrier, --iters timed all-reduces (the time per all-reduce is
their mean, as measured on rank 0), then one more all-reduce of freshly
filled data that is verified (every rank fills rank+1, so every element must
be n(n+1)/2; the count of wrong elements is summed over the ranks).

Run it as a worker, e.g.
    dlaunch run --standalone --nproc-per-node 4 --python /usr/bin/python3 \\
        bench/allreduce_busbw.py --json
    torchrun --standalone --nproc_per_node 4 -r 1 -t 1 bench/allreduce_busbw.py --json
(Debian's torchrun 1.13 on Python 3.11 fails unless -r and -t are given.)
With --json, rank 0 prints one JSON line with the fields of
`dlaunch check --bench --json`; otherwise a table. Exits 1 if a value is wrong.
See docs/BENCHMARKS.md.
"""

import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist


def sweep_sizes(min_bytes, max_bytes):
    """The sizes of dlaunch's sweep_sizes(): doubling, rounded down to whole floats."""
    sizes = []
    size = max(min_bytes, 4)
    while size <= max_bytes:
        sizes.append(size // 4 * 4)
        size *= 2
    return sizes


def bus_bandwidth(algbw, ranks):
    return 0.0 if ranks <= 1 else algbw * 2.0 * (ranks - 1) / ranks


def measure(size, iters, warmup, rank, ranks):
    count = size // 4
    data = torch.full((count,), float(rank + 1), dtype=torch.float32)
    for _ in range(warmup):
        dist.all_reduce(data)
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(data)
    seconds = time.perf_counter() - start
    time_us = seconds * 1e6 / iters
    algbw = size / (time_us * 1e-6) / 1e9

    # One more, verified run (the timed runs reuse the buffer, so their values grow).
    data.fill_(float(rank + 1))
    dist.all_reduce(data)
    expected = ranks * (ranks + 1) / 2
    wrong = torch.tensor([int((data != expected).sum())], dtype=torch.int64)
    dist.all_reduce(wrong)
    return {"size": size, "count": count, "type": "float", "time_us": time_us,
            "algbw_gbps": algbw, "busbw_gbps": bus_bandwidth(algbw, ranks),
            "wrong": int(wrong.item())}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-bytes", type=int, default=8)
    parser.add_argument("--max-bytes", type=int, default=64 << 20)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    if options.min_bytes < 4 or options.max_bytes < options.min_bytes:
        parser.error("--min-bytes must be at least 4 and at most --max-bytes")
    if options.iters < 1 or options.warmup < 0:
        parser.error("--iters must be at least 1 and --warmup at least 0")

    dist.init_process_group(backend="gloo")  # env://: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE
    rank, ranks = dist.get_rank(), dist.get_world_size()
    rows = [measure(size, options.iters, options.warmup, rank, ranks)
            for size in sweep_sizes(options.min_bytes, options.max_bytes)]
    if rank == 0:
        if options.json:
            print(json.dumps({"operation": "allreduce", "type": "float32", "ranks": ranks,
                              "nodes": ranks // int(os.environ.get("LOCAL_WORLD_SIZE", ranks)),
                              "transport": "pytorch-gloo",
                              "torch": torch.__version__, "rows": rows}), flush=True)
        else:
            print(f"# torch {torch.__version__} gloo all_reduce, float32 sum, {ranks} ranks")
            print(f"# {'size(B)':>12} {'count':>12} {'time(us)':>12} {'algbw(GB/s)':>12} "
                  f"{'busbw(GB/s)':>12} {'#wrong':>8}")
            for row in rows:
                print(f"  {row['size']:>12} {row['count']:>12} {row['time_us']:>12.1f} "
                      f"{row['algbw_gbps']:>12.3f} {row['busbw_gbps']:>12.3f} {row['wrong']:>8}")
            sys.stdout.flush()
    dist.barrier()
    dist.destroy_process_group()
    return 0 if all(row["wrong"] == 0 for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
