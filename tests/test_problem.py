import pytest
from conftest import PROBLEM

from kbench.suite import find_problem, suite_problems
from kbench.suite.problem import ProblemError, import_problem, load_problem, resolve_size


def write(tmp_path, text, name="problem.py"):
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD = """
import torch
KBENCH_SMALL = {"n": 4}
n = 1024
width = n * 2
class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2
def get_inputs():
    return [torch.randn(n, width)]
"""


def test_small_size_rewrites_constants_and_what_derives_from_them(tmp_path):
    problem = load_problem(write(tmp_path, GOOD))
    small = import_problem(problem, "small")
    assert (small.n, small.width) == (4, 8)
    assert small.get_inputs()[0].shape == (4, 8)
    assert small.get_init_inputs() == []
    assert import_problem(problem, "default").width == 2048


SIZED_BY_DTYPE = GOOD.replace(
    'KBENCH_SMALL = {"n": 4}',
    'KBENCH_SMALL = {"n": 4}\nKBENCH_DTYPES = ("float32", "bfloat16")\nKBENCH_DTYPE_SIZES = {"bfloat16": {"n": 4096}}',
)


def test_a_dtype_can_have_default_sizes_of_its_own(tmp_path):
    problem = load_problem(write(tmp_path, SIZED_BY_DTYPE))
    assert import_problem(problem, "default", "bfloat16").width == 8192
    assert import_problem(problem, "default", "float32").width == 2048
    assert import_problem(problem, "default").width == 2048
    assert import_problem(problem, "small", "bfloat16").width == 8  # the small size is the small size


def test_level_and_name_come_from_the_path_when_not_declared(tmp_path):
    folder = tmp_path / "level2"
    folder.mkdir()
    problem = load_problem(write(folder, GOOD, "fused_thing.py"))
    assert (problem.level, problem.name, problem.id) == (2, "fused_thing", "fused_thing")


@pytest.mark.parametrize(
    "text, message",
    [
        ("def broken(:\n", "not valid Python (line 1"),
        ("def get_inputs():\n    return []\n", "defines no class Model"),
        ("class Model:\n    pass\n", "defines no function get_inputs()"),
        (GOOD.replace('{"n": 4}', '{"m": 4}'), "KBENCH_SMALL names ['m']"),
        (GOOD.replace('{"n": 4}', "dict(n=4)"), "KBENCH_SMALL must be a literal"),
        (SIZED_BY_DTYPE.replace('{"n": 4096}', '{"m": 4096}'), "KBENCH_DTYPE_SIZES['bfloat16'] names ['m']"),
        (SIZED_BY_DTYPE.replace('"bfloat16": {', '"float16": {'), "names ['float16'], not in its KBENCH_DTYPES"),
        (SIZED_BY_DTYPE.replace('{"bfloat16": {"n": 4096}}', '{"bfloat16": 4096}'), "must map dtype names to dicts"),
    ],
)
def test_broken_problem_files_name_the_file_and_the_defect(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ProblemError) as error:
        load_problem(path)
    assert str(path) in str(error.value)
    assert message in str(error.value)


def test_missing_problem_is_a_problem_error():
    with pytest.raises(ProblemError, match="no problem file or suite id"):
        find_problem("level1/does_not_exist")


def test_suite_ids_and_paths_find_the_same_problem():
    by_id = find_problem("level1/relu")
    assert by_id.id == "level1/relu" and by_id.level == 1
    assert find_problem(by_id.path).sha256 == by_id.sha256
    assert find_problem(PROBLEM).name == "linear_tanh"


def test_every_suite_problem_loads_and_declares_a_small_size():
    problems = suite_problems(level=1)
    assert len(problems) >= 3
    for problem in problems:
        assert problem.small, f"{problem.id} has no KBENCH_SMALL"


def test_auto_size_is_small_on_cpu_only():
    assert resolve_size("auto", "cpu") == "small"
    assert resolve_size("auto", "cuda:0") == "default"
    with pytest.raises(ValueError):
        resolve_size("huge", "cpu")


def test_dtypes_and_requirements_are_read_and_checked(tmp_path):
    from kbench.suite.problem import ProblemSkipped, check_runnable

    plain = load_problem(write(tmp_path, GOOD))
    assert plain.dtypes == ("float32",) and plain.requires == ()
    check_runnable(plain, "float32")
    with pytest.raises(ProblemError, match="no bfloat16 variant"):
        check_runnable(plain, "bfloat16")
    both = load_problem(write(tmp_path, 'KBENCH_DTYPES = ("float32", "bfloat16")\n' + GOOD, "both.py"))
    check_runnable(both, "bfloat16")
    needs = load_problem(write(tmp_path, 'KBENCH_REQUIRES = ("kbench_no_such_module",)\n' + GOOD, "needs.py"))
    with pytest.raises(ProblemSkipped, match="needs kbench_no_such_module"):
        check_runnable(needs, "float32")
    for bad in ('KBENCH_DTYPES = ("float8",)', 'KBENCH_DTYPES = "bfloat16"', "KBENCH_REQUIRES = (1,)"):
        with pytest.raises(ProblemError, match="KBENCH_"):
            load_problem(write(tmp_path, bad + "\n" + GOOD, "bad.py"))
