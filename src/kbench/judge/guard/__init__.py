"""The guard: rules that catch solutions which game the judge.

Static rules read the solution's syntax tree before anything runs
(``static.py``); runtime rules watch the candidate's process while it runs
(``runtime.py``) and the judge checks what the processes report (timer
bounds, speed of light). Every rule has a name; a policy says which rules
reject and which only flag. See docs/guard.md for each rule and the exploit
it answers.
"""

from __future__ import annotations

from dataclasses import dataclass

# What each rule catches, for reasons and documentation.
RULES: dict[str, str] = {
    "torch-compile": "torch.compile, torch.jit, dynamo or inductor used instead of a kernel",
    "fallback": "a try/except inside the model's code whose handler computes with PyTorch or returns",
    "no-kernel": "no Triton kernel and no C++/CUDA extension: the solution is plain PyTorch",
    "introspection": "gc, frames, tracebacks, reference counts or profile/trace hooks used to look around the process",
    "process-exit": "the solution exits, kills or signals a process",
    "raw-io": "raw file-descriptor I/O or /proc access (the results channel lives there)",
    "threads": "threads, processes or executors started by the solution",
    "low-precision": "half precision or TF32 used in a float32 problem",
    "global-state": "process-wide PyTorch settings or random state changed",
    "monkeypatch": "attributes of modules (torch, time, ...) replaced",
    "harness-access": "the judge's own modules, sys.modules or __main__ reached",
    "dynamic-access": "getattr/importlib/eval with computed names (a way around the static rules)",
    "side-stream": "CUDA streams created (fine if joined; the timer bound decides)",
    "shape-special-case": "the input shape compared with literals",
    "patched-function": "a function of torch, torch.cuda, time or kbench replaced while running",
    "output-subclass": "an output is not a plain torch.Tensor (lazy or custom subclass), in any judged call",
    "output-aliases-input": "an output shares memory with an input or a parameter",
    "input-mutated": "forward changed an input",
    "timer-mismatch": "the host clock saw much more time than the CUDA events (work hidden from the timer)",
    "speed-of-light": "faster than the problem's operation and byte counts allow on this GPU",
    "timed-call-check": "a timed call the judge picked in secret after it ran has a wrong output",
    "input-feed": "another call asked for before this one's output was read (the protocol's order broken)",
    "trusted-clock": "the judge's own clock saw more time in a call than the candidate reported, beyond eager's "
                     "excess: that call is timed by the judge's clock",
    "gpu-busy": "the GPU stayed busy after the candidate's processes were stopped, before a baseline was timed",
    "reference-op": "forward executes every compute operation the reference does (it calls PyTorch)",
    "torch-compute": "forward computes with PyTorch operations instead of the solution's kernels (beyond the "
                     "matrix products, convolutions, recurrent layers or attention the reference makes itself)",
    "results-channel": "answers the judge did not ask for appeared on the worker's channel",
    "forged-report": "the candidate's process reported a value no honest worker can (a clock reading of NaN, "
                     "infinity or less than nothing)",
    "reference-interference": "the reference failed beside the candidate, and not alone (its memory or process taken)",
    "undecided": "what another static rule names, where the reading cannot decide it is what the rule is about (a "
                 "name bound to the module and to something else, a /proc path in a string): no evidence of an effect",
}

# Rules that only ever flag: evidence for a reviewer, never proof of cheating.
ALWAYS_FLAG = {"dynamic-access", "side-stream", "shape-special-case", "undecided",
               # The judge's clock bounds every call's time (kbench.judge.trusted.calls.trusted_times): a call that
               # reported too little is timed by that clock instead, so these describe, they do not decide.
               "trusted-clock", "timer-mismatch"}

# Rules every policy but ``off`` enforces: no honest kernel ever breaks them.
INTEGRITY = {
    "introspection",
    "process-exit",
    "raw-io",
    "threads",
    "global-state",
    "monkeypatch",
    "harness-access",
    "patched-function",
    "output-subclass",
    "output-aliases-input",
    "input-mutated",
    "speed-of-light",
    "timed-call-check",
    "input-feed",
    "gpu-busy",
    "results-channel",
    "forged-report",
    "reference-interference",
    # Not a style: a solution that runs PyTorch's compiler presents the compile baseline
    # column as its own kernel (the brief lists it among the cheats), and it cannot be run
    # under the integrity rules anyway (TorchDynamo replaces torch.nn.Module's methods while
    # it traces, and its compile workers are threads left running). Rejected before it runs.
    "torch-compile",
}

# Rules about how a solution computes (PyTorch where a kernel should be, lower
# precision), not about cheating: the default (lenient) policy only flags them, as
# KernelBench's checker does by default. Their evidence is a recorded call the candidate can
# recognise (and its own process's record), so a cheat can hide from them and they cannot be
# a trustworthy gate; on an honest solution they are an honest description (docs/guard.md).
# ``strict`` makes them reject; scores count "kernels only" (no style flag) beside the headline.
STYLE = frozenset(RULES) - INTEGRITY - ALWAYS_FLAG
# The style rules the judge applies statically only once the solution has loaded and
# passed its trials, so that a solution which does not load, or is wrong, is told that
# first. Every other rule rejects as soon as it sees.
AFTER_TRIALS = STYLE

POLICIES = ("strict", "lenient", "off")
DEFAULT_POLICY = "lenient"


@dataclass(frozen=True)
class Finding:
    """One rule's observation about a solution."""

    rule: str
    message: str
    line: int | None = None

    def text(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.rule}: {self.message}{where}"


def action(rule: str, policy: str) -> str:
    """``reject``, ``flag`` or ``ignore`` for a rule under a policy."""
    if policy == "off":
        return "ignore"
    if rule in ALWAYS_FLAG:
        return "flag"
    if policy == "strict" or rule in INTEGRITY:
        return "reject"
    return "flag"


def flag_rule(flag: str) -> str:
    """The rule a verdict's flag names (flags are ``Finding.text()``: ``"rule: message"``)."""
    return flag.partition(":")[0].strip()


def style_rules(flags: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """The style rules among a verdict's flags, each once, in order: what keeps a correct
    solution out of the "kernels only" scores."""
    return tuple(dict.fromkeys(rule for flag in flags or () if (rule := flag_rule(str(flag))) in STYLE))


def check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}: choose from {', '.join(POLICIES)}")
    return policy
