"""The judge's side of a worker's calls: the protocol it enforces, which calls
it has checked, the clock it keeps, the times it accepts, and the shared
memory a call's inputs and output travel through. No worker runs here: reports
are written as a worker (honest or not) would send them."""

import gc
from dataclasses import replace
import json
import math
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
import torch

from kbench.judge.trusted import calls as calls_module
from kbench.judge.trusted.calls import (
    SETTLE_CALLS,
    SETTLE_SECONDS,
    Call,
    CallDriver,
    Checks,
    ProtocolViolation,
    record_index,
    replayed_calls,
    trusted_clock_limit,
    trusted_times,
)
from kbench.judge.exchange.outputs import check_held, copy_packed, pack_output, same_bits, unpack_output
from kbench.judge.processes.process import WorkerLost
from kbench.judge.trusted.reference import SeedFeed
from kbench.judge.protocol.timing import TimingSettings

FIVE_CALLS = TimingSettings(warmup_calls=0, warmup_seconds=0.0, min_calls=5, max_calls=5, budget_seconds=60.0)
LAYOUT = {"tree": {"tensor": [0, "float32", [1]]}, "nbytes": 4}


class Trusted:
    """The trusted side as the driver sees it: draws and reads, remembered."""

    def __init__(self):
        self.draws, self.reads = [], []

    def draw(self, seed):
        self.draws.append(seed)
        return {"layout": LAYOUT, "fresh": len(self.draws) == 1, "capacity": 8, "ok": True}

    def read(self, done):
        self.reads.append(done)
        return {"ok": True, "inputs_changed": False}


def done(clock_ms=1.0, **extra):
    return {"ok": True, "need": "order",
            "done": {"clock_ms": clock_ms, "host_ms": clock_ms, "layout": LAYOUT, "devices": {"output": "cpu"}, **extra}}


def driver_for(settings=FIVE_CALLS, seeds=None, checks=None, **kwargs):
    """A driver of a candidate's calls, with a Trusted side."""
    return CallDriver(settings, seeds or SeedFeed(), checks, trusted=Trusted(), **kwargs)


def drive(driver, before_call=lambda: None):
    """Play an honest worker: every call reported done (``before_call`` told first); a worker timing
    itself (no trusted side) also draws and reads its own. Returns the judge's orders."""
    orders = [driver({"ok": True, "need": "order"})]
    while "stop" not in orders[-1]:
        if "draw" in orders[-1]:
            orders.append(driver({"ok": True, "need": "order", "ready": {"layout": LAYOUT, "fresh": False}}))
        elif "read" in orders[-1]:
            orders.append(driver({"ok": True, "need": "order", "read": {"ok": True, "inputs_changed": False}}))
        else:
            before_call()
            orders.append(driver(done()))
    return orders


def test_trials_check_every_call_on_the_seeds_given():
    driver = driver_for(seeds=SeedFeed([11, 12, 13, 14, 15]), checks=Checks(every=True))
    orders = drive(driver)
    assert driver.trusted.draws == [11, 12, 13, 14, 15]  # drawn by the trusted side, never sent to the worker
    assert all("seed" not in str(o) for o in orders)
    assert len(driver.trusted.reads) == 5 and len(driver.saved()) == 5
    assert [o["go"].get("fresh") for o in orders if "go" in o] == [True, False, False, False, False]
    assert all(c.devices == {"output": "cpu"} for c in driver.calls)
    assert driver.finished and driver.open is None


def test_a_worker_timing_itself_draws_goes_and_reads_each_call_in_that_order():
    driver = CallDriver(FIVE_CALLS, SeedFeed([1, 2, 3, 4, 5]))
    orders = drive(driver)
    steps = [next(iter(o)) for o in orders]
    assert steps == ["draw", "go", "read"] * 5 + ["stop"]
    assert [o["draw"] for o in orders if "draw" in o] == [1, 2, 3, 4, 5]


