"""``kbench run``, ``score``, ``compare`` and ``export``: runs in a store, and their scores (docs/runs.md)."""

from __future__ import annotations

import json
import re
import signal
import threading
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator, List, Optional

import typer

from kbench import judge
from kbench.agents import command_agent, providers
from kbench.agents import loop as agent
from kbench.agents.prices import builtin_table, load_prices, price_for
from kbench.agents.providers import Sampling
from kbench.cli.common import DB_OPTION, UsageError, make_console, split_names, usage_errors
from kbench.cli.progress import BarProgress, PlainProgress
from kbench.cli.scores import print_score, score_document
from kbench.core.versions import install_hint
from kbench.judge import DEFAULT_TIMEOUT, DEFAULT_TRIALS, resolve_device
from kbench.judge.guard import DEFAULT_POLICY
from kbench.judge.timing import TimingSettings, check_settings
from kbench.runs import rejudge as rejudge_run
from kbench.runs import runner
from kbench.runs.manifest import RunConfig
from kbench.runs.records import finite
from kbench.runs.score import columns_of, outcomes
from kbench.runs.score import score as score_run
from kbench.runs.store import Store
from kbench.suite.problem import DTYPES, resolve_size

RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
console = make_console()
# Replaced in tests by a fake judge; the commands look it up at call time.
evaluate = judge.evaluate

