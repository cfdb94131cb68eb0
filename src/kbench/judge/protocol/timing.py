"""The timing protocol: how one module's forward call is timed on one device.

Each timed call is preceded, outside the timed region, by fresh input values,
an L2 cache flush (a write to a buffer of at least twice the device's L2) and a
device-wide synchronisation; on CUDA the call is bracketed by events, and a
host clock around the synchronised call bounds what the events say (a second
opinion that sees every stream). Warm-up runs until compilation and
autotuning are out of the way; repetitions stop when the median's relative
uncertainty is under a target, or when a time budget or call cap is reached.
On the CPU the same loop runs with a monotonic clock and says so.

This module runs inside worker processes. It captures the clock and
synchronisation functions when it is imported, before any candidate code, so a
candidate that replaces ``torch.cuda.synchronize`` or ``time.perf_counter``
does not change what the protocol calls.
"""

from __future__ import annotations

import contextlib
import functools
import math
import random
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import torch

from kbench.judge.protocol.l2 import reset_persisting_lines
from kbench.judge.protocol.plain import not_plain

_perf_ns = time.perf_counter_ns
_cuda_sync = torch.cuda.synchronize
_CudaEvent = torch.cuda.Event
_cuda_sleep = torch.cuda._sleep
LEAD_CALIBRATION_CYCLES = 1_000_000
MAX_LAUNCH_LEAD_US = 2000.0  # a lead longer than a short call would hide more host work than any launch takes
_CudaStream, _on_stream = torch.cuda.Stream, torch.cuda.stream

CPU_FLUSH_BYTES = 64 << 20
OVERHEAD_CALLS = 20
MIN_CUDA_FLUSH_BYTES = 64 << 20


@dataclass(frozen=True)
class TimingSettings:
    """Knobs of the protocol; recorded with every measurement."""

    warmup_calls: int = 3
    warmup_seconds: float = 0.1
    min_calls: int = 10
    max_calls: int = 1000
    target_rel_error: float = 0.005
    budget_seconds: float = 5.0  # for the candidate's calls, over all rounds
    rounds: int = 6  # candidate and baselines alternate this many times (docs/timing.md)
    cuda_graph: bool = False  # time replays of one captured CUDA graph (GraphedCall) instead of calls
    # Each round's buffers at a new place in memory (new_placement): the repository track's choice; for a
    # kernel problem it bought nothing on the H200 (30 null candidates each way on one machine, 0.48%
    # against 0.50% rms log speedup, docs/measurements/2026-12-03-six-rounds.md) and costs a round its allocations.
    new_placement_per_round: bool = False
    # An experiment (issue 30), off by default: on a GPU, a sleep of this many microseconds queued ahead
    # of each call's start event, so the call's launches queue while the GPU sleeps and the CPU's launch
    # latency (13-75 us of the clock in one process on the H200, a cold launch after a pause 130-350 us:
    # benchmarks/pause_ramp.py) is out of the clock, up to that long. 0: the clock counts the launch.
    launch_lead_us: float = 0.0
    # An experiment (issue 30): False leaves the candidate's settling calls out of each baseline's replay of
    # its round. Neither side times them and a baseline has no check to settle from; with six after each of
    # the 2.3 checks a round of the H200's null candidates had, about 14 of a replay's 27 calls. True (the
    # default): the very same calls on both sides, as every figure in docs/measurements/ was measured.
    replay_settling: bool = True
    # Above ``rounds``: further rounds, up to this many, until the rounds' speedups agree to within
    # ``target_speedup_error`` (kbench.judge.protocol.repeatability.rounds_settled). 0: always ``rounds``.
    max_rounds: int = 0
    target_speedup_error: float = 0.0025  # half the 95% interval of the rounds' mean log speedup
    # Whole evaluations, each with a fresh pair of worker processes, whose log speedups the verdict
    # averages (kbench.judge.protocol.pairs): what moves from one process pair to the next (0.4% on the H200)
    # no count of rounds inside one pair averages. At least ``pairs``; above, up to ``max_pairs``
    # until the verdict's 95% interval is within ``target_pair_error`` of its speedup on each side.
    pairs: int = 1
    max_pairs: int = 0
    target_pair_error: float = 0.005
    # The speedups a score turns on (fast_p's p): with ``max_pairs``, a further pair only while some
    # speedup's interval still holds one of them, as well as reaching further than ``target_pair_error``;
    # a speedup well clear of them is decided by fewer pairs. (): every speedup until its interval is narrow.
    decide_at: tuple[float, ...] = ()


