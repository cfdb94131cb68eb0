"""A quiet GPU before a baseline is timed: the candidate's leftover work cannot slow it.

While a baseline round is timed the candidate's processes are stopped
(``Worker.pause``), but a stopped process's queued GPU work still runs, and
kernels of different processes take turns on a GPU by time slices: a
candidate that leaves a queue of long kernels behind (even one-block kernels,
which cost its own calls nothing) halves the baseline's share of the GPU, and
its speedup looks twice what it is. So before each baseline round the
reference, a process the candidate cannot reach, probes the GPU: the round
trip of a one-element kernel is microseconds on a quiet GPU and a time slice
(milliseconds) behind another process's work. A GPU that stays busy after the
candidate was stopped is the candidate's doing: rule ``gpu-busy``.
"""

from __future__ import annotations

import time
from typing import Callable

import torch

PROBE_LAUNCHES = 5
BUSY_MS = 0.5  # the fastest round trip above this: another process holds the GPU
WAIT_SECONDS = 2.0  # how long a busy GPU may take to drain before the candidate is blamed
RETRY_SECONDS = 0.1


def launch_round_trips_ms(device: torch.device, launches: int = PROBE_LAUNCHES) -> list[float]:
    """(In the reference's worker) the host's round trip of a one-element kernel, a few times over."""
    probe = torch.zeros(1, device=device)
    torch.cuda.synchronize(device)
    trips = []
    for _ in range(launches):
        started = time.perf_counter()
        probe.add_(1.0)
        torch.cuda.synchronize(device)
        trips.append((time.perf_counter() - started) * 1e3)
    return trips


def busy_gpu_finding(probe: Callable[[], list[float]], clock: Callable[[], float] = time.monotonic,
                     sleep: Callable[[float], None] = time.sleep) -> str | None:
    """(In the judge) probe until the GPU is quiet; what to say if it stays busy for
    ``WAIT_SECONDS`` (None once it is quiet). ``probe`` asks the reference's worker."""
    give_up = clock() + WAIT_SECONDS
    while True:
        fastest = min(probe())
        if fastest <= BUSY_MS:
            return None
        if clock() >= give_up:
            return (f"the GPU was still busy {WAIT_SECONDS:g} s after the candidate's processes were stopped "
                    f"(a one-element kernel took {fastest:.2f} ms to come back, against microseconds on a quiet "
                    "GPU): work it left queued would have slowed the baseline timed next")
        sleep(RETRY_SECONDS)
