"""A worker for the network tests (cluster_network.sh, ssh_gate.sh): says
what interface and master address its launcher gave it, then joins a gloo
process group the plain way (env://, no interface of its own choosing) and
checks an all-reduce. Two lines per rank, the first before it joins:

    net rank R/W on HOST: GLOO_SOCKET_IFNAME=eth0 NCCL_SOCKET_IFNAME==eth0 MASTER_ADDR=10.213.7.11
    net rank R/W on HOST: all_reduce OK

(a variable the launcher did not set shows as "-"). Exit status 1 when the
sum is wrong; gloo's own error (and a non-zero status) when it cannot
connect, within 60 s.
"""

import datetime
import os
import socket
import sys

import torch
import torch.distributed as dist


def main() -> int:
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    shown = " ".join(f"{name}={os.environ.get(name, '-')}"
                     for name in ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "MASTER_ADDR"))
    where = f"net rank {rank}/{world_size} on {socket.gethostname()}:"
    print(f"{where} {shown}", flush=True)
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    value = torch.tensor([rank], dtype=torch.int64)
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    expected = world_size * (world_size - 1) // 2
    ok = int(value.item()) == expected
    print(f"{where} all_reduce {'OK' if ok else f'FAILED: {int(value.item())} != {expected}'}", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