@dataclass(frozen=True)
class Timing:
    """One measured distribution of per-call times, unrounded, in milliseconds."""

    clock: str
    median_ms: float
    mean_ms: float
    stdev_ms: float
    min_ms: float
    max_ms: float
    p25_ms: float
    p75_ms: float
    count: int
    rel_error: float | None
    host_median_ms: float
    warmup_calls: int
    stop_reason: str
    settings: dict[str, Any] = field(default_factory=dict)
    samples_ms: list[float] = field(default_factory=list)
    host_samples_ms: list[float] = field(default_factory=list)
    overhead_ms: float | None = None  # the clock around an empty call: reported, not subtracted
    # The judge's own clock from handing out each timed call's seed to its report (kbench.judge.trusted.calls)
    judge_median_ms: float | None = None
    judge_samples_ms: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> dict[str, Any]:
        """The distribution without its raw samples (what verdicts keep)."""
        return {k: v for k, v in asdict(self).items() if not k.endswith("samples_ms")}


def summarize(
    clock: str,
    samples: list[float],
    host_samples: list[float],
    warmup_calls: int,
    stop_reason: str,
    settings: dict[str, Any],
    overhead_ms: float | None = None,
    judge_samples: list[float] | None = None,
) -> Timing:
    """The distribution of ``samples`` (at least one; a reading that is no time gives NaN, not an error)."""
    if not samples or not host_samples:
        raise ValueError("a timing needs at least one call")
    ordered = sorted(samples)
    quartiles = statistics.quantiles(ordered, n=4) if len(ordered) >= 2 else ordered * 3
    return Timing(
        clock=clock,
        median_ms=statistics.median(ordered),
        mean_ms=statistics.fmean(ordered),
        stdev_ms=_stdev(ordered),
        min_ms=ordered[0],
        max_ms=ordered[-1],
        p25_ms=quartiles[0],
        p75_ms=quartiles[2],
        count=len(ordered),
        rel_error=_finite_or_none(median_rel_error(ordered)),
        host_median_ms=statistics.median(host_samples),
        warmup_calls=warmup_calls,
        stop_reason=stop_reason,
        settings=settings,
        samples_ms=list(samples),
        host_samples_ms=list(host_samples),
        overhead_ms=overhead_ms,
        judge_median_ms=statistics.median(judge_samples) if judge_samples else None,
        judge_samples_ms=list(judge_samples or []),
    )


def with_samples(timing: Timing, samples: list[float]) -> Timing:
    """``timing`` with each call's time replaced (the times the judge accepts: calls.trusted_times)."""
    if len(samples) != len(timing.samples_ms):
        raise ValueError(f"{len(samples)} times for {len(timing.samples_ms)} calls")
    return summarize(timing.clock, samples, timing.host_samples_ms, timing.warmup_calls, timing.stop_reason,
                     timing.settings, timing.overhead_ms, timing.judge_samples_ms)


def pooled(rounds: list[dict[str, Any]]) -> Timing:
    """One distribution from the calls of every round (each a ``Timing.to_dict()``)."""
    return summarize(
        rounds[0]["clock"],
        [x for r in rounds for x in r["samples_ms"]],
        [x for r in rounds for x in r["host_samples_ms"]],
        sum(r["warmup_calls"] for r in rounds),
        f"{len(rounds)} rounds",
        rounds[0]["settings"],
        rounds[0].get("overhead_ms"),
        [x for r in rounds for x in r.get("judge_samples_ms", [])],
    )


def median_rel_error(samples: list[float]) -> float:
    """Relative standard error of the median, from the order-statistic 95% interval.

    Distribution-free: the interval between the ranks n/2 -+ 0.98*sqrt(n)
    covers the median with about 95% probability; half its width over 1.96 is
    a standard error.
    """
    n = len(samples)
    if n < 3:
        return math.inf
    ordered = sorted(samples)
    lo = max(0, math.floor(n / 2 - 0.98 * math.sqrt(n)))
    hi = min(n - 1, math.ceil(n / 2 + 0.98 * math.sqrt(n)))
    median = statistics.median(ordered)
    if median <= 0:
        return math.inf
    return (ordered[hi] - ordered[lo]) / (2 * 1.96) / median


