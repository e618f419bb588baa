"""Tests for attnviz/drawing/theme.py: the colour scales and their ranges, as heatmaps draw them."""

import numpy as np
import pytest

from attnviz.drawing.heatmap import heatmap
from attnviz.drawing.theme import (
    ALLOWED_COLOR,
    BLOCKED_COLOR,
    SIGNED_COLORSCALE,
    WEIGHTS_COLORSCALE,
)


def _scale(trace) -> list[list]:
    return [[float(stop), color] for stop, color in trace.colorscale]


def test_weights_use_viridis_from_exactly_zero_to_one():
    trace = heatmap([[0.2, 0.8], [0.5, 0.5]], kind="weights").data[0]
    assert _scale(trace) == [[float(s), c] for s, c in WEIGHTS_COLORSCALE]
    assert trace.colorscale[0][1] == "#440154" and trace.colorscale[-1][1] == "#fde725"
    assert (trace.zmin, trace.zmax) == (0.0, 1.0)


@pytest.mark.parametrize("kind", ["signed", "values"], ids=["signed", "values"])
def test_signed_kinds_are_diverging_and_symmetric_around_zero(kind):
    trace = heatmap([[-1.0, 3.0], [0.5, -2.0]], kind=kind).data[0]
    assert _scale(trace) == [[float(s), c] for s, c in SIGNED_COLORSCALE]
    assert trace.colorscale[0][1] == "rgb(5,48,97)"  # dark blue = most negative
    assert trace.colorscale[-1][1] == "rgb(103,0,31)"  # dark red = most positive
    assert (trace.zmin, trace.zmax, trace.zmid) == (-3.0, 3.0, 0.0)


def test_signed_range_comes_from_allowed_cells_only():
    scores = np.array([[1.0, -1e9], [-2.0, 0.5]])  # -1e9: a "-1e9" masked logit
    blocked = np.array([[False, True], [False, False]])
    trace = heatmap(scores, kind="signed", blocked=blocked).data[0]
    assert (trace.zmin, trace.zmax) == (-2.0, 2.0)


def test_all_zero_signed_matrix_still_has_a_range():
    trace = heatmap(np.zeros((2, 2)), kind="signed").data[0]
    assert (trace.zmin, trace.zmax) == (-1.0, 1.0)


def test_weights_can_be_coloured_from_0_to_their_largest():
    weights = np.full((2, 12), 1 / 12)
    assert heatmap(weights, kind="weights").data[0].zmax == 1.0
    fitted = heatmap(weights, kind="weights", fit_scale=True).data[0]
    assert fitted.zmin == 0.0 and fitted.zmax == pytest.approx(1 / 12)


def test_values_kind_names_columns_features():
    fig = heatmap(np.ones((2, 3)), kind="values")
    assert fig.layout.xaxis2.title.text == "feature"
    assert fig.layout.yaxis2.title.text == "query"
    assert "feature %{x}" in fig.data[0].hovertemplate


def test_mask_kind_draws_two_colours_with_named_colour_bar():
    allowed = np.array([[True, False], [True, True]])
    fig = heatmap(allowed, kind="mask")
    values, grey = fig.data[0], fig.data[1]
    assert list(values.colorbar.ticktext) == ["blocked", "allowed"]
    assert {color for _, color in values.colorscale} == {BLOCKED_COLOR, ALLOWED_COLOR}
    np.testing.assert_array_equal(values.z, [[1.0, np.nan], [1.0, 1.0]])
    np.testing.assert_array_equal(grey.z, [[0, 1], [0, 0]])
