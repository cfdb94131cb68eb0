"""One side of a repository task's workload, in a process of its own.

The workload (a problem file whose Model imports the repository's package) is
loaded with kbench's problem loader at the size asked, the checkout (base or
patched) first on sys.path, seeded as the judge's worker seeds it: the init
inputs and the Model under ``--init-seed``, each call's inputs under their own
seed, drawn on the device. Two processes, one per checkout, are the only way to
run both revisions: they import a package of the same name.

    --once --seed S --out FILE   one call on seed S's inputs; the output saved (CPU tensors, torch.save)
    --serve                      JSON commands on stdin, one JSON answer a line on stdout:
                                 {"cmd": "inputs", "seed": S}   draw the inputs of seed S
                                 {"cmd": "time", "n": N}        N calls, each timed alone (GPU: CUDA events
                                                                after a synchronize, so launch gaps count)
                                 {"cmd": "save", "path": P}     one call on the current inputs, output saved
                                 {"cmd": "quit"}

Used by benchmarks/repo_tasks_check.py (CPU) and benchmarks/repo_experts.py (GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", required=True)
    parser.add_argument("--workload", required=True)
    parser.add_argument("--size", default="small", choices=("small", "default"))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--init-seed", type=int, default=1234)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--once", action="store_true")
    parser.add_argument("--out")
    parser.add_argument("--serve", action="store_true")
    args = parser.parse_args()

    answers = os.fdopen(os.dup(1), "w", buffering=1)
    sys.stdout = sys.stderr  # whatever the workload prints stays off the answer channel
    checkout = Path(args.checkout).resolve()
    sys.path.insert(0, str(checkout))

    import torch

    from kbench.suite.problem import import_problem, load_problem

    torch.set_grad_enabled(False)
    device = torch.device(args.device)
    module = import_problem(load_problem(args.workload), args.size)
    init_inputs = [x.to(device) if isinstance(x, torch.Tensor) else x
                   for x in seeded(args.init_seed, module.get_init_inputs)]
    seed_all(args.init_seed)
    model = module.Model(*init_inputs).to(device)
    imported = sorted({name.split(".")[0] for name, m in list(sys.modules.items())
                       if str(getattr(m, "__file__", "") or "").startswith(str(checkout))})
    if not imported:
        raise SystemExit(f"the workload imported nothing from {checkout}")

    def inputs_for(seed: int) -> list:
        with torch.device(device):
            return [x.to(device) if isinstance(x, torch.Tensor) else x for x in seeded(seed, module.get_inputs)]

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    if args.once:
        out = model(*inputs_for(args.seed))
        sync()
        torch.save(to_cpu(out), args.out)
        answers.write(json.dumps({"ok": True, "imported": imported}) + "\n")
        return

    inputs = inputs_for(args.seed)
    answers.write(json.dumps({"ok": True, "ready": True, "imported": imported,
                              "device_name": device_name(device)}) + "\n")
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["cmd"] == "quit":
            break
        if msg["cmd"] == "inputs":
            inputs = None
            inputs = inputs_for(msg["seed"])
            answers.write(json.dumps({"ok": True}) + "\n")
        elif msg["cmd"] == "time":
            gpu_ms, wall_ms = [], []
            for _ in range(msg["n"]):
                sync()
                if device.type == "cuda":
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    started = time.perf_counter()
                    start.record()
                    out = model(*inputs)
                    end.record()
                    end.synchronize()
                    wall_ms.append(1000 * (time.perf_counter() - started))
                    gpu_ms.append(start.elapsed_time(end))
                else:
                    started = time.perf_counter()
                    out = model(*inputs)
                    wall_ms.append(1000 * (time.perf_counter() - started))
                    gpu_ms.append(wall_ms[-1])
                del out
            answers.write(json.dumps({"ok": True, "ms": gpu_ms, "wall_ms": wall_ms}) + "\n")
        elif msg["cmd"] == "save":
            out = model(*inputs)
            sync()
            torch.save(to_cpu(out), msg["path"])
            del out
            answers.write(json.dumps({"ok": True}) + "\n")
        else:
            answers.write(json.dumps({"ok": False, "error": f"unknown command {msg['cmd']!r}"}) + "\n")


def seed_all(seed: int) -> None:
    import torch

    torch.manual_seed(seed)
    random.seed(seed)


def seeded(seed: int, make) -> list:
    seed_all(seed)
    return list(make())


def to_cpu(out):
    import torch

    if isinstance(out, torch.Tensor):
        return out.detach().cpu()
    if isinstance(out, list):
        return [to_cpu(x) for x in out]
    if isinstance(out, tuple):
        return tuple(to_cpu(x) for x in out)
    if isinstance(out, dict):
        return {k: to_cpu(v) for k, v in out.items()}
    return out


def device_name(device) -> str:
    import torch

    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


if __name__ == "__main__":
    main()
