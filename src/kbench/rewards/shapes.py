"""Reward shapes: how a verdict becomes a number a trainer optimises, chosen by name.

A shape only reads a verdict the judge has already given; it never judges. Every shape
gives 0 to a candidate that is not correct (whatever its speed), so a faster wrong or
cheating kernel earns exactly what a compile error earns, and the reward's ``reason``
tells them apart. Speed is read on the lower bound of the speedup's 95% interval (where a
re-evaluation's speedup lies, kbench.judge.protocol.pairs / docs/timing.md), not its median: a policy
then gains only from a speedup that noise does not explain, and a lucky timing of a slow
kernel is not rewarded. Definitions, for the docs and the tests: docs/rewards.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

FAST_PATTERN = re.compile(r"fast_(\d+(?:\.\d+)?)")
# The p values the scoreboard reports fast_p at (BRIEF.md), named here so `kbench serve` and docs list them.
FAST_P_VALUES = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)


@dataclass(frozen=True)
class Shape:
    """One reward shape. ``threshold``: None for ``correct`` and ``speedup``; for ``fast_p``, p."""

    name: str
    description: str
    uses_speed: bool
    threshold: float | None = None

    def value(self, correct: bool, speed: float | None) -> float:
        """The reward for a verdict that is ``correct`` (or not) with the speedup ``speed`` (its
        interval's lower bound; None where the shape does not need one)."""
        if not correct:
            return 0.0
        if not self.uses_speed:
            return 1.0
        assert speed is not None, "a speed shape is given a speed"
        if self.threshold is None:
            return float(speed)
        return 1.0 if speed > self.threshold else 0.0


CORRECT = Shape("correct", "1 when the verdict is correct, else 0", uses_speed=False)
SPEEDUP = Shape(
    "speedup",
    "the speedup over the named baseline at its 95% interval's lower bound when correct, else 0",
    uses_speed=True,
)


def fast(p: float) -> Shape:
    """The fast_p shape: 1 when correct and the speedup's lower bound is above ``p``, else 0."""
    if not math.isfinite(p) or p < 0:
        raise ValueError(f"fast_p needs a finite p >= 0, not {p}")
    return Shape(f"fast_{p:g}" if p != int(p) else f"fast_{p:.1f}",
                 f"1 when correct and the speedup's 95% lower bound over the baseline is above {p:g}, else 0",
                 uses_speed=True, threshold=p)


SHAPES: dict[str, Shape] = {s.name: s for s in (CORRECT, SPEEDUP, *(fast(p) for p in FAST_P_VALUES))}


def shape_named(name: str) -> Shape:
    """The shape called ``name``: one of ``SHAPES``, or ``fast_P`` for any p >= 0 (``fast_1`` is
    ``fast_1.0``). ValueError naming the choices for anything else."""
    if not isinstance(name, str):
        raise ValueError(f"reward shape must be a name, not {type(name).__name__}")
    if name in SHAPES:
        return SHAPES[name]
    if match := FAST_PATTERN.fullmatch(name):
        return fast(float(match.group(1)))
    raise ValueError(f"unknown reward shape {name!r}: choose from {', '.join(SHAPES)} (or fast_P for any p >= 0)")
