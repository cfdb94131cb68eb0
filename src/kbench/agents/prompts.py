"""Prompts: the templates kbench sends to a model, versioned and hashed.

A template is text with ``string.Template`` placeholders (``$name`` or
``${name}``; ``$$`` is a literal dollar). The built-in templates are written
here, one text per (name, target): everything fixed that we wrote (the
instructions, the judge's rules, our own worked examples) is inside the
template text, so its sha256 pins all of it; only the problem, the GPU and
(for a refinement turn) the previous solution and the judge's feedback are
filled in by :func:`render`.

Built-in names: ``zero-shot``, ``one-shot`` (a ReLU example), ``few-shot``
(ReLU and a row sum), and ``refine`` (turn N > 1: the previous solution and the
verdict on it). Targets: ``triton`` and ``cuda``. User templates are loaded
with :func:`load_template` (format in docs/prompts.md).
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping

from kbench.agents.prompt_examples import EXAMPLES
from kbench.core.hardware import peak_for
from kbench.judge.guard import RULES

TARGETS = ("triton", "cuda")
KINDS = ("initial", "refine")

# Placeholders render() fills, and what each holds.
PLACEHOLDERS: dict[str, str] = {
    "problem_source": "the problem file's Python source (defines Model, get_inputs, get_init_inputs)",
    "problem_name": "the problem's name or id",
    "target": "'triton' or 'cuda'",
    "language": "'Triton' or 'CUDA C++ (torch.utils.cpp_extension.load_inline)'",
    "gpu_name": "the target GPU's name, or 'unknown'",
    "gpu_facts": "the target GPU's facts, one per line (name, memory bandwidth, peak rates where known)",
    "rules": "the rules the judge enforces, one per line",
    "target_instructions": "what a solution for the target must do",
    "answer_format": "how to lay out the answer (one fenced python block with class ModelNew)",
}
# Only a refinement template may use these.
REFINE_PLACEHOLDERS: dict[str, str] = {
    "turn": "the number of this turn (2 for the first refinement)",
    "previous_solution": "the source of the previous turn's solution",
    "feedback": "the judge's verdict on it: status, reason, speedup and any error output",
    "status": "the verdict's status (correct, incorrect, compile_error, ..., or an extraction failure)",
    "reason": "the verdict's reason",
    "speedup": "the measured speedup(s), or 'not measured'",
}

# The guard's rules a prompt states (names from kbench.judge.guard.RULES).
PROMPT_RULES = (
    "torch-compile",
    "fallback",
    "no-kernel",
    "torch-compute",
    "low-precision",
    "output-aliases-input",
    "input-mutated",
    "shape-special-case",
    "monkeypatch",
    "global-state",
)

FEEDBACK_DETAIL_CHARS = 4000


class PromptError(Exception):
    """A template that cannot be used, or a render() call missing what it needs."""


@dataclass(frozen=True)
class Template:
    name: str
    version: str
    text: str
    kind: str = "initial"  # "initial" or "refine"
    target: str = "any"  # "triton", "cuda" or "any"
    origin: str = "builtin"  # "builtin" or the file it was loaded from

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


@dataclass(frozen=True)
class Prompt:
    """What the run manifest records about one rendered prompt."""

    template: str
    version: str
    sha256: str  # of the template text
    kind: str
    target: str
    origin: str
    text_sha256: str  # of the rendered prompt
    gpu: str | None = None
    turn: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Feedback:
    """The judge's answer on a previous turn, as the refinement prompt states it."""

    status: str
    reason: str
    speedup: float | Mapping[str, float | None] | None = None
    detail: str = ""  # compile error text, output tail

    @classmethod
    def from_verdict(cls, verdict: Any) -> "Feedback":
        """From a kbench Verdict, its dict, or a Feedback."""
        if isinstance(verdict, Feedback):
            return verdict
        get = verdict.get if isinstance(verdict, Mapping) else lambda k, d=None: getattr(verdict, k, d)
        return cls(
            status=str(get("status", "") or ""),
            reason=str(get("reason", "") or ""),
            speedup=get("speedup"),
            detail=str(get("output_tail", "") or get("detail", "") or ""),
        )


# ---------------------------------------------------------------------------
# The fixed text of the built-in templates.

_LANGUAGE = {"triton": "Triton", "cuda": "CUDA C++ (torch.utils.cpp_extension.load_inline)"}

