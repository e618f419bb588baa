"""Tests for drawing/room_answers.py: the room's answers as bars per option and a histogram of
estimates, the right answer marked after the reveal; plain figures that draw what plotly's
checked figures draw."""

import numpy as np
from figure_support import plain_and_checked

from attnviz.drawing.answer_chart import RIGHT_COLOR
from attnviz.drawing.room_answers import estimate_histogram, option_bars
from attnviz.drawing.theme import ALLOWED_COLOR


def test_a_bar_per_option_says_its_count_and_the_right_one_is_red():
    fig = option_bars(["key 0", "key 1", "key 2"], [5, 0, 12], title="Which key?", right="key 2")
    (bar,) = fig.data
    assert list(bar.x) == ["key 0", "key 1", "key 2"] and list(bar.y) == [5, 0, 12]
    assert list(bar.text) == ["5", "0", "12"]
    assert list(bar.marker.color) == [ALLOWED_COLOR, ALLOWED_COLOR, RIGHT_COLOR]
    assert list(fig.layout.yaxis.range) == [0, 15.0] and fig.layout.yaxis.dtick == 3  # 12 / 5
    assert fig.layout.yaxis.title.text == "answers"


def test_the_histogram_spans_its_bins_and_marks_the_answer():
    edges = np.linspace(0.0, 1.0, 5)  # bins of 0.25
    fig = estimate_histogram(edges, [1, 0, 3, 2], title="Estimate", right=0.4)
    (bar,) = fig.data
    np.testing.assert_allclose(bar.x, [0.125, 0.375, 0.625, 0.875])
    np.testing.assert_allclose(bar.width, [0.2375] * 4)  # 95 % of a bin: bars apart
    assert list(bar.text) == ["1", "", "3", "2"]  # an empty bin says nothing
    np.testing.assert_allclose(bar.customdata[1], [0.25, 0.5])
    assert list(fig.layout.xaxis.range) == [0.0, 1.0]
    (line,) = fig.layout.shapes
    assert (line.x0, line.x1, line.yref, line.line.color) == (0.4, 0.4, "y domain", RIGHT_COLOR)
    assert fig.layout.annotations[0].text == "the answer: 0.40"
    assert not estimate_histogram(edges, [1, 0, 3, 2], title="Estimate").layout.shapes


def test_both_are_plain_figures_that_draw_what_plotly_s_checked_figures_draw():
    # the teacher's projector draws them again for every new count as the answers come in
    for figure in (
        option_bars(["<b>a</b>", "b"], [3, 1], title="<i>Which?</i>", right="b"),
        option_bars(["a", "b"], [0, 0], title="none yet"),
        estimate_histogram(np.linspace(-2, 3, 6), [0, 4, 0, 1, 2], title="Estimate", right=0.5),
        estimate_histogram(np.linspace(0, 1, 11), [0] * 10, title="no estimate yet"),
    ):
        plain, checked = plain_and_checked(figure)
        assert plain == checked
