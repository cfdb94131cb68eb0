"""``kbench run``, ``score``, ``compare`` and ``export``: runs in a store, and their scores (docs/runs.md)."""

from __future__ import annotations

import json
import re
import signal
import threading
from collections import Counter
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator, List, Optional

import typer
from rich.markup import escape

from kbench import judge
from kbench.agents import command_agent, providers
from kbench.agents import loop as agent
from kbench.agents.providers import Sampling
from kbench.cli import model_run, repo_run, run_settings
from kbench.cli.common import (
    STORE_OPTION,
    DEVICE,
    EXECUTION,
    JUDGE,
    POLICY,
    PROBLEMS,
    SIZE,
    SOLUTIONS,
    STORE,
    HelpCommand,
    UsageError,
    DECIDE_AT,
    DECIDE_AT_HELP,
    counts_text,
    decide_points,
    make_console,
    split_names,
    usage_error,
    usage_errors,
)
from kbench.cli.progress import BarProgress, ErrorLimit, PlainProgress, QuietProgress, TooManyFailures
from kbench.cli.repo_scores import show_repo_score
from kbench.cli.scores import print_score, score_document
from kbench.cli.verdicts import one_line
from kbench.judge import DEFAULT_TIMEOUT, DEFAULT_TRIALS, resolve_device
from kbench.judge.trusted.compare import CRITERIA, DEFAULT_CRITERION
from kbench.judge.executor import default_build_jobs
from kbench.runs import rejudge as rejudge_run
from kbench.runs import runner, writer
from kbench.runs.manifest import RunConfig
from kbench.runs.records import RETRIED_STATUSES, finite
from kbench.runs.repo_score import TRACK as REPO_TRACK
from kbench.runs.score import columns_of, outcomes
from kbench.runs.score import score as score_run
from kbench.runs.store import Store
from kbench.suite.kernelbench import PRECISIONS
from kbench.suite.problem import DTYPES

RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
console = make_console()
# Replaced in tests by a fake judge; the commands look it up at call time.
evaluate = judge.evaluate

