"""State the L2 flush does not clear (kbench.judge.protocol.l2, issue 32 item 7).

A persisting-L2 set-aside left in the candidate's CUDA context is a changed setting
(``global-state``); one given back before the check is not. The exploit and its twin
are rows of the exploit table (tests/exploits, GPU).
"""

import ctypes

import pytest
import torch

from kbench.judge.protocol import l2, state
from kbench.judge.guard.runtime import RuntimeGuard


def _fake_limit(box: dict[str, int]):
    """A stand-in for the driver's cuCtxGetLimit that reports ``box["bytes"]``."""

    def get(pointer, limit) -> int:
        assert limit == l2.CU_LIMIT_PERSISTING_L2_CACHE_SIZE
        pointer._obj.value = box["bytes"]
        return 0

    return get


@pytest.fixture
def pinned():
    """The pinned settings in force, as in a worker (and this process's own back after)."""
    backends = torch.backends
    before = (backends.cuda.matmul.allow_tf32, backends.cudnn.allow_tf32, torch.get_float32_matmul_precision(),
              backends.cudnn.benchmark, backends.cudnn.deterministic, torch.get_default_dtype())
    state.pin()
    yield
    (backends.cuda.matmul.allow_tf32, backends.cudnn.allow_tf32, precision, backends.cudnn.benchmark,
     backends.cudnn.deterministic, dtype) = before
    torch.set_float32_matmul_precision(precision)
    torch.set_default_dtype(dtype)


def _global_state(guard: RuntimeGuard) -> list[str]:
    return [f.message for f in guard.state_findings() if f.rule == "global-state"]


def test_a_set_aside_left_in_place_is_a_changed_setting_and_one_given_back_is_not(monkeypatch, pinned):
    box = {"bytes": 0}
    monkeypatch.setattr(l2.persisting_limit_bytes, "__defaults__", (_fake_limit(box),))
    guard = RuntimeGuard(torch.device("cpu"))  # its snapshot: no set-aside
    assert _global_state(guard) == []
    box["bytes"] = 30 << 20  # what cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, ...) leaves
    assert state.read_device() == {"persisting_l2_bytes": 30 << 20}
    [detail] = _global_state(guard)
    assert "persisting_l2_bytes=31457280" in detail
    box["bytes"] = 0  # given back before returning, as the CUDA guide's example does
    assert _global_state(guard) == []


def test_a_set_aside_there_before_the_solution_is_not_the_candidates(monkeypatch, pinned):
    box = {"bytes": 8 << 20}  # under MPS the server's default, say
    monkeypatch.setattr(l2.persisting_limit_bytes, "__defaults__", (_fake_limit(box),))
    guard = RuntimeGuard(torch.device("cpu"))
    assert _global_state(guard) == []
    box["bytes"] = 0  # given back to 0 at the end, as an honest kernel does (on the H200 the default is not 0)
    assert _global_state(guard) == []
    box["bytes"] = 16 << 20  # more set aside than the context had
    [detail] = _global_state(guard)
    assert "persisting_l2_bytes=16777216 (was 8388608)" in detail


def test_without_the_cuda_driver_nothing_is_set_aside_and_resetting_does_nothing():
    if l2._GET_LIMIT is not None:
        pytest.skip("this machine has the CUDA driver")
    assert l2.persisting_limit_bytes() == 0
    assert l2.reset_persisting_lines() == 0


@pytest.mark.gpu
def test_the_driver_reads_back_a_set_aside_and_resets_persisting_lines():
    torch.empty(1, device="cuda")  # the primary context, current on this thread
    properties = torch.cuda.get_device_properties(0)
    if properties.major < 8:
        pytest.skip("persisting L2 needs compute capability 8.0")
    driver = ctypes.CDLL("libcuda.so.1")
    before = l2.persisting_limit_bytes()
    try:
        assert driver.cuCtxSetLimit(l2.CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(4 << 20)) == 0
        assert l2.persisting_limit_bytes() > 0
        assert l2.reset_persisting_lines() == 0
    finally:
        driver.cuCtxSetLimit(l2.CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(before))
    assert l2.persisting_limit_bytes() == before