_TARGET_INSTRUCTIONS = {
    "triton": (
        "Write the computation as one or more Triton kernels (`@triton.jit`) launched from "
        "`ModelNew.forward`. PyTorch may allocate outputs and reshape views, but the arithmetic "
        "must happen in your kernels."
    ),
    "cuda": (
        "Write the computation as CUDA kernels compiled with "
        "`torch.utils.cpp_extension.load_inline` and called from `ModelNew.forward`. Launch on "
        "the current PyTorch stream. PyTorch may allocate outputs and reshape views, but the "
        "arithmetic must happen in your kernels."
    ),
}

_ANSWER_FORMAT = (
    "Reply with the complete solution in one fenced ```python block: the imports, your kernels, "
    "and `class ModelNew(torch.nn.Module)` whose constructor takes the same arguments as "
    "`Model` (from `get_init_inputs()`) and whose `forward` takes the same inputs and returns "
    "the same outputs. Do not redefine `Model`, `get_inputs` or `get_init_inputs`."
)


def _rules_text() -> str:
    lines = [
        "The judge runs your code in a separate process on fresh random inputs, compares every "
        "output with the reference within a calibrated tolerance, and rejects solutions that "
        "break its rules (kbench.judge.guard.RULES), among them:"
    ]
    lines += [f"- {name}: {RULES[name]}" for name in PROMPT_RULES if name in RULES]
    lines += [
        "In short: no torch.compile, no falling back to PyTorch, float32 means float32 "
        "(no half precision, no TF32), and every output must be a fresh tensor computed by "
        "your kernels from this call's inputs. The judge also runs a smaller size of the same "
        "problem first: bound-check your kernels rather than assume the given sizes.",
    ]
    return "\n".join(lines)


def _escape(text: str) -> str:
    return text.replace("$", "$$")


def _examples_text(target: str, count: int) -> str:
    parts = []
    for i, (title, problem, solution) in enumerate(EXAMPLES[target][:count], 1):
        parts.append(
            f"### Example {i}: {title}\n\nProblem:\n\n```python\n{problem}```\n\n"
            f"A solution:\n\n```python\n{solution}```\n"
        )
    return _escape("\n".join(parts))


def _initial_text(target: str, examples: int) -> str:
    head = (
        f"You are writing {_LANGUAGE[target]} kernels that replace a PyTorch reference "
        "implementation and run faster on the target GPU, with the same results.\n\n"
        "## Target GPU\n\n$gpu_facts\n\n"
        "## Task\n\n"
        "The problem below defines `class Model(torch.nn.Module)`, `get_inputs()` (the inputs "
        "of forward) and `get_init_inputs()` (the constructor's arguments). Write "
        "`class ModelNew(torch.nn.Module)` that computes the same outputs, faster. "
        f"{_escape(_TARGET_INSTRUCTIONS[target])}\n\n"
        f"## Rules the judge enforces\n\n{_escape(_rules_text())}\n\n"
    )
    if examples:
        head += f"## Worked example{'s' if examples > 1 else ''}\n\n{_examples_text(target, examples)}\n"
    return head + (
        "## Problem: $problem_name\n\n```python\n$problem_source\n```\n\n"
        f"## Answer\n\n{_escape(_ANSWER_FORMAT)}\n"
    )


def _refine_text(target: str) -> str:
    return (
        f"You are improving {_LANGUAGE[target]} kernels that replace a PyTorch reference "
        "implementation on the target GPU. This is turn $turn.\n\n"
        "## Target GPU\n\n$gpu_facts\n\n"
        "## Problem: $problem_name\n\n```python\n$problem_source\n```\n\n"
        "## Your previous solution\n\n```python\n$previous_solution\n```\n\n"
        "## The judge's verdict on it\n\n$feedback\n\n"
        "## Task\n\n"
        "If the verdict is not `correct`, fix the cause it names. If it is correct, make the "
        "solution faster without changing its results. "
        f"{_escape(_TARGET_INSTRUCTIONS[target])}\n\n"
        f"## Rules the judge enforces\n\n{_escape(_rules_text())}\n\n"
        f"## Answer\n\n{_escape(_ANSWER_FORMAT)}\n"
    )


BUILTIN_VERSION = "1"