def run_command(
    run: str = typer.Option(..., "--run", "-r", help="Name of the run; running the same name again resumes it."),
    model: Optional[str] = typer.Option(
        None, "--model", "-m", help="PROVIDER/MODEL: openai/NAME, anthropic/NAME, command/PROGRAM or replay/DIR."
    ),
    solutions: Optional[Path] = typer.Option(None, "--solutions", "-s", help="Directory of solution files (replay/DIR)."),
    problems: Optional[List[str]] = typer.Option(
        None, "--problems", "-p", help="A level (level1), problem ids or files, or a directory; repeatable."
    ),
    samples: Optional[int] = typer.Option(None, min=1, help="Independent samples per problem [default: 1]."),
    turns: Optional[int] = typer.Option(None, min=1, help="Turns per sample; turn t > 1 refines with the "
                                        "judge's feedback [default: 1]."),
    base_url: Optional[str] = typer.Option(None, help="Endpoint of an OpenAI-compatible server (vLLM, SGLang, ...)."),
    template: Optional[str] = typer.Option(None, help=f"Prompt template: a built-in name or a file [default: "
                                           f"{agent.DEFAULT_TEMPLATE}]."),
    refine_template: Optional[str] = typer.Option(None, help="Template of turns after the first [default: refine]."),
    target: Optional[str] = typer.Option(None, help=f"triton or cuda [default: {agent.DEFAULT_TARGET}]."),
    gpu: Optional[str] = typer.Option(None, help="The GPU the prompts describe [default: the device's]."),
    temperature: Optional[float] = typer.Option(None, help="Sampling temperature [default: the server's]."),
    top_p: Optional[float] = typer.Option(None, help="Nucleus sampling [default: the server's]."),
    max_tokens: Optional[int] = typer.Option(None, min=1, help="Most tokens per reply [default: the server's; "
                                             f"{providers.DEFAULT_ANTHROPIC_MAX_TOKENS} for anthropic]."),
    seed: Optional[int] = typer.Option(None, help="Sampling seed, where the server takes one (openai)."),
    reasoning_effort: Optional[str] = typer.Option(
        None, help="Reasoning effort of OpenAI's reasoning models (minimal, low, medium, high) [default: the server's]."),
    option: Optional[List[str]] = typer.Option(
        None, "--option", help="Another field of each request's body, KEY=VALUE (VALUE read as JSON where it is, "
        "e.g. thinking='{\"type\": \"enabled\", \"budget_tokens\": 4096}' for anthropic); repeatable; "
        "kept with the run like every sampling setting."),
    concurrency: int = typer.Option(agent.DEFAULT_CONCURRENCY, min=1, help="Requests in flight at once."),
    max_retries: int = typer.Option(providers.DEFAULT_MAX_RETRIES, min=0,
                                    help="Retries of a request (backoff on 429, 5xx, timeouts)."),
    request_timeout: float = typer.Option(providers.DEFAULT_REQUEST_TIMEOUT, min=1, help="Seconds per request."),
    agent_time_limit: Optional[float] = typer.Option(
        None, min=1, help=f"Seconds per run of a command agent [default: {command_agent.DEFAULT_AGENT_TIME_LIMIT:g}]."
    ),
    agent_version: Optional[str] = typer.Option(None, help="A command agent's version [default: PROGRAM --version]."),
    # A command agent's sandbox (docs/agent.md): what it may reach beyond its workspace, kept with the run.
    agent_network: Optional[bool] = typer.Option(None, "--agent-network/--no-agent-network", help="Let a command "
                                                 "agent reach the network (one that calls a model's API needs it) "
                                                 "[default: no]."),
    agent_gpu: Optional[bool] = typer.Option(None, "--agent-gpu/--no-agent-gpu", help="Let a command agent use the "
                                             "GPU itself (its evaluate tool judges on it either way) [default: no]."),
    agent_env: Optional[List[str]] = typer.Option(None, help="Environment variables a command agent receives, by "
                                                  "name (an API key), comma-separated or repeated [default: none "
                                                  "beyond PATH, LANG, CUDA_*, TRITON_*, ...]."),
    prices: Optional[Path] = typer.Option(None, help="A TOML or JSON price table adding to the built-in one."),
    env_file: Path = typer.Option(Path(".env"), help="A .env file read for API keys (the environment wins)."),
    api_key_env: Optional[str] = typer.Option(None, help="The variable holding the API key [default: "
                                              "OPENAI_API_KEY or ANTHROPIC_API_KEY]."),
    db: Path = DB_OPTION,
    device: Optional[str] = typer.Option(None, help="cpu, cuda or cuda:N [default: cuda if present, else cpu]"),
    baseline: Optional[List[str]] = typer.Option(None, help="Baseline columns, comma-separated or repeated "
                                                 "(eager,compile,...) [default: eager,compile on a GPU, eager on a CPU]."),
    size: Optional[str] = typer.Option(None, help="auto (small on a CPU), default or small [default: auto]."),
    trials: Optional[int] = typer.Option(None, min=1, help=f"Correctness trials [default: {DEFAULT_TRIALS}]."),
    timeout: Optional[float] = typer.Option(None, min=1, help=f"Seconds per evaluation [default: {DEFAULT_TIMEOUT:g}]."),
    policy: Optional[str] = typer.Option(None, help="Guard policy: lenient (integrity rules reject, "
                                          "style rules flag), strict (style rules reject too) or off [default: lenient]."),
    cuda_graph: Optional[bool] = typer.Option(None, "--cuda-graph/--no-cuda-graph", help="Time by CUDA-graph "
                                              "replays (docs/timing.md) [default: no]."),
    sandbox: Optional[bool] = typer.Option(None, "--sandbox/--no-sandbox", help="Run candidates in the OS sandbox "
                                           "(docs/guard.md); --no-sandbox is recorded with every verdict [default: sandbox]."),
    dtype: Optional[str] = typer.Option(None, help="The problems' variant judged (their KBENCH_DTYPES): float32 or "
                                        "bfloat16; problems without it are left out [default: float32]."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the selection's first N problems (a smoke run); "
                                        "part of the run's settings."),
    gpus: Optional[str] = typer.Option(
        None, help="Judge on several GPUs at once, one evaluation at a time on each: 'all' or indexes (0,1,3). "
        "Not part of the run's settings: a resumed run may use others."),
    build_jobs: int = typer.Option(0, min=0, help="Builds of the solutions running ahead of the GPUs (compiled "
                                   "extensions): at most N at once, threads with --gpus or alone (fewer where the "
                                   "CPUs are too few; a solution is judged as soon as it is built, one that needs no "
                                   "build at once), Ray tasks with --executor ray "
                                   "[default: 0, each evaluation builds its own]."),
    executor: str = typer.Option("local", help="local: this machine, one evaluation at a time per device (--gpus); "
                                 "ray: each evaluation a Ray task holding one GPU (one CPU for a CPU run), on a local "
                                 "Ray instance or the cluster at --address (pip install 'kbench[ray]'). Runs of files "
                                 "only; not part of the run's settings, recorded in each session's manifest."),
    address: Optional[str] = typer.Option(None, help="With --executor ray: the Ray cluster to join (auto, HOST:PORT "
                                          "or ray://HOST:PORT) [default: start a local Ray instance]."),
    rejudge: Optional[str] = typer.Option(
        None, "--rejudge", metavar="STATUS[,STATUS]", help="Judge again, in a new session of the stored run, its "
        "samples whose verdict has one of these statuses (e.g. rejected after a judge defect): the stored solutions, "
        "never a model; earlier verdicts are kept (kbench show)."),
    plain: bool = typer.Option(False, "--plain", help="A line per evaluation, for logs (the default off a terminal)."),
    as_json: bool = typer.Option(False, "--json", help="Print the run's score as one JSON object on stdout (as "
                                 "`kbench score --json`); progress goes to stderr."),
) -> None:
    """Ask a model for solutions (--model) or take them from a directory (--solutions), judge them
    against a selection of problems, and store everything.

    Options left out when resuming are taken from the run as stored; options given must match it.
    """
    with usage_errors():
        if not RUN_NAME.fullmatch(run):
            raise UsageError(f"run name {run!r}: use letters, digits, '.', '_' and '-'")
        stored = None
        if db.exists():
            with Store(db, create=False) as store:
                stored = store.run(run)
        stored_config = stored.config if stored else None
        judged = dict(device=device, baseline=split_names(baseline), size=size, trials=trials, timeout=timeout,
                      policy=policy, cuda_graph=cuda_graph, sandbox=sandbox, dtype=dtype, limit=limit)
        if rejudge is not None:
            given = {"--model": model, "--solutions": solutions, "--problems": problems, "--samples": samples,
                     "--turns": turns}
            if named := [option for option, value in given.items() if value]:
                raise UsageError(f"--rejudge judges the run's stored solutions again: leave out {', '.join(named)}")
            if stored_config is None:
                raise UsageError(f"no run named {run!r} in {db} to re-judge")
            statuses = rejudge_run.parse_statuses(rejudge)
            settings = _judge_settings(stored_config, **judged)
            selected = _runnable(stored_config.selection, settings["dtype"], settings["limit"])
            config = rejudge_run.rejudge_config(stored_config, selected, **settings)
            spread = _executor(executor, address, gpus, build_jobs, config.device)
            _execute(run, db, plain, as_json, lambda store, listener: rejudge_run.rejudge(
                store, run, config, selected, statuses, evaluate=evaluate, listener=listener, executor=spread))
            return
        spec = providers.parse_model(model) if model else None
        if spec is not None and solutions is not None:
            raise UsageError("give --model or --solutions, not both")
        if spec is not None and spec.provider == "replay":
            solutions, spec = Path(spec.name), None
        if spec is None and solutions is None and stored_config is not None and stored_config.source != "replay":
            spec = providers.parse_model(stored_config.solutions)
        if spec is None:
            generation_options = {"--samples": samples, "--turns": turns, "--base-url": base_url,
                                  "--template": template, "--refine-template": refine_template}
            given = [name for name, value in generation_options.items() if value is not None]
            if given:
                raise UsageError(f"{', '.join(given)} need a model (--model PROVIDER/MODEL); replayed files are "
                             "samples as they are")
            if stored_config is not None and stored_config.source != "replay" and solutions is not None:
                raise UsageError(f"run {run!r} asks {stored_config.solutions}; it cannot continue from files")
            config, plan = _config_and_plan(stored_config, solutions, problems, **judged)
            _warn_unclaimed(config, plan)
            spread = _executor(executor, address, gpus, build_jobs, config.device)
            _execute(run, db, plain, as_json, lambda store, listener: runner.execute(
                store, run, config, plan, evaluate=evaluate, listener=listener, executor=spread))
            return
        if build_jobs or executor != "local" or address is not None:
            raise UsageError("--build-jobs, --executor and --address are for runs of files (--solutions); a "
                             "model's run judges its candidates as they come, one at a time per GPU (--gpus)")
        if stored_config is not None and stored_config.source == "replay":
            raise UsageError(f"run {run!r} replays files from {stored_config.solutions}; it cannot continue with a model")
        generation = _Generation(
            samples=samples, turns=turns, base_url=base_url, template=template, refine_template=refine_template,
            target=target, gpu=gpu, concurrency=concurrency,
            sampling=Sampling(temperature, top_p, max_tokens, seed, reasoning_effort, request_options(option)),
            max_retries=max_retries, request_timeout=request_timeout, agent_time_limit=agent_time_limit,
            agent_version=agent_version, prices=prices, env_file=env_file, api_key_env=api_key_env,
            agent_access=(agent_network, agent_gpu, split_names(agent_env) if agent_env else None),
        )
        config, plan, the_agent = _generated_setup(stored_config, spec, problems, generation, **judged)
        devices = _devices(gpus, config.device)
        try:
            _execute(run, db, plain, as_json, lambda store, listener: agent.execute(
                store, run, config, plan, the_agent, evaluate=evaluate, listener=listener, devices=devices),
                show_turns=config.turns > 1)
        finally:
            the_agent.provider.close()


