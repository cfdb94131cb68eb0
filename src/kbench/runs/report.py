"""The HTML report of one or more runs: one self-contained file that opens offline.

Plots are plotly figures, with the plotly.js bundle inlined once in the page (no
CDN: a report is archived and mailed, and must open years later without a
network); the page is a jinja2 template (``report.html.j2``) with a few lines of
plain JavaScript to sort the per-problem tables. plotly is an optional
dependency (``pip install -e '.[report]'``) imported only when a report is
rendered, so the judge and the GPU machines never need it.

Each sample's row opens its drill-down (``kbench.runs.drilldown``, rendered from
``drilldown.html.j2``) in a dialog. The drill-downs hold every source, prompt and
reply of the run, so they travel gzip-compressed (one base64 block per run, read
by the browser's DecompressionStream on the first click): a model run's prompts
repeat the same template, and compress many times over.

The figures are the ones ``kbench score`` and ``kbench compare`` print
(``kbench.runs.score``), and the rows are ``kbench show``'s (``kbench.runs.views``).
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import sys
from dataclasses import dataclass
from importlib import resources
from typing import Any

import kbench
from kbench.runs import log_axis, report_repo
from kbench.runs.comparison import Mismatch, RunComparison, compare, mismatches
from kbench.runs.drilldown import anchor, drilldowns
from kbench.runs.manifest import Manifest, now
from kbench.runs.records import RETRIED_STATUSES, RunData, finite
from kbench.runs.repo_score import RepoScore, repo_run_score
from kbench.runs.score import (
    ALL,
    CONFIDENCE,
    CPU_MARK,
    CPU_NOTE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    P_VALUES,
    Estimate,
    Score,
    columns_of,
    outcomes,
    score,
)
from kbench.runs.views import (
    RunSummary,
    SampleRow,
    estimate_text,
    sample_rows,
    speedup_text,
    summarize,
)

TEMPLATE = "report.html.j2"
DRILLDOWN_TEMPLATE = "drilldown.html.j2"
FIGURE_HEIGHT = 420


class MissingDependency(Exception):
    """plotly or jinja2 is not installed where the report is rendered."""


@dataclass(frozen=True)
class RunSection:
    """What the page says about one run."""

    number: int  # its place in the report, from 1
    summary: RunSummary
    score: Score
    rows: list[SampleRow]
    manifest: list[tuple[str, str]]  # the manifest's main fields, labelled
    manifest_json: str  # the whole first session's manifest
    notes: list[str]  # what a reader must know before trusting the figures
    drilldowns: str  # each row's drill-down, in row order, as packed_fragments makes them
    first_row: dict[str, int]  # each problem's first row in ``rows``, for links to its drill-down
    reason_cut: list[bool]  # per row: the table's one-line reason is not the whole reason


@dataclass(frozen=True)
class ComparisonSection:
    run_a: str
    run_b: str
    comparison: RunComparison  # its ``flipped``: the shared problems whose status differs
    mismatches: list[Mismatch]  # settings that differ: the difference is not only the solutions


def render(runs: list[RunData], *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> str:
    """The whole HTML page for ``runs``; with several, each later run is compared with the first."""
    go, plotly_js, jinja2 = _dependencies()
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                                     lstrip_blocks=True)
    environment.filters.update(estimate=estimate_text, speedup=speedup_text, sort_key=sort_key, num=number_text)
    drilldown = environment.from_string(resources.files("kbench.runs").joinpath(DRILLDOWN_TEMPLATE).read_text())
    kernel_runs = [data for data in runs if data.run.config.track == "kernel"]  # the tracks apart, never compared
    repo_runs = [data for data in runs if data.run.config.track != "kernel"]
    sections = [_section(data, number, resamples, seed, drilldown) for number, data in enumerate(kernel_runs, 1)]
    comparisons = [_comparison(kernel_runs[0], data, resamples, seed) for data in kernel_runs[1:]]
    figures = {
        "fast_p": _html(_fast_p_figure(go, sections)) if sections else "",
        "speedups": _html(_speedup_figure(go, sections)) if sections else "",
        "comparisons": [_html(_comparison_figure(go, c)) for c in comparisons],
    }
    template = environment.from_string(resources.files("kbench.runs").joinpath(TEMPLATE).read_text())
    scores = [repo_run_score(data, resamples=resamples, seed=seed) for data in repo_runs]
    repo_section = report_repo.render(
        environment,
        [report_repo.section(data, scored, manifest_fields(data.sessions[0].manifest), _manifest_json(data),
                             _notes(data, scored)) for data, scored in zip(repo_runs, scores)],
        [report_repo.comparison(repo_runs[0], data, resamples, seed) for data in repo_runs[1:]],
    )
    return template.render(
        title="kbench report: " + ", ".join(data.run.name for data in runs),
        generated_at=now(),
        kbench_version=kbench.__version__,
        plotly_js=jinja2.utils.markupsafe.Markup(plotly_js),
        sections=sections,
        comparisons=comparisons,
        figures={key: _markup(jinja2, value) for key, value in figures.items()},
        p_values=P_VALUES,
        all_key=ALL,
        statuses_retried=sorted(RETRIED_STATUSES),
        anchor=anchor,
        repo_section=jinja2.utils.markupsafe.Markup(repo_section),
        bootstrap={"confidence": CONFIDENCE, "resamples": resamples, "seed": seed},
        cpu_mark=f" ({CPU_MARK})",
    )


def _dependencies() -> tuple[Any, str, Any]:
    """plotly's graph objects, the plotly.js bundle and jinja2, or a one-line way to get them."""
    try:
        import jinja2
        import plotly.graph_objects as go
        from plotly.offline import get_plotlyjs
    except ImportError as exc:
        raise MissingDependency(
            f"the HTML report needs plotly and jinja2 ({exc.name or exc} is missing): pip install -e '.[report]' "
            f"(for this environment: {sys.executable} -m pip install -e '.[report]')"
        ) from exc
    return go, get_plotlyjs(), jinja2


