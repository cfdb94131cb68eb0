"""What the judge adds to a cold build: the same solution built three ways, alone and N at once.

A build ahead (``kbench.judge.build``) imports the solution in a worker so that its
``load_inline`` compiles into the content-keyed cache. Whatever it takes beyond the
solution's own import in a plain Python process is the judge's cost, and every run's
first verdict pays it. The ways, each on a cold build (every copy's source carries a
unique comment, so it is a new solution with a new cache):

- plain: ``python -c "import the file"`` in a fresh process, with its own
  ``TORCH_EXTENSIONS_DIR``, the environment as it is;
- judge: ``kbench.judge.build(..., sandbox=False)``: the judge's worker, unconfined;
- sandboxed: ``kbench.judge.build(...)``: the worker in bubblewrap, as a run builds.

Each way once alone, then ``--parallel`` at once for plain and sandboxed. The default
solution is the bundled swish example (a ``load_inline`` with CUDA on a GPU, C++ on
the CPU). Per build: wall seconds and, for the judge's ways, the worker's import
(``import_seconds``: the compile), so the worker's start is the difference.

    PYTHONPATH=src python3 benchmarks/build_paths.py --parallel 7 --out build_paths.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kbench.core.solution import Solution
from kbench.judge.builds.ahead import build

ROOT = Path(__file__).resolve().parent.parent
SWISH = ROOT / "src" / "kbench" / "suite" / "examples" / "swish.py"
IMPORT_FILE = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('solution', sys.argv[1]); "
               "spec.loader.exec_module(importlib.util.module_from_spec(spec))")


def unique_copy(source: str, directory: Path) -> Path:
    path = directory / f"solution_{uuid.uuid4().hex[:12]}.py"
    path.write_text(f"# build_paths {path.stem}\n{source}")
    return path


def plain(path: Path, device: str) -> dict:
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=str(path.parent / f"ext_{path.stem}"))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", IMPORT_FILE, str(path)], env=env, capture_output=True, text=True)
    return {"ok": done.returncode == 0, "seconds": time.monotonic() - started, "import_seconds": None,
            "error": done.stderr[-2000:] if done.returncode else None}


def judged(sandbox: bool):
    def run(path: Path, device: str) -> dict:
        return build(Solution.from_file(path), device, sandbox=sandbox)
    return run


WAYS = {"plain": plain, "judge": judged(False), "sandboxed": judged(True)}


def row(way: str, count: int, source: str, directory: Path, device: str) -> dict:
    paths = [unique_copy(source, directory) for _ in range(count)]
    started = time.monotonic()
    with ThreadPoolExecutor(count) as pool:
        builds = list(pool.map(lambda p: WAYS[way](p, device), paths))
    seconds = [b["seconds"] for b in builds]
    imports = [b["import_seconds"] for b in builds if b.get("import_seconds") is not None]
    out = {"way": way, "at_once": count, "wall_s": round(time.monotonic() - started, 2),
           "build_s_median": round(statistics.median(seconds), 2), "build_s": [round(s, 2) for s in seconds],
           "import_s_median": round(statistics.median(imports), 2) if imports else None,
           "ok": all(b["ok"] for b in builds), "errors": [b["error"] for b in builds if b.get("error")][:2],
           "load_before": os.getloadavg()[0]}
    print(f"{way:10s} x{count:<3d} build {out['build_s_median']:6.1f} s (median)  import {out['import_s_median']}  "
          f"wall {out['wall_s']:6.1f} s  ok {out['ok']}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", default=None, help="default: cuda:0 where there is a GPU, else cpu")
    parser.add_argument("--solution", type=Path, default=SWISH)
    parser.add_argument("--parallel", type=int, default=7, help="builds at once in the parallel rows (0: none)")
    parser.add_argument("--ways", nargs="+", default=list(WAYS), choices=list(WAYS))
    args = parser.parse_args()
    import torch

    device = args.device or ("cuda:0" if torch.cuda.is_available() else "cpu")
    source = args.solution.read_text()
    result = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "device": device, "solution": str(args.solution),
              "cpus": os.cpu_count(), "rows": []}
    with tempfile.TemporaryDirectory(prefix="kbench-build-paths-") as tmp:
        os.environ["KBENCH_CACHE"] = str(Path(tmp) / "cache")  # the runs' cache untouched
        plan = [(way, 1) for way in args.ways]
        plan += [(way, args.parallel) for way in args.ways if way != "judge" and args.parallel > 0]
        for way, count in plan:
            result["rows"].append(row(way, count, source, Path(tmp), device))
            args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
