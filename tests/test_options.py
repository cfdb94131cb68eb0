"""The options the README and docs write against the CLI itself, and the help the CLI prints.

The README's and docs' option lists are prose, so they are tested rather than
generated: every option they name exists, every value list they give
(``--dtype float32|bfloat16|float16``) is the one the command's help shows, and
every option of ``eval``, ``run`` and ``audit`` is documented somewhere.
"""

import re
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from kbench.cli import app

ROOT = Path(__file__).resolve().parent.parent
# The docs that list kbench's options, less the lines that run a benchmark script with options of its own.
DOCS = {name: "\n".join(line for line in (ROOT / name).read_text().splitlines() if "benchmarks/" not in line)
        for name in ("README.md", "docs/runs.md", "docs/store.md", "docs/scores.md", "docs/export.md", "docs/ray.md",
                     "docs/repo-runs.md", "docs/agent.md", "docs/audit.md", "docs/patches.md")}
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
ANY_FLAG = re.compile(r"(?<![\w-])--?[a-z][a-z0-9-]*")  # -o names --output
# A flag with a list of values: `--dtype float32|bfloat16|float16`, `[--size auto|default|small]`.
FLAG_VALUES = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)[ =]([\w.:,\[\]]+(?:\|[\w.:,\[\]]+)+)")
NOT_KBENCHS = {"--dirty", "--numstat", "--recount"}  # git describe --dirty (docs/store.md), git apply's (docs/patches.md)


def commands(group=None, prefix=""):
    group = group or typer.main.get_command(app)
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from commands(command, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", command


def options(command):
    """{--flag: metavar} of a command."""
    return {flag: param.metavar for param in command.params if param.param_type_name == "option"
            for flag in [*param.opts, *param.secondary_opts] if flag.startswith("--")}


@pytest.mark.parametrize("doc", sorted(DOCS))
def test_every_option_the_docs_name_exists_with_the_values_the_help_shows(doc):
    by_flag: dict[str, set] = {}
    for _, command in commands():
        for flag, metavar in options(command).items():
            by_flag.setdefault(flag, set()).add(metavar)
    unknown = sorted(set(FLAG.findall(DOCS[doc])) - set(by_flag) - {"--help", "--version"} - NOT_KBENCHS)
    assert unknown == [], f"{doc} names options no kbench command has"
    for flag, values in FLAG_VALUES.findall(DOCS[doc]):
        if values.count("]") > values.count("["):  # the end of `[--size auto|default|small]`
            values = values[:-1]
        if flag in by_flag:
            assert values in by_flag[flag], f"{doc}: {flag} {values}, but the help says {by_flag[flag]}"


@pytest.mark.parametrize("command, docs", [
    ("eval", ["README.md"]),
    ("run", ["README.md", "docs/runs.md", "docs/ray.md", "docs/agent.md"]),
    ("audit", ["docs/audit.md"]),
    ("export", ["docs/export.md", "docs/runs.md"]),  # runs.md: every command that reads a store takes --db/--store
])
def test_every_option_of_the_main_commands_is_documented(command, docs):
    mentioned = {flag for doc in docs for flag in ANY_FLAG.findall(DOCS[doc])}
    undocumented = [param.opts[-1] for param in dict(commands())[command].params
                    if param.param_type_name == "option" and not param.hidden
                    and not mentioned.intersection([*param.opts, *param.secondary_opts])]
    assert undocumented == [], f"options of kbench {command} that {docs} do not mention"


@pytest.mark.parametrize("name", [name for name, _ in commands()])
def test_help_says_each_default_once(name):
    done = CliRunner().invoke(app, [*name.split(), "-h"], terminal_width=200)
    assert done.exit_code == 0, done.output
    entries = re.split(r"\n  (?=-)", done.output)
    twice = [entry.split()[0] for entry in entries if entry.count("default:") > 1]
    assert twice == [], f"kbench {name} -h prints a default twice"


def test_run_help_is_in_sections_and_old_spellings_still_work(tmp_path, monkeypatch):
    text = CliRunner().invoke(app, ["run", "-h"], terminal_width=200).output
    sections = [line for line in text.splitlines() if line.endswith("options:")]
    assert sections == ["Problems options:", "Solutions or model options:", "Judge options:", "Execution options:",
                        "Store options:"]
    problems_part = text[text.index("Problems options:"):text.index("Solutions or model options:")]
    assert "--precision fp16|bf16" in problems_part and "--dtype float32|bfloat16|float16" in problems_part
    judge_part = text[text.index("Judge options:"):text.index("Execution options:")]
    assert "--device cpu|cuda|cuda:N" in judge_part and "--no-cuda-graph" in judge_part
    assert "--problem " not in text and "--problem," not in text  # the other command's spelling: hidden
    # kbench eval's spellings in kbench run and the other way round; --level as a number or a name
    from run_fixtures import FakeJudge, fake_solution, problem_dir

    from kbench.cli import run as cli_runs

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli_runs, "evaluate", FakeJudge())
    problems = problem_dir(tmp_path / "problems", ["p1"])
    fake_solution(tmp_path / "solutions" / "p1.py", "correct 1.0")
    done = CliRunner().invoke(app, ["run", "--run", "r", "--problem", str(problems), "-s", str(tmp_path / "solutions"),
                                    "--device", "cpu", "--plain", "--no-cuda-graph"])
    assert done.exit_code == 0 and "1 to evaluate" in done.output, done.output
    solution = str(tmp_path / "solutions" / "p1.py")
    eval_spelling = CliRunner().invoke(app, ["eval", solution, "--problems", "level1/nope"])
    assert eval_spelling.exit_code == 2 and "no problem file or suite id 'level1/nope'" in eval_spelling.output
    for level in ("1", "level1"):
        listed = CliRunner().invoke(app, ["problems", "list", "--level", level, "--json"])
        assert listed.exit_code == 0 and '"level1/relu"' in listed.output
    assert CliRunner().invoke(app, ["problems", "list", "--level", "first"]).exit_code == 2


