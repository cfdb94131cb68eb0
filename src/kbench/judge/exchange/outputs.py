"""A call's inputs and output between workers, and the reference's check of an output.

Each call's inputs are drawn by the trusted side (the reference worker), packed into memory it
shares with the candidate's process (``pack_output``, ``copy_packed``, kbench.judge.exchange.buffers),
and seen there as views of that memory (``unpack_output`` with ``copy=False``). The candidate
packs each call's output the same way into memory of its own that the reference maps; right
after the call the reference copies it out into its own memory (``unpack_output``), and
fingerprints the shared inputs again (``fingerprint``) to see whether the call changed them.
When the judge picks the call for a check, the reference computes the expected output on the
same seed and compares it with its copy (``check_held``), so neither the expected output nor
the comparison is ever within the candidate's reach.
"""

from __future__ import annotations

import hashlib
import math
import sys
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any, Callable

import numpy as np
import torch

from kbench.judge.trusted.compare import (
    DEFAULT_CRITERION, Comparison, compare_outputs, dtype_name, leaves, tolerance_for,
)
from kbench.judge.exchange.failure import Failure, phase

# Taken when the worker imports this module, before any candidate code can replace them.
_get_num_threads, _set_num_threads = torch.get_num_threads, torch.set_num_threads
try:
    from kbench.judge.exchange.gpu_digest import block_sums as _gpu_block_sums
except ImportError:  # no Triton: a GPU's digest sums with PyTorch, copying
    _gpu_block_sums = None


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


def fingerprint(value: Any, where: str = "output") -> str:
    """A digest of a call's output (or of its inputs as they are after it),
    reported right after the call, before the worker can know whether the judge
    will ask for it.

    Per tensor: dtype, shape and two 64-bit sums over its bytes read as
    integer words of its elements' width (``_words``): of the words, and of the
    words weighted by their position (so a permutation, or a transpose written
    out in the wrong order, changes it too). Integer sums wrap the same way on
    any device and in any order, so
    the reference recomputes them exactly, from the saved file or from the
    inputs it draws itself. Not a cryptographic hash: it makes changing an
    output after its call, to one that passes, require knowing the right
    output at the call already (and then the call could have returned it).
    Two reading passes over each tensor (row and column sums), no large
    temporaries; what it costs on the H200 is in docs/measurements/2026-12-01-trusted-clock-and-fingerprint.md. A
    dense tensor
    in another layout (transposed, channels-last) is read in its memory order,
    with that order in the digest: copying it to the standard order first
    would make the judge's own work, inside the trusted clock's window, cost a
    solution for its output's layout (two honest ones were rejected so on the
    H200).
    """
    parts = []
    found = leaves(value, where)[0]
    with _one_cpu_thread(any(isinstance(leaf, torch.Tensor) and leaf.device.type == "cpu" for _, leaf in found)):
        for path, leaf in found:
            parts.append(_leaf_digest(path, leaf))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@contextmanager
def _one_cpu_thread(on_cpu: bool = True):
    """The digest's reductions and the copies of packed tensors, where they are ``on_cpu``, on
    one CPU thread. They are memory-bound, so a second
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


def _leaf_digest(path: str, leaf: Any) -> str:
    if isinstance(leaf, torch.Tensor):
        return f"{path}:{_tensor_digest(leaf)}"
    if leaf is None or isinstance(leaf, (bool, int, float, complex, str)):
        return f"{path}:{type(leaf).__name__}:{leaf!r}"
    raise Failure("output", f"{path} is a {type(leaf).__name__}, not a tensor")


FINGERPRINT_ROW_WORDS = 4096


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


def _tensor_digest(tensor: torch.Tensor) -> str:
    """dtype, shape, the order in memory if not the standard one, and the two sums
    (``_sums``) over the tensor's elements in that order, read as integer words."""
    plain = _plain(tensor)
    order, data = dense_order(plain) or (None, plain)  # with gaps: in the standard order, read in place
    total, weighted = _sums(data)
    layout = "" if order is None else f"in order {tuple(order)}"
    return f"{plain.dtype}{tuple(plain.shape)}{layout}[{total}, {weighted}]"


WORD_TYPES = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _sums(data: torch.Tensor) -> tuple[int, int]:
    """Of the tensor's elements in the standard order, read as little-endian integer words
    of the elements' width (elements wider than 8 bytes as several 8-byte words): the sum of
    the words, exact, and their sum weighted by position from 1, both modulo 2^64.

    Words of the element's width, because a tensor starts at a whole element wherever it
    lies: its words are the same for a view at any offset and for the reference's copy. The
    plain sum is exact (no wrapping below 2^63), so an output changed after its call cannot
    be brought back to its reported digest by nudging values within the tolerance: the two
    sums would have to move by about as much as the values' bits. Both sums are linear, so
    they come out the same in any grouping: a dense tensor is summed as rows and columns, a
    tensor with gaps dimension by dimension where it lies (no copy to the standard layout:
    the judge's own time inside the trusted clock's window is then the same for an honest
    output that is a slice of a padded buffer as for eager's)."""
    global _gpu_block_sums
    words = _words(data)
    blocks = _blocks(words)
    if words.is_cuda and _gpu_block_sums is not None and all(block.dim() <= 3 for block, _ in blocks):
        try:
            return _gpu_block_sums(blocks)
        except Exception as error:  # a Triton that cannot build or launch it here: PyTorch's sums are the same numbers
            print(f"kbench: the GPU digest kernel failed ({type(error).__name__}: {error}); "
                  "digesting with PyTorch's sums from now on", file=sys.stderr)
            _gpu_block_sums = None
    total = weighted = 0
    for block, first in blocks:
        block_total, block_weighted = _block_sums(block, first)
        total, weighted = total + block_total, weighted + block_weighted
    return total % (1 << 64), weighted % (1 << 64)


