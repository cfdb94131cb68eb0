"""Does `kbench audit` fit on the device for KernelBench-sized elementwise problems (issue 17, point 4)?

Writes four problem files of its own (ReLU, Softmax, GELU, Frobenius norm over
a 4096 x 393216 float32 input: 6 GiB in, 6 GiB out, the size of KernelBench's
level-1 elementwise problems) into a temporary directory, audits each in its
own worker as `kbench audit` does, and reports per problem: the audit's status
(`audited`, or the flag `broken` / `memory_over_device`), its flags, wall
time, and peak memory: the device memory the worker allocated during the
checks and during the timing (torch.cuda.max_memory_allocated, taken inside
the worker), the device memory nvidia-smi saw in use (sampled every 200 ms,
less what was in use before: the worker's CUDA context and allocator cache
included), and the worker's peak resident set on the host. One problem that
fails does not stop the others; the whole run keeps within --budget seconds.

    PYTHONPATH=src python3 benchmarks/audit_memory.py --out audit_memory.json
    PYTHONPATH=src python3 benchmarks/audit_memory.py --device cpu --shape 64x4096 --out /tmp/am.json   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import threading
import time
import traceback
from pathlib import Path

PROBLEMS = {
    "relu": "torch.relu(x)",
    "softmax": "torch.softmax(x, dim=1)",
    "gelu": "torch.nn.functional.gelu(x)",
    "frobenius_norm": 'x / torch.norm(x, p="fro")',
}

SOURCE = '''"""Written by benchmarks/audit_memory.py: {name} over a {rows} x {cols} float32 input."""

import torch
import torch.nn as nn

batch_size = {rows}
dim = {cols}


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return {body}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''


class DeviceMemorySampler:
    """The largest device memory in use (MiB, over all GPUs) that nvidia-smi reports while running."""

    def __init__(self) -> None:
        self.peak_mib: float | None = None
        self._process: subprocess.Popen | None = None
        self._thread: threading.Thread | None = None

    @staticmethod
    def used_mib() -> float | None:
        if not shutil.which("nvidia-smi"):
            return None
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, timeout=20).stdout
            return max(float(line) for line in out.split())
        except Exception:
            return None

    def __enter__(self) -> DeviceMemorySampler:
        if shutil.which("nvidia-smi"):
            self._process = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-lms", "200"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self._thread = threading.Thread(target=self._read, daemon=True)
            self._thread.start()
        return self

    def _read(self) -> None:
        for line in self._process.stdout:
            try:
                value = float(line)
            except ValueError:
                continue
            self.peak_mib = value if self.peak_mib is None else max(self.peak_mib, value)

    def __exit__(self, *exc: object) -> None:
        if self._process:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
            self._thread.join(timeout=5)


def write_problems(directory: Path, rows: int, cols: int) -> dict[str, Path]:
    paths = {}
    for name, body in PROBLEMS.items():
        paths[name] = directory / f"{name}.py"
        paths[name].write_text(SOURCE.format(name=name, rows=rows, cols=cols, body=body))
    return paths


def audit_one(name: str, path: Path, device: str, timeout: float) -> dict:
    from kbench.audit import audit_problem
    from kbench.suite.problem import load_problem

    row: dict = {"problem": name, "status": "error", "timeout_s": round(timeout, 1)}
    idle = DeviceMemorySampler.used_mib() if device.startswith("cuda") else None
    started = time.monotonic()
    try:
        with DeviceMemorySampler() as sampler:
            record = audit_problem(load_problem(path), device, "default", timeout=timeout)
    except Exception as exc:
        row.update(error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()[-3000:],
                   seconds=round(time.monotonic() - started, 2))
        return row
    memory = record.get("memory") or {}
    flags = record.get("flags", [])
    problem_bytes = (memory.get("inputs_bytes") or 0) + (memory.get("outputs_bytes") or 0)
    peak = memory.get("checks_peak_bytes")
    row.update(
        status=next((f for f in ("broken", "memory_over_device") if f in flags), "audited"),
        flags=flags,
        reasons={k: v[:500] for k, v in record.get("reasons", {}).items()},
        notes=record.get("notes", []),
        seconds=round(time.monotonic() - started, 2),
        eager_ms=record.get("eager_ms"),
        inputs_bytes=memory.get("inputs_bytes"),
        outputs_bytes=memory.get("outputs_bytes"),
        checks_peak_bytes=peak,
        timing_peak_bytes=memory.get("timing_peak_bytes"),
        host_peak_rss_bytes=memory.get("host_peak_rss_bytes"),
        checks_peak_multiple=round(peak / problem_bytes, 3) if peak and problem_bytes else None,
        nvidia_smi_idle_mib=idle,
        nvidia_smi_peak_mib=sampler.peak_mib,
        nvidia_smi_peak_over_idle_mib=(sampler.peak_mib - idle) if sampler.peak_mib is not None and idle is not None
        else None,
        device_name=record.get("device_name"),
        reference_error=record.get("reference_error"),
    )
    return row


def gib(value: float | None) -> str:
    return "-" if value is None else f"{value / 2**30:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="Write the results here as JSON (after every problem).")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--shape", default="4096x393216", help="ROWSxCOLS of every problem's input")
    parser.add_argument("--problems", nargs="*", default=list(PROBLEMS), choices=list(PROBLEMS))
    parser.add_argument("--budget", type=float, default=330.0, help="seconds for the whole run")
    args = parser.parse_args()
    started = time.monotonic()
    rows, cols = (int(n) for n in args.shape.lower().split("x"))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)

    import torch

    from kbench.judge import resolve_device

    device = resolve_device(args.device)
    result = {"device": device, "shape": [rows, cols], "torch": torch.__version__,
              "gpu": torch.cuda.get_device_name(device) if device.startswith("cuda") else None,
              "problem_bytes": 2 * rows * cols * 4, "problems": []}
    print(f"audit_memory: {len(args.problems)} problems of {rows} x {cols} float32 "
          f"({rows * cols * 4 / 2**30:.2f} GiB in, as much out) on {device} {result['gpu'] or ''}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kbench-audit-memory-") as tmp:
        paths = write_problems(Path(tmp), rows, cols)
        for i, name in enumerate(args.problems):
            left = args.budget - (time.monotonic() - started)
            if left < 20:
                result["problems"].append({"problem": name, "status": "skipped", "reason": "out of --budget"})
                print(f"[{i + 1}/{len(args.problems)}] {name}: skipped (out of --budget)", flush=True)
                continue
            timeout = max(20.0, left / (len(args.problems) - i) - 5)
            print(f"[{i + 1}/{len(args.problems)}] {name}: auditing (timeout {timeout:.0f} s) ...", flush=True)
            row = audit_one(name, paths[name], device, timeout)
            result["problems"].append(row)
            print(f"[{i + 1}/{len(args.problems)}] {name}: {row['status']} in {row.get('seconds')} s; "
                  f"flags {row.get('flags')}; device peak checks {gib(row.get('checks_peak_bytes'))} GiB "
                  f"({row.get('checks_peak_multiple')} x in+out), timing {gib(row.get('timing_peak_bytes'))} GiB, "
                  f"nvidia-smi over idle {row.get('nvidia_smi_peak_over_idle_mib')} MiB; "
                  f"host peak RSS {gib(row.get('host_peak_rss_bytes'))} GiB"
                  + (f"; {row['error']}" if "error" in row else ""), flush=True)
            for flag, reason in row.get("reasons", {}).items():
                print(f"    {flag}: {reason[:300]}", flush=True)
            if args.out:
                args.out.write_text(json.dumps(result, indent=1))
    result["seconds"] = round(time.monotonic() - started, 1)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    fits = sum(r["status"] == "audited" for r in result["problems"])
    print(f"audit_memory: {fits} of {len(args.problems)} audited without memory_over_device or broken "
          f"in {result['seconds']} s" + (f"; results in {args.out}" if args.out else ""), flush=True)


if __name__ == "__main__":
    main()
