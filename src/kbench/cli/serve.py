"""``kbench serve``: the reward service (kbench.serve) on uvicorn. Only options and the start line here."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import List, Optional

import typer

from kbench import judge
from kbench.cli.common import DEVICE, POLICY, SIZE, HelpCommand, split_names, usage_error, usage_errors
from kbench.core.versions import install_hint
from kbench.judge.trusted.baselines import check_columns
from kbench.runs.runner import default_baselines

TOKEN_ENV = "KBENCH_SERVE_TOKEN"
DEFAULT_JOB_STORE = "kbench-serve.db"
DEFAULT_PORT = 8765


def serve_command(
    host: str = typer.Option("127.0.0.1", metavar="HOST", help="Address to listen on; beyond loopback a token is "
                             "required."),
    port: int = typer.Option(DEFAULT_PORT, min=1, max=65535, metavar="PORT", help="Port to listen on."),
    token: Optional[str] = typer.Option(None, envvar=TOKEN_ENV, metavar="TOKEN", show_envvar=True,
                                        help="Bearer token every request but the health check must carry "
                                        "(Authorization: Bearer TOKEN) [default: none, on loopback only]."),
    job_store: Path = typer.Option(Path(DEFAULT_JOB_STORE), metavar="PATH", help="The job store (SQLite): every "
                                   "accepted job, committed before it is acknowledged; restart with the same file "
                                   "to judge what was left."),
    device: Optional[str] = typer.Option(None, metavar=DEVICE, help="Where to judge [default: cuda if present, "
                                         "else cpu]."),
    gpus: Optional[str] = typer.Option(None, metavar="all|0,1,...", help="The GPUs judged on, one evaluation at a "
                                       "time on each [default: all, on cuda]."),
    workers: Optional[int] = typer.Option(None, min=1, help="Evaluations at once on a CPU, or Ray tasks in flight "
                                          "with --executor ray [default: 1; with ray, the cluster's GPUs]."),
    executor: str = typer.Option("local", metavar="|".join(judge.EXECUTORS), help="local: this machine's devices; "
                                 "ray: each evaluation a Ray task holding a GPU, at --address or a local instance."),
    address: Optional[str] = typer.Option(None, metavar="ADDRESS", help="With --executor ray: the cluster to join."),
    baseline: Optional[List[str]] = typer.Option(None, metavar="eager,compile,...", help="Baseline columns timed; a "
                                                 "reward's baseline is one of them [default: eager,compile on a "
                                                 "GPU, eager on a CPU]."),
    size: Optional[str] = typer.Option(None, metavar=SIZE, help="The problems' sizes [default: auto: small on a CPU]."),
    trials: Optional[int] = typer.Option(None, min=1, help=f"Correctness trials [default: {judge.DEFAULT_TRIALS}]."),
    timeout: Optional[float] = typer.Option(None, min=1, help=f"Seconds per evaluation [default: "
                                            f"{judge.DEFAULT_TIMEOUT:g}]."),
    policy: Optional[str] = typer.Option(None, metavar=POLICY, help="Guard policy [default: lenient]."),
    timing: Optional[bool] = typer.Option(None, "--timing/--no-timing", help="Time correct candidates; "
                                          "--no-timing gives rewards that need no speed only [default: timing]."),
    sandbox: Optional[bool] = typer.Option(None, "--sandbox/--no-sandbox", help="Run candidates in the OS sandbox "
                                           "[default: sandbox]."),
    max_queue: int = typer.Option(256, min=1, help="Jobs waiting or running at most; beyond, 503 busy."),
    max_batch: int = typer.Option(64, min=1, help="Jobs in one request at most."),
    max_source_bytes: int = typer.Option(256 * 1024, min=1024, help="Bytes of one source (or problem) at most."),
    allow_problem_source: bool = typer.Option(False, "--allow-problem-source", help="Take problems as a file's "
                                              "text too, not only suite ids (their reference runs outside the "
                                              "sandbox: for trusted clients)."),
) -> None:
    """Serve rewards over HTTP: POST /v1/jobs a problem and a candidate's source, GET /v1/jobs/ID its verdict and
    reward (docs/rewards.md)."""
    try:
        import uvicorn

        from kbench.serve.app import create_app
    except ImportError as exc:
        raise usage_error(f"kbench serve needs FastAPI and uvicorn: {install_hint(repr('kbench[serve]'), 'fastapi')}"
                          f" ({exc})") from exc
    from kbench.serve.jobs import JobStore, JobStoreError
    from kbench.serve.payload import Limits
    from kbench.serve.service import JudgeSettings, Service

    if not loopback(host) and not token:
        raise usage_error(f"--host {host} listens beyond this machine: give --token (or ${TOKEN_ENV})")
    with usage_errors():
        dev = judge.resolve_device(device)
        columns = check_columns(split_names(baseline) or default_baselines(dev), dev)
        settings = JudgeSettings(size=size or "auto", trials=trials or judge.DEFAULT_TRIALS,
                                 timeout=timeout or judge.DEFAULT_TIMEOUT, policy=policy or "lenient",
                                 baselines=tuple(columns), measure_time=timing is not False, sandbox=sandbox is not False)
        make_slots = slots(executor, address, dev, gpus, workers, settings.sandbox)
        try:
            jobs = JobStore(job_store)
        except JobStoreError as exc:
            raise ValueError(str(exc)) from exc
        limits = Limits(max_source_bytes=max_source_bytes, max_batch=max_batch,
                        allow_problem_source=allow_problem_source)
        service = Service(jobs, settings, make_slots, job_store.with_suffix(".problems"), limits=limits,
                          max_pending=max_queue)
    service.start()
    counts = jobs.counts()
    typer.echo(f"kbench serve: http://{host}:{port} judging on {service.slots.described} ({counts['queued']} queued, "
               f"{counts['done']} done in {job_store}){'; token required' if token else ''}", err=True)
    try:
        uvicorn.run(create_app(service, token), host=host, port=port, log_level="warning", access_log=False)
    finally:
        service.stop()


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def slots(executor: str, address: str | None, device: str, gpus: str | None, workers: int | None, sandbox: bool):
    """The executor's slots for ``--executor``, ``--gpus`` and ``--workers``."""
    from kbench.serve.service import local_slots, map_slots

    if executor not in judge.EXECUTORS:
        raise ValueError(f"--executor {executor!r}: choose from {', '.join(judge.EXECUTORS)}")
    if executor == "ray":
        if gpus is not None:
            raise ValueError("--gpus picks this machine's GPUs; with --executor ray, Ray gives each evaluation a GPU")
        ray_executor = judge.RayExecutor(address, device="cuda" if device.startswith("cuda") else "cpu")
        count = workers or max(1, int(ray_executor.connect().cluster_resources().get("GPU", 0)))
        return map_slots(ray_executor, count)
    if address is not None:
        raise ValueError("--address joins a Ray cluster: give it with --executor ray")
    if device.startswith("cuda"):
        if workers is not None:
            raise ValueError("--workers is for a CPU or Ray: on GPUs one evaluation runs on each (--gpus)")
        if gpus is None or gpus.strip() == "all":
            devices = [d for d in judge.local_devices() if d.startswith("cuda")]
        else:
            devices = [judge.resolve_device(f"cuda:{i}") for i in split_names([gpus])]
        return local_slots(devices, ahead=sandbox)
    if gpus is not None:
        raise ValueError(f"--gpus judges on GPUs; the device is {device}")
    return local_slots(["cpu"] * (workers or 1), ahead=False)


def register(app: typer.Typer) -> None:
    app.command("serve", cls=HelpCommand)(serve_command)

