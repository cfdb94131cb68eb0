"""What a candidate's worker reports with, in this process: its own JSON (wire),
the output inspection inside every call's clock (plain), the runtime guard's
watch over the classes, code and objects that produce the reports, and the
judge's secret choice of the recorded call. No worker runs here."""

from __future__ import annotations

import collections
import json
import math
import types

import pytest
import torch

from kbench.judge.exchange import wire

from kbench.judge.protocol import timing
from kbench.judge.trusted.calls import CallDriver, ProtocolViolation, reading
from kbench.judge.guard.runtime import RuntimeGuard
from kbench.judge.protocol.plain import not_plain
from kbench.judge.processes.process import WorkerLost
from kbench.judge.trusted.reference import SeedFeed
from kbench.judge.protocol.timing import TimingSettings

ANSWERS = [
    None, True, 0, -(2**70), 1.5, -0.0, 1e-300, math.nan, math.inf, -math.inf, "a\"\n\x00é\u2028", [], {},
    {"ok": True, "need": "order", "done": {"clock_ms": 0.25, "host_ms": 0.5}},
    {"findings": [{"rule": "threads", "message": "x", "line": None}], "ops": ["relu", "mm"], 1: (2, 3), None: 0},
]


@pytest.mark.parametrize("value", ANSWERS, ids=range(len(ANSWERS)))
def test_the_workers_own_json_writes_what_json_dumps_writes(value):
    assert wire.encode(value) == json.dumps(value)
    assert json.dumps(wire.decode(json.dumps(value))) == json.dumps(json.loads(json.dumps(value)))


def test_the_workers_own_json_ignores_a_rewritten_json_module(monkeypatch):
    monkeypatch.setattr(json, "dumps", lambda *a, **k: "{}")
    monkeypatch.setattr(json.JSONEncoder, "iterencode", lambda *a, **k: iter(["{}"]))
    monkeypatch.setattr(json.JSONDecoder, "decode", lambda *a, **k: {})
    assert wire.encode({"findings": [{"rule": "no-kernel"}]}) == '{"findings": [{"rule": "no-kernel"}]}'
    assert wire.decode('{"seed": 7}\n') == {"seed": 7}
    with pytest.raises(ValueError):
        wire.decode('{"seed": 7} {"stop": true}')
    with pytest.raises(TypeError):
        wire.encode({"x": object()})


class Lazy(torch.Tensor):
    pass


class IteratesNothing(tuple):
    def __iter__(self):
        return iter(())


PLAIN = [torch.ones(2), (torch.ones(1), [torch.ones(1), {"a": None, 1: 2.5}]), torch.ones(3, 4).t(),
         torch.max(torch.ones(2, 2), 0), collections.namedtuple("Pair", "a b")(torch.ones(1), 2), "text"]
NOT_PLAIN = [(torch.ones(2).as_subclass(Lazy), "Lazy"), ([torch.ones(1), IteratesNothing()], "IteratesNothing"),
             (torch.nn.Parameter(torch.ones(1)), "Parameter"), (torch.ones(2).to_sparse(), "sparse"),
             ({(1,): torch.ones(1)}, "key of type tuple"), (object(), "object"),
             (collections.OrderedDict(a=torch.ones(1)), "OrderedDict")]


@pytest.mark.parametrize("out", PLAIN, ids=range(len(PLAIN)))
def test_plain_outputs_pass_the_inspection(out):
    assert not_plain(out) is None


@pytest.mark.parametrize("out, named", NOT_PLAIN, ids=[n for _, n in NOT_PLAIN])
def test_anything_else_is_named_by_the_inspection(out, named):
    assert named in not_plain(out)


def test_every_timed_call_inspects_its_output_inside_its_clock():
    touched = []

    class Touchy(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types_, args=(), kwargs=None):
            touched.append(func)
            return super().__torch_function__(func, types_, args, kwargs or {})

    outputs = iter([torch.ones(4), torch.ones(4).as_subclass(Touchy)])
    call = timing.TimedCall(lambda x: next(outputs), torch.device("cpu"))
    call([torch.ones(4)])
    assert call.not_plain is None
    call([torch.ones(4)])
    assert "Touchy" in call.not_plain and touched == []  # named, never touched


@pytest.fixture
def guard():
    return RuntimeGuard(torch.device("cpu"))


def patched(guard):
    return [f.message for f in guard.state_findings() if f.rule == "patched-function"]


def test_an_untouched_process_has_nothing_patched(guard):
    assert patched(guard) == []


def test_a_class_attribute_of_the_workers_clock_is_watched(guard, monkeypatch):
    monkeypatch.setattr(timing.Clock, "time_call", lambda self, call: (0.0, 0.0, call()))
    assert "kbench.judge.protocol.timing.Clock.time_call" in patched(guard)[0]


