"""How well a speedup repeats: each candidate scored twice by independent evaluations,
with kbench's protocol and with the simpler one most published results use.

kbench: candidate and eager alternate over rounds, fresh inputs each call,
median of calls until 0.5% relative error or the budget (docs/timing.md).
simple: one round, candidate then eager in separate processes, the mean of
100 calls after 3 warm-up calls, L2 flushed (here with fresh inputs too).

Candidates: the bundled example solution where a problem has one, otherwise
the problem's own Model under torch.compile (judged with the guard off, since
the strict policy rejects torch.compile in a solution). Each evaluation is
written to a JSON-lines file as it finishes, so the work can be split over
several invocations (the file is appended to); ``--report`` prints the table.
``--protocols`` picks which to run (default kbench and simple; ``kbench-placed``
is kbench's with a new placement in memory each round):

    PYTHONPATH=src python3 benchmarks/repeatability.py --out rep.jsonl [--problems level1/relu ...]
    PYTHONPATH=src python3 benchmarks/repeatability.py --out rep.jsonl --report
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import kbench
from kbench.judge.protocol.timing import TimingSettings
from kbench.suite import find_problem

EXAMPLES = Path(kbench.__file__).parent / "suite" / "examples"
DEFAULT_PROBLEMS = [
    "level1/relu", "level1/softmax", "level1/swish", "level1/gelu", "level1/layer_norm", "level1/rms_norm",
    "level1/log_softmax", "level1/sum_dim", "level1/matmul_square", "level1/matmul_large_k",
    "level1/matmul_batched", "level1/matvec", "level1/conv2d", "level1/conv2d_depthwise",
    "level1/conv_transpose3d", "level1/maxpool2d", "level1/avgpool3d", "level1/group_norm",
    "level1/cross_entropy", "level1/sdpa",
]
PROTOCOLS = {
    "kbench": TimingSettings(),
    # kbench's protocol with each round's buffers at a new place in memory (docs/timing.md): an experiment
    "kbench-placed": TimingSettings(new_placement_per_round=True),
    "simple": TimingSettings(warmup_calls=3, warmup_seconds=0.0, min_calls=100, max_calls=100,
                             target_rel_error=0.0, budget_seconds=600.0, rounds=1),
}
STATISTIC = {"kbench": "median_ms", "kbench-placed": "median_ms", "simple": "mean_ms"}
COMPILED = '''

class ModelNew(Model):
    """The reference itself under torch.compile: a candidate for timing studies only."""

    def __init__(self, *args):
        super().__init__(*args)
        self._compiled = torch.compile(super().forward)

    def forward(self, *inputs):
        return self._compiled(*inputs)
'''


def candidate_for(problem_id: str, scratch: Path) -> Path:
    example = EXAMPLES / f"{problem_id.split('/')[-1]}.py"
    if example.is_file():
        return example
    path = scratch / f"{problem_id.replace('/', '_')}_compiled.py"
    path.write_text(find_problem(problem_id).source + COMPILED)
    return path


def score(problem_id: str, candidate: Path, protocol: str, device: str | None) -> dict:
    started = time.monotonic()
    verdict = kbench.evaluate(problem_id, candidate, device, trials=1, timing=PROTOCOLS[protocol], policy="off",
                              baseline_cache=None)
    stat = STATISTIC[protocol]
    row = {"problem": problem_id, "protocol": protocol, "candidate": candidate.name, "status": verdict.status,
           "reason": verdict.reason[:300], "seconds": time.monotonic() - started, "device_name": verdict.device_name}
    if verdict.correct:
        candidate_ms, eager_ms = verdict.timing[stat], verdict.baselines["eager"]["timing"][stat]
        row.update(candidate_ms=candidate_ms, eager_ms=eager_ms, speedup=eager_ms / candidate_ms,
                   interval=verdict.speedup_interval.get("eager"), timing_seconds=verdict.phase_seconds.get("timing"),
                   baseline_seconds=verdict.phase_seconds.get("baseline"))
    return row


def relative_difference(a: float, b: float) -> float:
    return abs(a - b) / ((a + b) / 2)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def interval_coverage(pairs: list[list[dict]]) -> float | None:
    """How often one score's 95% speedup interval holds the other score's speedup.

    An interval that describes the evaluation's whole uncertainty would hold it
    about 95% of the time (a little less: the other score has its own noise).
    """
    hits = [lo <= other["speedup"] <= hi
            for pair in pairs for this, other in (pair, pair[::-1]) if this.get("interval")
            for lo, hi in [this["interval"]]]
    return sum(hits) / len(hits) if hits else None


def report(rows: list[dict]) -> dict:
    table = {}
    for protocol in sorted({row["protocol"] for row in rows}):
        pairs: dict[str, list[dict]] = {}
        for row in rows:
            if row["protocol"] == protocol and "speedup" in row:
                pairs.setdefault(row["problem"], []).append(row)
        pairs = {p: r[:2] for p, r in pairs.items() if len(r) >= 2}
        diffs = {key: [relative_difference(r[0][key], r[1][key]) for r in pairs.values()]
                 for key in ("speedup", "candidate_ms", "eager_ms")}
        table[protocol] = {
            "problems": len(pairs),
            **{f"{key}_median": statistics.median(v) for key, v in diffs.items() if v},
            **{f"{key}_p90": percentile(v, 0.9) for key, v in diffs.items() if v},
            "per_problem": {p: {"speedups": [r[0]["speedup"], r[1]["speedup"]],
                                "speedup_diff": relative_difference(r[0]["speedup"], r[1]["speedup"])}
                            for p, r in pairs.items()},
            "seconds_per_score": statistics.median(r["seconds"] for rs in pairs.values() for r in rs) if pairs else None,
            "interval_coverage": interval_coverage(list(pairs.values())),
        }
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="*", default=DEFAULT_PROBLEMS)
    parser.add_argument("--device", default=None)
    parser.add_argument("--out", required=True, help="JSON-lines file of evaluations (appended to)")
    parser.add_argument("--report", action="store_true", help="only summarise --out")
    parser.add_argument("--protocols", nargs="*", choices=list(PROTOCOLS), default=["kbench", "simple"])
    args = parser.parse_args()
    out = Path(args.out)
    if not args.report:
        with tempfile.TemporaryDirectory() as scratch, out.open("a") as sink:
            for problem_id in args.problems:
                candidate = candidate_for(problem_id, Path(scratch))
                for repeat in range(2):
                    for protocol in args.protocols:  # alternating, so drift over the session hits all alike
                        row = {**score(problem_id, candidate, protocol, args.device), "repeat": repeat}
                        sink.write(json.dumps(row) + "\n")
                        sink.flush()
                        print(problem_id, protocol, repeat, row["status"], f"{row.get('speedup', float('nan')):.4f}",
                              f"{row['seconds']:.1f}s", flush=True)
    summary = report([json.loads(line) for line in out.read_text().splitlines() if line.strip()])
    for protocol, figures in summary.items():
        shown = {k: (f"{v:.4%}" if isinstance(v, float) and k not in ("seconds_per_score", "problems") else v)
                 for k, v in figures.items() if k != "per_problem"}
        print(protocol, shown)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
