"""Prompt templates (kbench.agents.prompts): fast, no processes, no network."""

import ast
import dataclasses
import re

import pytest

from kbench.agents import prompt_examples, prompts
from kbench.agents.prompts import Feedback, PromptError, Template, load_template, parse_template, render
from kbench.agents.reply import extract

PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.tanh(x) * 2.0  # distinctive marker 8f3a


def get_inputs():
    return [torch.randn(128, 256)]


def get_init_inputs():
    return []
'''

PREVIOUS = "class ModelNew:\n    pass  # previous marker 77c1\n"


@pytest.mark.parametrize("target", prompts.TARGETS)
@pytest.mark.parametrize("name", ["zero-shot", "one-shot", "few-shot"])
def test_render_includes_problem_target_facts_and_rules(name, target):
    text, prompt = render(name, problem_source=PROBLEM, target=target, gpu="NVIDIA H200", problem_name="tanh2")
    assert PROBLEM.strip() in text
    assert "tanh2" in text
    assert "NVIDIA H200" in text
    assert "4.8 TB/s" in text and "989.4 TFLOP/s" in text
    assert ("Triton" in text) if target == "triton" else ("load_inline" in text)
    for rule in ("torch-compile", "fallback", "low-precision", "output-aliases-input"):
        assert rule in text
    assert "class ModelNew" in text
    assert not re.search(r"\$\{?[a-z_]", text)  # every placeholder filled
    assert (prompt.template, prompt.version, prompt.kind, prompt.target) == (name, "1", "initial", target)
    assert re.fullmatch(r"[0-9a-f]{64}", prompt.sha256)
    assert prompt.sha256 == prompts.get_template(name, target).sha256


def test_unknown_gpu_and_extra_facts():
    text, prompt = render("zero-shot", problem_source=PROBLEM, gpu="Mystery GPU 9", gpu_extra={"L2 cache": "50 MiB", "SMs": 132})
    assert "Mystery GPU 9" in text and "no datasheet" in text
    assert "- L2 cache: 50 MiB" in text and "- SMs: 132" in text
    text, _ = render("zero-shot", problem_source=PROBLEM)
    assert "GPU: unknown" in text


def test_rendering_is_deterministic():
    kwargs = dict(problem_source=PROBLEM, target="cuda", gpu="NVIDIA H100 PCIe", gpu_extra={"b": 2, "a": 1})
    a = render("few-shot", **kwargs)
    b = render("few-shot", **kwargs)
    assert a == b
    assert a[1].text_sha256 == b[1].text_sha256
    assert render("few-shot", **{**kwargs, "problem_source": PROBLEM + "# x\n"})[1].text_sha256 != a[1].text_sha256


def test_hash_changes_when_the_template_changes():
    base = prompts.get_template("zero-shot", "triton")
    changed = dataclasses.replace(base, text=base.text.replace("faster", "quicker", 1))
    assert changed.sha256 != base.sha256
    _, p1 = render(base, problem_source=PROBLEM)
    _, p2 = render(changed, problem_source=PROBLEM)
    assert p1.sha256 != p2.sha256
    # Every built-in text is distinct, so every (name, target) has its own hash.
    hashes = {t.sha256 for t in prompts.TEMPLATES.values()}
    assert len(hashes) == len(prompts.TEMPLATES)


@pytest.mark.parametrize("target", prompts.TARGETS)
def test_examples_are_our_own_and_extractable(target):
    text, _ = render("few-shot", problem_source=PROBLEM, target=target)
    assert "Example 1: ReLU" in text and "Example 2: row sum" in text
    for _title, problem, solution in prompt_examples.EXAMPLES[target]:
        ast.parse(problem)
        e = extract("```python\n" + solution + "```")
        assert e.ok and e.code == solution
    one, _ = render("one-shot", problem_source=PROBLEM, target=target)
    assert "Example 1: ReLU" in one and "Example 2" not in one
    zero, _ = render("zero-shot", problem_source=PROBLEM, target=target)
    assert "Example" not in zero


def test_refinement_carries_previous_solution_and_verdict():
    verdict = {
        "status": "incorrect",
        "reason": "trial 2: max abs error 0.37 > atol 1e-05 (output 0)",
        "speedup": {"eager": 1.8734, "compile": None},
        "output_tail": "warning: something odd",
    }
    text, prompt = render("refine", problem_source=PROBLEM, target="triton", previous_solution=PREVIOUS, feedback=verdict, turn=2)
    assert "trial 2: max abs error 0.37 > atol 1e-05 (output 0)" in text
    assert "incorrect" in text and "1.873x over eager" in text and "not measured over compile" in text
    assert "previous marker 77c1" in text and "distinctive marker 8f3a" in text
    assert "warning: something odd" in text
    assert "turn 2" in text
    assert (prompt.template, prompt.kind, prompt.turn) == ("refine", "refine", 2)


def test_refinement_from_a_verdict_object_and_long_detail():
    from kbench.core.verdict import Verdict

    v = Verdict(
        problem="p", problem_path="p.py", problem_sha256="0", solution_path=None, solution_sha256="0",
        device="cuda", size="default", status="compile_error", correct=False,
        reason="compile_error: nvcc failed", output_tail="x" * 10000 + "error: expected ';'",
    )
    text, _ = render("refine", problem_source=PROBLEM, target="cuda", previous_solution=PREVIOUS, feedback=v)
    assert "compile_error: nvcc failed" in text and "error: expected ';'" in text
    assert "not measured" in text
    assert len(text) < 20000


def test_refinement_needs_previous_and_feedback():
    with pytest.raises(PromptError, match="previous_solution and feedback"):
        render("refine", problem_source=PROBLEM)
    fb = Feedback(status="correct", reason="correct", speedup=0.5)
    text, _ = render("refine", problem_source=PROBLEM, previous_solution=PREVIOUS, feedback=fb)
    assert "0.500x" in text


def test_bad_target_and_name():
    with pytest.raises(PromptError, match="target"):
        render("zero-shot", problem_source=PROBLEM, target="metal")
    with pytest.raises(PromptError, match="no built-in template"):
        render("seventeen-shot", problem_source=PROBLEM)


USER = """# my own prompt
name: terse
version: 3
target: any
---
Make this faster with $language on $gpu_name. Cost: $$5.
$gpu_facts
```python
$problem_source
```
$answer_format
"""


def test_user_template_from_file(tmp_path):
    path = tmp_path / "terse.tmpl"
    path.write_text(USER)
    t = load_template(path)
    assert (t.name, t.version, t.kind, t.target, t.origin) == ("terse", "3", "initial", "any", str(path))
    text, prompt = render(t, problem_source=PROBLEM, target="cuda", gpu="NVIDIA A100-SXM4-80GB")
    assert text.startswith("Make this faster with CUDA C++")
    assert "Cost: $5." in text and "distinctive marker 8f3a" in text and "2.039 TB/s" in text
    assert (prompt.template, prompt.version, prompt.origin) == ("terse", "3", str(path))
    path.write_text(USER.replace("faster", "quicker"))
    assert load_template(path).sha256 != t.sha256


def test_user_template_without_header(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text("Solve:\n$problem_source\n")
    t = load_template(path)
    assert (t.name, t.version) == ("plain", "unversioned")


def test_unknown_placeholder_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.tmpl"
    path.write_text("name: bad\nversion: 1\n---\n$problem_source on $gpu_nmae\n")
    with pytest.raises(PromptError, match=r"unknown placeholder\(s\) \$gpu_nmae; known: .*\$gpu_name"):
        load_template(path)
    with pytest.raises(PromptError, match="only in a template with 'kind: refine'"):
        parse_template("$problem_source $previous_solution")
    with pytest.raises(PromptError, match="invalid '\\$' use at line 2"):
        parse_template("$problem_source\ncosts $5\n")
    with pytest.raises(PromptError, match="must use \\$problem_source"):
        parse_template("no problem here")
    with pytest.raises(PromptError, match="unknown header key"):
        parse_template("name: x\ncolour: red\n---\n$problem_source")
    with pytest.raises(PromptError, match="cannot be read"):
        load_template(tmp_path / "missing.tmpl")


def test_user_refine_template():
    t = parse_template("kind: refine\n---\n$problem_source\n$previous_solution\nWas: $status / $reason / $speedup (turn $turn)\n")
    text, prompt = render(t, problem_source=PROBLEM, previous_solution=PREVIOUS, feedback=Feedback("rejected", "fallback: try/except", None), turn=4)
    assert "Was: rejected / fallback: try/except / not measured (turn 4)" in text
    assert prompt.turn == 4
    with pytest.raises(PromptError, match="must use \\$feedback or \\$reason"):
        parse_template("kind: refine\n---\n$problem_source $previous_solution")


def test_template_for_another_target_is_refused():
    t = Template("x", "1", "$problem_source", target="cuda")
    with pytest.raises(PromptError, match="for target 'cuda'"):
        render(t, problem_source=PROBLEM, target="triton")
