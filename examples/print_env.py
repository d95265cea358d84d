"""Prints the environment a launcher gives its workers, as one JSON line.

    dlaunch run --nproc-per-node 2 --python /usr/bin/python3 examples/print_env.py
    torchrun --standalone --nproc_per_node 2 examples/print_env.py

Each worker prints "env RANK {json}". By default the JSON holds the whole
environment (the integration tests diff it against the launcher's parent to
find every variable the launcher adds); with --torchrun-only it holds just the
variables torchrun documents for its workers. Needs no third-party module.
"""

import json
import os
import sys

TORCHRUN_VARIABLES = [
    "LOCAL_RANK", "RANK", "GROUP_RANK", "ROLE_RANK", "ROLE_NAME",
    "LOCAL_WORLD_SIZE", "WORLD_SIZE", "GROUP_WORLD_SIZE", "ROLE_WORLD_SIZE",
    "MASTER_ADDR", "MASTER_PORT",
    "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID",
    "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_ERROR_FILE",
    "OMP_NUM_THREADS", "NCCL_ASYNC_ERROR_HANDLING",
]


def main() -> None:
    environment = dict(os.environ)
    if "--torchrun-only" in sys.argv[1:]:
        environment = {name: environment[name] for name in TORCHRUN_VARIABLES
                       if name in environment}
    # One write per line, so a launcher never mixes it with another worker's.
    print(f"env {os.environ.get('RANK', '-')} {json.dumps(environment, sort_keys=True)}",
          flush=True)


if __name__ == "__main__":
    main()