def test_each_checked_call_is_checked_before_the_next_order_and_off_the_budget():
    order_when_checked = []

    def check(call):
        order_when_checked.append((len(driver.calls), len(driver.trusted.reads), len(driver.trusted.draws)))
        return f"checked {call.index}"

    driver = driver_for(checks=Checks(every=True), on_saved=check)
    budget_end = driver.rule.budget_end
    drive(driver)
    assert order_when_checked == [(i, i, i) for i in range(1, 6)]  # right after its own read, before the next draw
    assert [c.comparison for c in driver.calls] == [f"checked {i}" for i in range(5)]
    assert driver.rule.budget_end >= budget_end


def test_timed_rounds_check_a_secret_few_and_at_least_one():
    settings = TimingSettings(warmup_calls=2, warmup_seconds=0.0, min_calls=40, max_calls=40, budget_seconds=60.0)
    checked_per_round = []
    for _ in range(30):
        driver = driver_for(settings, checks=Checks())
        drive(driver)
        settled = [c for c in driver.calls if c.kind == "settle"]
        assert len(driver.timed()) == 40 and len(driver.calls) == 42 + len(settled)
        assert len(driver.trusted.reads) == len(driver.calls)  # every call's output read, checked or not
        checked_per_round.append(len([c for c in driver.timed() if c.checked]))
    assert min(checked_per_round) >= 1
    assert max(checked_per_round) < 40  # a sample, not every call
    assert len(set(checked_per_round)) > 1  # not a fixed pattern either


class SteppedClock:
    """The judge's clock in kbench.judge.trusted.calls, moved on only by the calls a worker makes, each
    ``call_seconds`` long."""

    def __init__(self, call_seconds):
        self.now, self.call_seconds = 1000.0, call_seconds

    def monotonic(self):
        return self.now

    def call(self):
        self.now += self.call_seconds


def settled_rounds(monkeypatch, call_seconds, rounds=20):
    """Rounds of 40 timed calls, each call taking ``call_seconds`` of the judge's clock (a check
    none): each round's driver, and after each checked timed call the count of settling calls
    that follow it (None where the round ended first)."""
    clock = SteppedClock(call_seconds)
    monkeypatch.setattr(calls_module, "time", clock)
    settings = TimingSettings(warmup_calls=2, warmup_seconds=0.0, min_calls=40, max_calls=40, budget_seconds=60.0)
    played = []
    for _ in range(rounds):
        driver = driver_for(settings, checks=Checks())
        drive(driver, clock.call)
        kinds = [c.kind for c in driver.calls]
        runs = []
        for call in driver.calls:
            if call.checked and call.kind == "timed":
                after = kinds[call.index + 1:]
                run = next((i for i, kind in enumerate(after) if kind != "settle"), None)
                runs.append(run)
        played.append((driver, runs))
    return played


def test_the_calls_after_a_check_settle_untimed_and_eager_replays_them_so(monkeypatch):
    """The calls right after a checked one ran slow on the H200 (the candidate waited while
    the reference checked); they settle, neither timed nor checked, and eager's replay
    settles on the very same calls, so both sides' timed calls are still the same inputs.
    Calls of a millisecond: all SETTLE_CALLS of them settle."""
    rounds_that_settled = 0
    for candidate, runs in settled_rounds(monkeypatch, call_seconds=0.001):
        assert all(run == SETTLE_CALLS for run in runs if run is not None)
        kinds = [c.kind for c in candidate.calls]
        assert not any(c.checked for c in candidate.calls if c.kind == "settle")
        rounds_that_settled += "settle" in kinds
        replay = replace(candidate.rule.settings, target_rel_error=0.0)
        eager = CallDriver(replay, SeedFeed([c.seed for c in candidate.calls]), kinds=kinds)
        drive(eager)
        assert [c.kind for c in eager.calls] == kinds
        assert [c.seed for c in eager.timed()] == [c.seed for c in candidate.timed()]
        assert len(eager.rule.samples) == 40
        # The experiment without the settling calls (TimingSettings.replay_settling off): the same timed calls.
        calls = replayed_calls(candidate.calls, settling=False)
        unsettled = CallDriver(replay, SeedFeed([c.seed for c in calls]), kinds=[c.kind for c in calls])
        drive(unsettled)
        assert [c.kind for c in unsettled.calls] == [kind for kind in kinds if kind != "settle"]
        assert [c.seed for c in unsettled.timed()] == [c.seed for c in candidate.timed()]
        assert replayed_calls(candidate.calls) == candidate.calls
    assert rounds_that_settled >= 10  # about two of 40 timed calls checked, rarely the last one alone


