"""Rewards per GPU-hour for level-1 Triton candidates through the reward service (`kbench serve`), beside the
same candidates through `kbench.evaluate_many` in one process (issue 61).

The candidates: the honest corpus's level-1 Triton files (tests/honest, no style flags) and the suite's Triton
examples, ``--candidates`` of them in turn, each judged at the problem's default size with the default timing
(eager baseline) on every local GPU, one evaluation per GPU at a time. The same list goes, in one order, through
``evaluate_many`` (the in-process reward loop) and through the service (`kbench serve` in a process of its own,
a fresh job store, ``RewardClient.judge_many`` with the ``speedup`` shape, submitted in batches of 32 and waited
for), ``--order`` deciding which goes first. Rewards per GPU-hour = rewards given (values that are not None) /
(wall seconds x GPUs) x 3600; the service's wall time runs from the first submission to the last reward and
leaves out its start (`kbench serve` up and answering: reported apart). Prints a table; writes the JSON to
$OUT/serve_throughput.json (or ``--out``): the settings, the machine (GPU, driver, versions), each path's
statuses, wall time, rewards per GPU-hour and per-candidate seconds.

On the GPU machine (Python 3.12, no FastAPI there: the wheels are in .whl/serve, fetched on a machine with
the network by `pip download --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64
--platform manylinux_2_17_x86_64 -d .whl/serve fastapi uvicorn`), one command:

    pip install --no-index --find-links .whl/serve fastapi uvicorn && PYTHONPATH=src python3 benchmarks/serve_throughput.py

(not with ``--target DIR --no-deps .whl/serve/*.whl`` ahead on PYTHONPATH when the wheels hold click: click 8.5
ahead of the machine's older typer loses every option of `kbench serve`, "No such option: --port", as on the H100
on 2026-12-06; leave click out of .whl/serve, the machine has one).

    PYTHONPATH=src python3 benchmarks/serve_throughput.py --device cpu --candidates 3 --no-timing --out /tmp/st.json  # smoke
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

import torch  # noqa: E402

import kbench  # noqa: E402
from honest.corpus import CORPUS  # noqa: E402
from kbench.rewards import reward_of  # noqa: E402
from kbench.serve.client import RewardClient  # noqa: E402

EXAMPLES = {"level1/relu": "relu.py", "level1/softmax": "softmax.py"}  # swish.py is C++/CUDA: not Triton


def candidates(count: int) -> list[tuple[str, str, str]]:
    """(name, problem, source), ``count`` of them, the pool in turn."""
    pool = [(f"example_{Path(f).stem}", p, (ROOT / "src/kbench/suite/examples" / f).read_text())
            for p, f in EXAMPLES.items()]
    pool += [(h.name, h.problem, h.path.read_text()) for h in CORPUS
             if h.level == 1 and h.language == "triton" and not h.style_flags and h.verified]
    return [pool[i % len(pool)] for i in range(count)]


def through_evaluate_many(items, device: str, timing: bool, shape: str) -> dict:
    began = time.monotonic()
    pairs = [(problem, kbench.Solution(source=source)) for _, problem, source in items]
    rewards: list = [None] * len(items)
    statuses: list = [None] * len(items)
    options = {} if timing else {"measure_time": False}
    try:
        for index, verdict in kbench.evaluate_many(pairs, device=device if device == "cpu" else None, **options):
            statuses[index] = verdict.status
            rewards[index] = reward_of(verdict, shape).value
    except Exception as exc:  # noqa: BLE001 - one path failing still reports the other
        return {"error": repr(exc), "wall_s": time.monotonic() - began}
    return {"wall_s": time.monotonic() - began, "statuses": statuses, "rewards": rewards}


def through_service(items, device: str, timing: bool, shape: str, folder: Path) -> dict:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (folder / "serve.log").open("w")
    command = [sys.executable, "-m", "kbench", "serve", "--port", str(port), "--job-store", str(folder / "jobs.db"),
               "--device", device, *([] if timing else ["--no-timing"]), "--max-queue", str(max(64, len(items)))]
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=log, stderr=log, env=os.environ | {"PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))})  # where FastAPI was put, kept
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            if process.poll() is not None:
                return {"error": f"kbench serve exited: {(folder / 'serve.log').read_text()[-3000:]}"}
            try:
                with urllib.request.urlopen(url + "/v1/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.2)
        up_s = time.monotonic() - started
        began = time.monotonic()
        rewards = RewardClient(url, timeout=600).judge_many([(p, s) for _, p, s in items], shape=shape)
        wall = time.monotonic() - began
        return {"wall_s": wall, "start_s": up_s, "statuses": [r.status for r in rewards],
                "rewards": [r.value for r in rewards], "info": RewardClient(url).info(), "command": " ".join(command)}
    except Exception as exc:  # noqa: BLE001
        return {"error": repr(exc), "log": (folder / "serve.log").read_text()[-3000:]}
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def summarise(result: dict, gpus: int) -> dict:
    if "error" in result:
        return result
    given = [r for r in result["rewards"] if r is not None]
    hours = result["wall_s"] * gpus / 3600
    return result | {"rewards_given": len(given), "statuses_count": dict(Counter(result["statuses"])),
                     "rewards_per_gpu_hour": round(len(given) / hours, 1) if hours else None,
                     "seconds_per_candidate": round(result["wall_s"] / len(result["rewards"]), 2)}


def machine() -> dict:
    info = {"node": platform.node(), "python": platform.python_version(), "torch": torch.__version__,
            "cpus": os.cpu_count(), "gpus": torch.cuda.device_count()}
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
        try:
            info["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                            capture_output=True, text=True, timeout=30).stdout.strip()
        except OSError:
            pass
    try:
        import triton

        info["triton"] = triton.__version__
    except ImportError:
        pass
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", type=int, default=48)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--shape", default="speedup")
    parser.add_argument("--timing", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--order", choices=("service-first", "evaluate-many-first"), default="evaluate-many-first")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")) / "serve_throughput.json")
    args = parser.parse_args()
    shape = args.shape if args.timing else "correct"
    items = candidates(args.candidates)
    gpus = max(1, torch.cuda.device_count()) if args.device.startswith("cuda") else 1
    folder = Path(tempfile.mkdtemp(prefix="kbench-serve-throughput-"))
    results = {}
    paths = ["evaluate_many", "service"] if args.order == "evaluate-many-first" else ["service", "evaluate_many"]
    for path in paths:
        result = (through_evaluate_many(items, args.device, args.timing, shape) if path == "evaluate_many"
                  else through_service(items, args.device, args.timing, shape, folder))
        results[path] = summarise(result, gpus)
    document = {
        "what": "benchmarks/serve_throughput.py: rewards per GPU-hour, reward service vs evaluate_many",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "command": " ".join([sys.executable, *sys.argv]),
        "machine": machine(), "device": args.device, "gpus_used": gpus, "shape": shape, "timing": args.timing,
        "order": paths, "candidates": [[n, p] for n, p, _ in items], "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2, default=str) + "\n")
    print(f"{len(items)} level-1 Triton candidates on {gpus} x {document['machine'].get('gpu', args.device)}, "
          f"shape {shape}")
    print(f"{'path':<15} {'wall s':>8} {'s/cand':>7} {'rewards':>8} {'per GPU-h':>10}  statuses")
    for path in paths:
        r = results[path]
        if "error" in r:
            print(f"{path:<15} error: {r['error'][:300]}")
            continue
        print(f"{path:<15} {r['wall_s']:>8.1f} {r['seconds_per_candidate']:>7.2f} {r['rewards_given']:>8} "
              f"{r['rewards_per_gpu_hour']:>10}  {r['statuses_count']}")
    if "start_s" in results.get("service", {}):
        print(f"(the service took {results['service']['start_s']:.1f} s to start, not counted)")
    print(f"JSON: {args.out}")


if __name__ == "__main__":
    main()
