"""How far apart honest summation orders are, against the float64 truth: the calibration of
the truth criterion's ``multiple`` (kbench.judge.trusted.compare.DEFAULT_MULTIPLE, MULTIPLES).

For float32 matrix products and sums, the reference (PyTorch's own: a blocked library
product, a cascade or tree sum) and honest candidates in other orders (one k at a time, tiles
of k, split k, transposed B; a sum one term after another) and dishonest ones (bfloat16,
rounded float16 inputs, as TF32 does), each judged by ``compare.truth_values`` against the
float64 truth with KernelBench's float32 tolerance. Per case: the candidate's scaled error
over the reference's (``ratio``: what the multiple must cover for honest orders), the share of
the allowance it uses (at most 1 passes), and whether KernelBench's criterion (1e-4 against the
reference's output) accepts it::

    PYTHONPATH=src python3 benchmarks/truth_orders.py [--device cuda] [--out orders.json]

(``$OUT/truth_orders.json`` when ``$OUT`` is set.)
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from kbench.judge.trusted.compare import compare_outputs, tolerance_for, truth_values


def one_k_at_a_time(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    acc = torch.zeros(a.shape[0], b.shape[1], device=a.device)
    for k in range(a.shape[1]):
        acc += a[:, k:k + 1] * b[k:k + 1, :]
    return acc


def tiles(a: torch.Tensor, b: torch.Tensor, block: int) -> torch.Tensor:
    acc = torch.zeros(a.shape[0], b.shape[1], device=a.device)
    for k in range(0, a.shape[1], block):
        acc += a[:, k:k + block] @ b[k:k + block]
    return acc


def one_after_another(x: torch.Tensor) -> torch.Tensor:
    """A float32 sum along the last dimension, one term after another (numpy's accumulate is sequential)."""
    return torch.from_numpy(np.add.accumulate(x.cpu().numpy(), axis=-1)[..., -1].copy()).to(x.device)


def case(name: str, reference: torch.Tensor, candidate: torch.Tensor, true: torch.Tensor) -> dict[str, Any]:
    tol = tolerance_for(torch.float32, {})
    errors, _ = truth_values(reference, candidate, true, tol)
    devices = {"output": str(reference.device)}
    kernelbench = compare_outputs(reference, candidate, devices, devices).ok
    scale = errors["reference_scaled_error"]
    ratio = errors["candidate_scaled_error"] / scale if scale else None
    return {"case": name, "ratio": ratio, "share": errors["share"], "passes": errors["share"] <= 1.0,
            "kernelbench_accepts": kernelbench, **errors}


def cases(device: str) -> list[dict[str, Any]]:
    gen = torch.Generator(device).manual_seed(0)
    rows = []
    for m, k in ((256, 4096), (256, 16384)):
        a = torch.randn(m, k, device=device, generator=gen)
        b = torch.randn(k, m, device=device, generator=gen)
        reference, true = a @ b, a.double() @ b.double()
        orders: dict[str, Callable[[], torch.Tensor]] = {
            "one k at a time": lambda: one_k_at_a_time(a, b),
            "tiles of 32": lambda: tiles(a, b, 32),
            "tiles of 256": lambda: tiles(a, b, 256),
            "split k (16)": lambda: torch.stack([p @ q for p, q in zip(a.chunk(16, 1), b.chunk(16, 0))]).sum(0),
            "transposed B": lambda: a @ b.t().contiguous().t(),
            "bfloat16 (dishonest)": lambda: (a.bfloat16() @ b.bfloat16()).float(),
            "float16-rounded inputs (dishonest)": lambda: a.half().float() @ b.half().float(),
        }
        for name, make in orders.items():
            rows.append(case(f"matmul {m}x{k}x{m}: {name}", reference, make(), true))
    for rows_n, n in ((1024, 4096), (256, 65536)):
        for shift in (0.0, 1.0):
            x = torch.randn(rows_n, n, device=device, generator=gen) + shift
            rows.append(case(f"sum of {n} (mean {shift:g}): one after another", x.sum(-1), one_after_another(x),
                             x.double().sum(-1)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--out", type=Path, default=Path("truth_orders.json"))
    options = parser.parse_args()
    if options.device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = False  # as the judge pins it (kbench.judge.protocol.state)
    rows = cases(options.device)
    print(f"{'case':58} {'ratio':>7} {'share':>9} {'passes':>6} {'KernelBench':>11}")
    for row in rows:
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.3g}"
        print(f"{row['case']:58} {ratio:>7} {row['share']:>9.3g} {str(row['passes']):>6} "
              f"{str(row['kernelbench_accepts']):>11}")
    out = Path(os.environ["OUT"]) / "truth_orders.json" if os.environ.get("OUT") else options.out
    out.write_text(json.dumps({"device": options.device, "torch": torch.__version__, "rows": rows}, indent=2))
    print(f"written: {out}")


if __name__ == "__main__":
    main()