@pytest.mark.parametrize("call_seconds, settling", [(0.015, 3), (0.1, 1), (2.0, 1)])
def test_a_slow_call_settles_for_a_time_not_six_calls(monkeypatch, call_seconds, settling):
    """The slowness after a check lasted a time (30-40 ms on the H200), so a call that takes longer
    settles fewer calls: the first after a check always, then those handed out within
    SETTLE_SECONDS of its end. A correct kernel of two seconds a call is not made to run six
    more calls per check (which would have halved the slowest one judged within the time limit)."""
    assert SETTLE_SECONDS == 0.04  # 0.015 s calls: handed out 0, 15 and 30 ms after the check
    runs = [run for _, runs in settled_rounds(monkeypatch, call_seconds) for run in runs]
    assert len(runs) >= 10
    assert all(run == settling for run in runs if run is not None)


def test_the_recorded_trial_is_a_secret_one_but_never_the_models_first_call():
    """The first trial is the model's first call, where an honest forward prepares what it
    keeps (a weight folded once: tests/honest/l2_linear_clamp_scale_lazy_folded.py); the
    recorded call is one of the others, which one still drawn in secret."""
    picked = [record_index(5) for _ in range(400)]
    assert set(picked) == {1, 2, 3, 4}
    assert {record_index(2) for _ in range(50)} == {1}
    assert record_index(1) == 0  # a single trial is recorded: there is no other
    assert record_index(0) is None
    drivers = [driver_for(checks=Checks(every=True), record=True) for _ in range(50)]
    assert all(d.record_at in range(1, 5) for d in drivers)
    orders = drive(drivers[0])
    assert [bool(o["go"].get("record")) for o in orders if "go" in o] == [i == drivers[0].record_at for i in range(5)]
    assert [c.recorded for c in drivers[0].calls] == [i == drivers[0].record_at for i in range(5)]
    assert CallDriver(FIVE_CALLS, SeedFeed(), None).record_at is None


def test_asking_for_another_call_while_one_is_open_is_an_input_feed_violation():
    driver = driver_for()
    driver({"ok": True, "need": "order"})
    with pytest.raises(ProtocolViolation) as raised:
        driver({"ok": True, "need": "order"})
    assert raised.value.finding.rule == "input-feed"


def test_a_step_the_judge_did_not_wait_for_loses_the_worker():
    driver = driver_for()
    driver({"ok": True, "need": "order"})
    with pytest.raises(WorkerLost) as raised:  # a candidate reporting a read of its own
        driver({"ok": True, "need": "order", "read": {"inputs_changed": False}})
    assert raised.value.kind == "protocol"


def test_calls_after_the_judge_said_stop_are_forged():
    driver = driver_for()
    drive(driver)
    with pytest.raises(WorkerLost) as raised:
        driver(done())
    assert raised.value.kind == "forged"


def test_a_call_reported_before_any_was_handed_out_is_forged():
    with pytest.raises(WorkerLost) as raised:
        driver_for()(done())
    assert raised.value.kind == "forged"


@pytest.mark.parametrize("report", [
    done(clock_ms="soon"),
    done(layout="not a layout"),
    {"ok": True, "need": "order", "done": ["not", "a", "dict"]},
    done(devices={"output": 3}),
])
def test_a_malformed_report_loses_the_worker_as_a_protocol_fault(report):
    driver = driver_for()
    driver({"ok": True, "need": "order"})
    with pytest.raises(WorkerLost) as raised:
        driver(report)
    assert raised.value.kind == "protocol"


def test_a_clock_reading_no_clock_gives_is_a_forged_report():
    driver = driver_for()
    driver({"ok": True, "need": "order"})
    with pytest.raises(ProtocolViolation) as raised:
        driver(done(clock_ms=math.nan))
    assert raised.value.finding.rule == "forged-report"