def run_command(
    run: str = typer.Option(..., "--run", "-r", help="Name of the run; running the same name again resumes it.",
                            rich_help_panel=STORE),
    model: Optional[str] = typer.Option(
        None, "--model", "-m", help="PROVIDER/MODEL: openai/NAME, anthropic/NAME, command/PROGRAM or replay/DIR.",
        rich_help_panel=SOLUTIONS),
    solutions: Optional[Path] = typer.Option(None, "--solutions", "-s", rich_help_panel=SOLUTIONS,
                                             help="Directory of solution files (replay/DIR)."),
    problems: Optional[List[str]] = typer.Option(
        None, "--problems", "-p", metavar="SELECTION", help="A level (level1), problem ids or files, a directory of "
        "them, or KernelBench's numbers in its folder (DIR/level1/19); comma-separated or repeated.",
        rich_help_panel=PROBLEMS),
    problem: Optional[List[str]] = typer.Option(None, "--problem", hidden=True),  # kbench eval's spelling
    track: Optional[str] = typer.Option(None, "--track", metavar="kernel|repo", help="kernel (problems: --problems) "
                                        "or repo (repository tasks: --tasks; scored apart) [default: kernel, or the "
                                        "stored run's].", rich_help_panel=PROBLEMS),
    tasks: Optional[List[str]] = typer.Option(
        None, "--tasks", metavar="IDS|PATHS|all", help="The repository track's tasks: task ids (tinylm/fused-rmsnorm), "
        "task files or folders, or all; repeatable.", rich_help_panel=PROBLEMS),
    samples: Optional[int] = typer.Option(None, min=1, help="Independent samples per problem [default: 1].",
                                          rich_help_panel=SOLUTIONS),
    turns: Optional[int] = typer.Option(None, min=1, help="Turns per sample; turn t > 1 refines with the "
                                        "judge's feedback [default: 1].", rich_help_panel=SOLUTIONS),
    base_url: Optional[str] = typer.Option(None, help="Endpoint of an OpenAI-compatible server (vLLM, SGLang, ...).",
                                           rich_help_panel=SOLUTIONS),
    template: Optional[str] = typer.Option(None, help=f"Prompt template: a built-in name or a file [default: "
                                           f"{agent.DEFAULT_TEMPLATE}].", rich_help_panel=SOLUTIONS),
    refine_template: Optional[str] = typer.Option(None, help="Template of turns after the first [default: refine].",
                                                  rich_help_panel=SOLUTIONS),
    target: Optional[str] = typer.Option(None, metavar="triton|cuda", help=f"The kernels asked for [default: "
                                         f"{agent.DEFAULT_TARGET}].", rich_help_panel=SOLUTIONS),
    gpu: Optional[str] = typer.Option(None, help="The GPU the prompts describe [default: the device's].",
                                      rich_help_panel=SOLUTIONS),
    temperature: Optional[float] = typer.Option(None, help="Sampling temperature [default: the server's].",
                                                rich_help_panel=SOLUTIONS),
    top_p: Optional[float] = typer.Option(None, help="Nucleus sampling [default: the server's].",
                                          rich_help_panel=SOLUTIONS),
    max_tokens: Optional[int] = typer.Option(None, min=1, help="Most tokens per reply [default: the server's; "
                                             f"{providers.DEFAULT_ANTHROPIC_MAX_TOKENS} for anthropic].",
                                             rich_help_panel=SOLUTIONS),
    seed: Optional[int] = typer.Option(None, help="Sampling seed, where the server takes one (openai).",
                                       rich_help_panel=SOLUTIONS),
    reasoning_effort: Optional[str] = typer.Option(
        None, help="Reasoning effort of OpenAI's reasoning models (minimal, low, medium, high) [default: the "
        "server's].", rich_help_panel=SOLUTIONS),
    option: Optional[List[str]] = typer.Option(
        None, "--option", help="Another field of each request's body, KEY=VALUE (VALUE read as JSON where it is, "
        "e.g. thinking='{\"type\": \"enabled\", \"budget_tokens\": 4096}' for anthropic); repeatable; "
        "kept with the run like every sampling setting.", rich_help_panel=SOLUTIONS),
    concurrency: int = typer.Option(agent.DEFAULT_CONCURRENCY, min=1, help="Requests in flight at once.",
                                    rich_help_panel=SOLUTIONS),
    max_retries: int = typer.Option(providers.DEFAULT_MAX_RETRIES, min=0,
                                    help="Retries of a request (backoff on 429, 5xx, timeouts).",
                                    rich_help_panel=SOLUTIONS),
    request_timeout: float = typer.Option(providers.DEFAULT_REQUEST_TIMEOUT, min=1, help="Seconds per request.",
                                          rich_help_panel=SOLUTIONS),
    agent_time_limit: Optional[float] = typer.Option(
        None, min=1, help=f"Seconds per run of a command agent [default: {command_agent.DEFAULT_AGENT_TIME_LIMIT:g}].",
        rich_help_panel=SOLUTIONS),
    agent_version: Optional[str] = typer.Option(None, help="A command agent's version [default: PROGRAM --version].",
                                                rich_help_panel=SOLUTIONS),
    # A command agent's sandbox (docs/agent.md): what it may reach beyond its workspace, kept with the run.
    agent_network: Optional[bool] = typer.Option(None, "--agent-network/--no-agent-network", help="Let a command "
                                                 "agent reach the network (one that calls a model's API needs it) "
                                                 "[default: no].", rich_help_panel=SOLUTIONS),
    agent_gpu: Optional[bool] = typer.Option(None, "--agent-gpu/--no-agent-gpu", help="Let a command agent use the "
                                             "GPU itself (its evaluate tool judges on it either way) [default: no].",
                                             rich_help_panel=SOLUTIONS),
    agent_env: Optional[List[str]] = typer.Option(None, help="Environment variables a command agent receives, by "
                                                  "name (an API key), comma-separated or repeated [default: none "
                                                  "beyond PATH, LANG, CUDA_*, TRITON_*, ...].",
                                                  rich_help_panel=SOLUTIONS),
    prices: Optional[Path] = typer.Option(None, help="A TOML or JSON price table adding to the built-in one.",
                                          rich_help_panel=SOLUTIONS),
    env_file: Path = typer.Option(Path(".env"), help="A .env file read for API keys (the environment wins).",
                                  rich_help_panel=SOLUTIONS),
    api_key_env: Optional[str] = typer.Option(None, help="The variable holding the API key [default: "
                                              "OPENAI_API_KEY or ANTHROPIC_API_KEY].", rich_help_panel=SOLUTIONS),
    db: Path = STORE_OPTION,
    device: Optional[str] = typer.Option(None, metavar=DEVICE, help="Where to judge [default: cuda if present, "
                                         "else cpu].", rich_help_panel=JUDGE),
    baseline: Optional[List[str]] = typer.Option(None, metavar="eager,compile,...",
                                                 help="Baseline columns, comma-separated or repeated "
                                                 "(eager,compile,...) [default: eager,compile on a GPU, eager on a "
                                                 "CPU].", rich_help_panel=JUDGE),
    size: Optional[str] = typer.Option(None, metavar=SIZE, help="The problems' sizes (auto: small on a CPU) "
                                       "[default: auto].", rich_help_panel=JUDGE),
    trials: Optional[int] = typer.Option(None, min=1, help=f"Correctness trials [default: {DEFAULT_TRIALS}].",
                                         rich_help_panel=JUDGE),
    timeout: Optional[float] = typer.Option(None, min=1, help=f"Seconds per evaluation [default: {DEFAULT_TIMEOUT:g}].",
                                            rich_help_panel=JUDGE),
    policy: Optional[str] = typer.Option(None, metavar=POLICY,
                                         help="Guard policy: lenient (integrity rules reject, style rules "
                                         "flag), strict (style rules reject too) or off [default: lenient].",
                                         rich_help_panel=JUDGE),
    cuda_graph: Optional[bool] = typer.Option(None, "--cuda-graph/--no-cuda-graph", help="Time by CUDA-graph "
                                              "replays (docs/timing.md) [default: no].", rich_help_panel=JUDGE),
    timing: Optional[bool] = typer.Option(None, "--timing/--no-timing", help="Time correct candidates against the "
                                          "baseline columns; --no-timing checks correctness only, and the scores "
                                          "then have no speedups [default: timing].", rich_help_panel=JUDGE),
    pairs: Optional[int] = typer.Option(None, min=1, help="Evaluations in fresh worker processes whose speedups a "
                                        "verdict averages (docs/timing.md) [default: 1].", rich_help_panel=JUDGE),
    max_pairs: Optional[int] = typer.Option(None, min=0, help="More evaluations, up to this many in all, until a "
                                            "speedup's 95% interval reaches at most 0.5% from it [default: 0, "
                                            "--pairs only].", rich_help_panel=JUDGE),
    decide_at: Optional[List[str]] = typer.Option(
        None, metavar=DECIDE_AT, help=DECIDE_AT_HELP.rstrip(".") + " [default: none, every speedup until narrow].",
        rich_help_panel=JUDGE),
    sandbox: Optional[bool] = typer.Option(None, "--sandbox/--no-sandbox", help="Run candidates in the OS sandbox "
                                           "(docs/trust.md); --no-sandbox is recorded with every verdict [default: "
                                           "sandbox].", rich_help_panel=JUDGE),
    correctness: Optional[str] = typer.Option(
        None, metavar="|".join(CRITERIA), help="How floating-point outputs are judged: truth (against the float64 "
        "truth, within the tolerance plus a multiple of the reference's own error) or kernelbench (within the "
        "tolerance of the reference's output, as KernelBench does): docs/judge.md; part of the run's settings "
        f"[default: {DEFAULT_CRITERION}].", rich_help_panel=JUDGE),
    dtype: Optional[str] = typer.Option(None, help="The problems' variant judged (their KBENCH_DTYPES); problems "
                                        "without it are left out [default: float32].", metavar="|".join(DTYPES),
                                        rich_help_panel=PROBLEMS),
    precision: Optional[str] = typer.Option(
        None, metavar="|".join(PRECISIONS), help="Judge every problem cast as KernelBench does: floating-point inputs "
        "and weights in fp16 or bf16, at the file's sizes, tolerance 1e-2 (not a problem's own --dtype variant; "
        "recorded with the run, which compare keeps apart).", rich_help_panel=PROBLEMS),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the selection's first N problems (a smoke run); "
                                        "part of the run's settings.", rich_help_panel=PROBLEMS),
    gpus: Optional[str] = typer.Option(
        None, metavar="all|0,1,...",
        help="Judge on several GPUs at once, one evaluation at a time on each: 'all' or indexes (0,1,3). "
        "Not part of the run's settings: a resumed run may use others.", rich_help_panel=EXECUTION),
    build_jobs: Optional[int] = typer.Option(
        None, min=0, help="Builds of the solutions running ahead of the GPUs (compiled extensions): at most N at once, "
        "threads with --gpus or alone (fewer where the CPUs are too few; a solution is judged as soon as it is built, "
        "one that needs no build at once; builds stop while anything is timed), Ray tasks with --executor ray; 0: "
        "each evaluation builds its own [default: on GPUs, what the CPUs beside them take (10 on 16 CPUs and one "
        "GPU); none on a CPU].", rich_help_panel=EXECUTION),
    executor: str = typer.Option("local", metavar="|".join(judge.EXECUTORS),
                                 help="local: this machine, one evaluation at a time per device (--gpus); "
                                 "ray: each evaluation a Ray task holding one GPU (one CPU for a CPU run), on a local "
                                 "Ray instance or the cluster at --address (pip install 'kbench[ray]'). Runs of files "
                                 "only; not part of the run's settings, recorded in each session's manifest.",
                                 rich_help_panel=EXECUTION),
    address: Optional[str] = typer.Option(None, metavar="ADDRESS",
                                          help="With --executor ray: the Ray cluster to join (auto, HOST:PORT "
                                          "or ray://HOST:PORT) [default: start a local Ray instance].",
                                          rich_help_panel=EXECUTION),
    rejudge: Optional[str] = typer.Option(
        None, "--rejudge", metavar="STATUS[,STATUS]", help="Judge again, in a new session of the stored run, its "
        "samples whose verdict has one of these statuses (e.g. rejected after a judge defect): the stored solutions, "
        "never a model; earlier verdicts are kept (kbench show).", rich_help_panel=STORE),
    progress: Optional[bool] = typer.Option(None, "--progress/--no-progress", help="Show the run's progress on "
                                            "stderr: a bar on a terminal, a line per evaluation off one (--plain); "
                                            "--no-progress shows only the score at the end [default: progress].",
                                            rich_help_panel=EXECUTION),
    plain: bool = typer.Option(False, "--plain", help="A line per evaluation, for logs, never a bar (the default "
                               "off a terminal).", rich_help_panel=EXECUTION),
    fail_on_error: Optional[int] = typer.Option(
        None, "--fail-on-error", min=1, metavar="N", help="Stop the run (exit 1) at its Nth failure outside the "
        "candidates (infra_error, generation_error, problem_error): a lost machine or a failing endpoint; what "
        "finished is kept, and the same command resumes [default: never stop].", rich_help_panel=EXECUTION),
    as_json: bool = typer.Option(False, "--json", help="Print the run's score as one JSON object on stdout (as "
                                 "`kbench score --json`); progress goes to stderr.", rich_help_panel=EXECUTION),
) -> None:
    """Ask a model for solutions (--model) or take them from a directory (--solutions), judge them
    against a selection of problems, and store everything.

    Options left out when resuming are taken from the run as stored; options given must match it.
    """
    with usage_errors():
        problems = [*(problems or []), *(problem or [])] or None
        if not RUN_NAME.fullmatch(run):
            raise UsageError(f"run name {run!r}: use letters, digits, '.', '_' and '-'")
        stored = None
        if db.exists():
            with Store(db, create=False) as store:
                stored = store.run(run)
        stored_config = stored.config if stored else None
        judged = dict(device=device, baseline=split_names(baseline), size=size, trials=trials, timeout=timeout,
                      policy=policy, cuda_graph=cuda_graph, sandbox=sandbox, dtype=dtype, limit=limit,
                      precision=precision, pairs=pairs, max_pairs=max_pairs,
                      decide_at=decide_points(decide_at) if decide_at else None, measure_time=timing,
                      correctness=correctness)
        generation = model_run.Generation(
            samples=samples, turns=turns, base_url=base_url, template=template, refine_template=refine_template,
            target=target, gpu=gpu, concurrency=concurrency,
            sampling=Sampling(temperature, top_p, max_tokens, seed, reasoning_effort,
                              model_run.request_options(option)),
            max_retries=max_retries, request_timeout=request_timeout, agent_time_limit=agent_time_limit,
            agent_version=agent_version, prices=prices, env_file=env_file, api_key_env=api_key_env,
            agent_access=(agent_network, agent_gpu, split_names(agent_env) if agent_env else None),
        )
        if repo_run.chosen_track(run, track, stored_config, tasks) == REPO_TRACK:  # tasks: kbench.cli.repo_run
            repo_run.run_repo(
                run, stored_config, lambda work, show_turns=False: _execute(
                    run, db, plain, as_json, work, show_turns, progress=progress, fail_on_error=fail_on_error),
                model=model, solutions=solutions, tasks=tasks, rejudge=rejudge, gpus=gpus, devices=_devices,
                generation=generation, judged=dict(device=device, size=size, trials=trials, timeout=timeout,
                                                   policy=policy, sandbox=sandbox, limit=limit, measure_time=timing),
                kernel_only={"--problems": problems, "--baseline": baseline, "--cuda-graph": cuda_graph, "--pairs": pairs,
                             "--max-pairs": max_pairs, "--decide-at": decide_at, "--dtype": dtype,
                             "--precision": precision, "--correctness": correctness, "--target": target, "--build-jobs": build_jobs,
                             "--address": address, "--executor": None if executor == "local" else executor})
            return
        if rejudge is not None:
            given = {"--model": model, "--solutions": solutions, "--problems": problems, "--samples": samples,
                     "--turns": turns}
            if named := [option for option, value in given.items() if value]:
                raise UsageError(f"--rejudge judges the run's stored solutions again: leave out {', '.join(named)}")
            if stored_config is None:
                raise UsageError(f"no run named {run!r} in {db} to re-judge")
            statuses = rejudge_run.parse_statuses(rejudge)
            settings = run_settings.judge_settings(stored_config, **judged)
            selected = run_settings.runnable(stored_config.selection, settings["dtype"], settings["limit"],
                                             settings["precision"])
            config = rejudge_run.rejudge_config(stored_config, selected, **settings)
            spread = _executor(executor, address, gpus, build_jobs, config.device, config.sandbox)
            _execute(run, db, plain, as_json, lambda store, listener: rejudge_run.rejudge(
                store, run, config, selected, statuses, evaluate=evaluate, listener=listener, executor=spread),
                progress=progress, fail_on_error=fail_on_error)
            return
        spec, solutions = model_run.model_or_files(model, solutions, stored_config)
        if spec is None:
            generation_options = {"--samples": samples, "--turns": turns, "--base-url": base_url,
                                  "--template": template, "--refine-template": refine_template}
            given = [name for name, value in generation_options.items() if value is not None]
            if given:
                raise UsageError(f"{', '.join(given)} need a model (--model PROVIDER/MODEL); replayed files are "
                             "samples as they are")
            if stored_config is not None and stored_config.source != "replay" and solutions is not None:
                raise UsageError(f"run {run!r} asks {stored_config.solutions}; it cannot continue from files")
            config, plan = run_settings.config_and_plan(stored_config, solutions, problems, **judged)
            _warn_unclaimed(config, plan)
            spread = _executor(executor, address, gpus, build_jobs, config.device, config.sandbox)
            _execute(run, db, plain, as_json, lambda store, listener: runner.execute(
                store, run, config, plan, evaluate=evaluate, listener=listener, executor=spread),
                progress=progress, fail_on_error=fail_on_error)
            return
        if build_jobs or executor != "local" or address is not None:
            raise UsageError("--build-jobs, --executor and --address are for runs of files (--solutions); a "
                             "model's run judges its candidates as they come, one at a time per GPU (--gpus)")
        if stored_config is not None and stored_config.source == "replay":
            raise UsageError(f"run {run!r} replays files from {stored_config.solutions}; it cannot continue with a model")
        if stored_config is None and not problems:
            raise UsageError("a new run needs --problems")
        selection = tuple(problems) if problems else stored_config.selection
        settings = run_settings.judge_settings(stored_config, **judged)
        chosen = run_settings.runnable(selection, settings["dtype"], settings["limit"], settings["precision"])
        config, plan, the_agent = model_run.generated_setup(stored_config, spec, selection, generation, settings,
                                                            chosen)
        devices = _devices(gpus, config.device)
        try:
            _execute(run, db, plain, as_json, lambda store, listener: agent.execute(
                store, run, config, plan, the_agent, evaluate=evaluate, listener=listener, devices=devices),
                show_turns=config.turns > 1, progress=progress, fail_on_error=fail_on_error)
        finally:
            the_agent.provider.close()


