"""The records a run is made of: runs, sessions, problems, samples, evaluations and turns.

What the store reads back and what scores, exports and reports take: frozen
dataclasses, with the statuses a run records beyond the judge's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kbench.core.verdict import STATUSES, Verdict, encodable, replace_non_finite
from kbench.runs.manifest import Manifest, RunConfig

# Statuses a run records beyond the judge's own.
RUN_STATUSES = {
    **STATUSES,
    "missing": "the source had no solution for this problem",
    "problem_error": "the problem's own reference failed (not the candidate's fault)",
    "infra_error": "the evaluation could not be carried out (a fault of the machine or the harness)",
    "no_code": "the model's reply held no usable solution (no code block, or none defining ModelNew)",
    "generation_error": "the request to the model failed (timeouts, rate limits or server errors past the retries)",
}
# Not a verdict on the candidate: evaluated (or asked) again when the run resumes.
RETRIED_STATUSES = frozenset({"problem_error", "infra_error", "generation_error"})


@dataclass(frozen=True)
class RunRecord:
    name: str
    created_at: str
    config: RunConfig


@dataclass(frozen=True)
class SessionRecord:
    """One start or resumption of a run, with the manifest captured then."""

    number: int
    started_at: str
    manifest: Manifest


@dataclass(frozen=True)
class ProblemRecord:
    problem_id: str
    position: int
    level: int | None
    name: str
    path: str
    sha256: str
    source: str


@dataclass(frozen=True)
class SampleRecord:
    """One solution for a problem: its source as evaluated and the file it came from."""

    problem_id: str
    index: int
    name: str
    origin: str
    sha256: str
    source: str


@dataclass(frozen=True)
class EvaluationRecord:
    """The outcome for one sample (or for a problem without any: status ``missing``)."""

    problem_id: str
    sample_index: int
    status: str
    correct: bool
    reason: str
    runtime_ms: float | None = None
    baselines: dict[str, float | None] = field(default_factory=dict)
    speedup: dict[str, float | None] = field(default_factory=dict)
    verdict: dict[str, Any] | None = None
    session: int = 1
    started_at: str = ""
    finished_at: str = ""
    turn: int | None = None  # for a generated sample: the turn its outcome is (None for replayed files)

    def __post_init__(self) -> None:
        if self.status not in RUN_STATUSES:
            raise ValueError(f"unknown status {self.status!r}")
        _make_encodable(self)

    @classmethod
    def from_verdict(
        cls,
        verdict: Verdict,
        problem_id: str,
        sample_index: int,
        *,
        session: int = 1,
        started_at: str = "",
        finished_at: str = "",
        turn: int | None = None,
    ) -> "EvaluationRecord":
        return cls(
            problem_id=problem_id,
            sample_index=sample_index,
            status=verdict.status,
            correct=verdict.correct,
            reason=verdict.reason,
            runtime_ms=verdict.runtime_ms,
            baselines={column: b.get("runtime_ms") for column, b in verdict.baselines.items()},
            speedup=dict(verdict.speedup),
            verdict=verdict.to_dict(),
            session=session,
            started_at=started_at,
            finished_at=finished_at,
            turn=turn,
        )


@dataclass(frozen=True)
class TurnRecord:
    """One turn of a generated sample: what was asked, what came back, and the verdict on it.

    Written when the reply arrives (``status`` None: not judged yet) and again with
    the verdict, so a resumed run judges a stored reply without asking the model
    again. ``status`` is a judge status, ``no_code`` (nothing usable in the reply;
    ``reason`` says why), or one of the ``RETRIED_STATUSES`` (``generation_error``:
    the request failed, ``reply`` is None, and a resumption asks again).
    """

    problem_id: str
    sample_index: int
    turn: int
    session: int
    prompt: str
    prompt_record: dict[str, Any]
    reply: str | None
    extraction: dict[str, Any] | None
    source: str | None
    sha256: str | None
    generation: dict[str, Any]
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    generated_at: str = ""
    status: str | None = None
    correct: bool = False
    reason: str = ""
    runtime_ms: float | None = None
    speedup: dict[str, float | None] = field(default_factory=dict)
    verdict: dict[str, Any] | None = None
    evaluated_at: str = ""

    def __post_init__(self) -> None:
        if self.status is not None and self.status not in RUN_STATUSES:
            raise ValueError(f"unknown status {self.status!r}")
        _make_encodable(self)

    @property
    def final(self) -> bool:
        """Judged for good (not waiting for a verdict, and not to be retried)."""
        return self.status is not None and self.status not in RETRIED_STATUSES


@dataclass(frozen=True)
class RunData:
    """Everything the store holds about one run. For a generated run, ``samples`` and
    ``evaluations`` hold each sample's outcome (the turn named by ``EvaluationRecord.turn``)
    and ``turns`` every turn; for replayed files ``turns`` is empty. ``superseded`` holds the
    earlier verdicts of samples judged again (``kbench run --rejudge``)."""

    run: RunRecord
    sessions: list[SessionRecord]
    problems: list[ProblemRecord]
    samples: list[SampleRecord]
    evaluations: list[EvaluationRecord]
    turns: list[TurnRecord] = field(default_factory=list)
    superseded: list[EvaluationRecord] = field(default_factory=list)  # verdicts re-judging replaced


def _make_encodable(record: Any) -> None:
    """A record's texts (a reason from an exception's message, a model's reply) made encodable
    (kbench.core.verdict.encodable), so that printing and storing it never raise."""
    for name, value in vars(record).items():
        if isinstance(value, (str, dict, list)):
            object.__setattr__(record, name, encodable(value))


def finite(obj: Any) -> Any:
    """``obj`` with NaN and infinities replaced by None, for strict JSON readers."""
    return replace_non_finite(obj, lambda _: None)