def _warn_unclaimed(config: RunConfig, plan: runner.Plan) -> None:
    if plan.unclaimed:
        shown = ", ".join(plan.unclaimed[:5]) + (", ..." if len(plan.unclaimed) > 5 else "")
        make_console(stderr=True).print(
            f"[yellow]warning:[/yellow] {len(plan.unclaimed)} files in {config.solutions} match no selected "
            f"problem: {shown}", highlight=False, soft_wrap=True
        )


def _execute(run: str, db: Path, plain: bool, as_json: bool, work, show_turns: bool = False) -> None:
    """Run ``work(store, listener)`` with progress shown, Ctrl-C and SIGTERM stopping it
    cleanly, and the score printed at the end (as JSON on stdout, with the progress
    on stderr, for ``--json``)."""
    shown = make_console(stderr=True) if as_json else console
    with Store(db) as store:
        progress = PlainProgress if plain or not shown.is_terminal else BarProgress
        listener = progress(shown, show_turns=show_turns)
        try:
            with _sigterm_interrupts():
                work(store, listener)
        except KeyboardInterrupt:
            listener.close()
            make_console(stderr=True).print(
                f"interrupted: finished verdicts are stored; resume with `kbench run --run {run} --db {db}`"
            )
            raise typer.Exit(code=130) from None
        except BaseException:
            listener.close()
            raise
        listener.close()
        data = store.load(run)
    result = score_run(outcomes(data), columns_of(data))
    if as_json:
        typer.echo(json.dumps(finite(score_document(data, result)), indent=2, allow_nan=False))
    else:
        print_score(console, data, result)