def _markup(jinja2: Any, value: str | list[str]) -> Any:
    if isinstance(value, list):
        return [jinja2.utils.markupsafe.Markup(v) for v in value]
    return jinja2.utils.markupsafe.Markup(value)


def _html(figure: Any) -> str:
    """A figure's div and script, without plotly.js (the page carries it once)."""
    figure.update_layout(height=FIGURE_HEIGHT, template="plotly_white", margin=dict(l=60, r=20, t=50, b=50))
    return figure.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False, "responsive": True})


def _section(data: RunData, number: int, resamples: int, seed: int, drilldown: Any) -> RunSection:
    result = score(outcomes(data), columns_of(data), resamples=resamples, seed=seed, device=data.run.config.device)
    manifest = data.sessions[0].manifest
    rows = sample_rows(data)
    first_row: dict[str, int] = {}
    for index, row in enumerate(rows):
        first_row.setdefault(row.problem_id, index)
    details = drilldowns(data, number, columns_of(data))
    fragments = [drilldown.render(d=d) for d in details]
    return RunSection(
        number=number,
        summary=summarize(data),
        score=result,
        rows=rows,
        manifest=manifest_fields(manifest),
        manifest_json=_manifest_json(data),
        notes=_notes(data, result),
        drilldowns=packed_fragments(fragments),
        first_row=first_row,
        reason_cut=[d.detail.evaluation is not None and d.detail.evaluation.reason.strip() != d.detail.row.reason
                    for d in details],
    )


def packed_fragments(fragments: list[str]) -> str:
    """The fragments as the page carries them: a JSON array, gzip-compressed (no timestamp, so the same
    run gives the same page), in base64; ``unpacked_fragments`` and the page's script read it back."""
    return base64.b64encode(gzip.compress(json.dumps(fragments).encode(), mtime=0)).decode("ascii")


def unpacked_fragments(packed: str) -> list[str]:
    return json.loads(gzip.decompress(base64.b64decode(packed)))


