"""Cold and warm `load_inline` builds of a small kernel, with and without a precompiled torch/extension.h.

`load_inline` writes main.cpp (`#include <torch/extension.h>` and the pybind11
bindings, compiled by g++) and cuda.cu (`#include <torch/types.h>` and the
solution's CUDA, compiled by nvcc), which ninja compiles side by side before
it links. Each build here runs in a fresh process; a cold one in a new empty
build directory, a warm one again in the same. Solution styles:

- typical: the CUDA source includes <torch/extension.h> itself (what models write);
- minimal: the CUDA source relies on load_inline's implicit <torch/types.h>;
- split: the kernel's .cu includes no torch header (`no_implicit_headers=True`),
  the torch::Tensor glue lives in the C++ source;
- cpp (no GPU): C++ only, what a CPU solution compiles.

The lever measured: a precompiled torch/extension.h built once by trusted code
(this script) *outside* torch's install directory, found by g++ through
`CPATH` (GCC looks for `torch/extension.h.gch` in each include directory before
the header itself; a .gch that does not match the flags is skipped, and the
header compiled as usual). Its flags are those of the first cold build's
main.cpp. torch's own `use_pch=True` is not run: it writes its .gch into
torch's install directory, which a later `load_inline` without `use_pch`
deletes, or fails on where that directory is read-only (kbench's sandbox).
Per build: load_inline's wall time, ninja's time per step (.ninja_log), and
whether g++ took the .gch for main.cpp (asked of `g++ -H`). Results are saved
after every row; rows that would overrun --budget are skipped, and say so.

    PYTHONPATH=src python3 benchmarks/build_time.py --out build_time.json [--parallel 8] [--budget 440]
"""

from __future__ import annotations

import argparse
import csv
import inspect
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

