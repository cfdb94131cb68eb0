"""What a pause does to the next timed calls, in one process (issue 30's null handicap).

On the H200 (2026-12-04, ``null_candidates.py --per-call``), the candidate's timed calls
right after the reference checked one of them were 15% slow, and the next five
4%, 3%, 3%, 2%, 1% (the first calls of its rounds alike), while eager's replay, with no
pause, was steady: most of the null candidate's handicap (those calls settle now, untimed on
both sides: kbench.judge.trusted.calls.SETTLE_CALLS). This script finds which part of
a pause does it: each variant repeats [pause, ten timed calls] and prints each position's
mean ln(call / steady median), beside the CPU time from the start event to the end
event's record (the launch, which a CUDA-event clock counts while the GPU waits for it).

Pauses: ``sleep`` (the worker blocked on its socket, as during a check), ``spin`` (the CPU
busy as long), ``other-gpu`` (another process's GPU work meanwhile, as the reference's
check, while this one blocks on a pipe), ``other-check`` (the other process checks as the reference
does: inputs and outputs drawn anew, then freed and its cache emptied, ``torch.cuda.empty_cache``,
which the reference does after every check: does freeing gigabytes slow this process's next
calls for tens of milliseconds?), ``handover`` (the last output copied into a device
buffer of its own and exported, as a checked call's, let go at the next call). ``+lead``: the
same, each call clocked after a short GPU sleep queued before its start event, so its launches
are queued while the GPU is busy and the CPU's speed is out of the clock (what
``TimingSettings.launch_lead_us`` does in the judge). ``steady``: the median of 60 calls in a row,
the reference each position is read against. Results of 2026-12-04: docs/measurements/2026-12-04-null-handicap.md,
"Where the
null handicap lived".

    PYTHONPATH=src python3 benchmarks/pause_ramp.py --problems level1/relu level1/group_norm --out ramp.json
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import statistics
import time
from pathlib import Path
from typing import Any

import torch

from kbench.judge.exchange import vmm
from kbench.judge.exchange.outputs import copy_packed, pack_output
from kbench.judge.protocol.timing import CacheFlusher
from kbench.suite import find_problem
from kbench.suite.problem import import_problem, resolve_size

CALLS_AFTER = 10
OTHER_SECONDS = 120.0
LEAD_CYCLES = 200_000  # about 0.1 ms of GPU sleep at the H200's clock: longer than a launch


def _model(problem_id: str) -> tuple[Any, list[Any]]:
    problem = find_problem(problem_id)
    module = import_problem(problem, resolve_size("auto", "cuda"))
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = module.Model(*module.get_init_inputs())
        args = list(module.get_inputs())
    return model.cuda().eval(), args


def _other_gpu(problem_id: str, orders: Any, done: Any) -> None:
    """Another process's GPU work on order: ``work``, a forward on its inputs; ``check``, as the
    reference's check of a call (kbench.judge.worker.session.Session.compare): inputs drawn anew, a forward,
    the candidate's output copied in beside it, then all of it freed and the cache emptied."""
    torch.set_grad_enabled(False)
    model, args = _model(problem_id)
    while order := orders.recv():
        if order == "check":
            held = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
            out = model(*held)
            outputs = out if isinstance(out, (list, tuple)) else [out]
            held += [t.clone() for t in outputs if isinstance(t, torch.Tensor)]
            del held, out, outputs
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        else:
            model(*args)
            torch.cuda.synchronize()
        done.send(True)


def _answer(done: Any) -> None:
    """The other process's answer, or an error where it died (out of memory, say) rather than a wait forever."""
    if not done.poll(OTHER_SECONDS):
        raise RuntimeError(f"the other GPU process did not answer within {OTHER_SECONDS} s")
    done.recv()