def _manifest_json(data: RunData) -> str:
    return json.dumps(finite(data.sessions[0].manifest.to_dict()), indent=2, default=str)


def manifest_fields(manifest: Manifest) -> list[tuple[str, str]]:
    """The fields a reader checks first: what ran, on what, with which software and settings."""
    config = manifest.config
    revision = (manifest.git_revision or "unknown")[:12] + (" (dirty)" if manifest.git_dirty else "")
    gpu = " ".join(filter(None, [manifest.gpu_name, f"driver {manifest.gpu_driver}" if manifest.gpu_driver else ""]))
    fields = [
        ("kbench", f"{manifest.kbench_version} at {revision}"),
        ("command", " ".join(manifest.command)),
        ("captured", manifest.captured_at),
        ("solutions", config.solutions if config.source == "replay" else f"{config.solutions} ({config.source})"),
        ("selection", ", ".join(config.selection)),
        ("device", config.device),
        ("GPU", gpu or "-"),
        ("CPU", manifest.cpu or "-"),
        ("host", manifest.hostname or "-"),
        ("size, dtype", f"{config.size}, {config.dtype}"),
        ("trials, timeout", f"{config.trials}, {config.timeout:g} s"),
        ("policy", config.policy),
        ("baseline columns", ", ".join(config.baselines)),
        ("timing", ("CUDA-graph replays" if config.cuda_graph else "calls") + f", {config.pairs_text()} a verdict"),
        ("samples, turns", f"{config.samples}, {config.turns}"),
        ("sandbox", str(manifest.sandbox.get("kind", "-")) if config.sandbox else "none (--no-sandbox)"),
        ("software", ", ".join(f"{name} {value}" for name, value in (
            ("Python", manifest.python), ("torch", manifest.torch), ("Triton", manifest.triton),
            ("CUDA", manifest.cuda), ("cuDNN", manifest.cudnn)) if value)),
        ("platform", manifest.platform or "-"),
        ("suite sha256", config.suite_sha256),
        ("solutions sha256", config.solutions_sha256),
    ]
    return [(label, value) for label, value in fields if value]


def _notes(data: RunData, result: Score | RepoScore) -> list[str]:
    """What a reader must know before trusting a run's figures (its coverage and statuses, of either track)."""
    coverage = result.overall.coverage
    notes = []
    if not data.run.config.sandbox:
        notes.append("not sandboxed (--no-sandbox): candidates ran with the judge's privileges; these scores are not "
                     "proof against candidates that reach outside their process")
    if data.run.config.device == "cpu":
        notes.append(CPU_NOTE)
    unfinished = coverage.problems - coverage.evaluated
    if unfinished:
        notes.append(f"incomplete: {unfinished} problem{'s' * (unfinished > 1)} not fully evaluated count as failures")
    retried = sum(n for status, n in result.overall.statuses.items() if status in RETRIED_STATUSES)
    if retried:
        notes.append(f"{retried} evaluations failed outside the candidate ({', '.join(sorted(RETRIED_STATUSES))}) "
                     "and count as failures until the run is resumed")
    first = data.sessions[0].manifest
    for session in data.sessions[1:]:
        changes = session.manifest.changes_from(first)
        if changes:
            described = "; ".join(f"{k}: {old} -> {new}" for k, (old, new) in changes.items())
            notes.append(f"session {session.number} ran in a different environment: {described}")
    return notes


def _comparison(data_a: RunData, data_b: RunData, resamples: int, seed: int) -> ComparisonSection:
    columns = tuple(c for c in columns_of(data_a) if c in columns_of(data_b))
    result = compare(outcomes(data_a), outcomes(data_b), columns, resamples=resamples, seed=seed,
                     devices=(data_a.run.config.device, data_b.run.config.device))
    return ComparisonSection(data_a.run.name, data_b.run.name, result, mismatches(data_a, data_b))


def _label(section: RunSection, column: str, several_runs: bool) -> str:
    return f"{section.summary.name}: {column}" if several_runs else column


