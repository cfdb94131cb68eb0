"""Worker processes the judge can always get rid of.

Each worker is a fresh interpreter (never a fork of the judge, so it inherits
no memory of it) in a session of its own, so the whole process group can be
killed. Commands and answers travel over two private pipes; the worker's
stdout and stderr go to a third, of which only a bounded tail is kept. While
waiting for an answer the judge enforces a wall-clock deadline and a memory
limit on the worker and everything it started, and notices when it dies.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import psutil

KBENCH_SRC = str(Path(__file__).resolve().parents[2])
OUTPUT_TAIL_BYTES = 16 << 10
MAX_ANSWER_BYTES = 1 << 20
POLL_SECONDS = 0.1
# Not ``-m kbench.judge.worker``: that would run the module as __main__, and the
# guard must watch the very module object that holds the worker's functions.
WORKER_ENTRY = "import sys; import kbench.judge.worker; kbench.judge.worker.main(sys.argv)"


class WorkerLost(Exception):
    """The worker gave no usable answer; ``kind`` says why."""

    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind = kind  # "timeout", "died", "memory", "protocol", "forged"
        self.detail = detail


@dataclass
class OutputTail:
    """The last bytes a process wrote, and how many it wrote in all."""

    limit: int = OUTPUT_TAIL_BYTES
    total_bytes: int = 0

    def __post_init__(self) -> None:
        self._tail = bytearray()
        self._lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self.total_bytes += len(chunk)
            self._tail += chunk
            if len(self._tail) > self.limit:
                del self._tail[: len(self._tail) - self.limit]

    def text(self) -> str:
        with self._lock:
            tail = self._tail.decode(errors="replace")
            if self.total_bytes > self.limit:
                return f"[... {self.total_bytes - self.limit} earlier bytes dropped]\n{tail}"
            return tail


def _limit_child() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def default_memory_limit() -> int:
    """Half the machine's memory: enough for any problem, never the whole host."""
    return psutil.virtual_memory().total // 2


class Worker:
    """One worker process and the pipes to it."""

    def __init__(self, env: dict[str, str], memory_limit_bytes: int | None = None):
        cmd_read, self._cmd_write = os.pipe()
        self._answer_read, answer_write = os.pipe()
        child_env = {**os.environ, **env, "PYTHONUNBUFFERED": "1"}
        child_env["PYTHONPATH"] = os.pathsep.join(
            p for p in (KBENCH_SRC, os.environ.get("PYTHONPATH")) if p
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER_ENTRY, str(cmd_read), str(answer_write)],
            pass_fds=(cmd_read, answer_write),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=child_env,
            start_new_session=True,
            preexec_fn=_limit_child,
        )
        os.close(cmd_read)
        os.close(answer_write)
        self.memory_limit = memory_limit_bytes or default_memory_limit()
        self.peak_rss = 0
        self.output = OutputTail()
        self._buffer = b""
        self._reader = threading.Thread(target=self._drain_output, daemon=True)
        self._reader.start()

    def _drain_output(self) -> None:
        stream = self.process.stdout
        while chunk := stream.read1(65536):
            self.output.feed(chunk)

    def send(self, message: dict[str, Any]) -> None:
        self.assert_quiet()
        try:
            os.write(self._cmd_write, (json.dumps(message) + "\n").encode())
        except BrokenPipeError as exc:
            raise self._lost_from_exit() from exc

    def receive(self, deadline: float, what: str) -> dict[str, Any]:
        """The next answer; WorkerLost if it does not come by ``deadline``."""
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerLost("timeout", f"no answer within the time limit while {what}")
            ready, _, _ = select.select([self._answer_read], [], [], min(POLL_SECONDS, remaining))
            if ready:
                chunk = os.read(self._answer_read, 65536)
                if not chunk:
                    raise self._lost_from_exit(what)
                self._buffer += chunk
                if len(self._buffer) > MAX_ANSWER_BYTES:
                    raise WorkerLost("protocol", f"oversized answer while {what}")
            self._check_memory(what)
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            answer = json.loads(line)
        except ValueError as exc:
            raise WorkerLost("protocol", f"unreadable answer while {what}") from exc
        if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
            raise WorkerLost("protocol", f"malformed answer while {what}")
        return answer

    def assert_quiet(self) -> None:
        """No answer may arrive that was not asked for: one that does was forged."""
        pending = bool(self._buffer)
        if not pending and self.process.poll() is None:
            pending = bool(select.select([self._answer_read], [], [], 0)[0])
        if pending:
            raise WorkerLost("forged", "an answer arrived that the judge did not ask for")

    def request(
        self, message: dict[str, Any] | None, deadline: float, what: str, next_seed: Callable[[], int] | None = None
    ) -> dict[str, Any]:
        """Send a command (none: it was sent already) and wait for its answer.
        While it runs, the worker may ask for seeds (timed calls get each input
        seed only when due): those come from ``next_seed``."""
        if message is not None:
            self.send(message)
        while True:
            answer = self.receive(deadline, what)
            if answer.get("need") != "seed":
                return answer
            if next_seed is None:
                raise WorkerLost("protocol", f"asked for a seed while {what}")
            self.send({"seed": next_seed()})

    def _check_memory(self, what: str) -> None:
        try:
            root = psutil.Process(self.process.pid)
            rss = sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
        except psutil.Error:
            return
        self.peak_rss = max(self.peak_rss, rss)
        if rss > self.memory_limit:
            raise WorkerLost(
                "memory",
                f"host memory limit exceeded while {what}: {rss / 2**30:.2f} GiB used, "
                f"limit {self.memory_limit / 2**30:.2f} GiB",
            )

    def _lost_from_exit(self, what: str = "working") -> WorkerLost:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return WorkerLost("protocol", f"the worker closed its answer channel while {what}")
        self._reader.join(timeout=2)  # so the output tail holds its last words
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            return WorkerLost("died", f"the process was killed by signal {name} while {what}")
        return WorkerLost("died", f"the process exited with code {code} while {what}")

    def pause(self) -> None:
        """Stop every process and thread of the worker (SIGSTOP to its group): while a
        baseline is timed, nothing a candidate left behind can compete with it."""
        self._signal_group(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal_group(signal.SIGCONT)

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self, grace_seconds: float = 2.0) -> None:
        """Ask the worker to exit, then kill its whole process group regardless."""
        if self.process.poll() is None:
            self.resume()  # a paused worker cannot hear the request to exit
            try:
                os.write(self._cmd_write, b'{"op": "exit"}\n')
                self.process.wait(timeout=grace_seconds)
            except (OSError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()
        self._reader.join(timeout=1)
        for fd in (self._cmd_write, self._answer_read):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.process.stdout:
            self.process.stdout.close()

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
