"""Tests for drawing/projector.py: every font, the margins and the height made larger."""

import plotly.graph_objects as go

from attnviz.drawing.plain_figure import frozen
from attnviz.drawing.projector import TALLER, fonts_for_projector, for_projector


def _heatmap(**layout) -> go.Figure:
    fig = go.Figure(go.Heatmap(z=[[0.2, 0.8]], texttemplate="%{z}", textfont={"size": 10}))
    fig.update_layout(
        title={"text": "weights", "font": {"size": 14}},
        xaxis={"tickfont": {"size": 11}, "title": {"text": "keys", "standoff": 4}},
        margin={"l": 40, "r": 10, "t": 30, "b": 20, "pad": 2},
        annotations=[{"text": "note", "font": {"size": 9}, "showarrow": False}],
        **layout,
    )
    return fig


def test_every_font_the_margins_and_the_axis_title_distance_grow():
    fig = _heatmap(height=300)
    big = for_projector(fig, 1.5).to_dict()
    layout = big["layout"]
    assert layout["font"]["size"] == 18  # plotly's 12, which the figure did not set
    assert layout["title"]["font"]["size"] == 21
    assert layout["xaxis"]["tickfont"]["size"] == 16.5
    assert layout["xaxis"]["title"]["standoff"] == 6
    assert layout["annotations"][0]["font"]["size"] == 13.5
    assert big["data"][0]["textfont"]["size"] == 15
    assert layout["margin"] == {"l": 60, "r": 15, "t": 45, "b": 30, "pad": 2}  # pad is not a side
    assert layout["height"] == int(300 * TALLER) and "width" not in layout  # fills its column


def test_a_figure_of_its_own_width_grows_whole_markers_included():
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1], mode="markers", marker={"size": 20}))
    fig.update_layout(width=200, height=100)
    big = for_projector(fig, 1.5).to_dict()
    assert (big["layout"]["width"], big["layout"]["height"]) == (300, 150)
    assert big["data"][0]["marker"]["size"] == 30


def test_the_figure_given_is_not_changed():
    fig = _heatmap()
    before = fig.to_dict()
    for_projector(fig, 2.0)
    assert fig.to_dict() == before


def test_a_frozen_figure_drawn_again_on_the_projector_does_not_grow():
    # A frozen figure hands out its one plain form: enlarging it in place made the figure
    # (and every later copy for the projector) larger again on each run of the page.
    fig = frozen(_heatmap(height=300))
    before = fig.to_dict()
    for enlarge in (for_projector, for_projector, fonts_for_projector):
        enlarge(fig, 1.5)
    assert fig.to_dict() == before
    assert for_projector(fig, 1.5).to_dict()["layout"]["height"] == int(300 * TALLER)


def test_the_projector_s_figures_are_plain_and_draw_what_plotly_s_checked_figures_draw():
    # every chart of the presenter view passes through here on every run
    import math

    import numpy as np
    from figure_support import plain_and_checked

    from attnviz.drawing.curves import training_curves
    from attnviz.drawing.heatmap import heatmap
    from attnviz.drawing.model_view import head_map

    figures = (
        _heatmap(height=300),
        heatmap(np.eye(4) / 2, kind="weights", title="<b>w</b>", row_labels=list("abcd")),
        head_map(np.array([[0.5, math.nan], [1.0, 0.25]]), label="entropy", selected=(0, 1)),
        training_curves([(0, math.nan, math.nan, 0.1, 0.0, 0.0), (1, 2.0, 0.5, 0.6, 0.2, 1.0)]),
    )
    for figure in figures:
        for grown in (for_projector(figure, 1.5), fonts_for_projector(figure, 1.5)):
            plain, checked = plain_and_checked(grown)
            assert plain == checked
            assert plain["layout"]["template"] == figure.to_dict()["layout"]["template"]
