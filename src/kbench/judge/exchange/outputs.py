"""A call's inputs and output between workers, and the reference's check of an output.

Each call's inputs are drawn by the trusted side (the reference worker), packed into memory it
shares with the candidate's process (``pack_output``, ``copy_packed``, kbench.judge.exchange.buffers),
and seen there as views of that memory (``unpack_output`` with ``copy=False``). The candidate
packs each call's output the same way into memory of its own that the reference maps; right
after the call the reference copies it out into its own memory (``unpack_output``). When the
judge picks the call for a check, the reference computes the expected output on the same seed
and compares it with its copy (``check_held``), and the shared inputs with the seed's drawn
again (``same_bits``), so neither the expected output nor any comparison is ever within the
candidate's reach.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any, Callable

import torch

from kbench.judge.trusted.compare import (
    DEFAULT_CRITERION, Comparison, compare_outputs, dtype_name, leaves, tolerance_for,
)
from kbench.judge.exchange.failure import Failure, phase

# Taken when the worker imports this module, before any candidate code can replace them.
_get_num_threads, _set_num_threads = torch.get_num_threads, torch.set_num_threads


def check_held(expected: Any, held: Any, msg: dict[str, Any], truth: Callable[[], Any] | None = None
               ) -> dict[str, Any]:
    """Check the output the reference copied out of the candidate's memory right after its call
    (``held``: the output, or the exception reading it raised) against ``expected``, computed here
    on the same seed: under ``msg["correctness"]`` (default ``truth``), against what ``truth()``
    returns (kbench.judge.trusted.truth), else against ``expected`` alone (kbench.judge.trusted.compare)."""
    truth = truth if msg.get("correctness", DEFAULT_CRITERION) == "truth" else None
    expected_devices = describe_devices(expected)
    tolerances = {
        dtype_name(leaf.dtype): tolerance_for(leaf.dtype, msg["tolerance"])
        for _, leaf in leaves(expected)[0]
        if isinstance(leaf, torch.Tensor) and (leaf.is_floating_point() or leaf.is_complex())
    }
    if isinstance(held, BaseException):  # whatever the candidate wrote, it is not a readable output
        result = Comparison(False, "output", f"the output could not be read back ({type(held).__name__}: {held})")
    else:
        result = compare_outputs(expected, held, expected_devices, msg["candidate_devices"], msg["tolerance"], truth,
                                 msg.get("truth_on_pass", True) is not False)
    return {"comparison": asdict(result), "tolerance": tolerances}


@contextmanager
def _one_cpu_thread(on_cpu: bool = True):
    """The copies and comparisons of packed tensors, where they are ``on_cpu``, on one CPU
    thread. They are memory-bound, so a second
    thread gains nothing, and on a busy machine (other processes on every core) a
    reduction split over PyTorch's two threads waited 35-60 ms at the median for the
    one that was not scheduled, against 0.2-0.3 ms on one thread, for the same
    256 KiB output (docs/measurements/2026-12-02-cpu-fingerprint-threads.log): inside
    the window the trusted clock compares with eager's, for either side at random.
    Work on a GPU needs no CPU thread, and switching PyTorch's threads there on every
    copy cost the H100 about 2 ms a call (docs/measurements/2026-12-06-h100-null-partial.md)."""
    if not on_cpu:
        yield
        return
    threads = _get_num_threads()
    _set_num_threads(1)
    try:
        yield
    finally:
        _set_num_threads(threads)


def _plain(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor's data as a plain torch.Tensor: detached, any subclass stripped, a lazy
    conjugate or negation (``x.conj()``, whose bytes are not its values) carried out."""
    plain = tensor.detach().resolve_conj().resolve_neg()
    return plain if type(plain) is torch.Tensor else plain.as_subclass(torch.Tensor)


def memory_order(tensor: torch.Tensor) -> tuple[list[int] | None, torch.Tensor]:
    """The order of the dimensions in memory (None: the standard one) and the
    tensor's data as a contiguous tensor in that order: a view of a dense tensor
    in any layout (``dense_order``), a copy only of one with gaps or overlaps (a
    slice, an expand)."""
    return dense_order(tensor) or (None, tensor.contiguous())


def dense_order(tensor: torch.Tensor) -> tuple[list[int] | None, torch.Tensor] | None:
    """For a tensor whose elements fill a block of memory in some order of its dimensions:
    that order (None: the standard one) and the tensor permuted to it, a contiguous view.
    None for a tensor with gaps or overlaps. Dimensions of size 1 come first, in their own
    order, whatever their strides say: they do not change where anything lies."""
    if tensor.is_contiguous():
        return None, tensor
    ones = [d for d in range(tensor.dim()) if tensor.shape[d] == 1]
    others = sorted((d for d in range(tensor.dim()) if tensor.shape[d] != 1), key=lambda d: -tensor.stride(d))
    order = ones + others
    permuted = tensor.permute(order)
    return (order, permuted) if permuted.is_contiguous() else None


def describe_devices(out: Any) -> dict[str, str]:
    return {where: str(leaf.device) for where, leaf in leaves(out)[0] if isinstance(leaf, torch.Tensor)}


PACK_ALIGNMENT = 256  # bytes: every tensor starts where any dtype may be viewed


