"""Code each side of an evaluation imports beside the problem file: a per-side import path.

The kernel track judges one solution file against one problem file. The
repository track (kbench.repo) judges a whole directory of code instead: a
repository at a pinned revision and the same repository with a patch applied.
Its problem file (the task's workload) imports the repository's package, and
the judge loads that file on both sides: the reference worker with the base
checkout first on its import path, the candidate worker (sandboxed, as every
candidate) with the patched checkout first on its own. There the problem's
``Model`` is the candidate (no ``ModelNew`` is imported), so seeds, interleaved
timing, checks on fresh seeds, the trusted clock and every integrity rule are
the kernel track's own.

What changes with ``Sides`` (kbench.judge.evaluation, kbench.judge.worker.session):

- the candidate's checkout is copied into its scratch folder (the only place
  its sandbox shows it besides the system and kbench's source), so the base
  checkout is never within its reach;
- the runtime guard's snapshot is taken before the candidate's code is first
  imported (the problem file imports it), and a failure to import it is the
  candidate's ``compile_error``, not the problem's;
- the static rules read no solution file (the problem file is the task's; the
  repository track reads the files a patch changed itself), and the style
  rules (kbench.judge.guard.STYLE) do not apply: a patch may use PyTorch, it is
  judged on tests and outputs;
- the candidate's build cache and workers are keyed by ``candidate_key`` (the
  patch's hash) rather than by the problem file's, which every patch shares.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from kbench.judge.processes.sandbox import give_to_candidate

CHECKOUT_NAME = "checkout"  # the candidate's copy, in its scratch folder


@dataclass(frozen=True)
class Sides:
    """The reference's and the candidate's code, each first on its own worker's import path;
    ``columns``: more timed columns, each the problem's ``Model`` with other trusted code first on
    a reference worker's import path (the task's expert patch applied: kbench.repo.patch_judge),
    timed interleaved with the candidate as every baseline column is. ``decide_at``: a column's
    speedup a score turns on (the expert's, at the share that solves a task): with ``max_rounds``
    the rounds go on until each is on one side of it (kbench.judge.protocol.repeatability.columns_settled)."""

    reference: Path
    candidate: Path
    candidate_key: str
    columns: dict[str, Path] = field(default_factory=dict)
    decide_at: dict[str, float] = field(default_factory=dict)


def candidate_checkout(sides: Sides | None, scratch: Path) -> dict[str, str]:
    """What the candidate's ``load`` command adds: its checkout, copied into its scratch folder
    (which its sandbox shows it), first on its import path. Nothing without sides."""
    if sides is None:
        return {}
    copy = scratch / CHECKOUT_NAME
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(sides.candidate, copy, symlinks=True)
    give_to_candidate(copy)  # as root: readable by the candidate's uid whatever the modes copied
    return {"import_path": str(copy)}
