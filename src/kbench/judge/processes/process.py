"""Worker processes the judge can always get rid of.

Each worker is a fresh interpreter (never a fork of the judge, so it inherits
no memory of it) in a session of its own, so the whole process group can be
killed. Commands and answers travel over two private pipes, device buffers'
descriptors over a Unix socket (kbench.judge.exchange.vmm); the worker's stdout and
stderr go to a third pipe, of which only a bounded tail is kept. While
waiting for an answer the judge enforces a wall-clock deadline and a memory
limit on the worker and everything it started, and notices when it dies.
"""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import psutil

from kbench.judge.builds.cache import building_fresh, candidate_build_dir, private_build_dir, publish_build, shared_build_lease

from kbench.judge.processes.devices import worker_env
from kbench.judge.processes.sandbox import BUILD_MOUNT, Sandbox, SandboxIdentity, give_to_candidate

KBENCH_SRC = str(Path(__file__).resolve().parents[3])  # src/, above kbench/judge/processes/
OUTPUT_TAIL_BYTES = 16 << 10
MAX_ANSWER_BYTES = 1 << 20
MAX_ANSWER_DEPTH = 32  # containers within containers: an output's layout is a few levels; a bomb is thousands
DEFAULT_TIMEOUT = 300.0  # an evaluation's time limit, and a build's ahead of it, unless given
POLL_SECONDS = 0.1
BUSY_MEMORY_CHECK_SECONDS = 1.0  # the memory check's longest gap while answers keep coming
STOPPED_OR_GONE = (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP, psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
# Not ``-m kbench.judge.worker.session``: that would run the module as __main__, and the
# guard must watch the very module object that holds the worker's functions.
WORKER_ENTRY = (
    "import os, sys; sys.path[:0] = os.environ['KBENCH_WORKER_PATH'].split(os.pathsep); "
    "import kbench.judge.worker.session; kbench.judge.worker.session.main(sys.argv)"
)


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


# The judge's PYTHONPATH made absolute against the directory it started in (as Python did
# for its own sys.path), not against wherever it has changed directory to since.
JUDGE_PYTHONPATH = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]


def worker_import_path() -> list[str]:
    """kbench's source, then the judge's PYTHONPATH (``python -I`` ignores the variable)."""
    return list(dict.fromkeys([KBENCH_SRC, *JUDGE_PYTHONPATH]))


def default_memory_limit() -> int:
    """Half the machine's memory: enough for any problem, never the whole host."""
    return psutil.virtual_memory().total // 2


