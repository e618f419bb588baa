"""Tests for attnviz/drawing/layout.py: labels, ticks, axes, titles, margins and heights."""

import json

import numpy as np
import pytest

from attnviz.drawing.focus_row import focus_row
from attnviz.drawing.heatmap import heatmap
from attnviz.drawing.layout import LABEL_CHARS, LINE_HEIGHT, MAX_LABEL_EXTENT, TITLE_STANDOFF
from attnviz.drawing.theme import PLOT_WIDTH

XSS = "<img src=x onerror=alert(1)>"


def _strings(node):
    """Every string in a parsed JSON document."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)


def test_rows_go_down_and_duplicate_labels_keep_separate_cells():
    labels = ["the", "cat", "the"]
    fig = heatmap(np.arange(9.0).reshape(3, 3), row_labels=labels, col_labels=labels)
    assert fig.data[0].z.shape == (3, 3)
    assert list(fig.layout.yaxis.range) == [2.5, -0.5]  # row 0 on top
    assert list(fig.layout.yaxis.tickvals) == [0, 1, 2]
    assert list(fig.layout.yaxis.ticktext) == ["0: the", "1: cat", "2: the"]  # hover names
    assert list(fig.layout.xaxis2.ticktext) == labels  # the labels people read
    assert fig.layout.xaxis.showticklabels is False


@pytest.mark.parametrize("shape", [(3, 5), (300, 40), (4096, 1)])
def test_label_axes_share_the_data_axes_fixed_ranges(shape):
    # zooming moves overlaid axes together, so equal fixed ranges keep the labels on their
    # cells; `matches` and `automargin` would make plotly lay every chart out twice
    t, s = shape
    layout = heatmap(np.zeros(shape)).layout
    assert list(layout.xaxis.range) == list(layout.xaxis2.range) == [-0.5, s - 0.5]
    assert list(layout.yaxis.range) == list(layout.yaxis2.range) == [t - 0.5, -0.5]
    for axis in (layout.xaxis, layout.yaxis, layout.xaxis2, layout.yaxis2):
        assert axis.autorange is False and axis.matches is None and axis.automargin is None


def test_margins_grow_with_the_labels_and_long_x_labels_tilt():
    short = heatmap(np.ones((2, 3)))
    assert short.layout.xaxis2.tickangle == 0
    words = ["attention", "is", "all", "you", "need", "said", "the", "paper", "again", "today"]
    long = heatmap(np.ones((10, 10)), row_labels=words, col_labels=words)
    assert long.layout.xaxis2.tickangle == -45
    assert long.layout.margin.l > short.layout.margin.l + 40  # "attention" is 9 characters
    assert long.layout.margin.b > short.layout.margin.b + 20

    def left(labels):
        return heatmap(np.ones((2, 2)), row_labels=labels).layout.margin.l

    assert left(["注意", "a"]) > left(["ab", "a"])  # wide characters count double
    huge = heatmap(np.ones((1, 1)), row_labels=["x" * 100])
    assert huge.layout.margin.l <= MAX_LABEL_EXTENT + 60


def test_default_labels_are_positions():
    fig = heatmap(np.ones((2, 3)))
    assert list(fig.layout.xaxis2.ticktext) == ["0", "1", "2"]
    assert list(fig.layout.xaxis.ticktext) == ["0", "1", "2"]


def test_labels_and_title_are_escaped():
    fig = heatmap(
        np.ones((2, 2)), row_labels=[XSS, "AT&T"], col_labels=["a", "<b>b</b>"], title=XSS
    )
    strings = list(_strings(json.loads(fig.to_json())))
    assert not any("<img" in s or "<b>b" in s for s in strings)
    assert "&lt;img src=x onerror=alert(1)&gt;" in fig.layout.yaxis2.ticktext
    assert "AT&amp;T" in fig.layout.yaxis2.ticktext
    assert "&lt;b&gt;b&lt;/b&gt;" in fig.layout.xaxis2.ticktext
    assert fig.layout.title.text == "&lt;img src=x onerror=alert(1)&gt;"


def test_long_labels_are_cut():
    label = "x" * 100
    fig = heatmap(np.ones((1, 1)), row_labels=[label])
    assert fig.layout.yaxis2.ticktext == ("x" * (LABEL_CHARS - 1) + "…",)


def test_long_titles_wrap_instead_of_being_cut():
    title = "Epoch 12: Sunday, 22 November 2026 → 2026-11-22 and a few more words to wrap"
    fig = heatmap(np.eye(3), title=title)
    shown = fig.layout.title.text
    assert "…" not in shown and shown.replace("<br>", " ") == title
    assert shown.count("<br>") >= 1 and fig.layout.margin.t > heatmap(np.eye(3)).layout.margin.t


def test_hover_names_query_key_and_full_precision_value():
    fig = heatmap([[0.123456789]], row_labels=["q"], col_labels=["k"], kind="weights")
    template = fig.data[0].hovertemplate
    assert template.startswith("query %{y}<br>key %{x}<br>weight %{z:.6~g}")
    assert fig.layout.yaxis.ticktext == ("0: q",) and fig.layout.xaxis.ticktext == ("0: k",)


def test_numbered_positions_get_a_round_step_but_every_token_is_labelled():
    for labels in (None, [str(i) for i in range(16)]):  # given or default, numbers are numbers
        fig = heatmap(np.zeros((16, 16)), row_labels=labels, col_labels=labels)
        assert list(fig.layout.yaxis2.tickvals) == list(range(0, 16, 2))
        assert list(fig.layout.xaxis2.ticktext) == [str(i) for i in range(0, 16, 2)]
    words = [f"w{i}" for i in range(16)]
    fig = heatmap(np.zeros((16, 16)), row_labels=words, col_labels=words)
    assert list(fig.layout.yaxis2.ticktext) == list(fig.layout.xaxis2.ticktext) == words
    assert len(fig.layout.xaxis.ticktext) == 16  # hover names of every cell either way


def test_x_labels_that_do_not_fit_tilt_and_thin_to_the_room():
    words = [f"word{i}" for i in range(40)]
    fig = heatmap(np.zeros((2, 40)), col_labels=words)
    assert fig.layout.xaxis2.tickangle == -45
    shown = len(fig.layout.xaxis2.tickvals)
    assert 10 <= shown <= PLOT_WIDTH / (1.5 * LINE_HEIGHT)
    assert len(fig.layout.yaxis2.tickvals) == 2


def test_many_labels_show_a_thinned_subset_of_ticks():
    fig = heatmap(np.zeros((100, 3)), row_labels=[f"t{i}" for i in range(100)])
    assert list(fig.layout.yaxis2.tickvals) == list(range(0, 100, 5))
    assert fig.layout.yaxis2.ticktext[:2] == ("t0", "t5")
    assert len(fig.layout.yaxis.ticktext) == 100  # every row keeps its hover name


@pytest.mark.parametrize(
    ("rows", "height"), [(2, 300), (20, 720), (100, 900)], ids=["small", "medium", "large"]
)
def test_height_grows_with_rows_within_bounds(rows, height):
    assert heatmap(np.zeros((rows, 2))).layout.height == height


def test_layout_keeps_backgrounds_transparent():
    layout = heatmap(np.zeros((2, 2))).layout
    assert layout.paper_bgcolor == "rgba(0,0,0,0)" and layout.plot_bgcolor == "rgba(0,0,0,0)"


def test_axis_titles_keep_their_own_distance_from_the_labels():
    # a theme's larger standoff (Streamlit's is 24-32 px) would widen the margins computed here
    # and make plotly draw every chart twice; a browser test checks that no chart is widened
    figs = [
        heatmap(np.eye(3), kind="weights", row_labels=["a", "b", "c"]),
        focus_row([0.2, 0.8], col_labels=["x", "y"]),
    ]
    for fig in figs:
        layout = fig.to_dict()["layout"]
        titled = [a for name, a in layout.items() if name.startswith(("xaxis", "yaxis"))]
        titled = [a for a in titled if a.get("title", {}).get("text")]
        assert titled and all(a["title"]["standoff"] == TITLE_STANDOFF for a in titled)
