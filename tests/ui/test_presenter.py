"""Tests for ui/presenter.py: the presenter view's switch, larger charts, one chart a row."""

from __future__ import annotations

import app_support as ui


def test_the_presenter_view_enlarges_the_charts_and_a_link_opens_it():
    at = ui.new_session("matrices")
    normal = ui.chart(at, "Attention weights")["layout"]
    at.toggle(key="present").set_value(True).run()
    ui.assert_ok(at)
    big = ui.chart(at, "Attention weights")["layout"]
    assert big["font"]["size"] > normal["font"]["size"] and big["height"] > normal["height"]
    assert any("font-size" in h.proto.body for h in at.get("html"))  # larger page text
    shared = ui.new_session("matrices", present="true")  # a teacher's link opens in it
    assert shared.toggle(key="present").value is True
    assert ui.chart(shared, "Attention weights")["layout"]["font"]["size"] == big["font"]["size"]
