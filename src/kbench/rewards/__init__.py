"""Rewards: verdicts turned into numbers a trainer optimises, by a shape chosen by name.

``reward_of(verdict, shape="speedup", baseline="eager")`` gives a ``Reward``: its value (None when the
evaluation failed for reasons not the candidate's: never a reward), the shape and baseline it was
taken with, the verdict's status, the reason for any zero, the speedup's interval and the provenance
(kbench version, judge settings, device, seeds, sandbox). Shapes (``SHAPES``, docs/rewards.md):
``correct``, ``speedup`` (at the interval's lower bound) and ``fast_P`` thresholds.

May import: ``kbench.core`` ... ``kbench.runs`` (the statuses a run records); never the agents,
the service, the adapters or the CLI.
"""

from kbench.rewards.reward import DEFAULT_BASELINE, INFRA_STATUSES, Reward, failure_reward, reward_of
from kbench.rewards.shapes import FAST_P_VALUES, SHAPES, Shape, shape_named

__all__ = [
    "DEFAULT_BASELINE",
    "FAST_P_VALUES",
    "INFRA_STATUSES",
    "Reward",
    "SHAPES",
    "Shape",
    "failure_reward",
    "reward_of",
    "shape_named",
]