def _cpu_mhz() -> float | None:
    try:
        cpu = os.sched_getcpu()
        return int(Path(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_cur_freq").read_text()) / 1000
    except (OSError, ValueError, AttributeError):
        return None


class Clocked:
    """One problem's model and inputs, called as a worker calls it for the judge."""

    def __init__(self, model: Any, args: list[Any]):
        self.model, self.args = model, args
        self.flush = CacheFlusher(torch.device("cuda"))
        self.last: Any = None  # the last call's output
        self.handed_over: vmm.ExportedBuffer | None = None  # as the worker's, let go at the next call

    def __call__(self, lead: bool) -> tuple[float, float]:
        """(clock ms, launch µs) of one call the judge's way: flushed, synchronised, event-clocked."""
        if self.handed_over is not None:
            self.handed_over.close()
            self.handed_over = None
        self.flush()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if lead:
            torch.cuda._sleep(LEAD_CYCLES)
        t0 = time.perf_counter()
        start.record()
        self.last = self.model(*self.args)
        end.record()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        return start.elapsed_time(end), (t1 - t0) * 1e6

    def hand_over(self) -> None:
        """The last output into a device buffer of its own, exported, as a checked call's is."""
        layout, tensors = pack_output(self.last)
        self.handed_over = vmm.ExportedBuffer(layout["nbytes"], 0)
        copy_packed(tensors, self.handed_over.tensor())
        os.close(self.handed_over.export())


def _pause(kind: str, seconds: float, orders: Any, done: Any, clocked: Clocked) -> None:
    if kind == "handover":
        clocked.hand_over()
        time.sleep(seconds)
    elif kind == "sleep":
        time.sleep(seconds)
    elif kind == "spin":
        until = time.perf_counter() + seconds
        while time.perf_counter() < until:
            pass
    else:  # other-gpu, other-check
        time.sleep(seconds / 2)
        orders.send("check" if kind == "other-check" else "work")
        _answer(done)
        time.sleep(seconds / 2)


def measure(problem_id: str, pause_seconds: float, repeats: int) -> dict[str, Any]:
    torch.set_grad_enabled(False)
    model, args = _model(problem_id)
    clocked = Clocked(model, args)
    context = multiprocessing.get_context("spawn")
    orders_here, orders_there = context.Pipe()
    done_here, done_there = context.Pipe()
    other = context.Process(target=_other_gpu, args=(problem_id, orders_there, done_there), daemon=True)
    other.start()
    orders_here.send("work")
    _answer(done_here)  # the other process loaded and ran once
    variants: dict[str, Any] = {}
    for lead in (False, True):
        for _ in range(20):
            clocked(lead)
        steady = [clocked(lead) for _ in range(60)]
        steady_ms = statistics.median(ms for ms, _ in steady)
        label = "+lead" if lead else ""
        variants[f"steady{label}"] = {"median_ms": steady_ms,
                                     "launch_us": statistics.median(us for _, us in steady)}
        for kind in ("sleep", "spin", "other-gpu", "other-check", "handover"):
            by_position: list[list[float]] = [[] for _ in range(CALLS_AFTER)]
            launches: list[list[float]] = [[] for _ in range(CALLS_AFTER)]
            mhz_before, mhz_after = [], []
            for _ in range(repeats):
                _pause(kind, pause_seconds, orders_here, done_here, clocked)
                mhz_before.append(_cpu_mhz())
                for position in range(CALLS_AFTER):
                    ms, us = clocked(lead)
                    by_position[position].append(math.log(ms / steady_ms))
                    launches[position].append(us)
                mhz_after.append(_cpu_mhz())
            variants[f"{kind}{label}"] = {
                "ln_ratio_by_position": [statistics.mean(v) for v in by_position],
                "launch_us_by_position": [statistics.median(v) for v in launches],
                "cpu_mhz_after_pause": _median_or_none(mhz_before),
                "cpu_mhz_after_calls": _median_or_none(mhz_after),
            }
    orders_here.send(False)
    other.join(timeout=10)
    del model, args, clocked
    torch.cuda.empty_cache()  # the next problem's two processes need the room (sum_dim's inputs are 6 GiB)
    return {"problem": problem_id, "pause_seconds": pause_seconds, "repeats": repeats, "variants": variants}


def _median_or_none(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=["level1/relu", "level1/group_norm", "level1/matmul_square"])
    parser.add_argument("--pause-seconds", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=12)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    governor = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    print("governor:", governor.read_text().strip() if governor.exists() else "none seen",
          "| CPUs allowed:", len(os.sched_getaffinity(0)), flush=True)
    rows = []
    for problem_id in args.problems:
        row = measure(problem_id, args.pause_seconds, args.repeats)
        rows.append(row)
        print(problem_id, flush=True)
        for name, v in row["variants"].items():
            if name.startswith("steady"):
                print(f"  {name:16s} {v['median_ms']:.4f} ms, launch {v['launch_us']:.0f} us")
                continue
            shown = " ".join(f"{100 * x:+5.1f}" for x in v["ln_ratio_by_position"])
            launch = " ".join(f"{x:4.0f}" for x in v["launch_us_by_position"][:4])
            print(f"  {name:16s} % by position: {shown} | launch us {launch} | CPU MHz "
                  f"{v['cpu_mhz_after_pause']} -> {v['cpu_mhz_after_calls']}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
