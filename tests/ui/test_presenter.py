"""Tests for ui/presenter.py: the presenter view's switch, larger charts, one chart a row."""

from __future__ import annotations

import app_support as ui
import numpy as np

from attnviz.drawing.model_view import head_map
from attnviz.ui import presenter


def test_the_presenter_view_enlarges_the_charts_and_a_link_opens_it():
    at = ui.new_session("matrices")
    assert presenter.STYLE not in [h.proto.body for h in at.get("html")]
    normal_chart = ui.chart(at, "Attention weights")
    normal = normal_chart["layout"]
    at.toggle(key="present").set_value(True).run()
    ui.assert_ok(at)
    big_chart = ui.chart(at, "Attention weights")
    big = big_chart["layout"]
    assert big["font"]["size"] > normal["font"]["size"] and big["height"] > normal["height"]
    # the tick labels and the cells' numbers too, which set their own sizes
    assert big["xaxis2"]["tickfont"]["size"] == 1.5 * normal["xaxis2"]["tickfont"]["size"]
    cells = [figure["data"][0]["textfont"]["size"] for figure in (normal_chart, big_chart)]
    assert cells[1] == 1.5 * cells[0]
    assert [h.proto.body for h in at.get("html")].count(presenter.STYLE) == 1  # larger text
    shared = ui.new_session("matrices", present="true")  # a teacher's link opens in it
    assert shared.toggle(key="present").value is True
    assert ui.chart(shared, "Attention weights")["layout"]["font"]["size"] == big["font"]["size"]


def test_presenting_draws_one_chart_a_row():
    # side-by-side charts (the enlarged head and its line view, the average beside the heads'
    # concatenation) stack while presenting: no chart shares a row
    def charts_in_columns(at) -> int:
        return sum(len(column.get("plotly_chart")) for column in at.columns)

    normal = ui.new_session("multihead")
    assert charts_in_columns(normal) >= 2
    presenting = ui.new_session("multihead", present="true")
    ui.assert_ok(presenting)
    assert charts_in_columns(presenting) == 0
    assert len(presenting.get("plotly_chart")) == len(normal.get("plotly_chart"))


def test_a_figure_drawn_at_its_own_size_grows_whole(monkeypatch):
    # the head map sets its width and marker sizes: enlarged as a whole, its numbers still fit
    # inside its squares
    monkeypatch.setattr(presenter, "presenting", lambda: True)
    fig = head_map(np.ones((2, 4)), label="entropy (bits)")
    big = presenter.enlarged(fig)
    assert big.layout.width == int(1.5 * fig.layout.width)
    assert big.layout.height == int(1.5 * fig.layout.height)
    assert big.data[0].marker.size == 1.5 * fig.data[0].marker.size
    assert big.data[0].textfont.size == 1.5 * fig.data[0].textfont.size
