"""Re-judging: the samples of a stored run whose verdict has given statuses, judged again.

A run hit by a judge defect (a false rejection, an infrastructure failure the
judge caused) is repaired under its own name: ``kbench run --run R --rejudge
rejected`` judges the stored source of every sample whose current verdict is
``rejected`` again, in a new session of the run, with the run's own settings.
Each new verdict replaces the old one in one transaction, the old one moving
to the store's history (``Store.supersede``; ``kbench show`` lists it), so an
interrupted re-judging leaves every sample with one verdict and is finished by
running the same command again.

For a run whose solutions a model wrote, what is judged is the sample's stored
solution (the turn its outcome is): the model is never asked again, and the
turns keep the verdicts the model was told when they were judged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from kbench import judge
from kbench.core.verdict import STATUSES
from kbench.runs.manifest import Manifest, RunConfig, sha256_lines
from kbench.runs.records import EvaluationRecord, SampleRecord
from kbench.runs.runner import Evaluate, Listener, Plan, RunError, judge_each, open_run
from kbench.runs.store import Store
from kbench.suite.problem import Problem

# The statuses a judged solution can have: what re-judging can take up. Not ``missing``,
# ``no_code`` or ``generation_error``: there is no solution to judge.
REJUDGEABLE = frozenset(STATUSES) | {"infra_error", "problem_error"}


def parse_statuses(text: str) -> frozenset[str]:
    """``rejected,infra_error`` as a set of statuses; RunError for one re-judging cannot take up."""
    statuses = frozenset(part.strip() for part in text.split(",") if part.strip())
    if not statuses:
        raise RunError("--rejudge needs statuses, e.g. --rejudge rejected or --rejudge rejected,infra_error")
    unknown = sorted(statuses - REJUDGEABLE)
    if unknown:
        raise RunError(f"--rejudge {', '.join(unknown)}: not a status a judged solution has; choose from "
                       f"{', '.join(sorted(REJUDGEABLE))}")
    return statuses


def rejudge_config(stored: RunConfig, problems: Sequence[Problem], **judged) -> RunConfig:
    """The run's config for a re-judging: the stored one with the judge settings given
    (``kbench.cli.run``'s, each as given or else as stored) and the problems' hash as the
    files stand now, so that a run whose settings or problem files changed is refused."""
    return replace(stored, suite_sha256=sha256_lines([f"{p.id}\0{p.sha256}" for p in problems]), **judged)


def chosen(store: Store, name: str, statuses: frozenset[str]) -> list[tuple[EvaluationRecord, SampleRecord]]:
    """The samples of run ``name`` whose current verdict has one of ``statuses``, with the
    solution that verdict judged."""
    samples = {(s.problem_id, s.index): s for s in store.samples(name)}
    found = []
    for evaluation in store.evaluations(name):
        sample = samples.get((evaluation.problem_id, evaluation.sample_index))
        if evaluation.status in statuses and sample is not None and sample.source:
            found.append((evaluation, sample))
    return found


def rejudge(
    store: Store,
    name: str,
    config: RunConfig,
    problems: list[Problem],
    statuses: frozenset[str],
    *,
    evaluate: Evaluate = judge.evaluate,
    listener: Listener | None = None,
    manifest: Manifest | None = None,
    executor: judge.Executor | None = None,
) -> list[EvaluationRecord]:
    """Judge again, in a new session of run ``name``, each sample whose verdict has one of
    ``statuses``; the new records. Raises RunError for a run that does not exist or whose
    settings differ from ``config``."""
    if store.run(name) is None:
        raise RunError(f"no run named {name!r} to re-judge")
    todo = chosen(store, name, statuses)
    by_id = {p.id: p for p in problems}
    missing = sorted({e.problem_id for e, _ in todo} - set(by_id))
    if missing:
        raise RunError(f"run {name!r}: the problems {', '.join(missing)} are no longer in its selection")
    if executor is None and config.device.startswith("cuda"):
        executor = judge.LocalExecutor([config.device])
    session = open_run(store, name, config, Plan(problems, store.samples(name)), manifest,
                       executor.describe() if executor else None)
    earlier = {(e.problem_id, e.sample_index): e for e, _ in todo}
    jobs = [(by_id[e.problem_id], _judged_solution(config, e, s)) for e, s in todo]
    if listener:
        listener.started(len(jobs), [])
    made = []
    for record in judge_each(jobs, evaluate, config, session, listener, executor):
        record = replace(record, turn=earlier[(record.problem_id, record.sample_index)].turn)
        store.supersede(name, record)
        made.append(record)
        if listener:
            listener.finished(record)
    return made


def _judged_solution(config: RunConfig, evaluation: EvaluationRecord, sample: SampleRecord) -> SampleRecord:
    """The stored solution as the judge takes it; a generated one named as the model's run names
    its turns (it has no file of its own)."""
    if config.source == "replay":
        return sample
    turn = evaluation.turn or 1
    return replace(sample, name=f"turn_{turn}.py",
                   origin=f"generated/{sample.problem_id}/sample_{sample.index}/turn_{turn}.py")
