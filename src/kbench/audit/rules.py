"""The audit's rules: which flags the facts a worker measured raise, and why.

docs/audit.md states every rule and threshold.
"""

from __future__ import annotations

import math
from typing import Any

from kbench.judge.trusted.problem_checks import LOOSE_FACTOR

EAGER_MS_RANGE = (1.0, 20.0)  # target eager time of one call on the GPU
# The most of its tolerance the reference may use against float64: a solution that sums in
# another order errs about as much, possibly the other way, so the two may differ by twice it.
TIGHT_SHARE = 0.5

FLAGS = (
    "broken",
    "zeros_pass",
    "near_constant",
    "input_insensitive",
    "weight_insensitive",
    "nondeterministic",
    "random_in_forward",
    "tolerance_too_tight",
    "tolerance_too_loose",
    "runtime_out_of_range",
    "memory_over_device",
)


def flags_from_facts(facts: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The rules (docs/audit.md): which flags the measured facts raise, and why."""
    reasons: dict[str, str] = {}
    zeros, constant = facts.get("zeros", []), facts.get("constant", [])
    if zeros and all(c["ok"] for c in zeros):
        reasons["zeros_pass"] = f"an all-zero output passes against the reference for all {len(zeros)} input seeds"
    if constant and all(c["ok"] for c in constant):
        reasons["near_constant"] = (
            f"the output for one input seed passes as the answer for the {len(constant)} other seed(s)"
        )
    ignored = [c["argument"] for c in facts.get("inputs", []) if c.get("comparison", {}).get("ok")]
    if ignored:
        reasons["input_insensitive"] = (
            f"with forward argument(s) {ignored} taken from another input seed "
            "(the others kept), the output still passes against the original"
        )
    weights = facts.get("weights")
    if weights and weights["comparison"]["ok"]:
        why = "" if weights["changed"] else " (another init seed gives the very same weights)"
        reasons["weight_insensitive"] = f"the model built under another init seed passes{why}"
    determinism = facts.get("determinism")
    if determinism and not determinism["bitwise_equal"]:
        comparison = determinism["comparison"]
        # Absent in records from before the share was measured: then any difference counts.
        share = determinism.get("tolerance_fraction", math.inf)
        if not comparison["ok"]:
            reasons["nondeterministic"] = f"two calls on the same inputs differ beyond the tolerance ({comparison['detail']})"
        elif share > 1 / LOOSE_FACTOR:
            reasons["nondeterministic"] = (
                f"two calls on the same inputs differ by up to {share:.3g} of the tolerance "
                f"(more than 1/{LOOSE_FACTOR:g} of it: not only the order of a sum)"
            )
    if facts.get("random_in_forward"):
        reasons["random_in_forward"] = (
            "forward draws random numbers (a call moved the global random generator): its outputs depend on "
            "the random stream, so a correct kernel that draws differently, or not at all, fails"
        )
    float64 = facts.get("float64")
    if float64 and determinism and not determinism["comparison"]["ok"]:
        float64 = None  # a reference that disagrees with itself says nothing about its dtype
    if float64:
        fraction = float64["tolerance_fraction"]
        if not float64["comparison"]["ok"]:
            reasons["tolerance_too_tight"] = (
                "the reference in its own dtype fails its tolerance against float64: "
                + float64["comparison"]["detail"]
            )
        elif fraction > TIGHT_SHARE:
            reasons["tolerance_too_tight"] = (
                f"the reference in its own dtype uses {fraction:.3g} of its tolerance against float64 (more "
                f"than {TIGHT_SHARE:g}): an honest solution summing in another order errs as much the other way "
                "and fails"
            )
        elif fraction < 1 / LOOSE_FACTOR and ({"zeros_pass", "near_constant"} & reasons.keys()):
            reasons["tolerance_too_loose"] = (
                f"the reference uses {fraction:.3g} of the tolerance (its error is under "
                f"1/{LOOSE_FACTOR:g} of it) and an all-zero or constant answer passes"
            )
    timing = facts.get("timing")
    if timing:
        low, high = EAGER_MS_RANGE
        if not low <= timing["median_ms"] <= high:
            reasons["runtime_out_of_range"] = (
                f"eager median {timing['median_ms']:.4g} ms is outside {low:g}-{high:g} ms"
            )
    memory = facts.get("memory", {})
    if memory.get("total_bytes") and memory["total_bytes"] > memory["device_bytes"]:
        reasons["memory_over_device"] = (
            f"inputs + outputs + parameters need {memory['total_bytes'] / 2**30:.2f} GiB, "
            f"the device has {memory['device_bytes'] / 2**30:.2f} GiB"
        )
    return [f for f in FLAGS if f in reasons], reasons