class FreshInputs:
    """Draws a whole new set of inputs for every call, from a seed given for that call.

    Each call's inputs come from the problem's own ``get_inputs``, so values
    keep the problem's distribution and domain (their places in memory mostly
    repeat: the caching allocator reuses the blocks the last call freed). In the judge the
    seeds come one at a time from the judge's process, each only when its
    call is about to be made: a candidate cannot compute the next calls'
    outputs ahead of time (in an untimed warm-up call, say), because nothing
    in its process knows those inputs yet. Both processes get the same seeds,
    so the reference and the candidate are timed on the same inputs.
    """

    def __init__(self, draw: Callable[[int], list[Any]], next_seed: Callable[[], int]):
        self._draw = draw
        self._next_seed = next_seed

    def next(self) -> list[Any]:
        return self._draw(self._next_seed())


def seed_sequence(seed: int) -> Callable[[], int]:
    """A reproducible stream of seeds, for timing outside the judge (benchmarks, the audit)."""
    return functools.partial(random.Random(seed).getrandbits, 62)


class CacheFlusher:
    """Evicts the inputs and outputs of the last call from the caches.

    On a GPU every persisting L2 line is first made normal (kbench.judge.protocol.l2), after
    the staged inputs are written, so no line a candidate marked persisting
    survives the flush; and the flush writes on a stream of its own, where no
    access-policy window a candidate set on the current stream (streaming
    writes, which would evict one another first) applies."""

    def __init__(self, device: torch.device):
        self._stream = None
        if device.type == "cuda":
            l2_bytes = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
            nbytes = max(2 * int(l2_bytes), MIN_CUDA_FLUSH_BYTES)
            self._stream = _CudaStream(device)
        else:
            nbytes = CPU_FLUSH_BYTES
        self.nbytes = nbytes
        self.device = device
        self._buffer = torch.empty(nbytes // 4, dtype=torch.int32, device=device)

    def __call__(self) -> None:
        if self._stream is None:
            self._buffer.fill_(1)
            return
        _cuda_sync(self.device)  # the staged inputs written, then no line left persisting
        reset_persisting_lines()
        with _on_stream(self._stream):
            self._buffer.fill_(1)


def clock_name(device: str | torch.device) -> str:
    """The clock a worker times calls with on ``device`` (``Clock.name``)."""
    return "cuda-events" if torch.device(device).type == "cuda" else "cpu-perf-counter"


class Clock:
    """Times one call: CUDA events on a GPU, the monotonic clock on a CPU; on a GPU with
    ``lead_us``, after a sleep that long queued ahead of the start event (``TimingSettings.launch_lead_us``)."""

    def __init__(self, device: torch.device, lead_us: float = 0.0):
        self.device = device
        self.name = clock_name(device)
        self._lead_cycles = 0
        if device.type == "cuda" and lead_us > 0:
            self._lead_cycles = max(1, round(lead_us * self._sleep_cycles_per_us()))

    def _sleep_cycles_per_us(self) -> float:
        """How many cycles of ``torch.cuda._sleep`` take a microsecond on this GPU (the median of three)."""
        readings = []
        for _ in range(3):
            start, end = _CudaEvent(enable_timing=True), _CudaEvent(enable_timing=True)
            start.record()
            _cuda_sleep(LEAD_CALIBRATION_CYCLES)
            end.record()
            _cuda_sync(self.device)
            readings.append(LEAD_CALIBRATION_CYCLES / (start.elapsed_time(end) * 1000))
        return statistics.median(readings)

    def sync(self) -> None:
        if self.device.type == "cuda":
            _cuda_sync(self.device)

    def time_call(self, call: Callable[[], Any]) -> tuple[float, float, Any]:
        """(clock ms, host ms, result) of one call, everything synchronised."""
        self.sync()
        if self.device.type != "cuda":
            t0 = _perf_ns()
            result = call()
            t1 = _perf_ns()
            host_ms = (t1 - t0) / 1e6
            return host_ms, host_ms, result
        start, end = _CudaEvent(enable_timing=True), _CudaEvent(enable_timing=True)
        if self._lead_cycles:
            _cuda_sleep(self._lead_cycles)
        t0 = _perf_ns()
        start.record()
        result = call()
        end.record()
        _cuda_sync(self.device)
        t1 = _perf_ns()
        return start.elapsed_time(end), (t1 - t0) / 1e6, result


class TimedCall:
    """One call the protocol's way: inputs staged, the L2 flushed (in a worker, by the trusted
    side after it drew the inputs, so here only after a graph's staging copy), everything
    synchronised, the call clocked. Every call a worker makes for the judge
    (trial, timed, checked or recorded) is one of these: nothing tells them apart.
    Each output is inspected before the clock stops (kbench.judge.protocol.plain)."""

    def __init__(self, forward: Callable[..., Any], device: torch.device,
                 stage: Callable[[list[Any]], Callable[[], Any]] | None = None, lead_us: float = 0.0,
                 flush: bool = True):
        self.clock = Clock(device, lead_us)
        self.device = device
        self.flush = CacheFlusher(device) if flush else None
        self.stage = stage or (lambda args: functools.partial(forward, *args))
        self.overhead_ms = statistics.median(self.clock.time_call(lambda: None)[0] for _ in range(OVERHEAD_CALLS))
        self.not_plain: str | None = None  # of the last call's output: why it is not plain tensors

    def __call__(self, args: list[Any],
                 watch: contextlib.AbstractContextManager[Any] | None = None) -> tuple[float, float, Any]:
        """(clock ms, host ms, output) of one call on ``args``; ``watch`` (the
        recorded call's watchers) is entered after the flush, around the clock."""
        call = self.stage(args)
        if self.flush is not None:
            self.flush()
        with watch or contextlib.nullcontext():
            clock_ms, host_ms, (out, self.not_plain) = self.clock.time_call(functools.partial(_inspected, call))
        if self.device.type == "cuda":  # nothing it marked persisting outlives the call (a baseline comes next)
            reset_persisting_lines()
        return clock_ms, host_ms, out


def _inspected(call: Callable[[], Any]) -> tuple[Any, str | None]:
    """The call's output, and whether it is not plain (inside the clock)."""
    out = call()
    return out, not_plain(out)


class StopRule:
    """The protocol's counting: warm-up calls until compilation and autotuning
    are out of the way, then timed calls until the median is stable, the budget
    is spent or the cap is reached.

    Kept by whoever drives the calls: the judge's process for a worker (so a
    candidate cannot decide how often, or which of its calls, are counted),
    ``measure`` in-process for the audit and benchmarks.
    """

    def __init__(self, settings: TimingSettings, deadline: float | None = None):
        self.settings = settings
        self.warmup_start = time.monotonic()
        self.budget_end = self.warmup_start + settings.budget_seconds
        if deadline is not None:
            self.budget_end = min(self.budget_end, deadline)
        self.warmup_calls = 0
        self.samples: list[float] = []
        self.host_samples: list[float] = []
        self.stop_reason = "max_calls"
        self._warming = True

    def next_call(self) -> str | None:
        """``"warmup"`` or ``"timed"`` for the next call; None when enough are measured."""
        settings = self.settings
        if self._warming:
            now = time.monotonic()
            if self.warmup_calls < settings.warmup_calls or (
                now - self.warmup_start < settings.warmup_seconds and now < self.budget_end
            ):
                return "warmup"
            self._warming = False
        count = len(self.samples)
        if count >= settings.max_calls:
            self.stop_reason = "max_calls"
            return None
        if count >= settings.min_calls:
            if median_rel_error(self.samples) <= settings.target_rel_error:
                self.stop_reason = "stable"
                return None
            if time.monotonic() >= self.budget_end:
                self.stop_reason = "budget"
                return None
        return "timed"

    def record(self, kind: str, clock_ms: float, host_ms: float) -> None:
        """Count one call; a reading that is no time (the judge refuses it first) is a ValueError."""
        if not all(math.isfinite(ms) and ms >= 0 for ms in (clock_ms, host_ms)):
            raise ValueError(f"not a time: clock {clock_ms!r} ms, host {host_ms!r} ms")
        if kind == "warmup":
            self.warmup_calls += 1
        elif kind == "timed":
            self.samples.append(clock_ms)
            self.host_samples.append(host_ms)

    def timing(self, clock: str, overhead_ms: float | None, judge_samples: list[float] | None = None) -> Timing:
        return summarize(clock, self.samples, self.host_samples, self.warmup_calls, self.stop_reason,
                         asdict(self.settings), overhead_ms, judge_samples)


def measure(
    forward: Callable[..., Any],
    inputs: FreshInputs,
    device: torch.device,
    settings: TimingSettings,
    deadline: float | None = None,
    stage: Callable[[list[Any]], Callable[[], Any]] | None = None,
) -> Timing:
    """Run the protocol on ``forward`` in this process and return the distribution it saw.

    ``deadline`` (a ``time.monotonic()`` value) cuts the budget short so the
    measurement ends inside the caller's overall time limit. ``stage`` turns
    one call's inputs into the call to time, before the L2 flush and outside
    the timed region (``GraphedCall.stage``: copy into the graph's inputs);
    by default the call is ``forward(*inputs)``. (The judge drives a worker's
    calls from its own process instead: kbench.judge.trusted.calls.)
    """
    call = TimedCall(forward, device, stage, settings.launch_lead_us)
    rule = StopRule(settings, deadline)
    while (kind := rule.next_call()) is not None:
        clock_ms, host_ms = call(inputs.next())[:2]
        rule.record(kind, clock_ms, host_ms)
    return rule.timing(call.clock.name, call.overhead_ms)


PLACEMENT_STEP_BYTES = 2 << 20  # the caching allocator's rounding of large blocks
PLACEMENT_STEPS = 32


def new_placement(device: torch.device, round_index: int) -> torch.Tensor | None:
    """Make the next buffers land somewhere new, and return what must be held meanwhile.

    Within one process the caching allocator hands each call's inputs and
    outputs the blocks the last call freed, so every call of a round sees the
    same placement in memory. Before a round this releases the cached blocks
    and takes a spacer of a size fixed by the round's index (0-62 MiB, the
    same sequence in the candidate's and the baselines' processes): what the
    round allocates then comes from new allocations after it. The model's own
    weights stay where they are. Nothing to do on a CPU.
    """
    if device.type != "cuda":
        return None
    _cuda_sync(device)
    torch.cuda.empty_cache()
    steps = random.Random(round_index).randrange(PLACEMENT_STEPS)
    return torch.empty(steps * PLACEMENT_STEP_BYTES, dtype=torch.uint8, device=device)


def check_settings(settings: TimingSettings, device: str) -> TimingSettings:
    """ValueError for settings this device cannot honour."""
    if settings.cuda_graph and not device.startswith("cuda"):
        raise ValueError(f"CUDA-graph timing needs a CUDA device, not {device}")
    if settings.max_rounds and (settings.max_rounds < settings.rounds or not settings.target_speedup_error > 0):
        raise ValueError(f"max_rounds {settings.max_rounds} must be 0 or at least rounds ({settings.rounds}), "
                         f"with a positive target_speedup_error")
    if not 0 <= settings.launch_lead_us <= MAX_LAUNCH_LEAD_US:
        raise ValueError(f"launch_lead_us {settings.launch_lead_us} must be between 0 and {MAX_LAUNCH_LEAD_US:g}")
    if settings.pairs < 1 or (settings.max_pairs and (settings.max_pairs < settings.pairs
                                                      or not settings.target_pair_error > 0)):
        raise ValueError(f"pairs {settings.pairs} must be at least 1, and max_pairs {settings.max_pairs} 0 or at "
                         f"least pairs, with a positive target_pair_error")
    if not all(isinstance(p, (int, float)) and 0 < p < math.inf for p in settings.decide_at):
        raise ValueError(f"decide_at {list(settings.decide_at)}: speedups, each positive and finite")
    if settings.decide_at and settings.max_pairs <= settings.pairs:
        raise ValueError(f"decide_at {list(settings.decide_at)} chooses which speedups get pairs beyond pairs "
                         f"({settings.pairs}): it needs max_pairs above that")
    return settings


def _stdev(ordered: list[float]) -> float:
    if len(ordered) < 2:
        return 0.0
    try:
        return statistics.stdev(ordered)
    except (ArithmeticError, AttributeError, ValueError):  # statistics' exact sums fail on NaN and infinities
        return math.nan


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None
