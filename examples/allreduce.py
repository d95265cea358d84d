"""All-reduce smoke test for a torchrun-compatible launcher (CPU, gloo).

Run it with dlaunch (or torchrun), for example:

    dlaunch run --nproc-per-node 4 --python /usr/bin/python3 examples/allreduce.py

Each worker reads the variables the launcher sets (RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR, MASTER_PORT), joins the process group, all-reduces a
tensor holding its own rank and checks the sum is 0 + 1 + ... + (n-1).
Each rank prints one line; rank 0 also prints a summary. Exit status 1 when
the sum is wrong.
"""

import os
import socket
import sys

import torch
import torch.distributed as dist


def main() -> int:
    # The launcher describes this worker's place in the job through the environment.
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    host = socket.gethostname()

    # init_method "env://" (the default) reads MASTER_ADDR and MASTER_PORT:
    # rank 0 hosts the store there, the others connect to it.
    dist.init_process_group("gloo", rank=rank, world_size=world_size)

    # Every rank contributes its own rank; after the all-reduce each holds the sum.
    value = torch.tensor([rank], dtype=torch.int64)
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    got = int(value.item())
    expected = world_size * (world_size - 1) // 2

    where = f"rank {rank}/{world_size} local {local_rank} on {host}"
    if got == expected:
        print(f"{where}: all_reduce sum {got} == {expected} OK", flush=True)
    else:
        print(f"{where}: all_reduce sum FAILED: got {got}, expected {expected}", flush=True)

    # Every rank waits here until all have checked, so rank 0's summary comes last.
    dist.barrier()
    if rank == 0:
        print(f"all_reduce over {world_size} ranks done: sum {got}, expected {expected}",
              flush=True)
    dist.destroy_process_group()
    return 0 if got == expected else 1


if __name__ == "__main__":
    sys.exit(main())
