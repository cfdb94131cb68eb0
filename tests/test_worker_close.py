"""Closing a worker (kbench.judge.processes.process.Worker.close) never reaches another worker.

Twice a run ended in ``infra_error`` from the judge itself (``OSError: [Errno 9] Bad
file descriptor`` in ``Worker.close``, issue 28): an evaluation closes its candidate
after the last timing round and again on its way out, and the second close closed the
descriptor numbers of the first once more, by then another worker's pipes.
"""

import threading
import time

from kbench.judge.processes.devices import worker_env
from kbench.judge.processes.process import Worker


def _fds(worker: Worker) -> set[int]:
    return {worker._cmd_write, worker._answer_read, worker.handles.fileno(), worker.process.stdout.fileno()}


def _still_works(worker: Worker, tmp_path) -> None:
    solution = tmp_path / "solution.py"
    solution.write_text("import torch\n\n\nclass ModelNew(torch.nn.Module):\n    pass\n")
    answer = worker.request({"op": "build", "solution_path": str(solution)}, time.monotonic() + 120, "building")
    assert answer["ok"], answer


def test_a_worker_closed_twice_leaves_the_worker_that_took_its_descriptors_working(tmp_path):
    first = Worker(worker_env("cpu"))
    numbers = _fds(first)
    first.close()
    with Worker(worker_env("cpu")) as second:
        assert numbers & _fds(second)  # the numbers were given again: what made a second close dangerous
        first.close()
        _still_works(second, tmp_path)


def test_closes_from_two_threads_at_once_close_once(tmp_path):
    doomed = Worker(worker_env("cpu"))
    with Worker(worker_env("cpu")) as bystander:
        errors: list[BaseException] = []

        def close() -> None:
            try:
                doomed.close()
            except BaseException as exc:  # noqa: BLE001 - the test reports it
                errors.append(exc)

        threads = [threading.Thread(target=close) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert doomed.process.returncode is not None
        doomed.pause()  # a closed worker's pid may be another process's: nothing is signalled
        doomed.resume()
        _still_works(bystander, tmp_path)