KERNEL = r"""
__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
"""
TENSOR_LAUNCH = r"""
torch::Tensor relu_op(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    relu_kernel<<<(unsigned)((n + 255) / 256), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
DECLARATION = "torch::Tensor relu_op(torch::Tensor x);"
STYLES = {
    "typical": {"cpp": DECLARATION, "cuda": "#include <torch/extension.h>\n#include <cuda_runtime.h>\n" + KERNEL + TENSOR_LAUNCH},
    "minimal": {"cpp": DECLARATION, "cuda": "#include <cuda_runtime.h>\n" + KERNEL + TENSOR_LAUNCH},
    "split": {
        "cpp": "#include <torch/extension.h>\nvoid relu_launch(const float* x, float* y, int64_t n);\n"
               "torch::Tensor relu_op(torch::Tensor x) {\n    auto y = torch::empty_like(x);\n"
               "    relu_launch(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());\n    return y;\n}\n",
        "cuda": "#include <cuda_runtime.h>\n#include <cstdint>\n" + KERNEL
                + "void relu_launch(const float* x, float* y, int64_t n) {\n"
                  "    relu_kernel<<<(unsigned)((n + 255) / 256), 256>>>(x, y, n);\n}\n",
        "no_implicit_headers": True,
    },
    "cpp": {"cpp": "torch::Tensor relu_op(torch::Tensor x) { return x.clamp_min(0); }\n"},
}
GPU_PLAN = [  # (row, style, cold, pch, parallel, extra) in the order run: the most telling first
    ("typical cold", "typical", True, False, 1, {"nvcc_time": True}),
    ("typical warm", "typical", False, False, 1, {}),
    ("typical cold +pch", "typical", True, True, 1, {}),
    ("split cold", "split", True, False, 1, {}),
    ("split cold +pch", "split", True, True, 1, {}),
    ("split warm +pch", "split", False, True, 1, {}),
    ("split cold x N", "split", True, False, "N", {}),
    ("split cold +pch x N", "split", True, True, "N", {}),
    ("typical cold nvcc -t0", "typical", True, False, 1, {"nvcc_flags": "--threads 0"}),
    ("minimal cold", "minimal", True, False, 1, {}),
    ("split -O3 cold +pch", "split", True, True, 1, {"cflags": ["-O3"]}),
    ("typical cold x N", "typical", True, False, "N", {}),
    ("typical cold +pch x N", "typical", True, True, "N", {}),
]
CPU_PLAN = [
    ("cpp cold", "cpp", True, False, 1, {}),
    ("cpp warm", "cpp", False, False, 1, {}),
    ("cpp cold +pch", "cpp", True, True, 1, {}),
    ("cpp warm +pch", "cpp", False, True, 1, {}),
    ("cpp cold x N", "cpp", True, False, "N", {}),
    ("cpp cold +pch x N", "cpp", True, True, "N", {}),
    ("cpp -O3 cold +pch", "cpp", True, True, 1, {"cflags": ["-O3"]}),
]
CHILD_TIMEOUT = 600


# ---------------------------------------------------------------- the child: one build in a fresh process

def child(spec: dict) -> dict:
    """Import torch, build with load_inline, call the op once; times in seconds."""
    started = time.perf_counter()
    import torch
    from torch.utils.cpp_extension import load_inline

    imported = time.perf_counter()
    style = STYLES[spec["style"]]
    tag = f"// {spec['name']}\n"  # every build's sources differ
    kwargs = {"name": spec["name"], "cpp_sources": tag + style["cpp"], "functions": ["relu_op"],
              "build_directory": spec["build_directory"], "extra_cflags": spec.get("cflags") or None}
    if "cuda" in style:
        kwargs["cuda_sources"] = tag + style["cuda"]
    if style.get("no_implicit_headers"):
        if "no_implicit_headers" not in inspect.signature(load_inline).parameters:
            raise RuntimeError(f"torch {torch.__version__}'s load_inline has no no_implicit_headers")
        kwargs["no_implicit_headers"] = True
    module = load_inline(**kwargs)
    built = time.perf_counter()
    device = "cuda" if "cuda" in style else "cpu"
    x = torch.randn(4096, device=device)
    ok = bool(torch.equal(module.relu_op(x), x.relu()))
    return {"import_s": imported - started, "load_inline_s": built - imported, "ok": ok}


# ---------------------------------------------------------------- reading what ninja and nvcc left

def ninja_steps(log_text: str) -> dict[str, float]:
    """Seconds per target from a .ninja_log (v5: start ms, end ms, mtime, target, hash); the
    link is reported as ``link``, the last entry of a target wins."""
    steps = {}
    for line in log_text.splitlines():
        fields = line.split("\t")
        if line.startswith("#") or len(fields) < 4:
            continue
        target = fields[3]
        name = "link" if target.endswith((".so", ".pyd", ".dylib")) else target
        steps[name] = (int(fields[1]) - int(fields[0])) / 1000
    return steps


def ninja_vars(build_ninja: str) -> dict[str, str]:
    """The top-level ``name = value`` lines of a build.ninja."""
    found = {}
    for line in build_ninja.splitlines():
        if line and not line[0].isspace() and " = " in line and not line.startswith(("rule ", "build ")):
            key, _, value = line.partition(" = ")
            found[key.strip()] = value.strip()
    return found


def main_cpp_command(variables: dict[str, str]) -> list[str]:
    """The compiler and flags that compile main.cpp, from build.ninja's variables."""
    return [*shlex.split(variables.get("cxx", "c++")), *shlex.split(variables.get("cflags", "")),
            *shlex.split(variables.get("post_cflags", ""))]


def pch_command(variables: dict[str, str], header: str, output: str) -> list[str]:
    """g++ precompiling ``header`` with main.cpp's own flags, less the extension's name (not
    referenced by torch's headers, so one .gch serves every extension)."""
    command = [f for f in main_cpp_command(variables) if not f.startswith("-DTORCH_EXTENSION_NAME=")]
    return [*command, "-x", "c++-header", header, "-o", output]


def pch_used(build_dir: Path, env: dict[str, str]) -> bool | None:
    """Whether g++ takes the .gch for this build's main.cpp, asked of g++ itself: main.o's
    command with ``-H`` lists a usable .gch as ``! path`` before anything else (an unusable
    one as ``x path``, then the header's text as ``. path``); stopped as soon as it says.
    (ninja's recorded dependencies cannot tell: -MMD leaves out torch's -isystem headers.)"""
    variables = ninja_vars((build_dir / "build.ninja").read_text())
    command = [*main_cpp_command(variables), "-H", "-fsyntax-only", str(build_dir / "main.cpp")]
    answer = None
    try:
        with subprocess.Popen(command, env=env, cwd=build_dir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True) as probe:
            for line in probe.stderr:
                if line.startswith(("! ", ". ")):
                    answer = line.startswith("! ")
                    break
            probe.kill()
    except OSError:
        return None
    return answer


