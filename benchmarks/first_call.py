"""What a fresh worker's first judged call costs beyond a later one, piece by piece.

Since the GPU digest kernel came in (kbench.judge.exchange.gpu_digest, 2026-12-03), the first call of an
evaluation (the other-size trial) took 1.2-2.0 s at the median on the H200 against 0.4-0.5 s
before, and a later worker pair's five trials 1.45 s against 0.34 s (docs/measurements/2026-12-03-worker-pairs.md,
"Worker
pairs"). This times, in fresh processes like a worker (``python -I``, the worker's imports, a
CUDA context), each piece of a call's untimed work the first time and again: the L2 flush, a
forward, the output's and the inputs' digests (several word types), and the packing of an output
for the reference. Each Triton cache state is its own process: ``cold`` (an empty cache, as a
candidate's first build folder), ``warm`` (the cache the cold one left), and ``warmed`` (the
worker's start-up warming, kbench.judge.worker.session._warm_up, done first and timed apart).

    PYTHONPATH=src python3 benchmarks/first_call.py --out first_call.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
from kbench.judge.exchange import outputs
from kbench.judge.protocol import timing
from kbench.judge.worker import session as worker
imported = time.perf_counter() - t0
device = "cuda:0"
start = time.perf_counter()
torch.empty(1, device=device); torch.cuda.synchronize()
context = time.perf_counter() - start
steps = {"import_s": imported, "context_s": context}
if sys.argv[1] == "warmed":
    start = time.perf_counter()
    worker._warm_up(device)
    torch.cuda.synchronize()
    steps["warm_up_s"] = time.perf_counter() - start

def timed(name, fn):
    for attempt in ("first", "second"):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        steps[f"{name}_{attempt}_s"] = time.perf_counter() - start

x = torch.randn(4096, 4097, device=device)
flush = timing.CacheFlusher(torch.device(device))
timed("flush", flush)
timed("relu", lambda: torch.relu(x))
timed("digest_float32", lambda: outputs.fingerprint(torch.relu(x)))
timed("digest_int64", lambda: outputs.fingerprint(torch.arange(100003, device=device)))
timed("digest_half", lambda: outputs.fingerprint(x.half()))
timed("digest_sliced", lambda: outputs.fingerprint(x[:, :100]))
timed("pack", lambda: outputs.pack_output(torch.relu(x)))
print(json.dumps(steps))
"""


def probe(state: str, cache: Path) -> dict:
    env = {**os.environ, "TRITON_CACHE_DIR": str(cache), "PYTHONPATH": os.pathsep.join(sys.path[:1] + ["src"])}
    done = subprocess.run([sys.executable, "-c", PROBE, state], env=env, capture_output=True, text=True, timeout=600)
    if done.returncode:
        return {"state": state, "error": done.stderr[-2000:]}
    return {"state": state, **json.loads(done.stdout.strip().splitlines()[-1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for state, cache in (("cold", "a"), ("warm", "a"), ("warmed", "b"), ("warmed", "b")):
            started = time.monotonic()
            row = probe(state, Path(tmp) / cache)
            row["process_s"] = time.monotonic() - started
            rows.append(row)
            print(json.dumps(row), flush=True)
    args.out.write_text(json.dumps(rows, indent=1))
    keys = list(dict.fromkeys(k for r in rows for k in r if k.endswith("_s")))
    print("step".ljust(24) + "".join(f"{r['state']:>10}" for r in rows))
    for key in keys:
        print(key.ljust(24) + "".join(f"{r.get(key, float('nan')):10.3f}" for r in rows))


if __name__ == "__main__":
    main()