def _warn_unclaimed(config: RunConfig, plan: runner.Plan) -> None:
    for problem_id, faults in plan.faults.items():
        left = "recorded as missing" if not plan.samples_of(problem_id) else "its other samples are judged"
        for name, fault in faults.items():
            make_console(stderr=True).print(f"[yellow]warning:[/yellow] {name} in {config.solutions} is {fault}: "
                                            f"not a solution of {problem_id} ({left})", highlight=False, soft_wrap=True)
    if plan.unclaimed:
        shown = ", ".join(plan.unclaimed[:5]) + (", ..." if len(plan.unclaimed) > 5 else "")
        make_console(stderr=True).print(
            f"[yellow]warning:[/yellow] {len(plan.unclaimed)} files in {config.solutions} match no selected "
            f"problem: {shown}", highlight=False, soft_wrap=True
        )


def _execute(run: str, db: Path, plain: bool, as_json: bool, work, show_turns: bool = False, *,
             progress: bool | None = None, fail_on_error: int | None = None) -> None:
    """Run ``work(store, listener)`` with progress shown (a bar on a terminal, lines off
    one or when ``plain``, nothing with ``progress`` False), Ctrl-C and SIGTERM stopping it
    cleanly, the ``fail_on_error``-th failure outside the candidates stopping it (exit 1),
    and the score printed at the end (as JSON on stdout, with the progress on stderr, for
    ``--json``). Exit 1 too when nothing of the run was judged because everything failed
    outside the candidates (every request to a model, say)."""
    shown = make_console(stderr=True) if as_json else console
    errors = make_console(stderr=True)
    with _claimed(db, run), Store(db) as store:
        lines = plain or not shown.is_terminal
        display = QuietProgress if progress is False else PlainProgress if lines else BarProgress
        listener = display(shown, show_turns=show_turns)
        try:
            with _sigterm_interrupts():
                work(store, ErrorLimit(listener, fail_on_error) if fail_on_error else listener)
        except KeyboardInterrupt:
            listener.close()
            errors.print(f"interrupted: finished verdicts are stored; resume with `kbench run --run {run} --db {db}`")
            raise typer.Exit(code=130) from None
        except TooManyFailures as stopped:
            listener.close()
            errors.print(f"[red]stopped[/red] (--fail-on-error {fail_on_error}): {escape(str(stopped))}\n"
                         f"finished verdicts are stored; resume with `kbench run --run {run} --db {db}`",
                         highlight=False, soft_wrap=True)
            raise typer.Exit(code=1) from None
        except BaseException:
            listener.close()
            raise
        listener.close()
        data = store.load(run)
    if data.run.config.track == REPO_TRACK:
        show_repo_score(console, data, as_json)
    elif as_json:
        scored = score_run(outcomes(data), columns_of(data), device=data.run.config.device)
        typer.echo(json.dumps(finite(score_document(data, scored)), indent=2, allow_nan=False))
    else:
        print_score(console, data, score_run(outcomes(data), columns_of(data), device=data.run.config.device))
    failed = [e for e in data.evaluations if e.status in RETRIED_STATUSES]
    if failed and all(e.status in RETRIED_STATUSES or e.status == "missing" for e in data.evaluations):
        errors.print(f"[red]nothing was judged:[/red] every sample failed outside the candidates "
                     f"({counts_text(Counter(e.status for e in failed))}); the first: "
                     f"{escape(one_line(failed[0].reason))}",
                     highlight=False, soft_wrap=True)
        raise typer.Exit(code=1)


