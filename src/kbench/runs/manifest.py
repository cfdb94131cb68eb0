"""The run manifest: what a score depends on, captured every time a run starts or resumes.

A score without its manifest is not a result: two numbers are comparable only
when the same suite, solutions, judge settings, software and hardware stood
behind them. ``RunConfig`` is the part that defines the experiment (resuming
with a different one would mix two experiments, so the runner refuses);
``Manifest`` adds the environment, which is captured per session so that a
run resumed on another machine or revision says so instead of hiding it.
"""

from __future__ import annotations

import hashlib
import os
import platform
import socket
import subprocess
import sys
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

import kbench
from kbench.core.versions import package_version
from kbench.judge.protocol import state
from kbench.judge.trusted.compare import DEFAULT_CRITERION
from kbench.judge.guard import DEFAULT_POLICY
from kbench.judge.processes.sandbox import NO_SANDBOX, find_sandbox
from kbench.judge.protocol.timing import TimingSettings

PACKAGE_DIR = Path(__file__).resolve().parents[1]
COMMAND_TIMEOUT_SECONDS = 10
NVIDIA_SMI_FIELDS = ("name", "driver_version", "clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem")
SEED_POLICY = (
    "weights and trial inputs use seeds drawn by the judge (secrets) for every evaluation, "
    "after the candidate is built; each verdict records its seeds"
)
# Environment fields whose change between two sessions of one run is worth a warning
# (the time, the command line and momentary clocks are expected to differ).
ENVIRONMENT_FIELDS = (
    "kbench_version",
    "git_revision",
    "git_dirty",
    "python",
    "torch",
    "triton",
    "cuda",
    "cudnn",
    "hostname",
    "gpu_name",
    "gpu_driver",
    "global_settings",
    "timing_protocol",
    "baseline_settings",
    "sandbox",
)


@dataclass(frozen=True)
class RunConfig:
    """What defines a run; a resumed run must be given the same.

    ``source`` is ``replay`` (``solutions`` is the directory of files) or the
    provider that generates them (``openai``, ``anthropic``, ``command``:
    ``solutions`` is then ``PROVIDER/MODEL``, and ``generation`` holds the
    settings that shape what the model is asked: kbench.agents.loop.AgentConfig).
    """

    selection: tuple[str, ...]
    solutions: str
    device: str
    size: str
    trials: int
    timeout: float
    baselines: tuple[str, ...]
    suite_sha256: str
    solutions_sha256: str
    source: str = "replay"
    policy: str = DEFAULT_POLICY  # the guard's (kbench.judge.guard); every stored config names its own
    samples: int = 1
    turns: int = 1
    generation: dict[str, Any] = field(default_factory=dict)
    cuda_graph: bool = False  # timing by CUDA-graph replays (docs/timing.md)
    # Each speedup averaged over whole evaluations in fresh worker pairs: at least ``pairs``, up to ``max_pairs``
    # until its interval is narrow enough (kbench.judge.protocol.pairs; docs/timing.md).
    pairs: int = 1
    max_pairs: int = 0
    decide_at: tuple[float, ...] = ()  # with max_pairs: more pairs only for a speedup not clear of these (fast_p's p)
    sandbox: bool = True  # candidates in the OS sandbox; False only by --no-sandbox (docs/guard.md)
    dtype: str = "float32"  # the problems' variant judged (KBENCH_DTYPES); problems without it are left out
    limit: int | None = None  # only the selection's first N problems (kbench run --limit: a smoke run)
    # "kernel" (problems: contest coding) or "repo" (repository-maintenance tasks, kbench.repo): a run is of
    # one track, and the tracks are scored apart (runs.repo_score) and never compared.
    track: str = "kernel"
    # KernelBench's cast of every problem (fp16, bf16: kbench.suite.kernelbench), ``dtype`` then the one it casts
    # to; None: each problem's own variant in ``dtype`` (KBENCH_DTYPES). Runs of the two are never compared.
    precision: str | None = None
    # False (kbench run --no-timing): candidates checked for correctness only, nothing timed; scores have no speedups.
    measure_time: bool = True
    # How floating-point outputs are judged (kbench.judge.compare.CRITERIA: truth, kernelbench; kbench run
    # --correctness). A run stored before the option was judged by the criterion then default, which each
    # verdict records (its correct_kernelbench field); resuming it keeps the default.
    correctness: str = DEFAULT_CRITERION

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunConfig":
        known = _known(cls, data)
        known["selection"] = tuple(known["selection"])
        known["baselines"] = tuple(known["baselines"])
        known["decide_at"] = tuple(known.get("decide_at", ()))
        return cls(**known)

    def timing_settings(self) -> TimingSettings:
        """The timing protocol this run's candidates are judged with."""
        return TimingSettings(cuda_graph=self.cuda_graph, pairs=self.pairs, max_pairs=self.max_pairs,
                              decide_at=self.decide_at)

    def pairs_text(self) -> str:
        """How many worker pairs a verdict averages, in words."""
        if self.max_pairs > self.pairs:
            until = f", more only near {', '.join(f'{p:g}' for p in self.decide_at)}x" if self.decide_at else ""
            return f"{self.pairs} to {self.max_pairs} worker pairs{until}"
        return f"{self.pairs} worker pair" + ("s" if self.pairs > 1 else "")

    def differences(self, other: "RunConfig") -> dict[str, tuple[Any, Any]]:
        return {
            f.name: (getattr(self, f.name), getattr(other, f.name))
            for f in fields(self)
            if getattr(self, f.name) != getattr(other, f.name)
        }