def _error_bars(estimates: list[Estimate]) -> dict[str, Any]:
    """Asymmetric error bars from the bootstrap intervals."""
    return dict(type="data", symmetric=False,
                array=[(e.high - e.value) if e.high is not None and e.value is not None else 0 for e in estimates],
                arrayminus=[(e.value - e.low) if e.low is not None and e.value is not None else 0 for e in estimates])


def _cpu_mark(sections: list[RunSection]) -> str:
    """A figure's mark when a run in it was timed on a CPU: its speedups mean nothing."""
    return f" ({CPU_MARK})" if any(section.score.cpu_note for section in sections) else ""


def _fast_p_figure(go: Any, sections: list[RunSection]) -> Any:
    figure = go.Figure()
    several = len(sections) > 1
    for section in sections:
        for column in section.score.columns:
            estimates = [section.score.overall.fast_p[column][p] for p in P_VALUES]
            figure.add_trace(go.Scatter(x=list(P_VALUES), y=[e.value for e in estimates], mode="lines+markers",
                                        name=_label(section, column, several), error_y=_error_bars(estimates)))
    confidence = sections[0].score.confidence
    figure.update_layout(title=f"fast_p against p, all problems ({confidence:.0%} bootstrap intervals)"
                         + _cpu_mark(sections),
                         xaxis_title="p: the speedup over the baseline column a correct solution must exceed",
                         yaxis_title="fast_p", yaxis_range=[-0.02, 1.02])
    return figure


def _speedup_figure(go: Any, sections: list[RunSection]) -> Any:
    figure = go.Figure()
    several = len(sections) > 1
    for section in sections:
        for column in section.score.columns:
            correct = [r for r in section.rows if r.status == "correct" and r.speedup.get(column)]
            figure.add_trace(go.Box(
                y=[r.speedup[column] for r in correct], text=[r.problem_id for r in correct],
                name=_label(section, column, several), boxpoints="all", jitter=0.4, pointpos=0,
                hovertemplate="%{text}: %{y:.3g}x<extra></extra>",
            ))
    figure.add_hline(y=1.0, line_dash="dot", line_color="grey")
    ticks, labels = log_axis.axis([y for trace in figure.data for y in trace.y or ()], include=(1.0,))
    figure.update_layout(title="speedups of correct samples (log scale; 1 = as fast as the baseline)"
                         + _cpu_mark(sections),
                         yaxis_type="log", yaxis_title="speedup (baseline time / candidate time)", showlegend=False)
    figure.update_yaxes(tickvals=ticks, ticktext=labels, range=[math.log10(ticks[0]), math.log10(ticks[-1])])
    if not any(trace.y for trace in figure.data):
        figure.add_annotation(text="no correct sample: no speedup to show", showarrow=False,
                              xref="paper", yref="paper", x=0.5, y=0.5)
    return figure


def _comparison_figure(go: Any, section: ComparisonSection) -> Any:
    figure = go.Figure()
    result = section.comparison
    if ALL in result.groups:
        group = result.groups[ALL]
        labels = ["correct"] + [f"fast_{p:g}" for p in P_VALUES]
        for column in result.columns:
            differences = [group.correct_rate] + [group.fast_p[column][p] for p in P_VALUES]
            estimates = [d.difference for d in differences]
            figure.add_trace(go.Scatter(x=labels, y=[e.value for e in estimates], mode="markers", name=column,
                                        error_y=_error_bars(estimates), marker_size=10))
    figure.add_hline(y=0.0, line_color="grey")
    figure.update_layout(title=f"{section.run_b} - {section.run_a}, paired over shared problems "
                         f"({result.confidence:.0%} bootstrap intervals)"
                         + (f" ({CPU_MARK})" if result.cpu_note else ""),
                         yaxis_title="difference B - A")
    return figure


def number_text(value: Any) -> str:
    """A measured number to 4 significant digits; ``-`` for none (or one that is no number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "-"
    return f"{value:.4g}"


def sort_key(value: float | None) -> str:
    """What a table cell sorts by: the number, or empty (sorted last) when there is none."""
    return "" if value is None or not math.isfinite(value) else repr(float(value))
