"""Resumable all-reduce loop for node replacement tests (CPU, gloo).

Run it with dlaunch (or torchrun), for example:

    CHECKPOINT=/shared/step dlaunch run --nproc-per-node 2 \\
        --python /usr/bin/python3 examples/resume_allreduce.py

Each worker joins the process group and runs steps START..STEPS-1; every step
all-reduces a tensor holding the rank and checks the sum is 0 + 1 + ... + (n-1).
After every step rank 0 writes the number of finished steps to $CHECKPOINT
(atomically: a temp file in the same folder, then rename). A restarted job,
perhaps with a replaced node or another world size, reads that file and goes on
from there: only the step count carries over.

Environment (besides the launcher's RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT and TORCHELASTIC_RESTART_COUNT):
    CHECKPOINT      file holding the step to resume from (required)
    STEPS           steps in all (default 40)
    STEP_SECONDS    sleep after each step (default 0.25)
    FAIL_ON_HOST    fault injection: the workers on this host exit 1 ...
    FAIL_AT_STEP    ... once they reach this step (default 3)

Exit status: 0 done, 1 injected failure, 2 no CHECKPOINT, 3 wrong sum. When a
peer vanishes mid-collective gloo raises and the worker exits non-zero; the
launcher decides what happens next.
"""

import os
import socket
import sys
import tempfile
import time

import torch
import torch.distributed as dist


def read_step(path: str) -> int:
    # No file yet means a fresh start.
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return int(f.read())


def write_step(path: str, step: int) -> None:
    # Write a temp file next to the checkpoint and rename it over the old one,
    # so a reader (or a crash) never sees a half-written file.
    folder = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(dir=folder, prefix=".resume_allreduce.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(f"{step}\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def main() -> int:
    checkpoint = os.environ.get("CHECKPOINT")
    if not checkpoint:
        print("resume_allreduce.py: set CHECKPOINT to the file that holds the step",
              file=sys.stderr, flush=True)
        return 2
    steps = int(os.environ.get("STEPS", "40"))
    step_seconds = float(os.environ.get("STEP_SECONDS", "0.25"))
    fail_on_host = os.environ.get("FAIL_ON_HOST")
    fail_at_step = int(os.environ.get("FAIL_AT_STEP", "3"))

    # The launcher describes this worker's place in the job through the environment.
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    host = socket.gethostname()

    # Read before joining: rank 0 only writes after the first all-reduce, which
    # waits for every rank, so all ranks see the same file.
    start = read_step(checkpoint)

    # init_method "env://" (the default) reads RANK, WORLD_SIZE, MASTER_ADDR and
    # MASTER_PORT: rank 0 hosts the store there, the others connect to it.
    dist.init_process_group("gloo")

    # Rank 0's view wins, in case a node (a fresh spare) sees another copy of the file.
    agreed = torch.tensor([start], dtype=torch.int64)
    dist.broadcast(agreed, src=0)
    if int(agreed.item()) != start:
        print(f"rank {rank} on {host}: local checkpoint says step {start}, "
              f"rank 0 says {int(agreed.item())}; using rank 0's", flush=True)
        start = int(agreed.item())
    print(f"rank {rank}/{world_size} on {host}: attempt {attempt} resumed from step {start}",
          flush=True)

    expected = world_size * (world_size - 1) // 2
    for step in range(start, steps):
        if fail_on_host == host and step >= fail_at_step:
            # os._exit: leave at once instead of waiting in a collective or at exit.
            print(f"rank {rank} on {host}: injected failure at step {step}", flush=True)
            sys.stderr.flush()
            os._exit(1)

        # Every rank contributes its own rank; after the all-reduce each holds the sum.
        value = torch.tensor([rank], dtype=torch.int64)
        dist.all_reduce(value, op=dist.ReduceOp.SUM)
        got = int(value.item())
        if got != expected:
            print(f"rank {rank} step {step}: all_reduce sum {got}, expected {expected}",
                  file=sys.stderr, flush=True)
            return 3

        # The checkpoint holds the next step to run, i.e. the steps finished.
        if rank == 0:
            write_step(checkpoint, step + 1)
        print(f"rank {rank} step {step} ok", flush=True)
        time.sleep(step_seconds)

    print(f"rank {rank}/{world_size} on {host}: done at step {steps}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
