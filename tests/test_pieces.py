"""Comparisons piece by piece (kbench.judge.trusted.pieces) say what the judge's whole-tensor
comparison says: the same verdict, check and largest errors; a failure named by
the first piece that fails."""

import functools
import math

import pytest
import torch

from kbench.judge.trusted import compare, pieces
from kbench.judge.trusted.compare import compare_outputs
from kbench.judge.exchange.outputs import describe_devices

TOL = {"float32": {"atol": 1e-4, "rtol": 1e-4}}
BIG = (300, 100)  # pieces of at most 4096 elements here (small_pieces): 40 rows, the last 20


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch):
    """Pieces of 2**12 elements at least instead of 2**20: the same walk, on small tensors."""
    monkeypatch.setattr(compare, "PIECE_MIN", 2**12)  # where pieces are cut (kbench.judge.trusted.compare)
    monkeypatch.setattr(pieces, "PIECE_MIN", 2**12)


def whole(expected, actual):
    return compare_outputs(expected, actual, describe_devices(expected), describe_devices(actual), TOL)


@pytest.mark.parametrize("shape, limit", [((10, 7), 16), ((3, 5, 7), 8), ((1, 100), 30), ((100,), 7), ((), 4),
                                          ((0, 5), 3), ((4, 4), 1000)])
def test_pieces_cover_every_element_once(shape, limit):
    seen = torch.zeros(shape, dtype=torch.int64)
    for index in pieces.piece_indices(shape, limit):
        view = seen[index]
        assert view.numel() <= max(limit, 1)
        view += 1
    assert bool((seen == 1).all())


def test_a_piece_is_at_most_a_64th_within_bounds():
    assert pieces.piece_limit(10) == pieces.PIECE_MIN == 2**12
    assert pieces.piece_limit(64 * 2**21) == 2**21
    assert pieces.piece_limit(4096 * 393216) == pieces.PIECE_MAX


@functools.cache
def cases():
    torch.manual_seed(0)
    x = torch.randn(BIG)
    near = x + 1e-6 * torch.randn(BIG)
    last = x.clone()
    last[-1, -1] += 1.0  # a value wrong in the last piece only
    nan = x.clone()
    nan[150, 3] = float("nan")
    t = torch.randn(BIG[::-1]).t()  # not contiguous
    return {
        "close": (x, near),
        "wrong_in_the_last_piece": (x, last),
        "nan_where_the_reference_is_finite": (x, nan),
        "not_contiguous": (t, t + 1e-6),
        "shape": (x, x[:-1]),
        "dtype": (x, x.double()),
        "structure": ((x, x), [x, x]),
        "nested_with_a_scalar": ({"a": x, "b": 3}, {"a": near, "b": 3}),
        "a_scalar_differs": ({"a": x, "b": 3}, {"a": x, "b": 4}),
        "integers": (torch.arange(BIG[0] * BIG[1]).reshape(BIG), torch.arange(BIG[0] * BIG[1]).reshape(BIG)),
    }


@pytest.mark.parametrize("name", sorted(cases()))
def test_the_same_verdict_as_the_whole_comparison(name):
    expected, actual = cases()[name]
    mine, theirs = pieces.compare(expected, actual, TOL), whole(expected, actual)
    assert (mine.ok, mine.check) == (theirs.ok, theirs.check)
    if mine.ok:
        assert mine.max_abs_error == pytest.approx(theirs.max_abs_error)
        assert mine.max_rel_error == pytest.approx(theirs.max_rel_error)


def test_a_failure_names_its_piece():
    expected, actual = cases()["wrong_in_the_last_piece"]
    result = pieces.compare(expected, actual, TOL)
    assert result.detail.startswith("output[280:300]: 1 of 2000 element(s) outside"), result.detail
    assert "first at (19, 99)" in result.detail
    nested = pieces.compare({"a": expected}, {"a": actual}, TOL)
    assert nested.detail.startswith("output['a'][280:300]: 1 of"), nested.detail


def test_zeros_and_the_float64_reference_cast_piece_by_piece():
    x = torch.randn(BIG)
    zeros = pieces.compare(x, pieces.ZEROS, TOL)
    assert (zeros.ok, zeros.check) == (False, "values") and zeros.detail.startswith("output[0:40]: ")
    tiny = (x * 1e-6, 7)
    assert pieces.compare(tiny, pieces.ZEROS, TOL).ok and whole(tiny, (torch.zeros_like(tiny[0]), 7)).ok
    x64 = x.double() + 1e-9
    assert pieces.compare(x64, x, TOL, cast=True) == whole(x64.float(), x)


def test_bitwise_equal_piece_by_piece():
    x = torch.randn(BIG)
    y = x.clone()
    assert pieces.bitwise_equal(x, y) and pieces.bitwise_equal((x, float("nan")), (y, float("nan")))
    y[-1, -1] = torch.nextafter(y[-1, -1], torch.tensor(math.inf))
    assert not pieces.bitwise_equal(x, y)
    assert not pieces.bitwise_equal(x, x.double()) and not pieces.bitwise_equal((x,), [x])


def test_error_stats_as_over_the_whole_tensor():
    torch.manual_seed(1)
    want = torch.randn(BIG, dtype=torch.float64)
    got = want.float()
    got[0, 0] = want[0, 0].float() + 3e-4
    stats = pieces.error_stats(got, want, TOL)
    diff = (got.double() - want).abs()
    assert stats["max_abs_error"] == pytest.approx(float(diff.max()))
    assert stats["max_rel_error"] == pytest.approx(float((diff / want.abs()).max()))
    assert stats["tolerance_fraction"] == pytest.approx(float((diff / (1e-4 + 1e-4 * want.abs())).max()))
    nan = got.clone()
    nan[-1, -1] = float("nan")
    assert pieces.error_stats(nan, want, TOL)["tolerance_fraction"] == math.inf
    both = want.clone()
    both[-1, -1] = float("nan")
    assert pieces.error_stats(nan, both, TOL)["tolerance_fraction"] < math.inf
    assert pieces.error_stats(torch.arange(5), torch.arange(5.0, dtype=torch.float64), TOL)["tolerance_fraction"] == 0
    assert pieces.error_stats(torch.arange(5), torch.arange(5.0).flip(0).double(), TOL)["tolerance_fraction"] == math.inf