def test_the_judge_clock_stamps_every_call_from_draw_to_read():
    clock = SteppedClock(0.0)
    driver = driver_for()
    trusted = driver.trusted
    read = trusted.read

    def slow_read(done):  # the trusted side's read is inside the call's span
        clock.now += 0.003
        return read(done)

    trusted.read = slow_read
    calls_module_time = calls_module.time
    calls_module.time = clock
    try:
        drive(driver, lambda: setattr(clock, "now", clock.now + 0.002))
    finally:
        calls_module.time = calls_module_time
    timing = driver.timing("cpu", {"overhead_ms": 0.01})
    assert timing.judge_samples_ms == pytest.approx([5.0] * 5)
    assert timing.samples_ms == [1.0] * 5


def calls(judge_ms, clock_ms, n=20):
    return [Call(index=i, seed=i, kind="timed", judge_ms=judge_ms, clock_ms=clock_ms) for i in range(n)]


def test_trusted_times_keep_the_reported_time_within_eagers_excess():
    accepted, measured, findings = trusted_times([calls(1.3, 1.0)], [calls(2.3, 2.0)], "cuda")
    assert findings == [] and accepted == [[1.0] * 20]
    assert {k: v for k, v in measured.items() if "excess" in k or "by_judge" in k} == pytest.approx(
        {"candidate_excess_ms": 0.3, "eager_excess_ms": 0.3, "calls_timed_by_judge": 0})


def test_trusted_times_take_the_judges_clock_where_a_call_reported_too_little():
    # The candidate reports 0.1 ms a call, yet the judge saw 2 ms more pass than for eager.
    accepted, measured, findings = trusted_times([calls(2.4, 0.1)] * 3, [calls(2.3, 2.0)] * 3, "cuda")
    allowed = trusted_clock_limit(0.3, 0.1, "cuda")
    assert allowed < 0.7  # 1.1 x eager's 0.3 ms + 0.3 ms + 5% of 0.1 ms
    assert accepted == [[pytest.approx(2.4 - allowed)] * 20] * 3  # its span less the allowance: no more gain
    assert [f.rule for f in findings] == ["trusted-clock"] and "60 of 60 timed calls" in findings[0].message
    assert measured["calls_timed_by_judge"] == 60


def test_trusted_times_are_decided_call_by_call_not_by_medians():
    """Work done outside the reported window in one call of three (a different place in each
    call keeps every median honest-looking) is caught in exactly those calls; a flag only where
    that moved the median."""
    honest, cheat = calls(1.3, 1.0), calls(3.3, 0.01)
    mixed = [c if i % 3 else cheat[i] for i, c in enumerate(honest)]
    accepted, _, findings = trusted_times([mixed], [calls(2.3, 2.0)], "cuda")
    hidden = 3.3 - trusted_clock_limit(0.3, 0.01, "cuda")
    assert [t == pytest.approx(hidden) for t in accepted[0]] == [i % 3 == 0 for i in range(20)]
    assert findings == []  # the median did not move: seven calls timed by the judge's clock, nothing to flag


def test_trusted_times_flag_a_call_reported_longer_than_it_took():
    _, _, findings = trusted_times([calls(1.0, 5.0, n=1) + calls(1.3, 1.0)], [calls(2.3, 2.0)], "cuda")
    assert [f.rule for f in findings] == ["trusted-clock"]
    assert "more time than the judge saw pass" in findings[0].message


def test_trusted_times_hold_each_round_against_eager_of_that_round():
    """A machine loaded through a whole round slows eager's spans in it too: the candidate's,
    as slow in the same round, keep their reported times; in a quiet round they would not."""
    loaded, eager_loaded = calls(7.3, 1.0), calls(8.3, 2.0)
    accepted, _, findings = trusted_times([loaded] * 3, [eager_loaded] * 3, "cuda")
    assert findings == [] and accepted == [[1.0] * 20] * 3
    accepted, _, findings = trusted_times([loaded] * 3, [calls(2.3, 2.0)] * 3, "cuda")
    assert [f.rule for f in findings] == ["trusted-clock"]
    assert accepted[0][0] == pytest.approx(7.3 - trusted_clock_limit(0.3, 1.0, "cuda"))


