"""The judge's static integrity rules, read on the Python files a patch adds or changes.

The same rules a kernel solution's source meets before it runs
(kbench.judge.guard.static: frames and the heap, exits and signals, raw file
descriptors, threads and processes, global settings, patched modules, the
judge's own modules, torch.compile), and no style rule: a patch may compute
with PyTorch, it is judged on its tests and outputs. A repository's own code
may already hold what a rule names (a sampling function that seeds a
generator): a finding counts against a patch only if the patched file has it
more often than the file at the base revision, so a patch is judged on what
it brings, not on the code around it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from kbench.judge.guard import INTEGRITY, Finding
from kbench.judge.guard.static import check_source


def _integrity(source: str) -> list[Finding]:
    return [f for f in check_source(source, kernel_solution=False) if f.rule in INTEGRITY]


def patch_findings(base: Path, patched: Path, touched: list[str]) -> list[Finding]:
    """The integrity findings the patch brings into the Python files it touched, each
    naming its file (``"tinylm/norm.py: ..."``), in path order."""
    findings: list[Finding] = []
    for path in touched:
        after = patched / path
        if not path.endswith(".py") or after.is_symlink() or not after.is_file():
            continue  # deleted, or not Python (links are refused before this is asked)
        before = base / path
        known = Counter((f.rule, f.message) for f in _integrity(_read(before))) if before.is_file() else Counter()
        for finding in _integrity(_read(after)):
            if known[(finding.rule, finding.message)] > 0:
                known[(finding.rule, finding.message)] -= 1
                continue
            findings.append(Finding(finding.rule, f"{path}: {finding.message}", finding.line))
    return findings


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")
