"""The fingerprint's two sums on a GPU, in one reading pass with no copy.

PyTorch sums 32-bit words into int64 by first copying the whole tensor to int64, on a GPU as
on the CPU, and the fingerprint runs on every timed call's inputs and output: for a level-1
problem's tensors of up to 2 GiB that copy was most of a timed call's time on the H200
(docs/measurements/2026-12-01-trusted-clock-and-fingerprint.md). This kernel reads each word once in its own width,
widens it in registers and
accumulates both sums in int64, which wraps modulo 2^64 as the digest's definition does
(``kbench.judge.exchange.outputs._sums``). Each program leaves its two partial sums; the few thousand
partials are added on the CPU.

A block is a view of up to three dimensions (``outputs._blocks``: a dense tensor as rows of
``FINGERPRINT_ROW_WORDS`` words and a tail, a tensor with gaps with its adjacent dimensions
merged); its rows are spread over the programs, a tile of rows at a time.
"""

from __future__ import annotations

import contextlib

import torch
import triton
import triton.language as tl

TILE_WORDS = 4096
# A tile's widths: every width is a variant Triton builds on its first use in a process (0.3-0.4 s
# each in a fresh worker on the H200 with an empty cache, the first 1.95 s), so few of them. A dense
# tensor's blocks (rows of 4096 words, and a tail that is one row) all take the widest; a view with
# gaps takes the narrowest that holds its last dimension, leaving at most 7 lanes in 8 idle.
COLUMN_TILES = (16, 128, 1024)


# Specialised only on what changes its code (the words' type, whether they lie side by side):
# not on sizes, so a new shape costs no compilation inside a timed call's window.
@triton.jit(do_not_specialize=["row_count", "rows_per_program", "second", "columns", "stride_first",
                               "stride_second", "first_position"])
def _word_sums(words, partials, row_count, rows_per_program, second, columns,
               stride_first, stride_second, stride_column, first_position,
               ROWS: tl.constexpr, COLUMNS: tl.constexpr):
    program = tl.program_id(0)
    start = program.to(tl.int64) * rows_per_program
    end = tl.minimum(start + rows_per_program, row_count)
    total = tl.zeros([ROWS, COLUMNS], dtype=tl.int64)
    weighted = tl.zeros([ROWS, COLUMNS], dtype=tl.int64)
    for tile in range(start, end, ROWS):
        row = tile + tl.arange(0, ROWS).to(tl.int64)
        outer = row // second
        row_address = outer * stride_first + (row - outer * second) * stride_second
        row_position = first_position + row * columns
        for column_tile in range(0, columns, COLUMNS):
            column = column_tile + tl.arange(0, COLUMNS).to(tl.int64)
            inside = (row < end)[:, None] & (column < columns)[None, :]
            word = tl.load(words + row_address[:, None] + column[None, :] * stride_column, mask=inside, other=0)
            word = word.to(tl.int64)
            total += word
            weighted += word * (row_position[:, None] + column[None, :])
    tl.store(partials + 2 * program, tl.sum(tl.sum(total, axis=1), axis=0))
    tl.store(partials + 2 * program + 1, tl.sum(tl.sum(weighted, axis=1), axis=0))


def launch_count(device: torch.device) -> int:
    """Programs enough to keep every multiprocessor reading (a few per SM), few enough that
    their partial sums are a small read back."""
    if device.type == "cuda":
        return 4 * torch.cuda.get_device_properties(device).multi_processor_count
    return 4


def column_tile_for(rows: int, columns: int) -> int:
    """The tile width for a block of ``rows`` rows of ``columns`` words (COLUMN_TILES)."""
    if rows == 1:
        return COLUMN_TILES[-1]
    return next((tile for tile in COLUMN_TILES if tile >= columns), COLUMN_TILES[-1])


def block_sums(blocks: list[tuple[torch.Tensor, int]]) -> tuple[int, int]:
    """The sum of the blocks' words and their sum weighted by position (a block's first word at
    the position given with it, the rest in the standard order after it), modulo 2^64. Every
    block has at most three dimensions; one read back for all of them."""
    partials = []
    for block, first in blocks:
        shape = [1] * (3 - block.dim()) + list(block.shape)
        strides = [0] * (3 - block.dim()) + list(block.stride())
        rows, columns = shape[0] * shape[1], shape[2]
        column_tile = column_tile_for(rows, columns)
        row_tile = max(1, TILE_WORDS // column_tile)
        programs = max(1, min(launch_count(block.device), triton.cdiv(rows, row_tile)))
        rows_per_program = triton.cdiv(triton.cdiv(rows, programs), row_tile) * row_tile
        programs = triton.cdiv(rows, rows_per_program)
        out = torch.empty(programs, 2, dtype=torch.int64, device=block.device)
        with torch.cuda.device(block.device) if block.is_cuda else contextlib.nullcontext():
            _word_sums[(programs,)](block, out, rows, rows_per_program, shape[1], columns,
                                    strides[0], strides[1], strides[2], first,
                                    ROWS=row_tile, COLUMNS=column_tile, num_warps=8)
        partials.append(out)
    if not partials:  # an empty tensor
        return 0, 0
    summed = torch.cat(partials).cpu().numpy().sum(axis=0, dtype="int64")  # numpy's int64 wraps
    return int(summed[0]) % (1 << 64), int(summed[1]) % (1 << 64)
