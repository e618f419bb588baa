"""Tests for core/checks.py: the one path from a user's array-like to a checked array."""

import numpy as np
import pytest

from attnviz.core.checks import (
    as_float_array,
    check_choice,
    check_finite,
    check_int,
    describe,
    numeric_array,
    read_only,
)


def test_as_float_array_keeps_values_as_float64():
    array = as_float_array([[1, 2], [3, 4]], "query")
    assert array.dtype == np.float64 and array.shape == (2, 2)
    np.testing.assert_array_equal(array, [[1, 2], [3, 4]])
    assert as_float_array([[True, False]], "mask").tolist() == [[1.0, 0.0]]


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (None, r"`x` is missing"),
        ([[1, 2], [3]], r"`x` could not be read as a matrix: its rows have different lengths"),
        ([["a", "b"]], r"`x` must hold numbers only"),
        ([[1j, 2]], r"`x` must hold real numbers"),
        ([1, 2, 3], r"`x` must be 2-D or 3-D .* Received shape \(3,\)"),
        (np.zeros((0, 3)), r"`x` is empty: shape \(0, 3\)"),
        ([[1.0, np.nan]], r"`x` holds a non-finite number \(nan\) at index \(0, 1\)"),
        ([[1e16]], r"`x` holds a number too large to compute with \(1e\+16\)"),
    ],
    ids=["missing", "ragged", "text", "complex", "rank", "empty", "nan", "huge"],
)
def test_as_float_array_errors(value, match):
    with pytest.raises(ValueError, match=match):
        as_float_array(value, "x")


def test_numeric_array_lets_nan_and_infinity_through_for_figures():
    array = numeric_array([[np.nan, -np.inf]], "matrix")
    assert np.isnan(array[0, 0]) and array[0, 1] == -np.inf


def test_check_finite_returns_the_same_array():
    array = np.ones((2, 2))
    assert check_finite(array, "x") is array


def test_check_int_and_check_choice():
    assert check_int(np.int64(3), "n", low=1, high=3) == 3
    with pytest.raises(ValueError, match=r"`n` must be a whole number. Received: 2\.5"):
        check_int(2.5, "n", low=0)
    with pytest.raises(ValueError, match=r"`n` must be a whole number. Received: True"):
        check_int(True, "n", low=0)
    with pytest.raises(ValueError, match=r"`n` must be 1 or more. Received: 0"):
        check_int(0, "n", low=1)
    assert check_choice("dot", "score", ("dot", "general")) == "dot"
    with pytest.raises(ValueError, match=r'`score` must be one of "dot", "general". Received'):
        check_choice("cosine", "score", ("dot", "general"))


def test_describe_is_short_and_read_only_freezes():
    assert describe(np.zeros((2, 3), np.float32)) == "array of shape (2, 3) and dtype float32"
    assert len(describe("x" * 500)) == 60
    frozen = read_only([1.0, 2.0])
    with pytest.raises(ValueError, match="read-only"):
        frozen[0] = 3.0