def _builtins() -> dict[tuple[str, str], Template]:
    out: dict[tuple[str, str], Template] = {}
    for target in TARGETS:
        for name, count in (("zero-shot", 0), ("one-shot", 1), ("few-shot", 2)):
            out[name, target] = Template(name, BUILTIN_VERSION, _initial_text(target, count), "initial", target)
        out["refine", target] = Template("refine", BUILTIN_VERSION, _refine_text(target), "refine", target)
    return out


TEMPLATES: dict[tuple[str, str], Template] = _builtins()


def builtin_names() -> list[str]:
    return sorted({name for name, _ in TEMPLATES})


def get_template(name: str, target: str) -> Template:
    """A built-in template for a target."""
    _check_target(target)
    try:
        return TEMPLATES[name, target]
    except KeyError:
        raise PromptError(
            f"no built-in template {name!r}; built-in: {', '.join(builtin_names())}"
        ) from None


# ---------------------------------------------------------------------------
# User templates.

_HEADER_KEYS = {"name", "version", "kind", "target"}
_HEADER_LINE = re.compile(r"^([A-Za-z_]+)\s*:\s*(.*?)\s*$")


def check_template(template: Template) -> None:
    """Raise PromptError if the template uses placeholders render() cannot fill."""
    if template.kind not in KINDS:
        raise PromptError(f"template {template.name!r}: kind {template.kind!r} is not one of {', '.join(KINDS)}")
    if template.target not in (*TARGETS, "any"):
        raise PromptError(
            f"template {template.name!r}: target {template.target!r} is not one of {', '.join(TARGETS)}, any"
        )
    t = string.Template(template.text)
    if not t.is_valid():
        bad = []
        for m in t.pattern.finditer(template.text):
            if m.group("invalid") is not None:
                line = template.text.count("\n", 0, m.start("invalid")) + 1
                bad.append(f"line {line}: {template.text[m.start('invalid'):m.start('invalid') + 12]!r}")
        raise PromptError(
            f"template {template.name!r} ({template.origin}): invalid '$' use at "
            + "; ".join(bad)
            + " (write $$ for a literal dollar sign)"
        )
    used = set(t.get_identifiers())
    known = set(PLACEHOLDERS) | (set(REFINE_PLACEHOLDERS) if template.kind == "refine" else set())
    unknown = sorted(used - known)
    if unknown:
        refine_only = [u for u in unknown if u in REFINE_PLACEHOLDERS]
        hint = f"; {', '.join(refine_only)} only in a template with 'kind: refine'" if refine_only else ""
        raise PromptError(
            f"template {template.name!r} ({template.origin}): unknown placeholder(s) "
            f"{', '.join('$' + u for u in unknown)}; known: {', '.join('$' + k for k in sorted(known))}{hint}"
        )
    if "problem_source" not in used:
        raise PromptError(f"template {template.name!r} ({template.origin}): must use $problem_source")
    if template.kind == "refine" and "previous_solution" not in used:
        raise PromptError(f"template {template.name!r} ({template.origin}): a refine template must use $previous_solution")
    if template.kind == "refine" and not used & {"feedback", "reason"}:
        raise PromptError(f"template {template.name!r} ({template.origin}): a refine template must use $feedback or $reason")


def parse_template(text: str, origin: str = "<string>", default_name: str = "user") -> Template:
    """A template from text: an optional header of ``key: value`` lines (name,
    version, kind, target) ended by a line ``---``, then the body."""
    text = text.replace("\r\n", "\n")
    header: dict[str, str] = {}
    body = text
    lines = text.split("\n")
    if "---" in lines:
        cut = lines.index("---")
        head = [line for line in lines[:cut] if line.strip() and not line.lstrip().startswith("#")]
        parsed = [_HEADER_LINE.match(line) for line in head]
        if all(parsed):
            for m in parsed:
                key = m.group(1).lower()
                if key not in _HEADER_KEYS:
                    raise PromptError(
                        f"template {origin}: unknown header key {key!r}; known: {', '.join(sorted(_HEADER_KEYS))}"
                    )
                header[key] = m.group(2)
            body = "\n".join(lines[cut + 1 :])
    template = Template(
        name=header.get("name") or default_name,
        version=header.get("version") or "unversioned",
        text=body,
        kind=header.get("kind", "initial") or "initial",
        target=header.get("target", "any") or "any",
        origin=origin,
    )
    check_template(template)
    return template


