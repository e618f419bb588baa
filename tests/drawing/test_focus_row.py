"""Tests for attnviz/drawing/focus_row.py: one query's exact values as bars."""

import numpy as np
import pytest

from attnviz.drawing.focus_row import focus_row
from attnviz.drawing.theme import BLOCKED_COLOR

XSS = "<img src=x onerror=alert(1)>"


def test_focus_row_shows_exact_values_and_grey_blocked_keys():
    row = np.array([0.1234567891, 0.0, 0.8765432109, 0.0])
    blocked = np.array([False, True, False, True])
    fig = focus_row(row, col_labels=["a", "b", XSS, "d"], blocked=blocked)
    bars, grey = fig.data[0], fig.data[1]
    assert list(bars.x) == [0, 2] and list(bars.y) == [0.1234567891, 0.8765432109]
    assert list(grey.x) == [1, 3] and list(grey.y) == [0.0, 0.0]
    assert grey.marker.color == BLOCKED_COLOR and "masked" in grey.hovertemplate
    assert list(bars.customdata) == ["0: a", "2: &lt;img src=x onerror=alert(1)&gt;"]
    assert "%{y:.6~g}" in bars.hovertemplate


def test_focus_row_colours_bars_like_the_heatmap():
    fig = focus_row([0.0, 1.0])
    assert list(fig.data[0].marker.color) == ["rgb(68, 1, 84)", "rgb(253, 231, 37)"]


def test_focus_row_treats_minus_inf_as_blocked():
    fig = focus_row([1.0, -np.inf, -2.0], kind="signed")
    assert list(fig.data[0].x) == [0, 2] and list(fig.data[1].x) == [1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(values=[0.5], kind="mask"), "`kind` must be one of"),
        (dict(values=np.zeros(5), max_points=4), "has 5 points but `focus_row` draws at most 4"),
        (dict(values=np.zeros((2, 2))), "non-empty 1-D array"),
        (dict(values=[0.5, 0.5], blocked=[True]), "`blocked` must be True/False"),
    ],
    ids=["kind", "too-long", "2-d", "blocked-shape"],
)
def test_focus_row_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        focus_row(**kwargs)