@contextmanager
def _claimed(db: Path, run: str) -> Iterator[None]:
    """The run held by this process while it judges (kbench.runs.writer): a second ``kbench run`` of
    it exits at once with BUSY_EXIT, before judging anything, rather than judging it twice."""
    held = ExitStack()
    try:
        held.enter_context(writer.claimed(db, run))
    except writer.RunBusy as busy:
        make_console(stderr=True).print(f"[red]busy:[/red] {escape(str(busy))}", highlight=False, soft_wrap=True)
        raise typer.Exit(code=writer.BUSY_EXIT) from None
    except OSError as exc:  # a folder that cannot be written: neither can the store
        raise usage_error(f"cannot hold run {run!r} beside the store {db}: {exc.strerror or exc}") from None
    with held:  # released as the block ends, however it ends
        yield


def _devices(gpus: str | None, device: str) -> list[str]:
    """``--gpus``: every local GPU, or the ones named by index, for a run on ``device``."""
    if gpus is None:
        return []
    if gpus.strip() == "all":
        devices = judge.local_devices()
    else:
        indexes = split_names([gpus])
        if not all(i.isdigit() for i in indexes):
            raise UsageError(f"--gpus {gpus!r}: 'all' or GPU indexes separated by commas (0,1)")
        devices = [resolve_device(f"cuda:{i}") for i in indexes]
    if not device.startswith("cuda"):
        raise UsageError(f"--gpus judges on GPUs; this run's device is {device}")
    return devices