def nvcc_phases(path: Path) -> list[dict]:
    """nvcc --time's CSV: one row per phase, in seconds."""
    if not path.exists():
        return []
    rows = list(csv.reader(path.read_text().splitlines()))
    out = []
    for row in rows[1:]:
        if len(row) >= 7:
            try:
                out.append({"phase": row[1].strip(), "seconds": float(row[6]) / 1000})
            except ValueError:
                continue
    return out


# ---------------------------------------------------------------- the parent

class Bench:
    def __init__(self, workdir: Path, out: Path | None, budget: float, parallel: int):
        self.workdir, self.out, self.budget, self.parallel = workdir, out, budget, parallel
        self.started = time.monotonic()
        self.count = 0
        self.last_cold: dict[tuple[str, bool], Path] = {}  # (style, pch) -> build dir, for warm rows
        self.seconds: dict[str, float] = {}  # style -> one cold build's wall, for the budget
        self.pch_root: Path | None = None
        self.pch_tried = False
        self.plain_cold: Path | None = None  # a cold build without extra flags: main.cpp's flags for the .gch
        self.result = {"started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "host": host(), "pch": None,
                       "rows": [], "skipped": [], "budget_s": budget, "parallel": parallel}

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def say(self, text: str) -> None:
        print(f"[{self.elapsed():6.1f}s] {text}", flush=True)

    def save(self) -> None:
        if self.out:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.out.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.result, indent=2))
            os.replace(tmp, self.out)

    def env(self, pch: bool, extra: dict) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("CPATH", "NVCC_APPEND_FLAGS")}
        if pch and self.pch_root:
            env["CPATH"] = str(self.pch_root)
        flags = extra.get("nvcc_flags", "")
        if extra.get("nvcc_time"):
            flags += f" --time {self.workdir / f'nvcc-time-{self.count}.csv'}"
        if flags.strip():
            env["NVCC_APPEND_FLAGS"] = flags.strip()
        return env

    def one(self, style: str, build_dir: Path, env: dict[str, str], cflags: list[str]) -> dict:
        """One build in a fresh process: its child's answer, ninja's steps, the .gch's use."""
        self.count += 1
        build_dir.mkdir(parents=True, exist_ok=True)
        log = build_dir / ".ninja_log"
        seen = log.read_text() if log.exists() else ""
        spec = {"style": style, "name": build_dir.name, "build_directory": str(build_dir), "cflags": cflags}
        started = time.monotonic()
        try:
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)], env=env,
                                  capture_output=True, text=True, timeout=CHILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            return {"ok": False, "error": f"timed out after {CHILD_TIMEOUT} s", "wall_s": time.monotonic() - started}
        answer = {"wall_s": time.monotonic() - started}
        last = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
        try:
            answer.update(json.loads(last[0]))
        except (IndexError, ValueError):
            answer.update(ok=False, error=(done.stderr or done.stdout)[-3000:])
        now = log.read_text() if log.exists() else ""
        answer["steps"] = ninja_steps(now[len(seen):] if now.startswith(seen) else now)
        if "main.o" in answer["steps"] and "CPATH" in env:
            answer["pch_used"] = pch_used(build_dir, env)
        return answer

    def estimate(self, style: str, cold: bool, parallel: int) -> float:
        if not cold:
            return 10.0
        base = self.seconds.get(style, self.seconds.get("typical", 60.0))
        return base * (1.0 if parallel == 1 else max(1.0, 2 * parallel / (os.cpu_count() or 1)) * 1.2)

    def row(self, label: str, style: str, cold: bool, pch: bool, parallel, extra: dict) -> None:
        n = self.parallel if parallel == "N" else parallel
        label = label.replace("x N", f"x {n}")
        if n < 1:
            return
        if pch and self.pch_root is None:
            if not self.pch_tried:
                self.build_pch()
            if self.pch_root is None:
                self.skip(label, "no precompiled header")
                return
        need = self.estimate(style, cold, n)
        if self.elapsed() + need > self.budget:
            self.skip(label, f"would pass the budget ({self.elapsed():.0f} s + about {need:.0f} s > {self.budget:.0f} s)")
            return
        if not cold and (style, pch) not in self.last_cold:
            self.skip(label, "no cold build to reuse")
            return
        self.say(f"{label} ...")
        env = self.env(pch, extra)
        if cold:
            dirs = [self.workdir / f"{style}_{'pch' if pch else 'plain'}_{self.count + i}" for i in range(n)]
        else:
            dirs = [self.last_cold[(style, pch)]]
        load = os.getloadavg()[0]
        started = time.monotonic()
        with ThreadPoolExecutor(n) as pool:
            builds = list(pool.map(lambda d: self.one(style, d, env, extra.get("cflags", [])), dirs))
        wall = time.monotonic() - started
        if cold:
            self.last_cold[(style, pch)] = dirs[0]
            if not pch and not extra.get("cflags") and self.plain_cold is None and (dirs[0] / "build.ninja").exists():
                self.plain_cold = dirs[0]
            if n == 1 and not pch and all(b.get("ok") for b in builds):
                self.seconds.setdefault(style, wall)
        record = {"row": label, "style": style, "cold": cold, "pch": pch, "parallel": n, "extra": extra,
                  "wall_s": wall, "load_before": load, "builds": builds,
                  "load_inline_s": median([b["load_inline_s"] for b in builds if "load_inline_s" in b]),
                  "ok": all(b.get("ok") for b in builds)}
        for step in ("main.o", "cuda.cuda.o", "link"):
            values = [b["steps"][step] for b in builds if step in b.get("steps", {})]
            record[step] = median(values)
        record["pch_used"] = [b.get("pch_used") for b in builds] if cold and pch else None
        if extra.get("nvcc_time"):
            record["nvcc_phases"] = [nvcc_phases(p) for p in sorted(self.workdir.glob("nvcc-time-*.csv"))]
            self.say("nvcc phases: " + ", ".join(f"{p['phase']} {p['seconds']:.1f} s" for p in sum(record["nvcc_phases"], [])))
        self.result["rows"].append(record)
        self.save()
        error = next((b.get("error") for b in builds if b.get("error")), None)
        steps = ", ".join(f"{k} {record[k]:.1f} s" for k in ("main.o", "cuda.cuda.o", "link") if record[k] is not None)
        self.say(f"{label}: {wall:.1f} s; load_inline {fmt(record['load_inline_s'])} s; {steps or 'nothing compiled'}; "
                 f"pch used {record['pch_used']}; ok {record['ok']}" + (f"\n{error}" if error else ""))

    def skip(self, label: str, why: str) -> None:
        self.say(f"skipped {label}: {why}")
        self.result["skipped"].append({"row": label, "why": why})
        self.save()

    def build_pch(self) -> None:
        """Precompile torch/extension.h with the flags of the first plain cold build's main.cpp,
        into a directory of its own (written under a temporary name, then renamed)."""
        import torch

        self.pch_tried = True
        cold = self.plain_cold
        if cold is None:
            self.skip("pch build", "no plain cold build to take main.cpp's flags from")
            return
        variables = ninja_vars((cold / "build.ninja").read_text())
        compiler = shlex.split(variables.get("cxx", "c++"))
        version = subprocess.run([*compiler, "-v"], capture_output=True, text=True).stderr
        if "gcc version" not in version:
            self.skip("pch build", f"{compiler} is not GCC")
            return
        header = str(Path(torch.__file__).parent / "include" / "torch" / "extension.h")
        root = self.workdir / "pch"
        target = root / "torch" / "extension.h.gch" / "default.gch"
        target.parent.mkdir(parents=True, exist_ok=True)
        command = pch_command(variables, header, str(target) + ".tmp")
        need = min(self.seconds.values(), default=60.0)
        if self.elapsed() + need > self.budget:
            self.skip("pch build", "would pass the budget")
            return
        self.say("precompiling torch/extension.h ...")
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True)
        seconds = time.monotonic() - started
        if done.returncode:
            self.result["pch"] = {"ok": False, "seconds": seconds, "command": command, "error": done.stderr[-3000:]}
            self.say(f"pch build failed:\n{done.stderr[-3000:]}")
        else:
            os.replace(str(target) + ".tmp", target)
            self.pch_root = root
            self.result["pch"] = {"ok": True, "seconds": seconds, "bytes": target.stat().st_size, "command": command}
            self.say(f"pch: {seconds:.1f} s, {target.stat().st_size / 2**20:.0f} MiB")
        self.save()


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def host() -> dict:
    info = {"python": sys.version.split()[0], "machine": platform.machine(), "cpus": os.cpu_count()}
    try:
        import torch

        info.update(torch=torch.__version__, torch_cuda=torch.version.cuda, gpu=torch.cuda.get_device_name(0)
                    if torch.cuda.is_available() else None)
    except Exception as exc:  # noqa: BLE001 - recorded, not fatal
        info["torch_error"] = repr(exc)
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            info["cpu"] = line.split(":", 1)[1].strip()
            break
    for tool, args in (("c++", ["--version"]), ("nvcc", ["--version"]), ("ninja", ["--version"])):
        try:
            text = subprocess.run([tool, *args], capture_output=True, text=True, timeout=30).stdout
            info[tool] = [line for line in text.splitlines() if line.strip()][-1 if tool == "nvcc" else 0]
        except (OSError, IndexError, subprocess.SubprocessError):
            info[tool] = None
    info["TORCH_CUDA_ARCH_LIST"] = os.environ.get("TORCH_CUDA_ARCH_LIST")
    return info