@dataclass(frozen=True)
class _Generation:
    """The generation options of ``kbench run`` as given (None: not given)."""

    samples: int | None
    turns: int | None
    base_url: str | None
    template: str | None
    refine_template: str | None
    target: str | None
    gpu: str | None
    sampling: Sampling
    concurrency: int
    max_retries: int
    request_timeout: float
    agent_time_limit: float | None
    agent_version: str | None
    agent_access: tuple[bool | None, bool | None, list[str] | None]  # network, GPU, variables (None: not given)
    prices: Path | None
    env_file: Path
    api_key_env: str | None


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


def _executor(kind: str, address: str | None, gpus: str | None, build_jobs: int,
              device: str) -> judge.Executor | None:
    """``--executor``: None to judge in turn here; a LocalExecutor on the ``--gpus`` (or the
    run's device, building ahead); or a RayExecutor holding a GPU (or a CPU) per evaluation."""
    if kind not in judge.EXECUTORS:
        raise UsageError(f"--executor {kind!r}: choose from {', '.join(judge.EXECUTORS)}")
    if kind == "local":
        if address is not None:
            raise UsageError("--address joins a Ray cluster: give it with --executor ray")
        devices = _devices(gpus, device)
        return judge.LocalExecutor(devices or [device], build_jobs) if devices or build_jobs else None
    if gpus is not None:
        raise UsageError("--gpus picks this machine's GPUs for the local executor; with --executor ray, Ray gives "
                         "each evaluation a GPU")
    try:
        return judge.RayExecutor(address, device=device, build_jobs=build_jobs)
    except ImportError as exc:
        raise UsageError(str(exc)) from exc


