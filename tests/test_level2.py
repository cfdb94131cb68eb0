"""Level 2 of the bundled suite: at least 100 fused sequences (a matrix product or
convolution followed by what real models put after it), each with a small size,
operation counts and sound at the small size on the CPU.

The quick tests read the files' syntax trees only; the slow one audits the
whole level, two worker processes at a time, in one module-scoped fixture."""

import ast

import pytest

from kbench.suite import suite_problems

FLOATING = {"float32", "bfloat16", "float16"}
# The bfloat16 variants of a few kinds of problem (probabilities with their own
# tolerance, a normalisation, two outputs, an integer input); the whole level in
# bfloat16 is `kbench audit level2 --device cpu --dtype bfloat16` (about 5 min).
BF16_SAMPLE = [
    "level2/linear_scaled_softmax",
    "level2/conv2d_batch_norm_relu",
    "level2/linear_layer_scale_residual_rms_norm",
    "level2/linear_cross_entropy",
]


@pytest.fixture(scope="module")
def level2():
    return suite_problems(2)


def _top_level(problem):
    tree = ast.parse(problem.source)
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.startswith("KBENCH_"):
                    constants[target.id] = ast.literal_eval(node.value)
    return functions, constants


def test_at_least_100_problems_with_unique_names(level2):
    assert len(level2) >= 100
    names = [p.name for p in level2]
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)
    assert all(p.id.startswith("level2/") and p.level == 2 for p in level2)


def test_every_problem_declares_its_work_and_a_small_size(level2):
    for problem in level2:
        functions, constants = _top_level(problem)
        needed = {"kbench_flops", "kbench_bytes", "get_inputs", "get_init_inputs"}
        assert needed <= functions, problem.id
        assert constants.get("KBENCH_SMALL"), problem.id
        assert constants.get("KBENCH_LEVEL") == 2, problem.id
        dtypes = constants.get("KBENCH_DTYPES", ("float32",))
        assert "float32" in dtypes and set(dtypes) <= FLOATING, problem.id
        # A per-problem tolerance only for a dtype the problem is run in.
        assert set(problem.tolerance) <= set(dtypes), problem.id


@pytest.fixture(scope="module")
def level2_audit(level2):
    from kbench.audit import audit_problems

    return {r["id"]: r for r in audit_problems(level2, "cpu", "small", jobs=2)}


@pytest.mark.slow
def test_the_whole_level2_suite_is_sound_at_the_small_size(level2_audit):
    flagged = {problem_id: r["reasons"] for problem_id, r in level2_audit.items() if r["flags"]}
    skipped = {pid: r["skipped"] for pid, r in level2_audit.items() if r.get("skipped")}
    assert len(level2_audit) >= 100
    assert flagged == {}
    assert skipped == {}


@pytest.mark.slow
def test_level2_records_carry_operation_counts(level2_audit):
    for problem_id, record in level2_audit.items():
        if "broken" in record["flags"]:
            continue  # reported by the test above, with its reason
        assert record["size"] == "small", problem_id
        assert record.get("flops", 0) > 0 and record.get("bytes", 0) > 0, problem_id
        assert record["notes"] == [], (problem_id, record["notes"])


@pytest.mark.slow
def test_bf16_variants_of_a_sample_are_sound(level2):
    from kbench.audit import audit_problems

    sample = [p for p in level2 if p.id in BF16_SAMPLE]
    records = audit_problems(sample, "cpu", "small", jobs=2, dtype="bfloat16")
    assert {r["id"]: r["flags"] for r in records} == {problem_id: [] for problem_id in BF16_SAMPLE}
    assert all(r["dtype"] == "bfloat16" and not r.get("skipped") for r in records)
    assert all(0 < r["reference_error"]["tolerance_fraction"] < 1 for r in records)
