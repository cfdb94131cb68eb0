"""Outputs between workers: a candidate saves a call, the reference checks it.

Right after every call a worker reports fingerprints of its output and of its
inputs as they are after the call (``fingerprint``), before it can know
whether the judge will ask for that call. When asked, it saves the output as a
``torch.save`` file of plain tensors (moved to the CPU, subclasses stripped),
with each tensor's original device beside it. The reference loads the file
with ``weights_only=True`` (never unpickling arbitrary objects), checks it
holds what was fingerprinted (nothing computed after the call can pass), that
the inputs' fingerprint is that of the inputs it draws from the same seed,
and compares the output on its own device, so the expected output never
leaves the reference's process.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

import torch

from kbench.judge.compare import Comparison, compare_outputs, dtype_name, leaves, tolerance_for
from kbench.judge.failure import Failure, phase


def check_saved_call(expected: Any, drawn_inputs: str, msg: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """Check the candidate's saved call against ``expected`` (computed here, from
    inputs whose fingerprint as drawn is ``drawn_inputs``): the file holds what
    the call reported, its inputs were left as drawn, the output matches. On
    this device."""
    expected_devices = describe_devices(expected)
    path = Path(msg["candidate_path"])
    tolerances = {
        dtype_name(leaf.dtype): tolerance_for(leaf.dtype, msg["tolerance"])
        for _, leaf in leaves(expected)[0]
        if isinstance(leaf, torch.Tensor) and (leaf.is_floating_point() or leaf.is_complex())
    }
    reported = msg["fingerprint"]
    inputs_changed = drawn_inputs != reported.get("inputs")
    try:
        with _candidate_file(path) as stream:
            actual = torch.load(stream, map_location=device, weights_only=True)
        saved = fingerprint(actual)
    except Exception as exc:  # whatever the candidate wrote, it is not a readable output
        result = Comparison(False, "output", f"the output could not be read back ({type(exc).__name__}: {exc})")
    else:
        if saved != reported.get("output"):
            result = Comparison(False, "saved-output", "the saved output is not the one the call reported "
                                "when it returned (computed or changed afterwards)")
        else:
            result = compare_outputs(expected, actual, expected_devices, msg["candidate_devices"], msg["tolerance"])
    finally:
        path.unlink(missing_ok=True)
    return {"comparison": asdict(result), "tolerance": tolerances, "inputs_changed": inputs_changed}


def fingerprint(value: Any, where: str = "output") -> str:
    """A digest of a call's output (or of its inputs as they are after it),
    reported right after the call, before the worker can know whether the judge
    will ask for it.

    Per tensor: dtype, shape and two 64-bit sums over its bytes read as
    integer words: of the words, and of the words weighted by their position
    (so a permutation, or a transpose written out in the wrong order, changes
    it too). Integer sums wrap the same way on any device and in any order, so
    the reference recomputes them exactly, from the saved file or from the
    inputs it draws itself. Not a cryptographic hash: it makes changing an
    output after its call, to one that passes, require knowing the right
    output at the call already (and then the call could have returned it).
    Two reading passes over each tensor (row and column sums), no large
    temporaries; what it costs on the H200 is in docs/guard.md.
    """
    parts = []
    for path, leaf in leaves(value, where)[0]:
        if isinstance(leaf, torch.Tensor):
            parts.append(f"{path}:{_tensor_digest(leaf)}")
        elif leaf is None or isinstance(leaf, (bool, int, float, complex, str)):
            parts.append(f"{path}:{type(leaf).__name__}:{leaf!r}")
        else:
            raise Failure("output", f"{path} is a {type(leaf).__name__}, not a tensor")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


FINGERPRINT_ROW_WORDS = 4096


def _tensor_digest(tensor: torch.Tensor) -> str:
    plain = tensor.detach()
    if type(plain) is not torch.Tensor:
        plain = plain.as_subclass(torch.Tensor)
    raw = plain.contiguous().reshape(-1).view(torch.uint8)
    width = next(d for d in (torch.int32, torch.int16, torch.uint8) if raw.numel() % d.itemsize == 0)
    words = raw.view(width)
    # Words as rows of R: sum of w * (position + 1) = R * sum(row index * row sum) + sum((column + 1) * column sum).
    whole = words.numel() - words.numel() % FINGERPRINT_ROW_WORDS
    rows = words[:whole].view(-1, FINGERPRINT_ROW_WORDS)
    tail = words[whole:]
    row_sums = rows.sum(dim=1, dtype=torch.int64)
    column_sums = rows.sum(dim=0, dtype=torch.int64)
    tail_sum = tail.sum(dtype=torch.int64)
    int64 = {"dtype": torch.int64, "device": words.device}
    totals = torch.stack([
        row_sums.sum() + tail_sum,
        (row_sums * torch.arange(rows.shape[0], **int64)).sum(),
        (column_sums * torch.arange(1, FINGERPRINT_ROW_WORDS + 1, **int64)).sum(),
        (tail.to(torch.int64) * torch.arange(whole + 1, words.numel() + 1, **int64)).sum(),
    ]).tolist()
    plain_sum, by_row, by_column, tail_weighted = totals
    weighted = (FINGERPRINT_ROW_WORDS * by_row + by_column + tail_weighted) % (1 << 64)
    return f"{plain.dtype}{tuple(plain.shape)}[{plain_sum}, {weighted}]"


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
