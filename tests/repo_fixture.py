"""A tiny repository-maintenance task, written by the tests that need one (kbench.repo).

``make_task(root)`` writes a git repository ``tinyops`` (an RMSNorm whose
function normalises one row at a time in Python: the slow path), its visible
test, a task folder beside its bundle (hidden test, workload with a small size,
expert and broken patches), and returns the task file and the patches the
tests judge, each made by editing a copy of the repository and asking
``git diff`` for the patch (never written by hand).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

NORM = '''"""RMSNorm for tinyops."""

import torch


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Root-mean-square normalisation over the last dimension."""
    rows = x.reshape(-1, x.shape[-1])
    out = torch.empty_like(rows)
    for i in range(rows.shape[0]):
        row = rows[i]
        out[i] = row / torch.sqrt(torch.mean(row * row) + eps) * weight
    return out.reshape(x.shape)


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))
        self.eps = eps

    @classmethod
    def from_weights(cls, weight: torch.Tensor, eps: float = 1e-6) -> "RMSNorm":
        norm = cls(weight.shape[0], eps)
        with torch.no_grad():
            norm.weight.copy_(weight)
        return norm

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.weight, self.eps)
'''

DOCSTRING = '''    """Root-mean-square normalisation over the last dimension."""
'''
FAST = '''    variance = torch.mean(x * x, dim=-1, keepdim=True)
    return x * torch.rsqrt(variance + eps) * weight
'''
SLOW = '''    rows = x.reshape(-1, x.shape[-1])
    out = torch.empty_like(rows)
    for i in range(rows.shape[0]):
        row = rows[i]
        out[i] = row / torch.sqrt(torch.mean(row * row) + eps) * weight
    return out.reshape(x.shape)
'''

# Replaces time.perf_counter when the package is imported, through names no static rule resolves.
CLOCK = """_clock = __import__("ti" + "me")
_original = _clock.perf_counter
setattr(_clock, "perf_counter", lambda: _original())
"""

VISIBLE_TEST = '''import pytest
import torch

from tinyops.norm import RMSNorm, rms_norm


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_on_the_gpu():
    assert RMSNorm(8).cuda()(torch.randn(3, 8, device="cuda")).shape == (3, 8)


def test_shape():
    assert RMSNorm(8)(torch.randn(3, 8)).shape == (3, 8)


def test_values():
    x, w = torch.randn(5, 16), torch.randn(16)
    expected = x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w
    torch.testing.assert_close(rms_norm(x, w), expected)
'''

HIDDEN_TEST = '''import torch

from tinyops.norm import rms_norm


def test_eps_is_used():
    x, w = torch.randn(2, 3, 4) * 0.01, torch.ones(4)
    expected = x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1.0) * w
    torch.testing.assert_close(rms_norm(x, w, eps=1.0), expected)
'''

WORKLOAD = '''import torch

from tinyops.norm import RMSNorm

# On a GPU: 512 rows of a million bytes, so the base's loop launches thousands of small kernels (host-bound,
# tens of ms a call) while the expert's few launches each stream the whole 512 MiB (GPU-bound, about 1 ms):
# a fast expert whose own time is the GPU's, so judged beside itself it decides within the rounds.
rows = 512
dim = 262144
KBENCH_SMALL = {"rows": 96, "dim": 32}


class Model(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = RMSNorm.from_weights(torch.randn(dim))  # drawn under the judge's init seed

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim]
'''

# What the hidden test checks (eps used, on rows whose mean square it outweighs), run where the workload runs.
EDGE_CASES = '''import torch

from tinyops.norm import rms_norm


class Model(torch.nn.Module):
    def forward(self, x, w):
        return rms_norm(x * 0.01, w, eps=1.0), rms_norm(x, w, eps=0.5)


def get_inputs():
    return [torch.randn(2, 3, 4), torch.randn(4)]


def get_init_inputs():
    return []
'''

TASK = '''title = "RMSNorm is slow on many rows"
statement = """Normalising a batch of rows with tinyops.norm.RMSNorm takes time proportional to the rows
one by one, far slower than the arithmetic needs."""

[repository]
bundle = "../tinyops.bundle"
commit = "{commit}"

[patch]
allowed = ["tinyops/*.py"]

[tests]
visible = ["tests/test_norm.py"]
hidden = ["hidden/test_norm_hidden.py"]
timeout_s = 240

[workload]
file = "workload.py"
edge_cases = "edge_cases.py"

