"""The command agent's ``evaluate`` tool: asked from inside the agent's sandbox,
answered by the harness outside it.

The agent runs in a sandbox of its own (kbench.agents.command_agent), and the
judge runs each candidate in another; bubblewrap inside bubblewrap cannot set
up a PID namespace's ``/proc`` (measured as root: "Can't mount proc on
/newroot/proc: Operation not permitted"), and a judge started by the agent
would run with whatever the agent changed around it. So the tool in the
workspace judges nothing itself: it sends a request (a file name at the
workspace's top level and two flags) over a Unix socket in the workspace, and
``EvaluateServer``, a thread of the harness, reads that file without following
links, copies it beside the harness's own copy of the problem (the agent can
rewrite the workspace's ``problem.py``, never the one judged against) and runs
``kbench eval`` with the run's settings, outside the agent's reach, its
candidate in the judge's sandbox as always. The answer is the command's output
and exit status; the server counts the calls.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Callable

SOCKET = "judge.sock"  # in the workspace's .kbench folder
FLAGS = ("--json", "--no-timing")
MAX_REQUEST_BYTES = 4096
MAX_OUTPUT_CHARS = 100_000
MAX_FILE_BYTES = 1_000_000
# The socket path's limit (sun_path) is 108 bytes on Linux.
MAX_SOCKET_PATH = 107

TOOL = """#!{python}
\"\"\"Judge a candidate for this workspace's problem:
./evaluate [FILE] [--json] [--no-timing]  (FILE: solution.py by default, a file in this folder;
--no-timing: correctness only, quicker). The harness judges it, outside this sandbox.\"\"\"
import json, pathlib, socket, sys

here = pathlib.Path(__file__).resolve().parent
flags = [a for a in sys.argv[1:] if a.startswith("-")]
files = [a for a in sys.argv[1:] if not a.startswith("-")]
request = {{"file": files[0] if files else "solution.py", "flags": flags}}
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
    connection.connect(str(here / ".kbench" / {socket!r}))
    connection.sendall(json.dumps(request).encode() + b"\\n")
    answer = b""
    while chunk := connection.recv(65536):
        answer += chunk
reply = json.loads(answer)
sys.stdout.write(reply["output"])
sys.exit(reply["returncode"])
"""


def read_plain_file(folder: Path, name: str, limit: int) -> bytes | None:
    """A regular file directly in ``folder``, read without following a link (an agent's
    ``solution.py`` made a link to the store or another run's files reads as absent);
    None if it is not there, not a plain file, or larger than ``limit``."""
    if not name or "/" in name or name in (".", ".."):
        return None
    try:
        directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
    except OSError:
        return None
    finally:
        os.close(directory)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit + 1)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


class EvaluateServer:
    """Answers the workspace's ``evaluate`` tool: one request at a time, on a thread.

    ``command(candidate, problem, flags)`` is the ``kbench eval`` command line; it runs
    in a new process group, killed at ``close``."""

    def __init__(self, workspace: Path, problem_source: str, command: Callable[[Path, Path, list[str]], list[str]],
                 env: dict[str, str]):
        self.workspace, self.command, self.env = workspace, command, env
        self.calls = 0
        self._private = Path(tempfile.mkdtemp(prefix="kbench-evaluate-"))
        self._problem = self._private / "problem.py"
        self._problem.write_text(problem_source)
        self._stop = threading.Event()
        self._running: subprocess.Popen | None = None
        self._lock = threading.Lock()
        path = workspace / ".kbench" / SOCKET
        if len(os.fsencode(path)) > MAX_SOCKET_PATH:
            raise OSError(f"the workspace's socket path {path} is longer than {MAX_SOCKET_PATH} bytes (set TMPDIR)")
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.bind(str(path))
        os.chmod(path, 0o777)  # the agent may run as another user (uid 65534 under root)
        self._socket.listen(4)
        self._socket.settimeout(0.2)
        self._thread = threading.Thread(target=self._serve, name="kbench-evaluate", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with connection:
                try:
                    connection.settimeout(10)
                    request = self._receive(connection)
                    output, code = self._answer(request)
                    connection.settimeout(None)
                    connection.sendall(json.dumps({"output": output, "returncode": code}).encode())
                except (OSError, ValueError, RecursionError):  # the agent's own tool fails, never this thread
                    continue

    @staticmethod
    def _receive(connection: socket.socket) -> object:
        data = b""
        while b"\n" not in data and len(data) <= MAX_REQUEST_BYTES:
            chunk = connection.recv(MAX_REQUEST_BYTES)
            if not chunk:
                break
            data += chunk
        if len(data) > MAX_REQUEST_BYTES:
            raise ValueError("request too long")
        return json.loads(data.split(b"\n")[0] or b"null")

    def _answer(self, request: object) -> tuple[str, int]:
        """``kbench eval``'s output and status for a well-formed request; a usage message otherwise."""
        if not isinstance(request, dict) or not isinstance(request.get("file"), str) \
                or not isinstance(request.get("flags"), list) or not all(f in FLAGS for f in request["flags"]):
            return "usage: ./evaluate [FILE] [--json] [--no-timing]\n", 2
        name = request["file"].removeprefix("./")
        source = read_plain_file(self.workspace, name, MAX_FILE_BYTES)
        if source is None:
            return (f"evaluate: {request['file']!r} is not a plain file (at most {MAX_FILE_BYTES} bytes) in the "
                    "workspace's top folder\n"), 2
        self.calls += 1
        candidate = self._private / f"candidate-{self.calls}" / name
        candidate.parent.mkdir()
        candidate.write_bytes(source)
        argv = self.command(candidate, self._problem, sorted(set(request["flags"])))
        with self._lock:
            if self._stop.is_set():
                return "evaluate: the agent's time is up\n", 2
            self._running = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                              stderr=subprocess.STDOUT, start_new_session=True, env=self.env,
                                              cwd=self._private)
        output, _ = self._running.communicate()
        code = self._running.returncode
        with self._lock:
            self._running = None
        text = output.decode("utf-8", errors="replace")
        return (text[-MAX_OUTPUT_CHARS:], code if code >= 0 else 1)

    def close(self) -> None:
        """Stop serving, stop an evaluation in progress, remove the private copies."""
        self._stop.set()
        with self._lock:
            if self._running is not None:
                try:
                    os.killpg(self._running.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        self._socket.close()
        self._thread.join(timeout=30)
        shutil.rmtree(self._private, ignore_errors=True)
