"""A model's run (``kbench run --model``): its generation options made into the agent,
the prompts and the provider, each option as given or else as the run stored it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kbench.agents import command_agent, providers
from kbench.agents import loop as agent
from kbench.agents.prices import builtin_table, load_prices, price_for
from kbench.agents.providers import Sampling
from kbench.cli.common import UsageError
from kbench.runs import runner
from kbench.runs.manifest import RunConfig
from kbench.suite.problem import Problem


@dataclass(frozen=True)
class Generation:
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


def model_or_files(model: str | None, solutions: Path | None, stored: Any) -> tuple[providers.ModelSpec | None, Path | None]:
    """Who writes a run's solutions (either track): ``--model`` (``replay/DIR`` is ``--solutions DIR``),
    ``--solutions``, or, both left out, the stored run's model; ``(None, DIR or None)`` for files."""
    spec = providers.parse_model(model) if model else None
    if spec is not None and solutions is not None:
        raise UsageError("give --model or --solutions, not both")
    if spec is not None and spec.provider == "replay":
        solutions, spec = Path(spec.name), None
    if spec is None and solutions is None and stored is not None and stored.source != "replay":
        spec = providers.parse_model(stored.solutions)
    return spec, solutions


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


def generated_setup(stored: RunConfig | None, spec: providers.ModelSpec, selection: tuple[str, ...],
                    options: Generation, judged: dict[str, Any], problems: list[Problem]
                    ) -> tuple[RunConfig, runner.Plan, agent.Agent]:
    """The config, plan and agent of a run that asks a model, from the options and,
    for those left out, the stored run (or the defaults); ``judged``: the run's judge
    settings, resolved (``kbench.cli.run``), ``problems``: the selection's runnable ones."""
    old = agent.AgentConfig.from_dict(stored.generation) if stored is not None else None
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
                                          judged["policy"], judged["cuda_graph"], judged["sandbox"], judged["dtype"],
                                          judged["precision"]),
            time_limit=options.agent_time_limit or stored_agent.get("time_limit_s") or command_agent.DEFAULT_AGENT_TIME_LIMIT,
            version=options.agent_version or stored_agent.get("version"),
            access=agent_access(options.agent_access, stored_agent),
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
    plan = runner.plan_generated(problems, samples, str(provider.spec))
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


def agent_access(given: tuple[bool | None, bool | None, list[str] | None],
                  stored: dict[str, Any]) -> command_agent.AgentAccess:
    """A command agent's network, GPU and variables: as given, else as the run stored them, else none."""
    network, gpu, env = given
    return command_agent.AgentAccess(
        network=network if network is not None else bool(stored.get("network", False)),
        gpu=gpu if gpu is not None else bool(stored.get("gpu", False)),
        env=tuple(env if env is not None else stored.get("env", ())),
    )
