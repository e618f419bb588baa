"""Tests for drawing/ablation.py: heads switched off one at a time, coloured by how much worse
each metric got (each metric on its own scale), with the numbers in the cells."""

import numpy as np
import pytest
from figure_support import plain_and_checked

from attnviz.drawing.ablation import ablation_figure, harm

NAMES = ("loss", "in-context accuracy")
BASE = np.array([1.0, 0.99])
OFF = np.array([[1.0, 0.99], [3.0, 0.03], [1.5, 0.50], [0.9, 0.995]])  # 2 layers × 2 heads


def test_harm_is_how_much_worse_scaled_per_metric():
    got = harm(OFF, BASE, [False, True])
    expected = np.array([[0, 0], [1, 1], [0.25, 0.49 / 0.96], [0, 0]])  # better counts as 0
    np.testing.assert_allclose(got, expected)


def test_no_head_matters_gives_no_colour():
    np.testing.assert_array_equal(harm(np.tile(BASE, (3, 1)), BASE, [False, True]), 0)


def test_the_heatmap_names_heads_and_prints_values_with_their_change():
    fig = ablation_figure(NAMES, OFF, BASE, [False, True], n_heads=2, title="Heads off")
    (trace,) = fig.data
    assert list(trace.y) == ["layer 0 · head 0", "layer 0 · head 1", "layer 1 · head 0",
                             "layer 1 · head 1"]  # fmt: skip
    assert list(trace.x) == list(NAMES)
    assert list(trace.text[1]) == ["3.00<br>(+2.00)", "3 %<br>(-96)"]  # its change below
    assert list(fig.layout.xaxis.ticktext) == ["loss", "in-context<br>accuracy"]
    np.testing.assert_allclose(np.asarray(trace.z), harm(OFF, BASE, [False, True]))


def test_a_change_too_small_to_show_has_no_minus_sign():
    off = np.array([[0.998, 0.988], [1.03, 0.97]])  # 1 layer × 2 heads, the first a hair better
    fig = ablation_figure(NAMES, off, BASE, [False, True], n_heads=2)
    assert [list(row) for row in fig.data[0].text] == [
        ["1.00<br>(+0.00)", "99 %<br>(+0)"],  # -0.002 and -0.2 points: never "-0.00" or "-0"
        ["1.03<br>(+0.03)", "97 %<br>(-2)"],
    ]


def test_a_metric_s_name_goes_on_two_lines():
    fig = ablation_figure(["in-context loss (nats)", "accuracy"], OFF, BASE, [False, True], 2)
    assert list(fig.layout.xaxis.ticktext) == ["in-context<br>loss (nats)", "accuracy"]
    assert list(fig.data[0].x) == ["in-context loss (nats)", "accuracy"]  # hover: one line


def test_names_too_wide_for_their_columns_stand_upright_below_the_title():
    # a 390-px phone leaves ~33 px a column: plotly may turn the names upright (90°), never
    # overlapping, and the title keeps the top of the figure, above however tall they stand
    fig = ablation_figure(NAMES, OFF, BASE, [False, True], n_heads=2, title="One head off")
    xaxis, title = fig.layout.xaxis, fig.layout.title
    assert xaxis.tickangle is None and tuple(xaxis.autotickangles) == (0, 90)
    assert xaxis.automargin is True and xaxis.side == "top"
    assert (title.yref, title.y, title.yanchor, title.automargin) == ("container", 1, "top", True)


def test_shapes_that_do_not_fit_are_refused():
    with pytest.raises(ValueError, match="one column per metric"):
        ablation_figure(NAMES, OFF[:, :1], BASE, [False, True], n_heads=2)
    with pytest.raises(ValueError, match="whole layers"):
        ablation_figure(NAMES, OFF[:3], BASE, [False, True], n_heads=2)


def test_the_heatmap_is_a_plain_figure_that_draws_what_plotly_s_checked_figure_draws():
    figure = ablation_figure(NAMES, OFF, BASE, [False, True], n_heads=2, title="Heads <b>off</b>")
    plain, checked = plain_and_checked(figure)  # drawn on every run of its page
    assert plain == checked