def test_an_honest_round_a_little_slower_than_eager_s_loses_only_what_passed_the_allowance():
    """On the H100 a round's median excess moved by up to 1 ms of 8-17 between the candidate's and
    eager's calls: such a round keeps nearly all of its reported time, not its span less eager's excess."""
    accepted, _, _ = trusted_times([calls(2.0 + 11.5, 2.0)], [calls(2.0 + 10.6, 2.0)], "cuda")
    assert accepted[0] == [2.0] * 20  # within the allowance
    accepted, _, _ = trusted_times([calls(2.0 + 12.5, 2.0)], [calls(2.0 + 10.6, 2.0)], "cuda")
    assert accepted[0][0] == pytest.approx(14.5 - trusted_clock_limit(10.6, 2.0, "cuda"))
    assert accepted[0][0] < 2.0 + 0.5  # not 2.0 + 1.9 (its span less eager's excess)


def test_a_reported_zero_is_never_a_time():
    accepted, _, _ = trusted_times([calls(0.2, 0.0)], [calls(0.2, 0.0)], "cuda")
    assert min(accepted[0]) > 0


LAYOUTS = {
    "transposed": lambda x: x.view(64, 48).t(),
    "channels-last": lambda x: x.view(2, 3, 8, 64).contiguous(memory_format=torch.channels_last),
    "size-one dim, odd stride": lambda x: x.view(64, 1, 48).as_strided((64, 1, 48), (48, 7, 1)),
    "transposed with a size-one dim": lambda x: x.view(64, 1, 48).permute(2, 1, 0),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_dense_output_in_any_layout_is_packed_in_its_own_order(layout, monkeypatch):
    """A call's output is packed inside the judge's clock's window: a copy to the standard layout
    would make an honest channels-last or transposed output look like work outside the timed call
    (two honest solutions were rejected so on the H200). It comes back with its values and its layout."""
    out = LAYOUTS[layout](torch.randn(3072))
    monkeypatch.setattr(torch.Tensor, "contiguous", lambda *a, **k: pytest.fail("copied to the standard layout"))
    layout_, tensors = pack_output(out)
    buffer = torch.zeros(layout_["nbytes"], dtype=torch.uint8)
    copy_packed(tensors, buffer)
    monkeypatch.undo()
    back = unpack_output(json.loads(json.dumps(layout_)), buffer)
    assert torch.equal(back, out) and same_bits(back, out)
    assert back.is_contiguous() == out.is_contiguous()


def test_packing_keeps_no_tensor_alive():
    """Every call's inputs and output are packed: anything that keeps them alive past the call
    (a reference cycle waits for the garbage collector) piles up gigabytes on a GPU."""
    gc.disable()
    try:
        x = torch.randn(64)
        alive = weakref.ref(x)
        layout, tensors = pack_output({"a": [x, (x,)]})
        copy_packed(tensors, torch.zeros(layout["nbytes"], dtype=torch.uint8))
        del x, tensors
        assert alive() is None
    finally:
        gc.enable()


def test_a_held_output_is_checked_and_one_that_could_not_be_read_is_wrong():
    expected = torch.arange(6.0)
    message = {"candidate_devices": {"output": "cpu"}, "tolerance": {}}
    assert check_held(expected, expected.clone(), message)["comparison"]["ok"]
    assert not check_held(expected, torch.zeros(6), message)["comparison"]["ok"]
    unreadable = check_held(expected, ValueError("a tensor outside the buffer"), message)["comparison"]
    assert not unreadable["ok"] and "could not be read back" in unreadable["detail"]


def test_inputs_unpack_as_views_of_the_shared_buffer_outputs_as_copies():
    args = [torch.arange(6.0).view(2, 3), torch.ones(3, dtype=torch.int64), 7]
    layout, tensors = pack_output(args)
    buffer = torch.zeros(layout["nbytes"], dtype=torch.uint8)
    copy_packed(tensors, buffer)
    views = unpack_output(layout, buffer, copy=False)
    assert torch.equal(views[0], args[0]) and views[1].dtype == torch.int64 and views[2] == 7
    buffer.zero_()  # the next call's inputs written in place: a view sees them
    assert views[0].sum() == 0
    assert unpack_output(layout, buffer)[0].data_ptr() != buffer.data_ptr()


def test_a_packed_output_unpacks_to_the_same_values_and_structure():
    out = (torch.arange(6.0).view(2, 3).t(), {"b": torch.tensor([True, False]), "a": 3}, [torch.zeros(0), None])
    layout, tensors = pack_output(out)
    buffer = torch.zeros(layout["nbytes"], dtype=torch.uint8)
    copy_packed(tensors, buffer)
    back = unpack_output(json.loads(json.dumps(layout)), buffer)  # the layout travels as JSON
    assert same_bits(back, out)
    assert isinstance(back, tuple) and isinstance(back[2], list) and back[1]["a"] == 3
    assert back[0].data_ptr() != buffer.data_ptr() and not back[0]._is_view()  # a copy of its own


@pytest.mark.parametrize("tamper", [
    lambda tree: tree["tuple"][0]["tensor"].__setitem__(0, 1 << 40),  # outside the buffer
    lambda tree: tree["tuple"][0]["tensor"].__setitem__(0, 3),  # misaligned
    lambda tree: tree["tuple"][0]["tensor"].__setitem__(1, "Tensor"),  # not a dtype
    lambda tree: tree["tuple"][0]["tensor"].__setitem__(2, [1 << 30]),  # larger than the buffer
    lambda tree: tree.__setitem__("eval", "print"),  # not a node kbench writes
])
def test_a_layout_that_does_not_fit_its_buffer_is_refused(tamper):
    layout, tensors = pack_output((torch.ones(4),))
    buffer = torch.zeros(layout["nbytes"], dtype=torch.uint8)
    copy_packed(tensors, buffer)
    tamper(layout["tree"])
    with pytest.raises((ValueError, TypeError)):
        unpack_output(layout, buffer)


def test_a_descriptor_crosses_the_handles_socket_and_a_missing_one_is_none():
    import socket

    from kbench.judge.exchange import vmm

    judge, worker = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    read, write = os.pipe()
    vmm.send_fd(worker, read)
    received = vmm.receive_fd(judge, timeout=5)
    os.write(write, b"the same file")
    assert os.read(received, 64) == b"the same file"
    assert vmm.receive_fd(judge, timeout=0.05) is None  # nothing more was sent
    worker.close()
    for fd in (read, write, received):
        os.close(fd)
    judge.close()


def test_copies_on_the_cpu_run_on_one_thread_and_give_the_threads_back(monkeypatch):
    """On a busy machine a copy split over two threads waited tens of milliseconds for the
    unscheduled one, inside the judge's clock's window; the call keeps its threads."""
    seen, copy = [], torch.Tensor.copy_
    monkeypatch.setattr(torch.Tensor, "copy_", lambda self, other: seen.append(torch.get_num_threads()) or copy(self, other))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        layout, tensors = pack_output([torch.arange(10.0), torch.ones(3)])
        copy_packed(tensors, torch.zeros(layout["nbytes"], dtype=torch.uint8))
        assert seen == [1, 1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_gpu_worker_never_runs_triton_interpreted(monkeypatch):
    from kbench.judge.processes.devices import worker_env

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert worker_env("cuda:0")["TRITON_INTERPRET"] == "0" and worker_env("cpu")["TRITON_INTERPRET"] == "1"


def test_each_calls_span_is_split_into_the_steps_that_make_it(monkeypatch):
    """Where the judge's clock goes beside the call: the draw, the call with its messages, the read."""
    now = [100.0]

    class Trusted:
        def draw(self, seed):
            now[0] += 0.002
            return {"layout": {}, "fresh": False, "capacity": 0}

        def read(self, done):
            now[0] += 0.003
            return {"inputs_changed": False}

    monkeypatch.setattr("kbench.judge.trusted.calls.time.monotonic", lambda: now[0])
    driver = CallDriver(TimingSettings(warmup_calls=0, min_calls=1, max_calls=1), seeds=lambda: 7,
                        trusted=Trusted())
    driver({"ok": True, "need": "order"})
    now[0] += 0.008
    driver({"done": {"clock_ms": 7.0, "host_ms": 7.5, "layout": {}, "devices": {}}})
    (call,) = driver.calls
    assert call.judge_ms == pytest.approx(13.0)
    assert call.steps_ms == pytest.approx((2.0, 8.0, 3.0))
