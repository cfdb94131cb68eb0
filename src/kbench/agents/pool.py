"""The threads that ask a model: requests go out on a pool, answers come back on one queue.

The agent loop (kbench.agents.loop) keeps the store and the device to its own
thread; only the requests, which wait on the network, run here.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import Any

from kbench.agents.providers import Provider, Reply, Request


@dataclass(frozen=True)
class Job:
    sample: Any  # the loop's sample the request is for
    turn: int
    request: Request
    prompt_record: dict[str, Any]


class RequestPool:
    """Threads that ask the provider; answers come back as ``(job, reply or exception)``
    on one queue (``answers``, which the caller may share), to be passed to
    ``received``. Daemon threads, so an interrupted run does not wait for requests in
    flight (whose replies, not yet stored, are asked again on resumption). A provider that
    raises (ProviderError: it cannot go on; anything else: a defect) stops the run
    from the calling thread, with everything stored so far kept."""

    def __init__(self, provider: Provider, workers: int, answers: queue.Queue | None = None):
        self.provider = provider
        self.jobs: queue.Queue[Job | None] = queue.Queue()
        self.answers: queue.Queue = answers if answers is not None else queue.Queue()  # may be shared
        self.pending = 0
        self.threads = [threading.Thread(target=self._work, daemon=True, name=f"kbench-ask-{i}")
                        for i in range(max(1, workers))]
        for thread in self.threads:
            thread.start()

    def submit(self, job: Job) -> None:
        self.pending += 1
        self.jobs.put(job)

    def _work(self) -> None:
        while (job := self.jobs.get()) is not None:
            try:
                answer: Reply | BaseException = self.provider.generate(job.request)
            except Exception as exc:  # noqa: BLE001 - handed to the calling thread, which raises it
                answer = exc
            self.answers.put((job, answer))

    def received(self, job: Job, answer: Reply | BaseException) -> tuple[Job, Reply]:
        """An answer taken off the queue: one fewer pending; a provider's exception raised here."""
        self.pending -= 1
        if isinstance(answer, BaseException):
            raise answer
        return job, answer

    def close(self) -> None:
        for _ in self.threads:
            self.jobs.put(None)
        self.provider.close()