def request_options(given: list[str] | None) -> dict[str, Any]:
    """``--option KEY=VALUE`` pairs: VALUE as JSON where it parses, else as text."""
    options: dict[str, Any] = {}
    for pair in given or []:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise UsageError(f"--option {pair!r}: expected KEY=VALUE")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value
    return options


def _generated_setup(stored: RunConfig | None, spec: providers.ModelSpec, problems, options: _Generation, *,
                     device, baseline, size, trials, timeout, policy, cuda_graph, sandbox, dtype, limit):
    """The config, plan and agent of a run that asks a model, from the options and,
    for those left out, the stored run (or the defaults)."""
    if stored is None and not problems:
        raise UsageError("a new run needs --problems")
    old = agent.AgentConfig.from_dict(stored.generation) if stored is not None else None
    selection = tuple(problems) if problems else stored.selection
    judged = _judge_settings(stored, device=device, baseline=baseline, size=size, trials=trials, timeout=timeout,
                             policy=policy, cuda_graph=cuda_graph, sandbox=sandbox, dtype=dtype, limit=limit)
    target = options.target or (old.target if old else agent.DEFAULT_TARGET)
    if target not in ("triton", "cuda"):
        raise UsageError(f"--target {target!r}: choose triton or cuda")
    turns = options.turns or (stored.turns if stored else 1)
    samples = options.samples or (stored.samples if stored else 1)
    if options.template:
        template = agent.choose_template(options.template, target, "initial")
    else:
        template = agent.restore_template(old.template, target) if old else agent.choose_template(
            agent.DEFAULT_TEMPLATE, target, "initial")
    if options.refine_template:
        refine = agent.choose_template(options.refine_template, target, "refine")
    elif old and old.refine_template:
        refine = agent.restore_template(old.refine_template, target)
    else:
        refine = agent.choose_template(agent.DEFAULT_REFINE_TEMPLATE, target, "refine")
    gpu = options.gpu if options.gpu is not None else old.gpu if old else agent.default_gpu(judged["device"])
    same_provider = old is not None and old.provider == spec.provider
    if spec.provider == "command":
        stored_agent = (old.agent or {}) if same_provider else {}
        provider = command_agent.CommandProvider(
            spec.name,
            judge=command_agent.JudgeSettings(judged["device"], judged["size"], judged["trials"], judged["timeout"],
                                          judged["policy"], judged["cuda_graph"], judged["sandbox"], judged["dtype"]),
            time_limit=options.agent_time_limit or stored_agent.get("time_limit_s") or command_agent.DEFAULT_AGENT_TIME_LIMIT,
            version=options.agent_version or stored_agent.get("version"),
            access=_agent_access(options.agent_access, stored_agent),
        )
        price = None
    else:
        given = asdict(options.sampling)
        kept = (old.sampling or {}) if same_provider else {}
        merged = {k: v if v not in (None, {}) else kept.get(k) for k, v in given.items()}
        sampling = Sampling(**{k: v for k, v in merged.items() if v is not None})
        table = load_prices(options.prices) if options.prices else builtin_table()
        make = providers.OpenAIProvider if spec.provider == "openai" else providers.AnthropicProvider
        provider = make(
            spec.name,
            base_url=options.base_url or (old.endpoint if same_provider else None),
            key_env=options.api_key_env,
            env_file=options.env_file,
            timeout=options.request_timeout,
            max_retries=options.max_retries,
            sampling=sampling,
        )
        price = price_for(spec.provider, spec.name, table)
    the_agent = agent.Agent(provider, template, refine, target=target, gpu=gpu, concurrency=options.concurrency,
                            price=price)
    plan = runner.plan_generated(_runnable(selection, judged["dtype"], judged["limit"]), samples, str(provider.spec))
    config = runner.generated_config(
        plan,
        selection=selection,
        model=str(provider.spec),
        source=spec.provider,
        samples=samples,
        turns=turns,
        generation=the_agent.config(turns).to_dict(),
        **judged,
    )
    return config, plan, the_agent