def test_an_attribute_added_to_the_workers_class_is_watched(guard, monkeypatch):
    monkeypatch.setattr(timing.TimedCall, "__getattribute__", object.__getattribute__, raising=False)
    assert "kbench.judge.protocol.timing.TimedCall.__getattribute__" in patched(guard)[0]


def test_code_swapped_under_an_unchanged_function_is_watched(guard, monkeypatch):
    monkeypatch.setattr(timing.not_plain, "__code__", (lambda out: None).__code__)
    assert "kbench.judge.protocol.plain.not_plain" in patched(guard)[0]


@pytest.mark.parametrize("namespace, name", [(json, "dumps"), (json.encoder, "c_make_encoder"),
                                             (json.JSONEncoder, "iterencode"), (json.JSONDecoder, "decode")])
def test_the_json_the_worker_reports_with_is_watched(guard, monkeypatch, namespace, name):
    monkeypatch.setattr(namespace, name, lambda *args, **kwargs: None)
    assert name in patched(guard)[0]


def test_the_workers_pinned_objects_keep_their_class_and_attributes(guard):
    call = timing.TimedCall(lambda x: x + 1, torch.device("cpu"))
    guard.pin("worker.call", call, ("clock", "flush", "stage", "overhead_ms"))
    guard.pin("worker.call.clock", call.clock, None)
    call([torch.ones(1)])
    assert patched(guard) == []  # a call changes none of them
    call.clock.time_call = types.MethodType(lambda self, c: (0.0, 0.0, c()), call.clock)
    assert "worker.call.clock.time_call" in patched(guard)[0]
    del call.clock.time_call
    call.flush = lambda: None
    assert "worker.call.flush" in patched(guard)[0]


FOUR_TRIALS = TimingSettings(warmup_calls=0, warmup_seconds=0.0, min_calls=4, max_calls=4, budget_seconds=60.0)


DONE = {"clock_ms": 1.0, "host_ms": 1.0, "layout": {"tree": {"value": None}, "nbytes": 1}, "devices": {}}


def orders_of(driver):
    """A worker timing itself, as the judge orders it: draw, go and read, call after call."""
    orders = [driver({"ok": True, "need": "order"})]
    while "stop" not in orders[-1]:
        orders.append(driver({"ok": True, "need": "order", "ready": {"layout": DONE["layout"]}}))
        orders.append(driver({"ok": True, "need": "order", "done": DONE}))
        orders.append(driver({"ok": True, "need": "order", "read": {"inputs_changed": False}}))
    return orders


def test_the_recorded_call_is_one_trial_at_a_secret_place():
    places = collections.Counter()
    for _ in range(200):
        orders = [o["go"] for o in orders_of(CallDriver(FOUR_TRIALS, SeedFeed(), None, record=True)) if "go" in o]
        recorded = [index for index, order in enumerate(orders) if order.get("record")]
        assert len(recorded) == 1 and all("seed" not in o for o in orders)
        places[recorded[0]] += 1
    assert set(places) == {1, 2, 3}  # every trial may be it but the model's first call (calls.record_index)
    assert not any("record" in o.get("go", {}) for o in orders_of(CallDriver(FOUR_TRIALS, SeedFeed(), None)))


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, -0.001, 10**400])
def test_a_clock_reading_no_clock_gives_is_a_forged_report(value):
    with pytest.raises(ProtocolViolation) as raised:
        reading(value, "call 0's clock")
    assert raised.value.finding.rule == "forged-report"


@pytest.mark.parametrize("value", ["1.0", None, True, [1.0], {"ms": 1.0}])
def test_a_clock_reading_that_is_no_number_breaks_the_protocol(value):
    with pytest.raises(WorkerLost) as raised:
        reading(value, "call 0's clock")
    assert raised.value.kind == "protocol"


def test_a_lazy_output_reported_with_a_call_is_heard_by_the_judge():
    heard = []
    driver = CallDriver(FOUR_TRIALS, SeedFeed(), None, on_finding=heard.append)
    driver({"ok": True, "need": "order"})
    driver({"ok": True, "need": "order", "ready": {"layout": DONE["layout"]}})
    driver({"ok": True, "need": "order", "done": {**DONE, "output": "output is a Lazy"}})
    assert [f.rule for f in heard] == ["output-subclass"] and "call 0" in heard[0].message


def test_statistics_of_readings_that_are_no_time_say_nan_rather_than_raise():
    summary = timing.summarize("cpu-perf-counter", [math.nan, 1.0, 2.0], [1.0, 1.0, 1.0], 0, "stable", {})
    assert math.isnan(summary.stdev_ms)
    with pytest.raises(ValueError):
        timing.StopRule(FOUR_TRIALS).record("timed", math.nan, 1.0)
