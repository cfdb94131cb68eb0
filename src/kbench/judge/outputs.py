"""Outputs between workers: a candidate saves its output, the reference compares with it.

A candidate's output is saved as a ``torch.save`` file of plain tensors (moved
to the CPU, subclasses stripped), with each tensor's original device beside
it; the reference loads it with ``weights_only=True`` (never unpickling
arbitrary objects) and compares on its own device, so the expected output
never leaves the reference's process.
"""

from __future__ import annotations

import os
import stat
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

import torch

from kbench.judge.compare import Comparison, compare_outputs, dtype_name, leaves, tolerance_for
from kbench.judge.failure import Failure, phase


def compare_with_saved(expected: Any, msg: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """Compare ``expected`` (here) with the candidate's saved output, on this device."""
    expected_devices = describe_devices(expected)
    path = Path(msg["candidate_path"])
    tolerances = {
        dtype_name(leaf.dtype): tolerance_for(leaf.dtype, msg["tolerance"])
        for _, leaf in leaves(expected)[0]
        if isinstance(leaf, torch.Tensor) and (leaf.is_floating_point() or leaf.is_complex())
    }
    try:
        with _candidate_file(path) as stream:
            actual = torch.load(stream, map_location=device, weights_only=True)
    except Exception as exc:  # whatever the candidate wrote, it is not a readable output
        result = Comparison(False, "output", f"the output could not be read back ({type(exc).__name__}: {exc})")
    else:
        result = compare_outputs(expected, actual, expected_devices, msg["candidate_devices"], msg["tolerance"])
    finally:
        path.unlink(missing_ok=True)
    return {"comparison": asdict(result), "tolerance": tolerances}


def _candidate_file(path: Path) -> BinaryIO:
    """The candidate's output file, opened only if it is a plain file of its own: a
    link (to a file the reference can read and the candidate cannot) or a FIFO
    (that would hang the reference, and the problem would take the blame) is refused."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError("not a regular file")
    return os.fdopen(fd, "rb")


def describe_devices(out: Any) -> dict[str, str]:
    return {where: str(leaf.device) for where, leaf in leaves(out)[0] if isinstance(leaf, torch.Tensor)}


def save_output(out: Any, path: Path) -> dict[str, str]:
    """Save an output, moved to the CPU, and return each tensor's original device."""

    def to_cpu(node: Any, where: str) -> Any:
        if isinstance(node, torch.Tensor):
            plain = node.detach()
            if type(plain) is not torch.Tensor:
                plain = plain.as_subclass(torch.Tensor)
            return plain.to("cpu")
        if isinstance(node, (tuple, list)):
            return type(node)(to_cpu(x, f"{where}[{i}]") for i, x in enumerate(node))
        if isinstance(node, dict):
            return {k: to_cpu(node[k], f"{where}[{k!r}]") for k in sorted(node, key=str)}
        if node is None or isinstance(node, (bool, int, float, complex, str)):
            return node
        raise Failure("output", f"{where} is a {type(node).__name__}, not a tensor")

    with phase("output"):
        devices = describe_devices(out)
        torch.save(to_cpu(out, "output"), path)
    return devices