@dataclass(frozen=True)
class Manifest:
    """The config plus everything about the software and machine a run ran on.

    ``generation`` is for sources that ask models for solutions (model,
    provider, endpoint, sampling settings, prompt template and its hash, agent
    loop); a replay of files on disk has none.
    """

    config: RunConfig
    captured_at: str = ""
    command: tuple[str, ...] = ()
    kbench_version: str | None = None
    git_revision: str | None = None
    git_dirty: bool | None = None
    python: str | None = None
    torch: str | None = None
    triton: str | None = None
    cuda: str | None = None
    cudnn: int | None = None
    platform: str | None = None
    hostname: str | None = None
    cpu: str | None = None
    gpu_name: str | None = None
    gpu_driver: str | None = None
    gpu_clocks: dict[str, str] = field(default_factory=dict)
    global_settings: dict[str, Any] = field(default_factory=dict)
    timing_protocol: dict[str, Any] = field(default_factory=dict)
    baseline_settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    seeds: str = SEED_POLICY
    generation: dict[str, Any] | None = None
    sandbox: dict[str, Any] = field(default_factory=dict)  # kbench.judge.processes.sandbox: the candidates' confinement
    # How this session judged (kbench.judge.Executor.describe: local devices, or Ray and its address); a
    # session's own choice, not the run's: a run may resume with another executor.
    executor: dict[str, Any] = field(default_factory=dict)
    # A repository-track run's tasks as judged: task id -> {"sha256": the task's hash, "commit": the pinned
    # revision, "repository": where it came from}; empty for the kernel track.
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Manifest":
        """Tolerant of fields added or dropped by other kbench versions."""
        known = _known(cls, data)
        known["config"] = RunConfig.from_dict(known["config"])
        known["command"] = tuple(known.get("command", ()))
        return cls(**known)

    def changes_from(self, earlier: "Manifest") -> dict[str, tuple[Any, Any]]:
        """Environment fields that differ from an earlier session's manifest."""
        return {
            name: (getattr(earlier, name), getattr(self, name))
            for name in ENVIRONMENT_FIELDS
            if getattr(earlier, name) != getattr(self, name)
        }