def pack_output(out: Any) -> tuple[dict[str, Any], list[tuple[int, torch.Tensor]]]:
    """The layout of a call's output (or inputs) (JSON: its structure, and per tensor the byte
    offset, dtype, shape and order in memory) and its tensors with their offsets, to copy into
    one shared buffer (``copy_packed``). The layout's ``nbytes`` is the buffer's size. (No
    closure recursing into itself here or in ``unpack_output``: such a cycle keeps every call's
    tensors alive until the garbage collector next runs, gigabytes a call on a GPU.)"""
    tensors: list[tuple[int, torch.Tensor]] = []
    with phase("output"):
        tree, end = _described(out, "output", tensors, 0)
    return {"tree": tree, "nbytes": max(end, 1)}, tensors


def _described(node: Any, where: str, tensors: list[tuple[int, torch.Tensor]], end: int) -> tuple[Any, int]:
    """``node``'s layout, its tensors appended to ``tensors`` from byte ``end`` on; and the new end."""
    if isinstance(node, torch.Tensor):
        plain = _plain(node)
        offset = end
        end = offset + -(-plain.numel() * plain.element_size() // PACK_ALIGNMENT) * PACK_ALIGNMENT
        order, data = memory_order(plain)
        tensors.append((offset, data))
        described = [offset, str(plain.dtype).removeprefix("torch."), list(plain.shape)]
        return {"tensor": described if order is None else [*described, order]}, end
    if isinstance(node, (tuple, list)):
        items = []
        for i, x in enumerate(node):
            item, end = _described(x, f"{where}[{i}]", tensors, end)
            items.append(item)
        return {type(node).__name__: items}, end
    if isinstance(node, dict):
        if not all(isinstance(k, (str, int)) for k in node):
            raise Failure("output", f"{where} is a dict with keys other than strings and integers")
        items = []
        for k in sorted(node, key=str):
            item, end = _described(node[k], f"{where}[{k!r}]", tensors, end)
            items.append([k, item])
        return {"dict": items}, end
    if node is None or isinstance(node, (bool, int, float, str)):
        return {"value": node}, end
    raise Failure("output", f"{where} is a {type(node).__name__}, not a tensor")


def copy_packed(tensors: list[tuple[int, torch.Tensor]], buffer: torch.Tensor) -> None:
    """Each tensor's bytes into ``buffer`` (uint8) at its offset, finished before it returns."""
    with phase("output"), _one_cpu_thread(buffer.device.type == "cpu"):
        for offset, tensor in tensors:
            raw = tensor.reshape(-1).view(torch.uint8)  # contiguous: pack_output's memory order
            buffer[offset:offset + raw.numel()].copy_(raw)
        if buffer.device.type == "cuda":
            torch.cuda.synchronize(buffer.device)


def same_bits(a: Any, b: Any) -> bool:
    """Whether two values (a call's inputs, say) have one structure and their tensors the same
    bytes: exact, NaNs and signed zeros included, and read once, with no digest kept between."""
    layout_a, tensors_a = pack_output(a)
    layout_b, tensors_b = pack_output(b)
    if layout_a != layout_b:
        return False
    with _one_cpu_thread(any(t.device.type == "cpu" for _, t in tensors_a)):
        return all(torch.equal(x.reshape(-1).view(torch.uint8), y.reshape(-1).view(torch.uint8))
                   for (_, x), (_, y) in zip(tensors_a, tensors_b))


def unpack_output(layout: dict[str, Any], buffer: torch.Tensor, copy: bool = True) -> Any:
    """The structure ``layout`` describes, copied out of ``buffer`` (another process's, mapped
    here) into this process's own memory, or with ``copy=False`` as views of it (a call's inputs,
    in the candidate's process). Whatever the layout says is checked against the buffer:
    ValueError when it does not fit."""
    with _one_cpu_thread(copy and buffer.device.type == "cpu"):
        return _built(layout["tree"], buffer, copy)


def _built(node: Any, buffer: torch.Tensor, copy: bool) -> Any:
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError("malformed layout")
    (kind, body), = node.items()
    if kind == "tensor":
        if not isinstance(body, list) or len(body) not in (3, 4):
            raise ValueError(f"malformed tensor in the layout: {body!r}")
        offset, name, shape = body[:3]
        order = body[3] if len(body) == 4 else list(range(len(shape)))
        dtype = getattr(torch, str(name), None)
        if not isinstance(dtype, torch.dtype) or not all(isinstance(n, int) and n >= 0 for n in shape) \
                or sorted(order) != list(range(len(shape))):
            raise ValueError(f"malformed tensor in the layout: {body!r}")
        nbytes = dtype.itemsize * math.prod(shape)
        if not isinstance(offset, int) or offset < 0 or offset % PACK_ALIGNMENT or offset + nbytes > len(buffer):
            raise ValueError(f"a tensor outside the buffer: {body!r}")
        in_memory = buffer[offset:offset + nbytes].view(dtype).reshape([shape[d] for d in order])
        # Back to the writer's own layout (clone keeps a dense tensor's strides).
        view = in_memory.permute([order.index(d) for d in range(len(shape))])
        return view.clone() if copy else view
    if kind in ("tuple", "list") and isinstance(body, list):
        return (tuple if kind == "tuple" else list)(_built(x, buffer, copy) for x in body)
    if kind == "dict" and isinstance(body, list):
        return {key: _built(value, buffer, copy) for key, value in body}
    if kind == "value" and (body is None or isinstance(body, (bool, int, float, str))):
        return body
    raise ValueError(f"malformed layout node {kind!r}")