class Worker:
    """One worker process and the pipes to it.

    Every worker runs ``python -I`` (no environment variables, user site or
    working directory on its import path) in a fresh private directory, its
    ``scratch`` (one of its own when none is given); kbench's source and the
    judge's PYTHONPATH come as the worker's import path. With a ``sandbox``
    (every candidate) the process is confined in it, able to write to
    ``scratch`` and ``build`` only, as ``identity``'s uid (one of its own:
    kbench.judge.processes.sandbox), which the worker holds until it is closed.
    """

    def __init__(self, env: dict[str, str], memory_limit_bytes: int | None = None, *,
                 sandbox: Sandbox | None = None, scratch: Path | None = None, build: Path | None = None,
                 identity: SandboxIdentity | None = None, on_close: list[Callable[[], None]] | None = None):
        cmd_read, self._cmd_write = os.pipe()
        self._answer_read, answer_write = os.pipe()
        self.handles, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        import_path = worker_import_path()
        child_env = {**os.environ, **env, "PYTHONUNBUFFERED": "1", "KBENCH_WORKER_PATH": os.pathsep.join(import_path)}
        self._own_scratch = None if scratch else tempfile.TemporaryDirectory(prefix="kbench-worker-")
        scratch = scratch or Path(self._own_scratch.name)
        argv = [sys.executable, "-I", "-c", WORKER_ENTRY, str(cmd_read), str(answer_write), str(theirs.fileno())]
        self.identity = identity
        self.on_close = on_close or []  # once the process is gone (its build folder kept or removed, say)
        if sandbox is not None:
            argv = sandbox.wrap(argv, scratch=scratch, build=build, readable=import_path, env=child_env,
                                **({"uid": identity.uid} if identity else {}))
        self.process = subprocess.Popen(
            argv,
            pass_fds=(cmd_read, answer_write, theirs.fileno()),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=scratch,
            env=child_env,
            start_new_session=True,
            preexec_fn=_limit_child,  # a sandbox's process limit is set inside it (kbench.judge.processes.sandbox)
        )
        os.close(cmd_read)
        os.close(answer_write)
        theirs.close()
        self.sandboxed = sandbox is not None
        self.memory_limit = memory_limit_bytes or default_memory_limit()
        self.peak_rss = 0
        self._memory_checked_at = 0.0
        self.output = OutputTail()
        self._buffer = b""
        self._closing = threading.RLock()  # close, pause and resume: one at a time
        self._closed = False
        self.stopped = False  # by pause, until resume
        self.received_at = time.monotonic()  # when the latest bytes of an answer arrived
        self._reader = threading.Thread(target=self._drain_output, daemon=True)
        self._reader.start()

    def _drain_output(self) -> None:
        """Keep the tail of the worker's output until its pipe ends. The stream is
        closed only once this thread has ended (``close``); should a read fail all
        the same, the thread ends quietly: the tail is a diagnostic, never a fault."""
        stream = self.process.stdout
        try:
            while chunk := stream.read1(65536):
                self.output.feed(chunk)
        except (OSError, ValueError):
            pass

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
                self.received_at = time.monotonic()
                if not chunk:
                    raise self._lost_from_exit(what)
                self._buffer += chunk
                if len(self._buffer) > MAX_ANSWER_BYTES:
                    raise WorkerLost("protocol", f"oversized answer while {what}")
            since = time.monotonic() - self._memory_checked_at
            if since >= (POLL_SECONDS if not ready else BUSY_MEMORY_CHECK_SECONDS):
                # Mostly while nothing arrives: a check between an answer's arrival and
                # the judge's reply would be in the judge's clock for the call
                # (kbench.judge.trusted.calls), and always in a slow call's, whose answer comes
                # after a check is due; a worker that answers without pause still gets one.
                self._check_memory(what)
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            answer = json.loads(line)
        except (ValueError, RecursionError) as exc:  # not JSON, or nested past the parser's stack
            raise WorkerLost("protocol", f"unreadable answer while {what}") from exc
        if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
            raise WorkerLost("protocol", f"malformed answer while {what}")
        if nesting_depth(answer) > MAX_ANSWER_DEPTH:
            raise WorkerLost("protocol", f"an answer nested deeper than {MAX_ANSWER_DEPTH} levels while {what}")
        return answer

    def assert_quiet(self) -> None:
        """No answer may arrive that was not asked for: one that does was forged."""
        pending = bool(self._buffer)
        if not pending and self.process.poll() is None:
            pending = bool(select.select([self._answer_read], [], [], 0)[0])
        if pending:
            raise WorkerLost("forged", "an answer arrived that the judge did not ask for")

    def request(
        self, message: dict[str, Any] | None, deadline: float, what: str,
        orders: Callable[[dict[str, Any], float], dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Send a command (none: it was sent already) and wait for its answer.
        While it runs, the worker may ask for orders (``calls``: each call's
        seed comes only when it is due): ``orders`` answers them (a
        ``calls.CallDriver``, given each report and when it arrived), and until
        it has said stop, no answer is final."""
        if message is not None:
            self.send(message)
        while True:
            answer = self.receive(deadline, what)
            if "need" not in answer:
                if answer["ok"] and orders is not None and not getattr(orders, "finished", True):
                    raise WorkerLost("forged", f"an answer arrived before the judge said stop while {what}")
                return answer
            if orders is None:
                raise WorkerLost("protocol", f"asked for an order while {what}")
            self.send(orders(answer, self.received_at))

    def _check_memory(self, what: str) -> None:
        self._memory_checked_at = time.monotonic()
        if self.stopped:  # a stopped tree does not grow; walking it is CPU the judge's clocks would share
            return
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
        if self.sandboxed and code > 128:  # bubblewrap passes on a death by signal N as exit code 128 + N
            code = 128 - code
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            return WorkerLost("died", f"the process was killed by signal {name} while {what}")
        return WorkerLost("died", f"the process exited with code {code} while {what}")

    def pause(self, settle_seconds: float = 1.0) -> None:
        """Stop every process and thread of the worker: while a baseline is timed,
        nothing a candidate left behind can compete with it. Its group, and every
        descendant besides (one that left the group with ``setsid`` is still a
        descendant: in a sandbox's PID namespace, nothing can be orphaned out).
        Returns once they are stopped: a signal takes effect when its target is next
        scheduled, which on a busy machine is not at once."""
        deadline = time.monotonic() + settle_seconds
        with self._closing:
            if self._closed:  # its pid may be another process's by now
                return
            stopped = self._signal_all(signal.SIGSTOP)
            self.stopped = True
        for process in stopped:
            try:
                while process.status() not in STOPPED_OR_GONE and time.monotonic() < deadline:
                    time.sleep(0.001)
            except psutil.Error:
                pass

    def resume(self) -> None:
        with self._closing:
            if not self._closed:
                self._signal_all(signal.SIGCONT)
                self.stopped = False

    def _signal_all(self, signum: int) -> list[psutil.Process]:
        """Signal the worker's group and every descendant; the processes signalled."""
        try:  # found first: a killed parent's children are reparented out of reach
            root = psutil.Process(self.process.pid)
            processes = [root, *root.children(recursive=True)]
        except psutil.Error:
            processes = []
        try:
            os.killpg(self.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass
        for process in processes[1:]:
            try:
                process.send_signal(signum)
            except psutil.Error:
                pass
        return processes

    def strays(self) -> list[int]:
        """The processes of the worker's tree other than the worker and its sandbox's own:
        whatever the candidate started and left running, seen from the judge's side
        (nothing in the candidate's process can hide them). In a sandbox the tree is
        bubblewrap, its init in the PID namespace, and the worker, the init's oldest
        child; a process orphaned by a double fork is reparented to that init."""
        try:
            top = psutil.Process(self.process.pid)
            if not self.sandboxed:
                return [p.pid for p in top.children(recursive=True) if _running(p)]
            children = [c for init in top.children() for c in init.children()]
            worker = min(children, key=lambda p: p.create_time(), default=None)
            tree = [p for child in children for p in (child, *child.children(recursive=True))]
            return [p.pid for p in tree if p is not worker and _running(p)]
        except psutil.Error:
            return []

    def close(self, grace_seconds: float = 2.0) -> None:
        """Ask the worker to exit, then kill its whole process group regardless.

        Once only, whoever calls it and from whichever thread: a second close would
        close descriptor numbers that another worker may have been given since (and
        signal a process group whose number may be another's), which ended evaluations
        beside it in ``Bad file descriptor`` (issue 28)."""
        with self._closing:
            if self._closed:
                return
            self._closed = True
            if self.process.poll() is None:
                self._signal_all(signal.SIGCONT)  # a paused worker cannot hear the request to exit
                try:
                    os.write(self._cmd_write, b'{"op": "exit"}\n')
                    self.process.wait(timeout=grace_seconds)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self._signal_all(signal.SIGKILL)
            self.process.wait()
            if self.identity is not None:  # nothing of the sandbox runs any more: its uid can serve another
                self.identity.release()
            for hook in self.on_close:
                hook()
            self._reader.join(timeout=1)
            for fd in (self._cmd_write, self._answer_read):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.handles.close()
            if self.process.stdout and not self._reader.is_alive():
                # Still reading: something the worker started outlived it with the pipe open
                # (possible only unsandboxed); closing under the reader would wait for it.
                self.process.stdout.close()
            if self._own_scratch is not None:
                self._own_scratch.cleanup()

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def close_all(workers: list[Worker]) -> None:
    """Close ``workers`` at once: each one's exit (a CUDA context torn down, gigabytes unmapped)
    overlaps the others' rather than following them, at the end of every evaluation."""
    threads = [threading.Thread(target=worker.close, name="kbench-close") for worker in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def nesting_depth(value: Any) -> int:
    """How many containers deep a parsed answer goes (walked without recursion:
    whatever uses the answer next, a recursive walk included, may then trust it)."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            pending.extend((item, depth + 1) for item in (node.values() if isinstance(node, dict) else node))
    return deepest


def candidate_worker(device: str, solution_sha256: str | None, scratch: Path, sandbox: Sandbox | None,
                     memory_limit_bytes: int | None = None, build_dir: Path | None = None) -> Worker:
    """A worker for a candidate: in ``sandbox`` (None: ``--no-sandbox``), working in
    ``scratch``, building into ``build_dir``, by default its solution's cache keyed by its
    source (kbench.judge.builds.cache.candidate_build_dir): sandboxed, a copy of its own that
    becomes the cache once the worker is closed if there is none yet; unsandboxed, the cache
    itself under a lease; within ``builds.cache.fresh_builds``, an empty folder of its own, removed
    after. An interrupted build never leaves the cache blocked (issue 59)."""
    hooks: list[Callable[[], None]] = []
    if build_dir is None:
        cache = candidate_build_dir(solution_sha256)
        if building_fresh():
            build_dir = private_build_dir(cache, seed=False)
            hooks.append(lambda: shutil.rmtree(build_dir, ignore_errors=True))
        elif sandbox is not None:
            build_dir = private_build_dir(cache)
            hooks.append(lambda: publish_build(build_dir, cache))
        else:
            build_dir = cache
            hooks.append(shared_build_lease(cache).close)
    build_dir.mkdir(parents=True, exist_ok=True)
    identity = SandboxIdentity() if sandbox is not None else None
    try:
        if sandbox is None:
            return Worker(worker_env(device, build_dir), memory_limit_bytes, scratch=scratch, on_close=hooks)
        give_to_candidate(scratch, build_dir, uid=identity.uid)
        return Worker(worker_env(device, Path(BUILD_MOUNT)), memory_limit_bytes, sandbox=sandbox, scratch=scratch,
                      build=build_dir, identity=identity, on_close=hooks)
    except BaseException:
        if identity is not None:
            identity.release()
        for hook in hooks:
            hook()
        raise


def _running(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