def capture(config: RunConfig, generation: dict[str, Any] | None = None,
            executor: dict[str, Any] | None = None) -> Manifest:
    """The manifest of this process, now, for a run of ``config`` (``generation``: how
    the solutions are asked for, from kbench.agents.loop, for a run that generates them;
    ``executor``: how its evaluations are spread, default one at a time on its device)."""
    gpu = _nvidia_smi(config.device) if config.device.startswith("cuda") else {}
    return Manifest(
        config=config,
        captured_at=now(),
        command=tuple(sys.argv),
        kbench_version=kbench.__version__,  # also when run from a source tree (PYTHONPATH=src)
        git_revision=_git("rev-parse", "HEAD"),
        git_dirty=_git_dirty(),
        python=sys.version.split()[0],
        torch=torch.__version__,
        triton=package_version("triton"),
        cuda=torch.version.cuda,
        cudnn=torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        platform=platform.platform(),
        hostname=socket.gethostname(),
        cpu=_cpu_name(),
        gpu_name=gpu.get("name") or _torch_gpu_name(config.device),
        gpu_driver=gpu.get("driver_version"),
        gpu_clocks={k: v for k, v in gpu.items() if k.startswith("clocks.")},
        global_settings=dict(state.PINNED),
        timing_protocol=asdict(config.timing_settings()),
        baseline_settings={column: baseline_settings(column) for column in config.baselines},
        generation=generation,
        sandbox=find_sandbox().describe() if config.sandbox else NO_SANDBOX,
        executor=executor or {"kind": "local", "devices": [config.device], "build_jobs": 0},
    )


def baseline_settings(column: str) -> dict[str, Any]:
    """How a baseline column is measured."""
    from kbench.judge.trusted.baselines import describe

    if column == "base":  # the repository track's one column (kbench.repo)
        return {"what": "the task's workload on the repository at its pinned revision, timed as the eager column "
                "is and interleaved with the patched revision's (kbench.repo.patch_judge)"}

    return describe(column)


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def sha256_lines(lines: list[str]) -> str:
    """One hash over an ordered list of records (a suite, a set of solutions)."""
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode())
        digest.update(b"\n")
    return digest.hexdigest()


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def _command(*args: str) -> str | None:
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_SECONDS)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def harness_version() -> str:
    """kbench's version, with the git revision (and whether tracked files are
    modified) when it runs from a source checkout: what a bug report needs."""
    revision = _git("rev-parse", "--short", "HEAD")
    if revision is None:
        return kbench.__version__
    return f"{kbench.__version__} (git {revision}{', modified' if _git_dirty() else ''})"


def _git(*args: str) -> str | None:
    """Only for a kbench source checkout: an installed package inside some other
    repository (a virtual environment in a project) must not report that one's revision."""
    top = _command("git", "-C", str(PACKAGE_DIR), "rev-parse", "--show-toplevel")
    if top is None or Path(top.strip()).resolve() / "src" / "kbench" != PACKAGE_DIR:
        return None
    out = _command("git", "-C", str(PACKAGE_DIR), *args)
    return None if out is None else out.strip()


def _git_dirty() -> bool | None:
    """Modified tracked files, as ``git describe --dirty`` counts them (untracked files,
    such as a store in the checkout, do not change the harness)."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return None if status is None else bool(status)


def _nvidia_smi(device: str) -> dict[str, str]:
    """Name, driver and clocks of the GPU behind ``device``, as nvidia-smi sees it now."""
    index = device.partition(":")[2] or "0"
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    selector = visible[int(index)] if int(index) < len(visible) else index
    out = _command(
        "nvidia-smi", "-i", selector, f"--query-gpu={','.join(NVIDIA_SMI_FIELDS)}", "--format=csv,noheader"
    )
    if not out or not out.strip():
        return {}
    row = out.strip().splitlines()[0]
    return dict(zip(NVIDIA_SMI_FIELDS, (value.strip() for value in row.split(","))))


def _torch_gpu_name(device: str) -> str | None:
    if device.startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.get_device_name(torch.device(device))
    return None


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
