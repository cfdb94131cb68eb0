"""What a process's queued GPU work does to a baseline timed in another process, and
what the quiet-GPU probe (kbench.judge.protocol.quiet) sees, on this GPU.

Three states: the GPU idle; another process keeping one-block spin kernels queued
(as the exploit tests/exploits/queued_gpu_work.py does); and that process stopped (SIGSTOP)
with its queue left behind. For each: the probe's round trips and eager ReLU's time
per call (CUDA events). Usage: PYTHONPATH=src python3 benchmarks/gpu_quiet.py [--out F]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch

from kbench.judge.protocol.quiet import BUSY_MS, launch_round_trips_ms

HERE = Path(__file__).resolve().parent
SPINNER = f"""
import sys, time, torch
sys.path.insert(0, {str(HERE.parent / "tests" / "exploits")!r})
import queued_gpu_work as q
q.keep_the_gpu_busy()
"""


def relu_ms(x: torch.Tensor, calls: int = 50) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.relu(x)
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        torch.relu(x)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / calls


def state(name: str, x: torch.Tensor) -> dict:
    trips = launch_round_trips_ms(x.device)
    row = {"state": name, "probe_min_ms": min(trips), "probe_ms": trips, "relu_ms": relu_ms(x),
           "busy": min(trips) > BUSY_MS}
    print(f"{name:<28} probe min {min(trips):8.3f} ms  relu {row['relu_ms']:8.3f} ms/call  busy={row['busy']}",
          flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--rows", type=int, default=4096)
    args = parser.parse_args()
    x = torch.randn(args.rows, 4096, device="cuda")
    print(torch.cuda.get_device_name(), f"relu on {args.rows}x4096 fp32")
    rows = [state("idle", x)]
    spinner = subprocess.Popen([sys.executable, "-c", SPINNER], env={**os.environ})
    try:
        time.sleep(8)  # start-up, Triton's compile, the queue filling
        rows.append(state("other process spinning", x))
        spinner.send_signal(signal.SIGSTOP)
        time.sleep(0.05)
        rows.append(state("other process stopped", x))
        for waited in (0.5, 1.0, 2.0, 4.0):
            time.sleep(waited)
            rows.append(state(f"stopped, +{waited:g} s", x))
    finally:
        spinner.kill()
        spinner.wait()
    time.sleep(1)
    rows.append(state("other process killed", x))
    if args.out:
        Path(args.out).write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
