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
*different* suspicion, a third evaluation decides: the rule it raises again
(either) is the verdict, naming both; a verdict of its own stands as above;
a third different suspicion (a candidate that still alternates) is rejected,
naming all three. Never "no verdict": that was a verdict a candidate could
ask for, and a run retried it as ``infra_error`` on every resume (issue 57).

Every evaluation after the first runs in fresh workers, a fresh scratch folder
and a fresh build cache of its own (``kbench.judge.builds.cache.fresh_builds``:
empty, its builds made anew and never kept), so that no two of them share
writable state: a candidate that tells its evaluations apart by what an
earlier one left in its build cache sees the same, empty, cache in the second
and the third.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from kbench.core.verdict import Verdict
from kbench.judge.processes.background import BACKGROUND
from kbench.judge.builds.cache import fresh_builds
from kbench.judge.processes.spares import Spares

NOISY_RULES = frozenset({"trusted-clock", "timer-mismatch", "gpu-busy", "reference-interference"})


class Unconfirmed(RuntimeError):
    """No verdict the judge can stand behind. ``confirmed`` no longer raises it (a third
    evaluation decides); kept because the commands and runs that judge still name it."""


def suspected_rule(verdict: Verdict) -> str | None:
    """The noisy rule that rejected ``verdict``, if one did."""
    if verdict.status != "rejected":
        return None
    rule = verdict.reason.split(":", 1)[0]
    return rule if rule in NOISY_RULES else None


def confirmed(judged: Callable[[Spares | None], Verdict], spares: Spares | None,
              progress: Callable[[str], None] | None = None) -> Verdict:
    """The verdict of ``judged`` (an evaluation with workers from ``spares``) or, when
    it is a suspicion, of judging again with fresh workers and a fresh build cache, the
    judge's background (builds ahead, spares: kbench.judge.processes.background) stopped throughout;
    a third time when the second raised another suspicion."""
    first = judged(spares)
    rule = suspected_rule(first)
    if rule is None:
        return first
    second = _again(judged, progress, f"measuring again: {rule} must repeat before it is a verdict")
    again_rule = suspected_rule(second)
    if again_rule == rule:
        return _combined(second, [first], f"{second.reason} (seen again in a second evaluation with fresh workers; "
                                          f"the first: {first.reason})")
    if again_rule is None:
        return _combined(second, [first])
    third = _again(judged, progress, f"measuring a third time: {rule}, then {again_rule}; a third evaluation decides")
    last_rule = suspected_rule(third)
    if last_rule is None:
        return _combined(third, [first, second])
    if last_rule in (rule, again_rule):
        other = second if last_rule == rule else first
        seen = first if last_rule == rule else second
        return _combined(third, [first, second],
                         f"{third.reason} (seen in two of three evaluations, each with fresh workers: also "
                         f"{seen.reason}; the other raised {other.reason})")
    return _combined(third, [first, second],
                     f"{third.reason} (three evaluations, three different suspicions: a candidate whose evaluations "
                     f"differ so is rejected; the first: {first.reason}; the second: {second.reason})")


def _again(judged: Callable[[Spares | None], Verdict], progress: Callable[[str], None] | None, step: str) -> Verdict:
    """One more evaluation: fresh workers (no spares), a fresh build cache, a quiet machine."""
    if progress is not None:
        progress(step)
    with BACKGROUND.quiet(), fresh_builds():
        return judged(None)


def _combined(final: Verdict, earlier: list[Verdict], reason: str | None = None) -> Verdict:
    """``final`` with the earlier evaluations' suspicions kept and their time added."""
    seen = [s for v in earlier for s in (*v.suspicions, v.reason)]  # each earlier one was a suspicion
    return replace(final, reason=final.reason if reason is None else reason, suspicions=[*seen, *final.suspicions],
                   wall_seconds=sum(v.wall_seconds for v in (*earlier, final)))
