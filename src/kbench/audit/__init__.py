"""The audit: is a problem sound enough to judge kernels with?

A problem is unsound when a wrong kernel can pass it (an all-zero or constant
answer, or one that ignores an input or the weights), when its reference
cannot agree with itself (a forward that is not deterministic), when its
tolerance does not fit its dtype, or when it cannot be timed or held on the
device. ``driver`` runs each problem in the judge's reference workers, which
measure (kbench.judge.trusted.problem_checks); ``rules`` decides the flags.
docs/audit.md states every rule and threshold.

Sits above the judge (it drives the judge's workers), beside runs. May import:
``kbench.judge``, ``kbench.suite``, ``kbench.core``.
"""

from kbench.audit.driver import DEFAULT_TIMEOUT, audit_problem, audit_problems, broken_record
from kbench.audit.rules import FLAGS, flags_from_facts

__all__ = ["DEFAULT_TIMEOUT", "FLAGS", "audit_problem", "audit_problems", "broken_record", "flags_from_facts"]