def _executor(kind: str, address: str | None, gpus: str | None, build_jobs: int | None, device: str,
              sandbox: bool = True) -> judge.Executor | None:
    """``--executor``: None to judge in turn here; a LocalExecutor on the ``--gpus`` (or the
    run's device, building ahead: by default on GPUs, ``default_build_jobs``); or a
    RayExecutor holding a GPU (or a CPU) per evaluation."""
    if kind not in judge.EXECUTORS:
        raise UsageError(f"--executor {kind!r}: choose from {', '.join(judge.EXECUTORS)}")
    if kind == "local":
        if address is not None:
            raise UsageError("--address joins a Ray cluster: give it with --executor ray")
        devices = _devices(gpus, device)
        jobs = default_build_jobs(devices or [device]) if build_jobs is None else build_jobs
        if not devices and not jobs:
            return None
        return judge.LocalExecutor(devices or [device], jobs, ahead=None if sandbox else False)  # no spares unsandboxed
    if gpus is not None:
        raise UsageError("--gpus picks this machine's GPUs for the local executor; with --executor ray, Ray gives "
                         "each evaluation a GPU")
    try:
        return judge.RayExecutor(address, device=device, build_jobs=build_jobs or 0)
    except ImportError as exc:
        raise UsageError(str(exc)) from exc


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """A scheduler's SIGTERM stops a run as Ctrl-C does: workers cleaned up, verdicts kept."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may handle signals
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def register(app: typer.Typer) -> None:
    app.command("run", cls=HelpCommand)(run_command)
