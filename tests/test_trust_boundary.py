"""The trust-boundary issue's attack classes, judged with every runtime and static rule off
(``policy="off"``: nothing rejects on what the candidate's process reports or on a name) and
under the default policy: each ends not ``correct``, or ``correct`` with the hidden work in its
time, since the inputs, the outputs and every call's time come from processes it cannot reach.
The attacks are in tests/exploits/boundary/: each hides HIDDEN_SECONDS (0.3 s) of work per call
from the clock around forward, where an honest ReLU of the small size takes well under 10 ms."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import kbench
from kbench.judge.exchange.outputs import same_bits
from kbench.judge.protocol.timing import TimingSettings
from kbench.judge.trusted.reference import load_message
from kbench.judge.worker.session import Session
from kbench.suite import find_problem

BOUNDARY = Path(__file__).parent / "exploits" / "boundary"
QUICK = TimingSettings(warmup_calls=1, warmup_seconds=0.0, min_calls=3, max_calls=5, budget_seconds=1.0, rounds=2)
HIDDEN_MS = 300.0


# Each attack on the CPU, and on a GPU (marked: skipped without one), where the clock around forward
# is CUDA events in the candidate's process and the shared memory is the GPU's.
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def _judge(name: str, policy: str, device: str = "cpu") -> kbench.Verdict:
    return kbench.evaluate("level1/relu", BOUNDARY / f"{name}.py", device, size="small", trials=2, timing=QUICK,
                           policy=policy, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("policy", ["off", "lenient"])
@pytest.mark.parametrize("name", ["pack_hook_relu", "clock_patch_relu", "alternating_places_relu"])
def test_work_hidden_from_the_clock_around_forward_is_in_the_judges_time(name, policy, device):
    verdict = _judge(name, policy, device)
    assert verdict.status in {"correct", "rejected", "incorrect"}, verdict.reason
    if verdict.correct:
        assert verdict.runtime_ms >= HIDDEN_MS / 2, (verdict.runtime_ms, verdict.timing)
        assert verdict.timing["calls_timed_by_judge"] > 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("policy", ["off", "lenient"])
def test_work_at_an_input_draw_in_the_candidates_process_finds_no_draw(policy, device):
    verdict = _judge("draw_hook_relu", policy, device)
    assert not verdict.correct and verdict.status in {"incorrect", "rejected"}, verdict.reason


def test_the_reference_reads_changed_inputs_itself_and_never_blames_a_problem_s_own_draws():
    """``input-mutated`` rests on the reference's own reading: the shared inputs a checked call left,
    byte for byte against the seed's inputs drawn again, in the reference's process."""
    session = Session()
    session.load({**load_message(find_problem("level1/relu"), "cpu", "small", 1), "role": "reference"})
    session.draw({"seed": 7})
    assert not session._inputs_changed(session.inputs(7), 7)
    shared = session.inputs_out.tensor(session.drawn["layout"]["nbytes"])
    shared[0] ^= 1  # one bit of the first input changed, as a call writing into its input would
    assert session._inputs_changed(session.inputs(7), 7)
    session.inputs = lambda seed: [torch.randn(16, 4096)]  # a problem that draws other inputs for one seed
    assert not session._inputs_changed(session.inputs(7), 7)


def test_same_bits_is_exact():
    x = torch.tensor([0.0, float("nan"), 1.0])
    assert same_bits([x, 3], [x.clone(), 3])
    assert not same_bits([x], [torch.tensor([-0.0, float("nan"), 1.0])])  # a signed zero differs
    assert not same_bits([x, 3], [x, 4]) and not same_bits([x], [x.double()])
