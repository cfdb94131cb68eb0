"""What a worker's fingerprint of one tensor costs: it runs after every call, on the inputs and
the output, inside the span the trusted clock compares and in every evaluation's wall time.

Times ``kbench.judge.exchange.outputs.fingerprint`` on tensors of the sizes level-1 problems hand over
(dense, a padded slice, a padded image's inside, a view at an odd offset), on the GPU when there
is one, and prints the median and range of each, with the time of one plain read (a sum) beside it
for scale. On a GPU it times both ways the digest can sum (kbench's Triton kernel, and PyTorch's
sums where Triton is missing), the kernel's first call (its compilation in a fresh cache) and
whether the digest equals the CPU's for the same bytes:

    PYTHONPATH=src python3 benchmarks/fingerprint_cost.py [--mib 64 256 2048] [--repeats 9] [--device cuda]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

from kbench.judge.exchange import outputs
from kbench.judge.exchange.outputs import fingerprint


def timed_ms(work, device: str, repeats: int, warm: bool = True) -> list[float]:
    if warm:
        work()
    times = []
    for _ in range(repeats):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        started = time.perf_counter()
        work()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    kernel = outputs._gpu_block_sums
    paths = {"kernel": kernel, "pytorch": None} if args.device.startswith("cuda") and kernel else {"cpu": None}
    rows = []
    for mib in args.mib:
        count = mib * (1 << 20) // 4
        dense = torch.randn(count, device=args.device)
        cases = {
            "dense float32": dense,
            "dense int64, sums that wrap": dense.view(torch.int64),
            "padded slice": dense.view(-1, 1024)[:, 3:1021],
            "padded image's inside": dense.view(-1, 16, 64, 64)[:, :, 1:-1, 1:-1],
            "odd offset": dense[1:],
            "dense half": dense[: count // 2].view(torch.half),
            "dense bytes": dense.view(torch.uint8)[: count],
            "one read (sum), for scale": None,
        }
        for name, tensor in cases.items():
            for path, block_sums in paths.items():
                if tensor is None and path == "pytorch":
                    continue
                outputs._gpu_block_sums = block_sums
                work = (lambda: dense.sum().item()) if tensor is None else (lambda t=tensor: fingerprint(t))
                first_ms = timed_ms(work, args.device, 1, warm=False)[0]
                times = timed_ms(work, args.device, args.repeats)
                row = {"mib": mib, "case": name, "device": args.device, "path": path,
                       "median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
                       "first_ms": first_ms, "repeats": args.repeats,
                       # the reference may digest its copy elsewhere: the same bytes must give the same digest
                       "same_on_cpu": None if tensor is None or args.device == "cpu"
                       else fingerprint(tensor) == fingerprint(tensor.cpu())}
                rows.append(row)
                print(f"{mib:6d} MiB  {name:28s} {path:8s} median {row['median_ms']:9.3f} ms  "
                      f"({row['min_ms']:.3f}-{row['max_ms']:.3f}; first {first_ms:.1f})  "
                      f"same digest on the CPU: {row['same_on_cpu']}", flush=True)
        outputs._gpu_block_sums = kernel
    if args.out:
        with open(args.out, "w") as out:
            json.dump({"device_name": torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu",
                       "torch": torch.__version__, "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
