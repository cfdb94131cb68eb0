"""The honest corpus (tests/honest): its table agrees with the directory, and its CPU
subset is judged correct on a busy machine.

Every file is an honest solution unlike eager PyTorch (slow, many launches, tiny
outputs, workspaces, views, KernelBench-style mixes: tests/honest/corpus.py). The CPU
subset is judged once per file under the lenient policy with timing on (so the trusted
clock runs) while two busy-looping processes share the machine: an integrity rule that
rejects one of them calls honest work a cheat. benchmarks/false_positives.py judges the
whole corpus.
"""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from honest.corpus import CORPUS, DEVICES, HERE, LANGUAGES, RUN_ON_A_GPU, TRAITS, Honest

import kbench
from kbench.judge import LocalExecutor
from kbench.judge.guard import INTEGRITY, RULES
from kbench.judge.guard.static import check_source
from kbench.judge.protocol.timing import TimingSettings
from kbench.suite import find_problem

# The exploit suite's short protocol (tests/test_exploits.py): every timed call is still
# stamped by the judge's clock, so trusted-clock runs on each. Three rounds, not the default six:
# a rule that rejects only what it sees in every round is easier to trip by chance in fewer, so
# honest solutions face it at its strictest (the exploits face the default).
FAST_TIMING = TimingSettings(warmup_calls=3, warmup_seconds=0.0, min_calls=5, max_calls=20, budget_seconds=1.0,
                             rounds=3)
SUBSET = [row for row in CORPUS if row.cpu_subset]
LOAD_PROCESSES = 2


def _rule(text: str) -> str:
    return text.split(":", 1)[0].strip()


def test_table_and_directory_agree() -> None:
    on_disk = {p.name for p in HERE.glob("*.py")} - {"corpus.py", "__init__.py"}
    named = [row.file for row in CORPUS]
    assert len(named) == len(set(named)), "a file is named twice in the table"
    assert on_disk == set(named)


@pytest.mark.parametrize("row", CORPUS, ids=[row.name for row in CORPUS])
def test_row_is_well_formed(row: Honest) -> None:
    find_problem(row.problem)  # a problem of the suite
    assert row.traits <= TRAITS, row.traits - TRAITS
    assert row.language in LANGUAGES and row.devices and set(row.devices) <= set(DEVICES)
    for flags in (row.style_flags, row.known_false_flags):
        assert flags <= set(RULES) and not flags & INTEGRITY, "honest solutions carry no integrity flag"
    source = row.path.read_text()
    tree = ast.parse(source)
    assert any(isinstance(node, ast.ClassDef) and node.name == "ModelNew" for node in tree.body)
    gpu_only = row.language == "cuda" or "torch.cuda." in source or "triton.autotune" in source
    assert (row.devices == ("gpu",)) == gpu_only, "CUDA, streams, graphs and autotuning are GPU only, the rest not"
    assert (row.language in ("cuda", "cpp")) == ("cpp_extension" in source)
    assert (row.language == "cpp") == (row.devices == ("cpu",)), "C++ for the CPU reads host memory: CPU only"
    assert row.verified == ("cpu" in row.devices or row.file in RUN_ON_A_GPU), \
        "a GPU-only file stays unverified until a GPU run"
    assert not row.cpu_subset or "cpu" in row.devices


@pytest.mark.parametrize("row", CORPUS, ids=[row.name for row in CORPUS])
def test_static_rules_find_only_what_the_table_expects(row: Honest) -> None:
    """The static reading, which rejects before anything runs, finds nothing in an honest
    file beyond the style flags the table names (GPU-only files included)."""
    findings = check_source(row.path.read_text(), "float32", find_problem(row.problem).source)
    assert {f.rule for f in findings} <= row.style_flags | row.known_false_flags, [f.text() for f in findings]


def test_corpus_covers_what_the_rules_measure() -> None:
    assert len(CORPUS) >= 60
    assert {row.level for row in CORPUS} == {1, 2, 3, 4}
    assert {row.language for row in CORPUS} == set(LANGUAGES)
    assert set().union(*(row.traits for row in CORPUS)) == TRAITS, "every trait is exercised"
    cpu_traits = set().union(*(row.traits for row in SUBSET))
    # Not many-launches: each launch costs the Triton interpreter milliseconds (the sigmoid
    # in 128 launches took 86 s to judge on the 2-core machine); the benchmark covers it.
    assert {"slow", "tiny-output", "workspace-kept", "workspace-per-call", "view-output",
            "inplace-fresh-output", "kernelbench-style", "mixed-pytorch"} <= cpu_traits
    assert 10 <= len(SUBSET) <= 15 and {row.level for row in SUBSET} == {1, 2, 3, 4}


@pytest.fixture(scope="module")
def verdicts_under_load() -> dict[str, kbench.Verdict]:
    """The CPU subset judged once per file while two busy loops compete for the CPUs."""
    load = [subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"]) for _ in range(LOAD_PROCESSES)]
    try:
        pairs = [(row.problem, row.path) for row in SUBSET]
        verdicts = kbench.evaluate_many(
            pairs, executor=LocalExecutor(["cpu"]), size="small", trials=2, timing=FAST_TIMING, policy="lenient",
            timeout=600,
        )
        return {SUBSET[index].name: verdict for index, verdict in verdicts}
    finally:
        for process in load:
            process.kill()
            process.wait()


@pytest.mark.parametrize("row", SUBSET, ids=[row.name for row in SUBSET])
def test_honest_solution_is_correct_on_a_busy_cpu(row: Honest, verdicts_under_load) -> None:
    verdict = verdicts_under_load[row.name]
    assert verdict.status == "correct", f"{row.file}: {verdict.status}: {verdict.reason}"
    assert verdict.timing is not None, "timed: the trusted clock saw every timed call"
    flagged = {_rule(flag) for flag in verdict.flags}
    assert flagged <= row.style_flags | row.known_false_flags, verdict.flags