# One vocabulary (issue 59): an option means one thing, spelled one way, in every command that takes it.
# The commands that read or write a store, and the ones that judge (a solution, a patch, a run of them).
STORE_COMMANDS = {"run", "score", "compare", "export", "runs", "show", "report"}
STORE_FLAGS = {"--db", "--store"}
JUDGING_COMMANDS = {"eval", "eval-patch", "run"}
# What every judging command takes: where to judge, how, and how it shows its progress and result.
JUDGING_FLAGS = {"--device", "--timeout", "--size", "--trials", "--policy", "--timing", "--no-timing", "--sandbox",
                 "--no-sandbox", "--json", "--progress", "--no-progress", "--plain"}
# Other spellings of those: none may appear in any command.
SYNONYMS = {"--database", "--db-path", "--store-path", "--measure-time", "--no-measure-time", "--no-time", "--time",
            "--untimed", "--as-json", "--json-output", "--lines", "--log", "--quiet", "--no-bar", "--gpu-device",
            "--time-limit", "--policy-name", "--no-sandboxing"}
# An option's line in a command's help: its flags, then the value it takes (none for a switch).
HELP_OPTION = re.compile(r"^  (?:-\w, )?(--[a-z][a-z0-9-]*)(?:, (--[a-z][a-z0-9-]*))?(?: / (--[a-z][a-z0-9-]*))?"
                         r"(?: ([^ ]+))?(?:  |$)", re.MULTILINE)


def help_text(name):
    done = CliRunner().invoke(app, [*name.split(), "-h"], terminal_width=200)
    assert done.exit_code == 0, done.output
    return done.output


def help_values(name):
    """{--flag: the value name its help shows, or None for a switch} of a command."""
    values = {}
    for first, second, negative, value in HELP_OPTION.findall(help_text(name)):
        for flag in filter(None, (first, second, negative)):
            values[flag] = value or None
    return values


def long_flags(param):
    return frozenset(flag for flag in [*param.opts, *param.secondary_opts] if flag.startswith("--"))


def test_an_option_is_spelled_alike_in_every_command():
    by_name: dict[str, dict[frozenset, list[str]]] = {}
    by_flag: dict[str, set[str]] = {}
    for name, command in commands():
        for param in command.params:
            if param.param_type_name != "option":
                continue
            by_name.setdefault(param.name, {}).setdefault(long_flags(param), []).append(name)
            for flag in long_flags(param):
                by_flag.setdefault(flag, set()).add(param.name)
    spelled_apart = {name: {"/".join(sorted(flags)): where for flags, where in spellings.items()}
                     for name, spellings in by_name.items() if len(spellings) > 1}
    assert spelled_apart == {}, "one option, spelled differently in different commands"
    assert {flag: names for flag, names in by_flag.items() if len(names) > 1} == {}
    synonyms = {name: sorted(set(options(command)) & SYNONYMS) for name, command in commands()}
    assert {name: found for name, found in synonyms.items() if found} == {}


def test_every_command_that_reads_a_store_takes_the_same_store_option():
    for name, command in commands():
        store = [param for param in command.params if long_flags(param) & STORE_FLAGS]
        if name not in STORE_COMMANDS:
            assert store == [], f"kbench {name} reads a store: add it to STORE_COMMANDS"
            continue
        assert len(store) == 1 and long_flags(store[0]) == STORE_FLAGS, f"kbench {name}'s store option"
        assert store[0].envvar == "KBENCH_DB"
        assert help_values(name)["--store"] == "PATH"


def test_every_judging_command_takes_the_same_timing_and_output_options():
    shown = {name: help_values(name) for name in sorted(JUDGING_COMMANDS)}
    missing = {name: sorted(JUDGING_FLAGS - set(values)) for name, values in shown.items()}
    assert {name: flags for name, flags in missing.items() if flags} == {}, "judging commands without a shared option"
    for flag in sorted(JUDGING_FLAGS):
        assert len({values[flag] for values in shown.values()}) == 1, f"{flag}: {[v[flag] for v in shown.values()]}"


@pytest.mark.parametrize("name", [name for name, _ in commands()])
def test_help_names_values_not_types(name):
    """``--timeout SECONDS`` and ``RUN``, never typer's ``<float range>`` or ``{run}``."""
    text = help_text(name)
    usage = text.splitlines()[0]
    assert not re.search(r"[<{]", usage), usage
    first_columns = [line[2:].split("  ")[0] for line in re.findall(r"^  \S.*$", text, re.MULTILINE)]
    assert [column for column in first_columns if re.search(r"<[a-z]|\{[a-z]", column)] == []