def table(result: dict) -> str:
    lines = [f"{'row':26s} {'wall s':>8s} {'load_inline s':>13s} {'main.o':>7s} {'cuda.o':>7s} {'link':>6s}  pch used  ok"]
    for r in result["rows"]:
        used = "-" if r["pch_used"] is None else ",".join("?" if u is None else "y" if u else "n" for u in r["pch_used"])
        lines.append(f"{r['row']:26s} {r['wall_s']:8.2f} {fmt(r['load_inline_s']):>13s} {fmt(r['main.o']):>7s} "
                     f"{fmt(r['cuda.cuda.o']):>7s} {fmt(r['link']):>6s}  {used:8s}  {r['ok']}")
    if result.get("pch"):
        pch = result["pch"]
        lines.append(f"pch build: {pch['seconds']:.1f} s" + (f", {pch['bytes'] / 2**20:.0f} MiB" if pch.get("ok") else ", failed"))
    lines += [f"skipped {s['row']}: {s['why']}" for s in result["skipped"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="JSON results (rewritten after every row)")
    parser.add_argument("--parallel", type=int, default=None, help="builds at once in the parallel rows "
                        "(default: half the CPUs; 0 skips those rows)")
    parser.add_argument("--budget", type=float, default=440.0, help="seconds; rows that would pass it are skipped")
    parser.add_argument("--plan", choices=("auto", "gpu", "cpu"), default="auto",
                        help="gpu: the CUDA styles; cpu: C++ only; auto: gpu where CUDA is present")
    parser.add_argument("--rows", default=None, help="comma-separated row names to run (default: all)")
    parser.add_argument("--workdir", type=Path, default=None, help="keep the build directories and the .gch here")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))), flush=True)
        return {}
    import torch

    gpu = args.plan == "gpu" or (args.plan == "auto" and torch.cuda.is_available())
    plan = GPU_PLAN if gpu else CPU_PLAN
    wanted = set(args.rows.split(",")) if args.rows else None
    parallel = args.parallel if args.parallel is not None else max(2, (os.cpu_count() or 2) // 2)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="kbench-build-time-"))
    bench = Bench(workdir, args.out, args.budget, parallel)
    bench.result["plan"] = "gpu" if gpu else "cpu"
    bench.say(f"{'CUDA' if gpu else 'C++ (no GPU)'} plan, {parallel} at once in parallel rows, work in {workdir}")
    try:
        for label, style, cold, pch, n, extra in plan:
            if wanted is None or label in wanted:
                bench.row(label, style, cold, pch, n, extra)
    finally:
        bench.result["total_s"] = bench.elapsed()
        bench.save()
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print(table(bench.result), flush=True)
    return bench.result


if __name__ == "__main__":
    main()
