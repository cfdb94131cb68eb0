"""Match honest corpus files with their problem's Model at three sizes before they join the corpus.

An honest file must compute what the Model computes, whatever the size: each file named is run
beside its problem's Model at the small size, about half of it and about 1.3 times it (integer
size constants scaled, at least 1), both built from the same seed on the same inputs, and the
largest difference is printed. Run with TRITON_INTERPRET=1 on a CPU:

    TRITON_INTERPRET=1 PYTHONPATH=src python benchmarks/honest_match.py [--device cpu] NAME ...

NAME: a corpus file name (with or without .py) or a part of it. Exit status 1 when a file
differs beyond torch.testing's float32 tolerance (or the problem's own) at any size.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from honest.corpus import CORPUS  # noqa: E402

from kbench.suite import find_problem  # noqa: E402
from kbench.suite.problem import import_problem  # noqa: E402

SCALES = (1.0, 0.5, 1.3)


def _scaled(values: dict, scale: float) -> dict:
    return {key: max(1, round(value * scale)) if isinstance(value, int) and not isinstance(value, bool) else value
            for key, value in values.items()}


def _to(value, device):
    return value.to(device) if isinstance(value, torch.Tensor) else value


def match(row, device: str) -> float:
    """The largest difference between the file's ModelNew and the Model over the three sizes."""
    problem = find_problem(row.problem)
    spec = importlib.util.spec_from_file_location(f"honest_{row.name}", row.path)
    solution = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = solution  # as the judge imports it (dataclasses look their module up)
    spec.loader.exec_module(solution)
    worst = 0.0
    tolerance = problem.tolerance.get("float32", {})
    for scale in SCALES:
        sized = dataclasses.replace(problem, small=_scaled(problem.small, scale))
        module = import_problem(sized, "small")
        torch.manual_seed(0)
        init = module.get_init_inputs()
        torch.manual_seed(1)
        model = module.Model(*init).to(device)
        torch.manual_seed(1)
        new = solution.ModelNew(*init).to(device)
        torch.manual_seed(2)
        inputs = [_to(x, device) for x in module.get_inputs()]
        with torch.no_grad():
            expected = model(*inputs)
            got = new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
        pairs = zip(expected, got) if isinstance(expected, (tuple, list)) else [(expected, got)]
        for want, have in pairs:
            torch.testing.assert_close(have, want, **({"atol": tolerance["atol"], "rtol": tolerance["rtol"]}
                                                        if "atol" in tolerance else {}))
            if want.is_floating_point():
                worst = max(worst, (have.double() - want.double()).abs().max().item())
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    rows = [row for row in CORPUS if any(name.removesuffix(".py") in row.name for name in args.names)]
    failed = 0
    for row in rows:
        try:
            print(f"{row.name:55s} ok   largest difference {match(row, args.device):.2e}", flush=True)
        except Exception as error:  # a file that fails is reported, the others still run
            failed += 1
            print(f"{row.name:55s} FAIL {type(error).__name__}: {str(error).splitlines()[0][:200]}", flush=True)
    print(f"{len(rows) - failed} of {len(rows)} match the Model at {len(SCALES)} sizes")
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    raise SystemExit(main())
