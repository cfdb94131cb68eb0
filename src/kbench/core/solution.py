"""A solution: Python source defining ``class ModelNew(torch.nn.Module)``.

It may hold CUDA C++ built with ``torch.utils.cpp_extension.load_inline``,
Triton kernels, C++ for the CPU, or any mix with PyTorch code. The judge never
imports it in its own process: the source is copied into the evaluation's
private folder and imported there by a candidate worker.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


class SolutionError(Exception):
    """A solution file that cannot be read at all."""


@dataclass(frozen=True)
class Solution:
    source: str
    path: Path | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()

    @classmethod
    def from_file(cls, path: str | Path) -> "Solution":
        """The solution in the file at ``path``. Source text given as a path (a reward
        loop holds source, not files) is refused with the way to pass it: ``Solution(source=text)``."""
        if isinstance(path, str) and looks_like_source(path):
            first = path.strip().splitlines()[0][:60] if path.strip() else ""
            raise SolutionError(f"solution {first!r}...: this is source code, not a path to a file; pass it as "
                                "kbench.Solution(source=text)")
        path = Path(path)
        try:
            # Undecodable bytes are kept (replaced) so that "not Python at all"
            # reaches the judge and gets a verdict, rather than a usage error.
            source = path.read_bytes().decode("utf-8", errors="replace")
            return cls(source=source, path=path.resolve())
        except OSError as exc:
            raise SolutionError(f"solution file {path}: cannot be read ({exc})") from exc


def looks_like_source(text: str) -> bool:
    """Whether a string given as a path is Python source instead (paths hold no line breaks)."""
    return "\n" in text or "class ModelNew" in text or "import torch" in text
