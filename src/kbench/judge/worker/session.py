"""The worker: a throw-away child process that runs one model for the judge.

A worker plays one role: ``reference`` (the problem's ``Model``) or
``candidate`` (a solution's ``ModelNew``); the two never share a process. It
reads one JSON command per line from a private pipe and answers one JSON line
on another. The worker only reports what it saw; the judge decides, and
believes of a candidate's reports only what another process confirms.

Commands:
- ``load``: import the problem (and for a candidate, the solution, with the
  runtime guard's snapshot taken first), build the model from
  ``get_init_inputs()`` under the shared init seed, on the device;
- ``build``: import the solution and, given the problem, make its model on the
  CPU (warms the extension cache; kbench.judge.builds.ahead);
- ``resize``: the problem at another size and a new model for it;
- ``draw`` (reference): a call's inputs for a seed, drawn here and packed into
  memory shared with the candidate's process (kbench.judge.exchange.buffers), then the
  caches flushed: the candidate never runs the problem's input function;
- ``read`` (reference): right after a call, its output copied out of the
  candidate's shared memory into this process's own;
- ``calls``: a series of calls driven by the judge (kbench.judge.trusted.calls): for
  each, the worker asks for the next order: ``go`` (make one
  ``timing.TimedCall`` on views of the shared inputs, pack the output into
  shared memory, report the clock's reading) or ``stop``; a reference timing
  itself (eager, a compiled column) is also ordered to ``draw`` and ``read``
  its own calls, the very same steps as for a candidate. Trials, timed calls
  and checked calls are all made this way;
- ``record`` (reference): one call, neither timed nor checked, with the aten
  operations recorded. A candidate's operations are recorded in one of its
  judged calls instead (an order ``{"seed": ..., "record": true}``, at a place
  the judge picks in secret among the trials): the same ``TimedCall``, flush
  and stack as every other call, with the recorder and the runtime guard's
  watchers entered around its clock;
- ``compare`` (reference): check the output last read against the
  reference's output for the same seed (kbench.judge.exchange.outputs), and
  the shared inputs against the seed's inputs drawn again (did the call change them?);
- ``audit``: the problem audit's measurements (``problem_checks``; kbench.audit decides).
- ``probe`` (reference): a one-element kernel's round trips, to see whether the
  GPU is quiet before a baseline is timed (``kbench.judge.protocol.quiet``).

Answers are written, and orders read, with kbench.judge.exchange.wire, not the
``json`` module a candidate can rewrite.

Usage (by the judge only, see process.WORKER_ENTRY): ``main([_, CMD_FD, ANSWER_FD, HANDLES_FD])``,
the last a Unix socket for device buffers' descriptors (kbench.judge.exchange.vmm).
"""

from __future__ import annotations

import ctypes
import gc
import io
import os
import random
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

import torch

from kbench.judge.exchange import wire

from kbench.judge.protocol import state, timing

from kbench.judge.trusted import baselines, problem_checks

from kbench.judge.worker import graphs
from kbench.judge.exchange.failure import Failure, phase
from kbench.judge.guard import captures
from kbench.judge.guard.runtime import LaunchWatch, OpRecorder, RecordedCall, RuntimeGuard, entered
from kbench.judge.worker.loading import (
    cast, device_name, dtype_named, import_solution, problem_from, seeded, to_device, versions, work_counts,
)
from kbench.judge.exchange.buffers import Inbox, Outbox
from kbench.judge.exchange.outputs import (
    check_held, copy_packed, describe_devices, pack_output, same_bits, unpack_output,
)
from kbench.judge.protocol.quiet import launch_round_trips_ms
from kbench.judge.trusted.truth import Truth
from kbench.suite.problem import Problem, import_problem

_os_write = os.write


