"""Tests for core/weights.py: one resolver for score and multi-head weights."""

import numpy as np
import pytest

from attnviz.core.weights import check_param, resolve_weights

SHAPES = {"W_q": (2, 3), "v": (3,), "b": (3,)}


def _draw():
    return {name: np.full(shape, 7.0, np.float32) for name, shape in SHAPES.items()}


def test_given_weights_are_checked_and_missing_ones_drawn():
    used = resolve_weights({"v": [1, 2, 3]}, SHAPES, _draw, "test", optional=("b",))
    assert list(used) == ["W_q", "v"]  # the optional bias only when given
    np.testing.assert_array_equal(used["v"], [1, 2, 3])
    assert used["v"].dtype == np.float32
    np.testing.assert_array_equal(used["W_q"], np.full((2, 3), 7.0))


def test_nothing_is_drawn_when_everything_is_given():
    def no_draw():
        raise AssertionError("drew although every weight was given")

    given = {"W_q": np.zeros((2, 3)), "v": np.zeros(3), "b": np.zeros(3)}
    assert list(resolve_weights(given, SHAPES, no_draw, "test")) == ["W_q", "v", "b"]


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ([1, 2], r'`params` must be a dict of weights by name, e.g. \{"W": \[\[...\]\]\}'),
        ({"W": 1}, r"`params` has weights that test does not use: W\. Allowed: W_q, v, b\."),
        ({"v": [1, 2]}, r"`params\['v'\]` must have shape \(3,\)\. Received shape \(2,\)\."),
        ({"v": ["a", "b", "c"]}, r"`params\['v'\]` must hold numbers only"),
        ({"v": [1, np.inf, 0]}, r"`params\['v'\]` holds a non-finite number \(inf\)"),
    ],
    ids=["not-a-dict", "unknown", "shape", "text", "inf"],
)
def test_errors_name_the_weight(params, match):
    with pytest.raises(ValueError, match=match):
        resolve_weights(params, SHAPES, _draw, "test")


def test_check_param_rejects_numbers_float32_cannot_hold_safely():
    with pytest.raises(ValueError, match=r"too large to compute with \(1e\+16\)"):
        check_param([[1e16]], "W", (1, 1))
