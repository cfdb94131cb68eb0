"""What a run's candidates are judged with: each option as given, else as the run was stored,
else the default, checked; and the problems it judges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kbench.cli.common import UsageError, make_console
from kbench.core.versions import install_hint
from kbench.judge import DEFAULT_TIMEOUT, DEFAULT_TRIALS, resolve_device
from kbench.judge.trusted.compare import CRITERIA, DEFAULT_CRITERION
from kbench.judge.guard import DEFAULT_POLICY
from kbench.judge.protocol.timing import TimingSettings, check_settings
from kbench.runs import runner
from kbench.runs.manifest import RunConfig
from kbench.suite import kernelbench
from kbench.suite.kernelbench import PRECISIONS
from kbench.suite.problem import DTYPES, resolve_size


def config_and_plan(stored: RunConfig | None, solutions, problems, *, device, baseline, size, trials, timeout, policy,
                    cuda_graph, sandbox, dtype, limit, precision, pairs, max_pairs, decide_at, measure_time=None,
                    correctness=None):
    """The run's config from the options, those left out taken from a stored run (or the defaults)."""
    if stored is None and (solutions is None or not problems):
        raise UsageError("a new run needs --model (or --solutions) and --problems")
    selection = tuple(problems) if problems else stored.selection
    solutions_dir = solutions if solutions is not None else Path(stored.solutions)
    judged = judge_settings(stored, device=device, baseline=baseline, size=size, trials=trials, timeout=timeout,
                            policy=policy, cuda_graph=cuda_graph, sandbox=sandbox, dtype=dtype, limit=limit,
                            precision=precision, pairs=pairs, max_pairs=max_pairs, decide_at=decide_at,
                            measure_time=measure_time, correctness=correctness)
    chosen = runnable(selection, judged["dtype"], judged["limit"], judged["precision"])
    plan = runner.plan_replay(chosen, solutions_dir)
    return runner.run_config(plan, selection=selection, solutions=solutions_dir, **judged), plan


def judge_settings(stored: RunConfig | None, *, device, baseline, size, trials, timeout, policy, cuda_graph,
                   sandbox, dtype, limit, precision, pairs, max_pairs, decide_at, measure_time=None,
                   correctness=None) -> dict[str, Any]:
    """How the run's candidates are judged (and how many problems, for a smoke
    run): each option as given, else as the run was stored, else the default;
    the device and size resolved, CUDA-graph timing only on a CUDA device. A
    KernelBench precision judges in its dtype; with --dtype given, none is taken
    from the stored run (so that a run of the other kind is refused, not mixed)."""
    if precision is not None and dtype is not None:
        raise UsageError("--precision casts every problem as KernelBench does; --dtype judges a problem's own "
                         "variant: give one of them")
    if precision is None and dtype is None and stored is not None:
        precision = stored.precision
    if precision is not None:
        if precision not in PRECISIONS:
            raise UsageError(f"--precision {precision!r}: choose from {', '.join(PRECISIONS)}")
        dtype = PRECISIONS[precision]
    shared = shared_settings(stored, device=device, size=size, trials=trials, timeout=timeout, policy=policy,
                             sandbox=sandbox, limit=limit, measure_time=measure_time)
    device = shared["device"]
    cuda_graph = cuda_graph if cuda_graph is not None else stored.cuda_graph if stored else False
    pairs = pairs or (stored.pairs if stored else 1)
    max_pairs = max_pairs if max_pairs is not None else stored.max_pairs if stored else 0
    decide_at = decide_at if decide_at is not None else stored.decide_at if stored else ()
    check_settings(TimingSettings(cuda_graph=cuda_graph, pairs=pairs, max_pairs=max_pairs, decide_at=decide_at), device)
    return {
        **shared,
        "cuda_graph": cuda_graph,
        "dtype": check_dtype(dtype or (stored.dtype if stored else "float32")),
        "baselines": tuple(baseline) if baseline else stored.baselines if stored else runner.default_baselines(device),
        "precision": precision,
        "pairs": pairs,
        "max_pairs": max_pairs,
        "decide_at": decide_at,
        "correctness": check_correctness(correctness or (stored.correctness if stored else DEFAULT_CRITERION)),
    }


def shared_settings(stored: RunConfig | None, *, device, size, trials, timeout, policy, sandbox,
                    limit, measure_time=None) -> dict[str, Any]:
    """What a run of either track (problems, or repository tasks: kbench.cli.repo_run) is judged with: each
    option as given, else as the run stored it, else the default; the device and size resolved.
    ``measure_time`` False (--no-timing): correctness only, as ``kbench eval --no-timing``."""
    device = resolve_device(device if device is not None else stored.device if stored else None)
    return {
        "device": device,
        "size": resolve_size(size or (stored.size if stored else "auto"), device),
        "trials": trials or (stored.trials if stored else DEFAULT_TRIALS),
        "timeout": timeout or (stored.timeout if stored else DEFAULT_TIMEOUT),
        "policy": policy or (stored.policy if stored else DEFAULT_POLICY),
        "sandbox": sandbox if sandbox is not None else stored.sandbox if stored else True,
        "limit": limit if limit is not None else stored.limit if stored else None,
        "measure_time": measure_time if measure_time is not None else stored.measure_time if stored else True,
    }


def check_correctness(correctness: str) -> str:
    if correctness not in CRITERIA:
        raise UsageError(f"--correctness {correctness!r}: choose from {', '.join(CRITERIA)}")
    return correctness


def check_dtype(dtype: str) -> str:
    if dtype not in DTYPES:
        raise UsageError(f"--dtype {dtype!r}: choose from {', '.join(DTYPES)}")
    return dtype


def runnable(selection, dtype: str, limit: int | None = None, precision: str | None = None) -> list:
    """The selected problems this Python can run in ``dtype`` (the first ``limit``
    of them), each cast as KernelBench does at a ``precision``; the others are named
    on stderr and left out."""
    selected = runner.select_problems(selection)
    if precision is not None:
        selected = [kernelbench.at_precision(problem, precision) for problem in selected]
    problems, skipped = runner.runnable(selected, dtype)
    if skipped:
        reasons = sorted(set(skipped.values()))
        hint = f"; for level 4: {install_hint('transformers', 'level4')}" if any(
            r.startswith("needs") for r in reasons) else ""
        make_console(stderr=True).print(
            f"[yellow]skipped:[/yellow] {len(skipped)} problem(s) this Python cannot run ({'; '.join(reasons)}), "
            f"e.g. {next(iter(skipped))}{hint}", highlight=False, soft_wrap=True
        )
    return problems[:limit]
