"""Level 4: real model blocks built from transformers configurations with random weights.

The fast tests read the files only, and check that without transformers the
level is skipped with the reason. The slow ones audit the whole level at the
small size on the CPU, one worker process per problem, two at a time; each
worker imports torch and transformers (about 6 s of CPU time a problem), so
the audit takes about a minute on an idle 2-core machine."""

import ast

import pytest

from kbench.suite import suite_problems

LEVEL4 = suite_problems(4)


def _constants(problem):
    tree = ast.parse(problem.source)
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.startswith("KBENCH_"):
                    found[target.id] = ast.literal_eval(node.value)
    return tree, found


def test_level4_has_at_least_15_problems():
    assert len(LEVEL4) >= 15
    assert all(p.id.startswith("level4/") for p in LEVEL4)


@pytest.mark.parametrize("problem", LEVEL4, ids=lambda p: p.id)
def test_each_problem_declares_what_it_needs(problem):
    tree, constants = _constants(problem)
    assert constants["KBENCH_LEVEL"] == 4
    assert constants["KBENCH_REQUIRES"] == ("transformers",)
    assert constants["KBENCH_DTYPES"][0] == "float32"
    assert set(constants["KBENCH_DTYPES"]) <= {"float32", "bfloat16"}
    assert set(constants.get("KBENCH_TOLERANCE", {})) <= set(constants["KBENCH_DTYPES"])
    assert problem.small, "a small size for CPU checks"
    assert problem.requires == ("transformers",) and problem.dtypes == constants["KBENCH_DTYPES"]
    docstring = ast.get_docstring(tree)
    assert docstring and "\n" not in docstring.strip()
    # transformers is only imported where the model is built, so that the file
    # loads (and can be read, listed and skipped) without it.
    top_level_imports = [
        alias.name
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
    ]
    assert not any(name.split(".")[0] == "transformers" for name in top_level_imports)
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert {"get_inputs", "get_init_inputs", "kbench_flops", "kbench_bytes"} <= functions


def test_without_transformers_the_level_is_skipped_with_the_reason(monkeypatch):
    import kbench.suite.problem
    from kbench.audit import audit_problems

    monkeypatch.setattr(kbench.suite.problem, "missing_requirements", lambda problem: list(problem.requires))
    records = audit_problems(LEVEL4, "cpu", "small", jobs=2)
    assert len(records) == len(LEVEL4)
    for record in records:
        assert record["flags"] == [] and "needs transformers" in record["skipped"], record


@pytest.fixture(scope="module")
def level4_audit():
    pytest.importorskip("transformers")
    from kbench.audit import audit_problems

    return {r["id"]: r for r in audit_problems(LEVEL4, "cpu", "small", jobs=2)}


@pytest.mark.slow
def test_the_whole_level4_suite_is_sound_at_the_small_size(level4_audit):
    flagged = {problem_id: r["reasons"] for problem_id, r in level4_audit.items() if r["flags"]}
    assert len(level4_audit) >= 15
    assert not any(r["skipped"] for r in level4_audit.values())
    assert flagged == {}


@pytest.mark.slow
def test_level4_problems_declare_their_work(level4_audit):
    for problem_id, record in level4_audit.items():
        assert record["size"] == "small", problem_id
        assert record["flops"] and record["bytes"], problem_id
        assert 0 < record["reference_error"]["tolerance_fraction"] < 0.5, problem_id
