"""Suspicion and confirmation: a rejection that noise could have made is measured again.

Some rules read a time or a failure beside the candidate (``NOISY_RULES``):
the judge's clock seeing more than eager's spans allow, the host clock
passing the events, the GPU busy before a baseline, the reference failing
beside the candidate. A loaded machine (builds, other users, a burst of
scheduling) can cross those bounds for an honest kernel, and a false
rejection costs as much as a false acceptance (an RL reward that calls a
slow, correct kernel a cheat teaches the wrong lesson). A cheat is
deterministic, noise is not: the first observation is a *suspicion*, and the
judge evaluates the solution again, with fresh workers and the machine as
quiet as it controls it (the workers it keeps ahead and the builds beside
them stopped throughout). Only when the same rule fires again is the
solution rejected; the verdict keeps both observations.

When the second evaluation reaches a verdict of its own (correct, incorrect,
any rejection that is not a suspicion), that verdict stands, with the first
observation kept in ``suspicions``: a candidate that cheats only now and
then gains nothing, since the verdict that counts is the one in which it was
not seen to cheat, measured in full. When the second evaluation raises a
*different* suspicion, neither is evidence: ``Unconfirmed`` is raised, which
a run records as an ``infra_error`` and retries on resume.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from kbench.core.verdict import Verdict
from kbench.judge.background import BACKGROUND
from kbench.judge.spares import Spares

NOISY_RULES = frozenset({"trusted-clock", "timer-mismatch", "gpu-busy", "reference-interference"})


class Unconfirmed(RuntimeError):
    """Two evaluations of one solution raised different suspicions: no verdict the judge can stand behind."""


def suspected_rule(verdict: Verdict) -> str | None:
    """The noisy rule that rejected ``verdict``, if one did."""
    if verdict.status != "rejected":
        return None
    rule = verdict.reason.split(":", 1)[0]
    return rule if rule in NOISY_RULES else None


def confirmed(judged: Callable[[Spares | None], Verdict], spares: Spares | None,
              progress: Callable[[str], None] | None = None) -> Verdict:
    """The verdict of ``judged`` (an evaluation with workers from ``spares``) or, when
    it is a suspicion, of judging again with fresh workers, the judge's background (builds
    ahead, spares: kbench.judge.background) stopped throughout."""
    first = judged(spares)
    rule = suspected_rule(first)
    if rule is None:
        return first
    if progress is not None:
        progress(f"measuring again: {rule} must repeat before it is a verdict")
    with BACKGROUND.quiet():
        second = judged(None)
    seen = [*first.suspicions, first.reason, *second.suspicions]
    wall = first.wall_seconds + second.wall_seconds
    again_rule = suspected_rule(second)
    if again_rule == rule:
        return replace(second, reason=f"{second.reason} (seen again in a second evaluation with fresh workers; "
                                      f"the first: {first.reason})", suspicions=seen, wall_seconds=wall)
    if again_rule is not None:
        raise Unconfirmed(
            f"two evaluations raised different suspicions, which only noise explains "
            f"(first {first.reason}; then {second.reason}); judge it again on a quieter machine")
    return replace(second, suspicions=seen, wall_seconds=wall)