[expert]
patch = "expert.patch"
broken = "broken.patch"
'''


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _diff(repo: Path, edit) -> str:
    """The patch ``edit`` (a function of the repository's folder) makes, as git diff writes it."""
    edit(repo)
    git("add", "-A", cwd=repo)
    patch = git("diff", "--cached", "--binary", cwd=repo)
    git("reset", "-q", "--hard", "HEAD", cwd=repo)
    git("clean", "-qfdx", cwd=repo)
    return patch


def _replace(path: str, old: str, new: str):
    def edit(repo: Path) -> None:
        file = repo / path
        text = file.read_text()
        assert old in text, (path, old)
        file.write_text(text.replace(old, new))
    return edit


def _write(path: str, text: str):
    def edit(repo: Path) -> None:
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    return edit


def _write_bytes(path: str, data: bytes):
    def edit(repo: Path) -> None:
        (repo / path).write_bytes(data)
    return edit


def _move(path: str, to: str):
    def edit(repo: Path) -> None:
        (repo / path).rename(repo / to)
    return edit


def _link(path: str, target: str):
    def edit(repo: Path) -> None:
        os.symlink(target, repo / path)
    return edit


def make_task(root: Path) -> tuple[Path, dict[str, Path]]:
    """The task file, and the patches by name: expert, broken, nothing (a comment), tests (edits the
    visible test), workload (adds the workload's file), outside (a path the task does not allow),
    symlink, stale (does not apply), syntax (the package no longer imports), introspection (imports gc),
    rename (moves the visible test into the package), clock (replaces time.perf_counter on import),
    wrong_large (right on the tests' few rows, wrong on more than 64: the workload's), binary (a new
    file of bytes that are not text), hang (sleeps when imported), skip (rms_norm skips the test
    that calls it)."""
    repo = root / "tinyops-src"
    (repo / "tinyops").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "tinyops" / "__init__.py").write_text('"""tinyops: small tensor operations."""\n')
    (repo / "tinyops" / "norm.py").write_text(NORM)
    (repo / "tests" / "test_norm.py").write_text(VISIBLE_TEST)
    (repo / "README.md").write_text("tinyops\n")
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "tinyops", cwd=repo)
    commit = git("rev-parse", "HEAD", cwd=repo).strip()
    tasks = root / "tasks" / "tinyops"
    folder = tasks / "rmsnorm"
    (folder / "hidden").mkdir(parents=True)
    git("bundle", "create", "-q", str(tasks / "tinyops.bundle"), "--all", cwd=repo)
    (folder / "task.toml").write_text(TASK.format(commit=commit))
    (folder / "workload.py").write_text(WORKLOAD)
    (folder / "edge_cases.py").write_text(EDGE_CASES)
    (folder / "hidden" / "test_norm_hidden.py").write_text(HIDDEN_TEST)
    norm = "tinyops/norm.py"
    edits = {
        "expert": _replace(norm, SLOW, FAST),
        "broken": _replace(norm, SLOW, FAST.replace("variance + eps", "variance + 1e-6")),
        "nothing": _replace(norm, '"""RMSNorm for tinyops."""', '"""RMSNorm for tinyops (one row at a time)."""'),
        "tests": _replace("tests/test_norm.py", "assert_close(rms_norm(x, w), expected)", "assert True"),
        "workload": _write("workload.py", "print('mine')\n"),
        "outside": _replace("README.md", "tinyops", "tinyops, faster"),
        "symlink": _link("tinyops/fast.py", "/etc/hostname"),
        "syntax": _replace(norm, "def rms_norm(", "def rms_norm(("),
        "introspection": _replace(norm, "import torch\n", "import gc\n\nimport torch\n\nSEEN = gc.get_objects\n"),
        "wrong_large": _replace(norm, SLOW, "    if x.shape[0] > 64:\n        return x\n" + FAST),
        "binary": _write_bytes("tinyops/table.py", b"\x00\x01\x02 not text\n"),
        "hang": _replace(norm, "import torch\n", "import time\n\nimport torch\n\ntime.sleep(600)\n"),
        "skip": _replace(norm, DOCSTRING, DOCSTRING + "    import pytest\n\n    pytest.skip('not today')\n"),
        "rename": _move("tests/test_norm.py", "tinyops/test_moved.py"),
        "clock": _replace(norm, "import torch\n", "import torch\n\n" + CLOCK),
    }
    patches = {}
    for name, edit in edits.items():
        patches[name] = root / "patches" / f"{name}.patch"
        patches[name].parent.mkdir(exist_ok=True)
        patches[name].write_text(_diff(repo, edit))
    shutil.copy(patches["expert"], folder / "expert.patch")
    shutil.copy(patches["broken"], folder / "broken.patch")
    stale = patches["nothing"].read_text().replace('-"""RMSNorm for tinyops."""', '-"""RMSNorm for someone."""')
    patches["stale"] = root / "patches" / "stale.patch"
    patches["stale"].write_text(stale)
    return folder / "task.toml", patches