def warm_digest(device: torch.device) -> None:
    """Digest a dense tensor of each word type on ``device`` once, so that the GPU digest
    kernel's usual variants are built and loaded now (at a worker's start, before any candidate
    code and while a worker started ahead waits) rather than in the first judged call's untimed
    work, where they cost a fresh worker about a second (benchmarks/first_call.py)."""
    if device.type == "cuda" and _gpu_block_sums is not None:
        for word in WORD_TYPES.values():
            _sums(torch.zeros(FINGERPRINT_ROW_WORDS + 1, dtype=word, device=device))


def _words(data: torch.Tensor) -> torch.Tensor:
    """The tensor viewed as integer words of its elements' width, at most 8 bytes."""
    if data.element_size() > 8 and data.stride(-1) != 1:
        data = data.contiguous()  # a complex128 element is two words only where they lie side by side
    return data.view(WORD_TYPES[min(data.element_size(), 8)])


def _blocks(words: torch.Tensor) -> list[tuple[torch.Tensor, int]]:
    """The words as views of at least two dimensions where possible, each with the position of
    its first word: the dimensions that lie one after another merged, and a single run of
    words (a dense tensor, a strided vector) as rows of R and the words past the last row,
    so that summing along each dimension leaves R times fewer partial sums than words."""
    shape: list[int] = []
    strides: list[int] = []
    for size, stride in zip(words.shape, words.stride()):
        if size == 1:
            continue
        if shape and strides[-1] == stride * size:
            shape[-1] *= size
            strides[-1] = stride
        else:
            shape.append(size)
            strides.append(stride)
    offset = words.storage_offset()
    if len(shape) > 1:
        return [(words.as_strided(shape, strides, offset), 1)]
    (count,), (stride,) = shape or [words.numel()], strides or [1]
    rows = count // FINGERPRINT_ROW_WORDS
    whole = rows * FINGERPRINT_ROW_WORDS
    blocks = [(words.as_strided((rows, FINGERPRINT_ROW_WORDS), (FINGERPRINT_ROW_WORDS * stride, stride), offset), 1),
              (words.as_strided((count - whole,), (stride,), offset + whole * stride), whole + 1)]
    return [(block, first) for block, first in blocks if block.numel()]


def _block_sums(block: torch.Tensor, first: int) -> tuple[int, int]:
    """The sum of a block's words, and their sum weighted by position: a word at index
    (i_0, ..., i_n) lies at ``first + sum(i_d * P_d)``, P_d the product of the sizes after d,
    so the weighted sum is ``first`` times the sum plus, per dimension, P_d * sum(v * (the sum
    of the words whose index there is v)): one reading pass per dimension, accumulating in
    64 bits. On the CPU numpy does it, converting a few thousand words at a time; PyTorch
    first copies the whole tensor to int64 for a sum into int64 (17 times slower for 256 MiB
    on a 2-core CPU), which is why a GPU's blocks go to a kernel of kbench's own
    (kbench.judge.exchange.gpu_digest) and PyTorch sums only where Triton is missing or a block has
    more than three dimensions."""
    sums = _numpy_sums_by_index if block.device.type == "cpu" else _torch_sums_by_index
    total = weighted = 0
    after = 1
    for dim, by_index in zip(reversed(range(block.dim())), sums(block)):
        total = by_index[0]
        weighted += after * by_index[1]
        after *= block.shape[dim]
    return total, first * total + weighted


def _numpy_sums_by_index(block: torch.Tensor) -> list[tuple[int, int]]:
    """For each dimension from the last: the block's sum, and sum(v * (the sum of the words whose
    index there is v)), in int64 (wrapping, as the digest's sums do modulo 2^64)."""
    values = block.numpy()
    sums = []
    for dim in reversed(range(block.dim())):
        others = tuple(d for d in range(block.dim()) if d != dim)
        by_index = values.sum(axis=others, dtype=np.int64) if others else values.astype(np.int64)
        sums.append((int(by_index.sum()), int((by_index * np.arange(block.shape[dim], dtype=np.int64)).sum())))
    return sums


def _torch_sums_by_index(block: torch.Tensor) -> list[tuple[int, int]]:
    """``_numpy_sums_by_index`` with PyTorch, on the block's device, read back once."""
    sums = []
    for dim in reversed(range(block.dim())):
        others = [d for d in range(block.dim()) if d != dim]
        by_index = block.sum(dim=others, dtype=torch.int64) if others else block.to(torch.int64)
        positions = torch.arange(block.shape[dim], dtype=torch.int64, device=block.device)
        sums.append(torch.stack([by_index.sum(), (by_index * positions).sum()]))
    return [tuple(pair) for pair in torch.stack(sums).tolist()]


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


