"""Level 3 of the bundled suite: at least 50 whole architectures (MLPs, CNNs,
recurrent networks, transformer layers, attention variants, mixtures of experts,
state-space and scan layers), each with a small size and operation counts, and
sound at the small size on the CPU.

The quick tests read the files' syntax trees, or import them without building a
model; the slow one audits the whole level, two worker processes at a time, in
one module-scoped fixture."""

import ast

import pytest

from kbench.suite import suite_problems
from kbench.suite.problem import import_problem

FLOATING = {"float32", "bfloat16", "float16"}
LEVEL3 = suite_problems(3)
# The bfloat16 variants of a few kinds of problem (a batch-normalised CNN with its
# own tolerance, integer inputs and two outputs, top-k routing, a float32 scan);
# the whole level in bfloat16 is `kbench audit level3 --device cpu --dtype bfloat16`
# (about 3 min; problems without a bfloat16 variant are skipped).
BF16_SAMPLE = ["level3/resnet18", "level3/bert_encoder", "level3/moe_top2", "level3/mamba_block"]


def _top_level(problem):
    tree = ast.parse(problem.source)
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.startswith("KBENCH_"):
                    constants[target.id] = ast.literal_eval(node.value)
    return ast.get_docstring(tree), functions, constants


def test_at_least_50_problems_with_unique_names():
    assert len(LEVEL3) >= 50
    names = [p.name for p in LEVEL3]
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)
    assert all(p.id.startswith("level3/") and p.level == 3 for p in LEVEL3)


@pytest.mark.parametrize("problem", LEVEL3, ids=lambda p: p.id)
def test_problem_declares_its_work_a_small_size_and_its_dtypes(problem):
    doc, functions, constants = _top_level(problem)
    assert doc and "\n" not in doc.strip()
    assert {"kbench_flops", "kbench_bytes", "get_inputs", "get_init_inputs"} <= functions
    assert constants.get("KBENCH_SMALL") and constants.get("KBENCH_LEVEL") == 3
    dtypes = constants.get("KBENCH_DTYPES", ("float32",))
    assert "float32" in dtypes and set(dtypes) <= FLOATING
    # A per-problem tolerance only for a dtype the problem is run in.
    assert set(problem.tolerance) <= set(dtypes)


@pytest.mark.parametrize("problem", LEVEL3, ids=lambda p: p.id)
def test_work_counts_grow_from_the_small_to_the_default_size(problem):
    # Importing runs only the file's top level (no model is built, no input drawn).
    small, default = import_problem(problem, "small"), import_problem(problem, "default")
    assert 0 < small.kbench_flops() < default.kbench_flops()
    assert 0 < small.kbench_bytes() < default.kbench_bytes()


@pytest.fixture(scope="module")
def level3_audit():
    from kbench.audit import audit_problems

    return {r["id"]: r for r in audit_problems(LEVEL3, "cpu", "small", jobs=2)}


@pytest.mark.slow
def test_the_whole_level3_suite_is_sound_at_the_small_size(level3_audit):
    flagged = {problem_id: r["reasons"] for problem_id, r in level3_audit.items() if r["flags"]}
    assert len(level3_audit) >= 50
    assert flagged == {}


@pytest.mark.slow
def test_level3_records_carry_operation_counts(level3_audit):
    for problem_id, record in level3_audit.items():
        assert record["size"] == "small", problem_id
        assert record["flops"] and record["flops"] > 0, problem_id
        assert record["bytes"] and record["bytes"] > 0, problem_id
        assert record["notes"] == [], (problem_id, record["notes"])


@pytest.mark.slow
def test_bf16_variants_of_a_sample_are_sound():
    from kbench.audit import audit_problems

    sample = [p for p in LEVEL3 if p.id in BF16_SAMPLE]
    records = audit_problems(sample, "cpu", "small", jobs=2, dtype="bfloat16")
    assert {r["id"]: r["flags"] for r in records} == {problem_id: [] for problem_id in BF16_SAMPLE}
    assert all(r["dtype"] == "bfloat16" and not r.get("skipped") for r in records)
    assert all(0 < r["reference_error"]["tolerance_fraction"] < 1 for r in records)
