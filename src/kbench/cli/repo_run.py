"""``kbench run --track repo``: patches to repository tasks, replayed from files or asked of a model
or a command agent, judged by ``kbench.repo.evaluate_patch`` and stored (docs/repo-runs.md).

Called by ``kbench.cli.run`` (which owns the options, the progress display and the score
printed at the end) for a run of the repository track; everything else is the kernel
track's own: the store, resumption, the agent loop, ``--rejudge``.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from kbench import judge, repo
from kbench.agents import loop as agent
from kbench.agents import providers, repo_prompts
from kbench.agents.command_agent import DEFAULT_AGENT_TIME_LIMIT, AgentAccess, JudgeSettings
from kbench.agents.prices import builtin_table, load_prices, price_for
from kbench.agents.providers import Sampling
from kbench.agents.repo_workspace import RepoCommandProvider
from kbench.cli.common import UsageError, make_console
from kbench.cli.model_run import model_or_files
from kbench.cli.run_settings import shared_settings
from kbench.runs import rejudge as rejudge_run
from kbench.runs import repo_runner, runner
from kbench.runs.manifest import RunConfig

# Replaced in tests by a fake judge; looked up at call time.
evaluate_patch = repo.evaluate_patch
# Options of the kernel track that say nothing about a patch (by their flag): refused when given.
KERNEL_ONLY = ("--problems", "--baseline", "--cuda-graph", "--dtype", "--precision", "--target", "--build-jobs",
               "--executor", "--address")


def chosen_track(run: str, track: str | None, stored: RunConfig | None, tasks: list[str] | None) -> str:
    """The run's track: as given, else the stored run's, else ``repo`` for ``--tasks`` and ``kernel``."""
    chosen = track or (stored.track if stored else repo_runner.TRACK if tasks else "kernel")
    if chosen not in ("kernel", repo_runner.TRACK):
        raise UsageError(f"--track {track!r}: choose kernel or {repo_runner.TRACK}")
    if stored is not None and chosen != stored.track:
        raise UsageError(f"run {run!r} is of the {stored.track} track; a run is of one track")
    if chosen == "kernel" and tasks:
        raise UsageError("--tasks selects repository tasks: a run of problems takes --problems")
    return chosen


def run_repo(*args: Any, **kwargs: Any) -> None:
    """``_run_repo``, with an unusable selection, task or patch file a usage error (one line, exit 2)."""
    try:
        _run_repo(*args, **kwargs)
    except (repo_runner.RepoRunError, repo.TaskError, repo.PatchFileError) as exc:
        raise UsageError(str(exc)) from exc


def _run_repo(run: str, stored: RunConfig | None, execute: Callable, *, model: str | None, solutions: Path | None,
             tasks: list[str] | None, rejudge: str | None, judged: dict[str, Any], generation: Any,
             kernel_only: dict[str, Any], gpus: str | None, devices: Callable[[str | None, str], list[str]]) -> None:
    """Plan and execute (``execute(work)``: kbench.cli.run's progress, interruption and score) a run
    of the repository track: a replay of patch files, a model's or a command agent's patches, or
    a re-judging of a stored run's."""
    given = [flag for flag, value in kernel_only.items() if value not in (None, False, (), [])]
    if given:
        raise UsageError(f"{', '.join(given)}: not for the repository track (a patch is timed against the base "
                         "revision, in the workload's own dtype)")
    settings = shared_settings(stored, **judged)
    if rejudge is not None:
        if model or solutions or tasks:
            raise UsageError("--rejudge judges the run's stored patches again: leave out --model, --solutions, --tasks")
        if stored is None:
            raise UsageError(f"no run named {run!r} to re-judge")
        statuses = rejudge_run.parse_statuses(rejudge)
        selected = _tasks(stored.selection, settings["limit"])
        config = rejudge_run.rejudge_config(stored, selected, **settings)
        execute(lambda store, listener: rejudge_run.rejudge(store, run, config, selected, statuses,
                                                            evaluate=evaluate_patch, listener=listener))
        return
    spec, solutions = model_or_files(model, solutions, stored)
    if stored is None and not tasks:
        raise UsageError("a new run of the repository track needs --tasks (task ids, task files, or all)")
    selection = tuple(tasks) if tasks else stored.selection
    selected = _tasks(selection, settings["limit"])
    if spec is None:
        if stored is not None and stored.source != "replay" and solutions is not None:
            raise UsageError(f"run {run!r} asks {stored.solutions}; it cannot continue from files")
        directory = solutions if solutions is not None else Path(stored.solutions)
        samples, unclaimed = repo_runner.plan_patches(selected, directory)
        if unclaimed:
            shown = ", ".join(unclaimed[:5]) + (", ..." if len(unclaimed) > 5 else "")
            make_console(stderr=True).print(f"[yellow]warning:[/yellow] {len(unclaimed)} patch files in {directory} "
                                            f"match no selected task: {shown}", highlight=False, soft_wrap=True)
        plan = runner.Plan(selected, samples, unclaimed)
        config = repo_runner.repo_config(selected, samples, selection=selection, solutions=str(directory.resolve()),
                                         **settings)
        spread = judge.LocalExecutor(devices(gpus, config.device)) if gpus else None
        execute(lambda store, listener: runner.execute(store, run, config, plan, evaluate=evaluate_patch,
                                                       listener=listener, executor=spread))
        return
    if stored is not None and stored.source == "replay":
        raise UsageError(f"run {run!r} replays patches from {stored.solutions}; it cannot continue with a model")
    the_agent = make_agent(stored, spec, generation, settings)
    samples_count = generation.samples or (stored.samples if stored else 1)
    turns = generation.turns or (stored.turns if stored else 1)
    plan = runner.plan_generated(selected, samples_count, str(the_agent.provider.spec))
    if turns < 1:
        raise UsageError(f"--turns {turns}: at least 1")
    config = repo_runner.repo_config(selected, plan.samples, selection=selection, solutions=str(the_agent.provider.spec),
                                     source=spec.provider, samples=samples_count, turns=turns,
                                     generation=the_agent.config(turns).to_dict(), **settings)
    try:
        execute(lambda store, listener: agent.execute(store, run, config, plan, the_agent, evaluate=evaluate_patch,
                                                      listener=listener, devices=devices(gpus, config.device)),
                show_turns=turns > 1)
    finally:
        the_agent.provider.close()


def _tasks(selection, limit: int | None) -> list:
    return repo_runner.select_tasks(selection)[:limit]


def make_agent(stored: RunConfig | None, spec: providers.ModelSpec, options: Any, judged: dict[str, Any]) -> agent.Agent:
    """The agent of a model's (or a command agent's) run on tasks: its provider and the repository
    templates, from the options and, for those left out, the stored run."""
    old = agent.AgentConfig.from_dict(stored.generation) if stored is not None else None
    template = _template(options.template, old.template if old else None, repo_prompts.DEFAULT_TEMPLATE, "initial")
    refine = _template(options.refine_template, old.refine_template if old else None,
                       repo_prompts.DEFAULT_REFINE_TEMPLATE, "refine")
    gpu = options.gpu if options.gpu is not None else old.gpu if old else agent.default_gpu(judged["device"])
    same_provider = old is not None and old.provider == spec.provider
    price = None
    if spec.provider == "command":
        kept = (old.agent or {}) if same_provider else {}
        network, gpu_access, env = options.agent_access
        provider = RepoCommandProvider(
            spec.name,
            judge=JudgeSettings(judged["device"], judged["size"], judged["trials"], judged["timeout"], judged["policy"],
                                sandbox=judged["sandbox"]),
            time_limit=options.agent_time_limit or kept.get("time_limit_s") or DEFAULT_AGENT_TIME_LIMIT,
            version=options.agent_version or kept.get("version"),
            access=AgentAccess(network=network if network is not None else bool(kept.get("network", False)),
                               gpu=gpu_access if gpu_access is not None else bool(kept.get("gpu", False)),
                               env=tuple(env if env is not None else kept.get("env", ()))),
        )
    else:
        kept = (old.sampling or {}) if same_provider else {}
        merged = {k: v if v not in (None, {}) else kept.get(k) for k, v in asdict(options.sampling).items()}
        sampling = Sampling(**{k: v for k, v in merged.items() if v is not None})
        make = providers.OpenAIProvider if spec.provider == "openai" else providers.AnthropicProvider
        provider = make(spec.name, base_url=options.base_url or (old.endpoint if same_provider else None),
                        key_env=options.api_key_env, env_file=options.env_file, timeout=options.request_timeout,
                        max_retries=options.max_retries, sampling=sampling)
        table = load_prices(options.prices) if options.prices else builtin_table()
        price = price_for(spec.provider, spec.name, table)
    return agent.Agent(provider, template, refine, target=repo_prompts.TARGET, gpu=gpu,
                       concurrency=options.concurrency, price=price)


def _template(given: str | None, stored: dict | None, default: str, kind: str):
    name = given or (stored or {}).get("name") or default
    return repo_prompts.get_repo_template(name, kind)