def load_template(path: str | Path) -> Template:
    """A user template from a file (docs/prompts.md)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(f"template file {path}: cannot be read ({exc})") from exc
    return parse_template(text, origin=str(path), default_name=path.stem)


# ---------------------------------------------------------------------------
# Rendering.


def gpu_facts(gpu: str | None, extra: Mapping[str, Any] | None = None) -> str:
    """The target GPU's facts, one per line, deterministic."""
    lines = [f"- GPU: {gpu or 'unknown'}"]
    peak = peak_for(gpu)
    if peak is not None:
        lines.append(f"- Peak memory bandwidth (datasheet): {peak.bytes_per_second / 1e12:g} TB/s")
        lines.append(f"- Peak dense 16-bit tensor-core rate (datasheet): {peak.flops_per_second / 1e12:g} TFLOP/s")
    elif gpu:
        lines.append("- (kbench knows no datasheet peak rates for this GPU)")
    for key in sorted(extra or {}):
        lines.append(f"- {key}: {extra[key]}")
    return "\n".join(lines)


def _format_speedup(speedup: Any) -> str:
    if speedup is None or speedup == {}:
        return "not measured"
    if isinstance(speedup, Mapping):
        parts = []
        for key in sorted(speedup):
            value = speedup[key]
            parts.append(f"{value:.3f}x over {key}" if isinstance(value, (int, float)) else f"not measured over {key}")
        return ", ".join(parts)
    if isinstance(speedup, (int, float)):
        return f"{speedup:.3f}x"
    return str(speedup)


def format_feedback(feedback: Feedback, max_detail: int = FEEDBACK_DETAIL_CHARS) -> str:
    lines = [
        f"- status: {feedback.status or 'unknown'}",
        f"- reason: {feedback.reason or '(none given)'}",
        f"- speedup: {_format_speedup(feedback.speedup)}",
    ]
    detail = feedback.detail.strip()
    if detail:
        if len(detail) > max_detail:
            detail = "[... earlier output cut ...]\n" + detail[-max_detail:]
        lines.append(f"\nOutput of the run (last part):\n\n```\n{detail}\n```")
    return "\n".join(lines)


def _check_target(target: str) -> None:
    if target not in TARGETS:
        raise PromptError(f"target {target!r} is not one of {', '.join(TARGETS)}")


def render(
    template: Template | str,
    *,
    problem_source: str,
    target: str = "triton",
    problem_name: str = "",
    gpu: str | None = None,
    gpu_extra: Mapping[str, Any] | None = None,
    previous_solution: str | None = None,
    feedback: Feedback | Mapping[str, Any] | Any | None = None,
    turn: int | None = None,
) -> tuple[str, Prompt]:
    """The prompt text and its record. ``template`` is a Template or a built-in
    name; a refine template needs ``previous_solution`` and ``feedback`` (a
    Feedback, a Verdict or a verdict's dict)."""
    _check_target(target)
    if isinstance(template, str):
        template = get_template(template, target)
    check_template(template)
    if template.target not in ("any", target):
        raise PromptError(f"template {template.name!r} is for target {template.target!r}, not {target!r}")
    values: dict[str, str] = {
        "problem_source": problem_source.rstrip("\n"),
        "problem_name": problem_name or "problem",
        "target": target,
        "language": _LANGUAGE[target],
        "gpu_name": gpu or "unknown",
        "gpu_facts": gpu_facts(gpu, gpu_extra),
        "rules": _rules_text(),
        "target_instructions": _TARGET_INSTRUCTIONS[target],
        "answer_format": _ANSWER_FORMAT,
    }
    if template.kind == "refine":
        if previous_solution is None or feedback is None:
            raise PromptError(f"template {template.name!r} is a refinement: it needs previous_solution and feedback")
        fb = Feedback.from_verdict(feedback)
        turn = turn if turn is not None else 2
        values.update(
            turn=str(turn),
            previous_solution=previous_solution.rstrip("\n"),
            feedback=format_feedback(fb),
            status=fb.status,
            reason=fb.reason,
            speedup=_format_speedup(fb.speedup),
        )
    else:
        turn = turn if turn is not None else 1
    text = string.Template(template.text).substitute(values)
    prompt = Prompt(
        template=template.name,
        version=template.version,
        sha256=template.sha256,
        kind=template.kind,
        target=target,
        origin=template.origin,
        text_sha256=hashlib.sha256(text.encode()).hexdigest(),
        gpu=gpu,
        turn=turn,
    )
    return text, prompt