def _agent_access(given: tuple[bool | None, bool | None, list[str] | None],
                  stored: dict[str, Any]) -> command_agent.AgentAccess:
    """A command agent's network, GPU and variables: as given, else as the run stored them, else none."""
    network, gpu, env = given
    return command_agent.AgentAccess(
        network=network if network is not None else bool(stored.get("network", False)),
        gpu=gpu if gpu is not None else bool(stored.get("gpu", False)),
        env=tuple(env if env is not None else stored.get("env", ())),
    )


def _config_and_plan(stored: RunConfig | None, solutions, problems, *, device, baseline, size, trials, timeout, policy,
                     cuda_graph, sandbox, dtype, limit):
    """The run's config from the options, those left out taken from a stored run (or the defaults)."""
    if stored is None and (solutions is None or not problems):
        raise UsageError("a new run needs --model (or --solutions) and --problems")
    selection = tuple(problems) if problems else stored.selection
    solutions_dir = solutions if solutions is not None else Path(stored.solutions)
    judged = _judge_settings(stored, device=device, baseline=baseline, size=size, trials=trials, timeout=timeout,
                             policy=policy, cuda_graph=cuda_graph, sandbox=sandbox, dtype=dtype, limit=limit)
    plan = runner.plan_replay(_runnable(selection, judged["dtype"], judged["limit"]), solutions_dir)
    return runner.run_config(plan, selection=selection, solutions=solutions_dir, **judged), plan


def _judge_settings(stored: RunConfig | None, *, device, baseline, size, trials, timeout, policy, cuda_graph,
                    sandbox, dtype, limit) -> dict[str, Any]:
    """How the run's candidates are judged (and how many problems, for a smoke
    run): each option as given, else as the run was stored, else the default;
    the device and size resolved, CUDA-graph timing only on a CUDA device."""
    device = resolve_device(device if device is not None else stored.device if stored else None)
    cuda_graph = cuda_graph if cuda_graph is not None else stored.cuda_graph if stored else False
    check_settings(TimingSettings(cuda_graph=cuda_graph), device)
    return {
        "device": device,
        "size": resolve_size(size or (stored.size if stored else "auto"), device),
        "trials": trials or (stored.trials if stored else DEFAULT_TRIALS),
        "timeout": timeout or (stored.timeout if stored else DEFAULT_TIMEOUT),
        "policy": policy or (stored.policy if stored else DEFAULT_POLICY),
        "cuda_graph": cuda_graph,
        "sandbox": sandbox if sandbox is not None else stored.sandbox if stored else True,
        "dtype": _check_dtype(dtype or (stored.dtype if stored else "float32")),
        "baselines": tuple(baseline) if baseline else stored.baselines if stored else runner.default_baselines(device),
        "limit": limit if limit is not None else stored.limit if stored else None,
    }


def _check_dtype(dtype: str) -> str:
    if dtype not in DTYPES:
        raise UsageError(f"--dtype {dtype!r}: choose from {', '.join(DTYPES)}")
    return dtype


def _runnable(selection, dtype: str, limit: int | None = None) -> list:
    """The selected problems this Python can run in ``dtype`` (the first ``limit``
    of them); the others are named on stderr and left out."""
    problems, skipped = runner.runnable(runner.select_problems(selection), dtype)
    if skipped:
        reasons = sorted(set(skipped.values()))
        hint = f"; for level 4: {install_hint('transformers', 'level4')}" if any(
            r.startswith("needs") for r in reasons) else ""
        make_console(stderr=True).print(
            f"[yellow]skipped:[/yellow] {len(skipped)} problem(s) this Python cannot run ({'; '.join(reasons)}), "
            f"e.g. {next(iter(skipped))}{hint}", highlight=False, soft_wrap=True
        )
    return problems[:limit]


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
    app.command("run")(run_command)
