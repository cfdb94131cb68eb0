"""What the float64 truth costs per checked call (kbench.judge.trusted.truth, the ``truth`` criterion).

For each problem, in one process, exactly as a reference worker checks a saved call
(``worker.Session``: the problem loaded at its size, the model built under an init seed,
the inputs drawn on the device per seed; ``outputs.check_held``), it times, per seed:

- ``reference_ms``: the reference's own forward (float32, the judge's pinned settings);
- ``check_kernelbench_ms``: the check of a candidate's output (here an honest copy of the
  reference's) under ``--correctness kernelbench`` (the reference's output alone);
- ``check_truth_ms``: the same check under the default ``truth`` criterion: the inputs drawn
  again, the float64 model's forward, and the criterion's passes over the output;
- ``truth_extra_ms``: the difference, what the truth adds to each checked call;

and, once, the float64 model's first check (``first_check_ms``, building the float64 twin
included), the device memory the truth check holds at its peak beyond what the reference
holds (``truth_peak_gib``), the reference's own error against the truth and, where no truth
was computed, why (too large for free memory, out of memory: the verdict records it and the
reference's output judges alone). Prints a table and writes JSON (``$OUT/truth_cost.json``
when ``$OUT`` is set, else ``--out``)::

    PYTHONPATH=src python3 benchmarks/truth_cost.py [--device cuda] [--seeds 5] \\
        [--problems level1/matmul_square level1/conv2d level2/conv2d_batch_norm_relu ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import torch

from kbench.judge.exchange.outputs import check_held, describe_devices
from kbench.judge.trusted.reference import load_message
from kbench.judge.worker.session import Session
from kbench.suite import find_problem
from kbench.suite.problem import resolve_size

PROBLEMS = ("level1/matmul_square", "level1/conv2d", "level1/conv3d", "level2/conv2d_batch_norm_relu",
            "level2/gemm_bias_relu", "level3/gpt2_block", "level1/relu")
INIT_SEED = 4242


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _ms(work: Any, device: torch.device) -> tuple[float, Any]:
    _sync(device)
    started = time.perf_counter()
    result = work()
    _sync(device)
    return (time.perf_counter() - started) * 1000, result


def measure(problem_id: str, device: str, seeds: int, size: str = "auto") -> dict[str, Any]:
    """One problem's row (see the module docstring)."""
    problem = find_problem(problem_id)
    size = resolve_size(size, device)
    session = Session()
    session.load({**load_message(problem, device, size, INIT_SEED), "role": "reference"})
    dev = session.device
    row: dict[str, Any] = {"problem": problem_id, "size": size, "device": device, "reference_ms": [],
                           "check_kernelbench_ms": [], "check_truth_ms": [], "unavailable": None}

    def check(seed: int, correctness: str) -> dict[str, Any]:
        args = session.inputs(seed)
        out = session.forward(args)
        candidate = [x.clone() for x in out] if isinstance(out, (list, tuple)) else out.clone()  # as read
        msg = {"candidate_devices": describe_devices(candidate), "tolerance": problem.tolerance,
               "correctness": correctness}
        del args
        _sync(dev)
        if dev.type == "cuda":
            torch.cuda.reset_peak_memory_stats(dev)
        held = torch.cuda.memory_allocated(dev) if dev.type == "cuda" else 0
        elapsed, answer = _ms(lambda: check_held(
            out, candidate, msg, lambda: session.truth.output(session.inputs(seed), out)), dev)
        answer["ms"] = elapsed
        answer["peak_gib"] = (torch.cuda.max_memory_allocated(dev) - held) / 2**30 if dev.type == "cuda" else None
        del out, candidate
        session.truth.release()
        return answer

    first = check(1, "truth")
    row["first_check_ms"] = first["ms"]
    for seed in range(2, seeds + 2):
        elapsed, _ = _ms(lambda: session.forward(session.inputs(seed)), dev)
        row["reference_ms"].append(elapsed)
        row["check_kernelbench_ms"].append(check(seed, "kernelbench")["ms"])
        answer = check(seed, "truth")
        row["check_truth_ms"].append(answer["ms"])
        row["truth_peak_gib"] = max(row.get("truth_peak_gib") or 0.0, answer["peak_gib"] or 0.0)
        comparison = answer["comparison"]
        row["criterion"] = comparison["criterion"]
        row["ok"] = comparison["ok"]
        truth = comparison.get("truth") or {}
        row["unavailable"] = truth.get("unavailable")
        for key in ("reference_error", "reference_scaled_error"):
            if key in truth:
                row[key] = max(row.get(key, 0.0), truth[key])
    for key in ("reference_ms", "check_kernelbench_ms", "check_truth_ms"):
        row[key] = statistics.median(row[key])
    row["truth_extra_ms"] = row["check_truth_ms"] - row["check_kernelbench_ms"]
    row["truth_over_reference"] = row["truth_extra_ms"] / row["reference_ms"] if row["reference_ms"] else None
    session.truth.close()
    return row


def _text(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--size", default="auto")
    parser.add_argument("--out", type=Path, default=Path("truth_cost.json"))
    options = parser.parse_args()
    rows = []
    header = ("problem", "ref ms", "check kb ms", "check truth ms", "truth +ms", "x ref", "first ms", "peak GiB",
              "ref err", "criterion")
    print(" | ".join(header))
    for problem_id in options.problems:
        try:
            row = measure(problem_id, options.device, options.seeds, options.size)
        except Exception as exc:  # noqa: BLE001 - one problem's failure is a row, not the end of the table
            row = {"problem": problem_id, "error": f"{type(exc).__name__}: {exc}"}
            print(f"{problem_id} | failed: {row['error']}", flush=True)
            rows.append(row)
            continue
        rows.append(row)
        print(" | ".join(_text(row.get(k)) for k in (
            "problem", "reference_ms", "check_kernelbench_ms", "check_truth_ms", "truth_extra_ms",
            "truth_over_reference", "first_check_ms", "truth_peak_gib", "reference_error"))
            + f" | {row.get('criterion')}" + (f" ({row['unavailable']})" if row.get("unavailable") else ""),
            flush=True)
    device_name = torch.cuda.get_device_name() if options.device.startswith("cuda") else "cpu"
    result = {"device": device_name, "torch": torch.__version__, "seeds": options.seeds, "rows": rows}
    out = Path(os.environ["OUT"]) / "truth_cost.json" if os.environ.get("OUT") else options.out
    out.write_text(json.dumps(result, indent=2))
    print(f"written: {out}")


if __name__ == "__main__":
    main()
