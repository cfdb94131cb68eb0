"""An evaluation's turn on a GPU (kbench.judge.processes.devices.gpu_turn), across processes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kbench.judge.processes.devices import gpu_turn

SRC = Path(__file__).parent.parent / "src"
TAKE_TURN = """
import sys
from kbench.judge.processes.devices import gpu_turn
print("ready", flush=True)
with gpu_turn(sys.argv[1]):
    print("turn", flush=True)
"""


def take_turn_elsewhere(device: str) -> subprocess.Popen:
    """Another process asking for ``device``'s turn, once it is ready to."""
    other = subprocess.Popen([sys.executable, "-c", TAKE_TURN, device], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(SRC)})
    assert other.stdout.readline() == "ready\n"
    return other


def turn_taken(other: subprocess.Popen) -> bool:
    """Whether ``other`` says it has its turn. Read through the same buffered stream as its
    "ready": ``communicate`` would read the pipe beneath it and miss a "turn" already buffered."""
    said = other.stdout.readline()
    assert other.wait(timeout=60) == 0, other.stderr.read()[-2000:]
    return said == "turn\n"


def test_one_process_at_a_time_has_a_gpus_turn_and_other_devices_do_not_wait(tmp_path, monkeypatch):
    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path))
    with gpu_turn("cuda:0"):
        same = take_turn_elsewhere("cuda:0")
        other = take_turn_elsewhere("cuda:1")
        assert turn_taken(other)  # another GPU's turn is free
        with pytest.raises(subprocess.TimeoutExpired):
            same.wait(timeout=2)  # this GPU's is not, until this turn ends
        with gpu_turn("cpu") as waited:
            assert waited == 0.0  # the CPU takes no turns
    assert turn_taken(same)
