"""A training loop that can hang on purpose, to try dlaunch's hang forensics.

    dlaunch run --nproc-per-node 4 --hang-timeout 10 --python /usr/bin/python3 \\
        examples/hang_demo.py --stuck-rank 2

Every step all-reduces a tensor, then reports the step on the progress
channel dlaunch gives each worker (one line, no dlaunch import needed):

    os.write(int(os.environ["DLAUNCH_PROGRESS_FD"]), b"%d\\n" % step)

With --stuck-rank R, rank R stops in load_batch() at --stuck-step while the
others wait in all_reduce: no rank makes progress, so --hang-timeout ends
the job (exit code 124) with a report that names rank R and load_batch.
With --chatty, the stuck rank keeps printing from a thread: output, but no
new step, so it is still caught. Without --stuck-rank it runs --steps steps
and prints only at the start and the end.
"""

import argparse
import os
import threading
import time

import torch
import torch.distributed as dist


def report_step(step: int) -> None:
    # Outside dlaunch (torchrun) the variable is absent and nothing is sent.
    fd = os.environ.get("DLAUNCH_PROGRESS_FD")
    if fd:
        os.write(int(fd), b"%d\n" % step)


def load_batch(seconds: float) -> None:
    time.sleep(seconds)  # where a stuck data loader would sit


def chatter(rank: int) -> None:
    while True:
        print(f"rank {rank}: still alive (a side thread)", flush=True)
        time.sleep(0.5)


def train(args: argparse.Namespace, rank: int) -> None:
    for step in range(args.steps):
        if rank == args.stuck_rank and step == args.stuck_step:
            if args.chatty:
                threading.Thread(target=chatter, args=(rank,), daemon=True).start()
            load_batch(3600)
        tensor = torch.ones(1)
        dist.all_reduce(tensor)
        if not args.no_steps:
            report_step(step)
        time.sleep(args.step_time)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--step-time", type=float, default=0.1)
    parser.add_argument("--stuck-rank", type=int, default=-1)
    parser.add_argument("--stuck-step", type=int, default=3)
    parser.add_argument("--chatty", action="store_true")
    parser.add_argument("--no-steps", action="store_true", help="do not report steps: only output counts")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    print(f"rank {rank} of {dist.get_world_size()} starts", flush=True)
    train(args, rank)
    print(f"rank {rank} done after {args.steps} steps", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
