"""A worker for bench/stack_capture: steps of STEP_SECONDS, each one's start
and end (time.time()) appended to $BENCH_DIR/steps.$RANK, until
$BENCH_DIR/stop exists. Writes $BENCH_DIR/ready.$RANK once running. A
second thread sleeps, as a data loader's would, so the capture has more
than one thread to walk."""

import os
import threading
import time

folder = os.environ["BENCH_DIR"]
rank = os.environ["RANK"]
step_seconds = float(os.environ.get("STEP_SECONDS", "0.1"))
threading.Thread(target=lambda: time.sleep(3600), daemon=True).start()


def train_step() -> None:
    time.sleep(step_seconds)


def main() -> None:
    with open(f"{folder}/steps.{rank}", "w", buffering=1) as steps:
        open(f"{folder}/ready.{rank}", "w").close()
        while not os.path.exists(f"{folder}/stop"):
            start = time.time()
            train_step()
            steps.write(f"{start:.6f} {time.time():.6f}\n")


main()
