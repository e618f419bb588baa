"""Tests for drawing/answer_chart.py: the revealed chart outlines the answer solid red and the
learner's cells dashed orange, greys masked cells, and stays a plain figure (no plotly figure
built for one chart)."""

from __future__ import annotations

import numpy as np

from attnviz.drawing.answer_chart import GUESS_COLOR, RIGHT_COLOR, answer_heatmap, outline_key
from attnviz.drawing.plain_figure import PlainFigure


def test_the_answer_and_the_guess_are_outlined_around_their_cells():
    fig = answer_heatmap(
        np.array([[0.2, 0.8], [0.5, 0.5]]), ("query 0", "query 1"), ("key 0", "key 1"),
        title="Weights", guessed=((0, 0),), right=((0, 1),),
    )  # fmt: skip
    assert isinstance(fig, PlainFigure) and "_plain_parts" in fig.__dict__
    shapes = fig.to_dict()["layout"]["shapes"]
    right, guess = shapes[-2:]
    assert (right["x0"], right["x1"], right["y0"], right["y1"]) == (0.5, 1.5, -0.5, 0.5)
    assert right["line"] == {"color": RIGHT_COLOR, "width": 3, "dash": "solid"}
    assert (guess["x0"], guess["y0"]) == (-0.5, -0.5) and guess["line"]["dash"] == "dash"
    assert guess["line"]["color"] == GUESS_COLOR
    assert fig.layout.title.text == "Weights"


def test_masked_cells_are_grey_not_coloured():
    allowed = np.array([[True, False], [True, True]])
    fig = answer_heatmap(np.full((2, 2), 0.5), ("a", "b"), ("c", "d"), title="Mask",
                         allowed=allowed)  # fmt: skip
    values = fig.data[0].z
    assert np.isnan(values[0][1]) and values[0][0] == 0.5  # the masked cell left to the grey
    assert len(fig.data) >= 2  # the grey trace under it


def test_the_key_names_only_the_outlines_drawn():
    assert outline_key(guessed=True, right=True) == (
        "Outlined cells: solid red: the answer; dashed orange: yours."
    )
    assert outline_key(guessed=False, right=True) == "Outlined cells: solid red: the answer."
    assert outline_key(guessed=False, right=False) == ""