class Session:
    """The state of one worker: the problem module, the model, the device.

    In a candidate worker ``guard`` watches the solution (runtime rules); its
    findings travel with every answer, and the judge applies the policy.
    """

    def __init__(self) -> None:
        self.problem_module: Any = None
        self.model: Any = None
        self.device = torch.device("cpu")
        self.guard: RuntimeGuard | None = None
        self.problem: Problem | None = None
        self.model_class: Any = None
        self.judged_dtype = "float32"
        self.column: str | None = None
        self.timed: Any = None
        # settings.cuda_graph: captured (or, for a graphed column, its inputs fixed) at the first timed call
        self.graphed: graphs.GraphedCall | graphs.StaticInputs | None = None
        self.captured_ops = OpRecorder()  # a candidate's operations inside its graph's capture
        self.captured_launches: LaunchWatch | None = None  # and its kernels' launches there
        self.recorded: dict[str, Any] | None = None  # the recorded call's operations and findings, in its series
        self.spacer: Any = None  # settings.new_placement_per_round: held while a round is timed
        self.handles: socket.socket | None = None  # shared buffers' descriptors, to and from the judge
        self.role = "reference"
        self.serves_itself = True  # a reference that draws and reads its own calls (not a consumer: .load)
        # kbench.judge.exchange.buffers: the inputs this worker draws (reference), or maps (candidate); each
        # call's output as written here, and (reference) the candidate's output mapped
        self.inputs_out: Outbox | None = None
        self.inputs_in: Inbox | None = None
        self.outputs_out: Outbox | None = None
        self.outputs_in: dict[str, Inbox] = {}  # (reference) each writer's output buffer, by the writer's name
        self.flusher: timing.CacheFlusher | None = None  # the caches flushed after each draw
        self.drawn: dict[str, Any] | None = None  # the last draw's layout
        self.held: Any = None  # the last call's output as read (or why it could not be)
        self.truth: Truth | None = None  # (reference) the model's float64 twin, for checks (kbench.judge.trusted.truth)

    @property
    def dtype(self) -> torch.dtype | None:
        """What models and floating-point inputs are cast to; None: the file as written (float32)."""
        return dtype_named(self.judged_dtype)

    def load(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.device = torch.device(msg["device"])
        if self.device.type == "cuda" and self.device.index is None:  # "cuda": memory queries need its index
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.role = msg["role"]
        # A consumer (the candidate, or a baseline column timed as the candidate is) gets its inputs from
        # the reference and hands its outputs to it; a reference alone draws and reads its own.
        self.serves_itself = self.role == "reference" and not msg.get("consumer")
        self.inputs_out, self.outputs_out, self.inputs_in = Outbox(self.device), Outbox(self.device), Inbox(self.device)
        torch.set_grad_enabled(False)
        started = time.monotonic()
        with phase("problem"):
            if self.device.type == "cuda":
                torch.cuda.set_device(self.device)
            pinned = state.pin()
            self.problem = problem_from(msg)
            self.judged_dtype = msg.get("dtype", "float32")
        own_code = msg["role"] == "candidate" and bool(msg.get("import_path"))  # kbench.judge.processes.sides
        sys.path[:0] = [msg["import_path"]] if msg.get("import_path") else []
        if own_code:  # watched from its first import, which the problem makes
            self._watch()
        with phase("build" if own_code else "problem"):  # the candidate's code failing to import: its build
            self.problem_module = import_problem(self.problem, msg["size"], self.judged_dtype)
            self.model_class = self.problem_module.Model
        self.column = msg.get("column") if msg["role"] == "reference" else None
        if msg["role"] == "candidate" and not own_code:  # with code of its own, the problem's Model is the candidate
            self._watch()
            self.model_class = import_solution(Path(msg["solution_path"]))
        imported = time.monotonic()
        self._build_model(msg["init_seed"])
        return {
            "ok": True,
            "import_seconds": imported - started,
            "init_seconds": time.monotonic() - imported,
            "device_name": device_name(self.device),
            "versions": versions(msg.get("requires", [])),
            "settings": pinned,
            "work": work_counts(self.problem_module),
            "findings": self._findings(self.guard.state_findings() if self.guard else []),
        }

    def _watch(self) -> None:  # the runtime guard's snapshot, before any of the candidate's code is imported
        captures.install(lambda: LaunchWatch(chain=True))  # the judge's own wrappers, in the snapshot
        self.guard = RuntimeGuard(self.device)
        self.guard.pin("worker.session", self, ("commands", "answers_fd", "handles", "guard", "captured_ops"),
                       {"commands": io.TextIOWrapper})

    def resize(self, msg: dict[str, Any]) -> dict[str, Any]:
        """The problem at another size, and a new model for it (the solution is not re-imported); a model
        of the problem's own class (a reference, a patched workload) is of the new module's: the old
        class's ``forward`` would read the old size's constants."""
        from_problem = self.model_class is self.problem_module.Model
        with phase("problem"):
            self.problem_module = import_problem(self.problem, msg["size"], self.judged_dtype)
        if from_problem:
            self.model_class = self.problem_module.Model
        self._build_model(msg["init_seed"])
        return {"ok": True, "work": work_counts(self.problem_module)}

    def _build_model(self, init_seed: int) -> None:
        self.model = None  # the previous model's memory is free before the next is built
        self.truth = Truth(lambda: self.make_model(init_seed), self.device)  # made at its first check
        self.model = self.make_model(init_seed)
        # What ``time`` times: the model itself, or a baseline column's compiled form of it.
        self.timed = baselines.prepare(self.model, self.column) if self.column else self.model
        self.graphed = None

    def make_model(self, init_seed: int) -> Any:
        """A new model of the role's class, built from ``get_init_inputs()`` under
        ``init_seed``, on the device, in the judged dtype (the audit builds its
        other-seed and float64 models with it too)."""
        with phase("problem"):
            init_inputs = seeded(init_seed, self.problem_module.get_init_inputs)
            init_inputs = [to_device(x, self.device) for x in init_inputs]
        with phase("init"):
            torch.manual_seed(init_seed)
            random.seed(init_seed)
            model = self.model_class(*init_inputs).to(self.device)
            if self.dtype is not None:
                model = model.to(self.dtype)
            self._sync()
        return model

    def build(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Import the solution and, given the problem (``load``'s fields), make its model
        on the CPU from ``get_init_inputs()``: compiles what the solution compiles at
        import or in ``__init__`` (into the shared cache) without a device's memory, so
        builds can run in a pool; what it compiles at its first call is left to the
        evaluation. The model is dropped; the evaluation makes its own."""
        started = time.monotonic()
        self.model_class = import_solution(Path(msg["solution_path"]))
        imported = time.monotonic()
        if "problem_source" in msg:  # made as ``load`` makes it, on the CPU
            self.device, self.judged_dtype = torch.device("cpu"), msg.get("dtype", "float32")
            with phase("problem"):
                self.problem_module = import_problem(problem_from(msg), msg["size"], self.judged_dtype)
            self.make_model(msg["init_seed"])
        return {"ok": True, "import_seconds": imported - started, "init_seconds": time.monotonic() - imported}

    def inputs(self, seed: int) -> list[Any]:
        """The problem's inputs for ``seed``, on the device.

        ``get_inputs`` runs with the device as the default for new tensors:
        drawing gigabytes of random numbers on a GPU takes milliseconds where
        the CPU takes seconds, and every process draws the same values.
        """
        with phase("problem"), torch.device(self.device):
            raw = seeded(seed, self.problem_module.get_inputs)
            return [cast(to_device(x, self.device), self.dtype) for x in raw]

    def forward(self, args: list[Any]) -> Any:
        with phase("forward"):
            out = self.model(*args)
            self._sync()
            return out

    def calls(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Calls as the judge orders them, each one ``timing.TimedCall`` on the
        inputs the trusted side drew, whatever the call is for. A worker timing
        itself (a reference) is ordered to draw and read its own calls as well."""
        settings = timing.TimingSettings(**msg["settings"])
        with phase("forward"):
            if settings.cuda_graph and self.graphed is None:
                if self.column in baselines.GRAPHED_COLUMNS:  # CUDA graphs already: only their inputs are fixed
                    self.graphed = graphs.StaticInputs(self.timed)
                else:
                    capture = None
                    if self.guard:
                        self.captured_launches = LaunchWatch()
                        capture = entered(self.captured_ops, self.captured_launches)
                    self.graphed = graphs.GraphedCall(self.timed, self.device, capture)
            if settings.new_placement_per_round and msg.get("round") is not None:
                self.spacer = None
                self.spacer = timing.new_placement(self.device, int(msg["round"]))
            # The caches are flushed by the trusted side after each draw; a graph's staging copy comes
            # after that, and is flushed here.
            call = timing.TimedCall(self.timed, self.device, self.graphed.stage if self.graphed else None,
                                    settings.launch_lead_us, flush=self.graphed is not None)
        # Outside every span the judge clocks: the garbage collected, what is alive frozen out of the
        # collector's way (a full collection inside a call's spans read as work outside its window).
        gc.collect()
        gc.freeze()
        if self.guard:  # what produces this series' reports, as it is before any of its calls
            self.guard.pin("worker.call", call, ("clock", "stage", "overhead_ms"))
            self.guard.pin("worker.call.clock", call.clock, None)
        self.recorded = None
        report: dict[str, Any] = {"ok": True, "need": "order"}
        while True:
            order = self._order_from_judge(report)
            if "draw" in order and self.serves_itself:
                report = {"ok": True, "need": "order", "ready": self.draw({"seed": order["draw"]})}
            elif "read" in order and self.serves_itself:
                report = {"ok": True, "need": "order", "read": self.read({**order["read"], "own": True})}
            elif "go" in order:
                report = {"ok": True, "need": "order", "done": self._one_call(call, order["go"])}
            else:
                break
        self._release_cached_memory()
        findings = self.guard.state_findings() if self.guard else []
        answer = {"ok": True, "clock": call.clock.name, "overhead_ms": call.overhead_ms,
                  "findings": self._findings(findings)}
        if self.recorded is not None:
            answer["recorded"] = self.recorded
        return answer

    def draw(self, msg: dict[str, Any]) -> dict[str, Any]:
        """(Reference) the inputs of ``msg["seed"]``, drawn here and packed into the shared inputs
        buffer (its descriptor sent to the judge when the candidate's process does not hold it yet,
        with ``share``), the caches flushed. Whether a call changed them is asked where the judge
        checks the call (``compare``): against the same seed's inputs drawn again."""
        args = self.inputs(int(msg["seed"]))
        layout, tensors = pack_output(args)
        self.inputs_out.reserve(layout["nbytes"])
        shared = self.inputs_out.tensor(layout["nbytes"])
        copy_packed(tensors, shared)
        del args, tensors
        self.drawn = {"layout": layout}
        fresh = bool(msg.get("share")) and self.inputs_out.share(self.handles, str(msg["share"]))
        if self.flusher is None:
            self.flusher = timing.CacheFlusher(self.device)
        self.flusher()
        self._sync()
        return {"layout": layout, "fresh": fresh, "capacity": self.inputs_out.capacity}

    def read(self, msg: dict[str, Any]) -> dict[str, Any]:
        """(Reference) the output of the call just made, copied out of the writer's shared buffer
        (the candidate's; with ``own``, this worker's) into memory of this process's own, and held
        for a check."""
        layout = msg.get("layout")
        try:
            if not isinstance(layout, dict) or not isinstance(layout.get("nbytes"), int):
                raise ValueError("malformed layout")
            if msg.get("own"):
                source = self.outputs_out.tensor(layout["nbytes"])
            else:
                inbox = self.outputs_in.setdefault(str(msg.get("writer")), Inbox(self.device))
                if msg.get("fresh"):
                    inbox.adopt(self.handles, msg.get("capacity"))
                source = inbox.tensor(layout["nbytes"])
            self.held = None
            self.held = unpack_output(layout, source)
        except Exception as exc:  # noqa: BLE001 - an output that cannot be read is the candidate's answer
            self.held = exc
        self._sync()
        return {"ok": True}

    def _one_call(self, call: timing.TimedCall, go: dict[str, Any]) -> dict[str, Any]:
        """One call on views of the shared inputs, its output packed into this worker's shared
        buffer (its descriptor sent when new to the reference); reported with its clock's readings.
        The recorded call is this same call with the watchers entered around its clock."""
        layout = go["layout"]
        if self.serves_itself:
            source = self.inputs_out.tensor(layout["nbytes"])
        else:
            if go.get("fresh"):
                self.inputs_in.adopt(self.handles, go["capacity"])
            source = self.inputs_in.tensor(layout["nbytes"])
        args = unpack_output(layout, source, copy=False)
        recording = RecordedCall(self.guard, args, self.model) if go.get("record") else None
        with phase("forward"):
            clock_ms, host_ms, out = call(args, recording)
        with phase("output"):
            packed, tensors = pack_output(out)
            self.outputs_out.reserve(packed["nbytes"])
            copy_packed(tensors, self.outputs_out.tensor(packed["nbytes"]))
            fresh = not self.serves_itself and self.outputs_out.share(self.handles)
            done: dict[str, Any] = {"clock_ms": clock_ms, "host_ms": host_ms, "layout": packed, "fresh": fresh,
                                    "capacity": self.outputs_out.capacity, "devices": describe_devices(out)}
        if call.not_plain is not None:
            done["output"] = call.not_plain
        if recording is not None:
            captured = (self.captured_ops, self.captured_launches) if self.graphed and self.captured_launches else None
            self.recorded = {"ops": recording.ops(captured), "findings": self._findings(recording.findings(out, captured))}
        return done

    def record(self, msg: dict[str, Any]) -> dict[str, Any]:
        """(Reference) one call apart from the judged ones, with its aten operations
        recorded. (A candidate's operations are recorded in one of its judged calls.)"""
        args = self.inputs(msg["seed"])
        with OpRecorder() as recorder:
            self.forward(args)
        return {"ok": True, "ops": sorted(recorder.ops), "findings": []}

    def compare(self, msg: dict[str, Any]) -> dict[str, Any]:
        """(Reference) the expected output for the call's seed, and the output last
        read (``read``) checked against it, here."""
        args = self.inputs(msg["seed"])
        changed = self._inputs_changed(args, msg["seed"])
        out = self.forward(args)
        checked = check_held(out, self.held, msg, lambda: self.truth.output(self.inputs(msg["seed"]), out))
        del args, out
        self._release_cached_memory()
        return {"ok": True, **checked, "inputs_changed": changed}

    def _inputs_changed(self, args: list[Any], seed: int) -> bool:
        """(Reference) whether the shared inputs, as the call just read left them, differ from
        ``args``, the same seed's inputs drawn again (before forward, which may change them): never
        where the problem itself draws other inputs for one seed (a third draw tells)."""
        layout = (self.drawn or {}).get("layout")
        if layout is None or self.inputs_out is None:
            return False
        shared = unpack_output(layout, self.inputs_out.tensor(layout["nbytes"]), copy=False)
        return not same_bits(shared, args) and same_bits(args, self.inputs(seed))

    def _order_from_judge(self, report: dict[str, Any]) -> dict[str, Any]:
        """Report, and wait for the judge's next order."""
        _write_all(self.answers_fd, (wire.encode(report) + "\n").encode())
        return wire.decode(self.commands.readline())

    @staticmethod
    def _findings(findings: list[Any]) -> list[dict[str, Any]]:
        return [{"rule": f.rule, "message": f.message, "line": f.line} for f in findings]

    def _release_cached_memory(self) -> None:
        """Hand the device memory this worker no longer uses back, for the worker
        that runs next (one process is stopped while another computes)."""
        if self.device.type == "cuda":
            self._sync()
            torch.cuda.empty_cache()

    def _sync(self) -> None:
        if self.device.type == "cuda":
            timing._cuda_sync(self.device)


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_the_judge() -> None:
    """A judge killed outright (SIGKILL, no chance to close its workers) takes them
    with it: a resumed run must not share the GPU with a stale worker still computing."""
    if not sys.platform.startswith("linux"):
        return
    judge = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != judge:  # the judge died before the line above
        os._exit(1)


def _warm_up(device: str) -> None:
    """Make the device's CUDA context now, while the worker waits for its first command (a worker
    started ahead of need, kbench.judge.processes.spares, is then ready at once)."""
    try:
        if device.startswith("cuda") and torch.cuda.is_available():
            torch.cuda.set_device(torch.device(device))
            torch.empty(1, device=device)
    except Exception:  # noqa: BLE001 - ``load`` meets the same fault and says whose it is
        pass


def main(argv: list[str]) -> None:
    _die_with_the_judge()
    _warm_up(os.environ.get("KBENCH_WORKER_DEVICE", ""))
    commands = os.fdopen(int(argv[1]), "r")
    answers_fd = int(argv[2])
    session = Session()
    session.commands, session.answers_fd = commands, answers_fd
    if len(argv) > 3:
        session.handles = socket.socket(fileno=int(argv[3]))
    handlers = {
        "load": session.load,
        "build": session.build,
        "resize": session.resize,
        "calls": session.calls,
        "record": session.record,
        "compare": session.compare,
        "draw": lambda msg: {"ok": True, **session.draw(msg)},
        "read": session.read,
        "audit": lambda msg: problem_checks.audit_in_worker(session, msg),
        "probe": lambda msg: {"ok": True, "round_trips_ms": launch_round_trips_ms(session.device)},
    }
    for line in commands:
        msg = wire.decode(line)
        if msg["op"] == "exit":
            break
        try:
            reply = handlers[msg["op"]](msg)
        except Failure as failure:
            reply = {"ok": False, "phase": failure.phase, "error": failure.message,
                     "traceback": failure.trace[-8000:]}
        _write_all(answers_fd, (wire.encode(reply) + "\n").encode())
    _exit_now()


def _exit_now() -> None:
    """Leave without the interpreter's finalisation: with torch imported it takes
    about 0.5 s, on the path of every evaluation's end, and every answer has been
    written (unbuffered) already; the output streams are flushed first."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a stream the candidate closed or replaced
            pass
    os._exit(0)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[_os_write(fd, data):]


if __name__ == "__main__":
    main(sys.argv)
