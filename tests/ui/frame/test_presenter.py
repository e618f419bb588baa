"""Tests for ui/frame/presenter.py: the presenter view's switch, larger charts, one chart a row."""

from __future__ import annotations

import app_support as ui
import numpy as np

from attnviz.drawing.model_view import head_map
from attnviz.ui.frame import presenter


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


LESSON_CONTROLS = {  # the lessons that use the sidebar's controls: the ones their text names
    "lesson-1": "Score function",
    "lesson-4": "Masked logits become",
    "lesson-5": "Score function",
    "lesson-11": "Position scheme",
}


def _labels(part) -> set[str]:
    return {
        w.label
        for kind in ("toggle", "radio", "slider", "number_input", "text_input")
        for w in part.get(kind)
    }


def _expander(part, label: str):
    (found,) = [e for e in part.expander if e.label == label]
    return found


def test_presenting_draws_the_sidebar_controls_in_the_page_under_the_lesson():
    # the presenter view folds the sidebar away: the controls a lesson asks the class to use
    # are drawn in the page, in an open expander under the lesson's text, the others in the
    # closed "More controls" beside it, and keep their values
    at = ui.new_session("matrices", present="true")
    for slug, control in LESSON_CONTROLS.items():
        ui.open_page(at, slug)
        ui.assert_ok(at)
        assert not _labels(at.sidebar), slug  # nothing left in the folded sidebar
        settings = _expander(at.main, presenter.SETTINGS_LABEL)
        more = _expander(at.main, presenter.MORE_LABEL)
        assert control in _labels(settings) and control not in _labels(more)
        mask = settings if slug == "lesson-4" else more  # lesson 4 talks about the masks
        assert "Causal (look-ahead) mask" in _labels(mask)
        assert "Presenter view" not in _labels(settings) | _labels(more)  # the sidebar's only
    at.toggle(key="causal").set_value(False).run()
    at.toggle(key="present").set_value(False).run()  # back to the sidebar, the value kept
    assert "Causal (look-ahead) mask" in _labels(at.sidebar)
    assert at.toggle(key="causal").value is False
    assert not [e for e in at.main.expander if e.label == presenter.SETTINGS_LABEL]


def _in_view_and_folded(at) -> tuple[set[str], set[str]]:
    """The sidebar's controls in view, and those folded into "More controls"."""
    more = _expander(at.sidebar, presenter.MORE_LABEL)
    assert not more.proto.expanded  # closed: the learner opens it
    return _labels(at.sidebar) - _labels(more), _labels(more)


def test_a_lesson_shows_the_controls_it_talks_about_and_folds_the_others_away():
    at = ui.new_session("matrices")
    ui.open_page(at, "lesson-1")
    ui.assert_ok(at)
    in_view, folded = _in_view_and_folded(at)
    assert in_view == {"Score function"}  # lesson 1 scores queries against keys, no more
    newer = {"Prefix-LM (bidirectional prefix)", "Attention sinks", "Chunked attention",
             "Packed documents (lengths)", "Position scheme", "Local window"}  # fmt: skip
    assert newer <= folded and "Causal (look-ahead) mask" in folded
    ui.open_page(at, "lesson-4")
    in_view, folded = _in_view_and_folded(at)
    assert {"Causal (look-ahead) mask", "Padding mask", "Masked logits become"} <= in_view
    assert newer - {"Position scheme"} <= folded and "Score function" in folded
    assert "More masks" in [h.value for h in _expander(at.sidebar, presenter.MORE_LABEL).subheader]


def test_a_learner_can_still_change_a_folded_control():
    at = ui.new_session("matrices")
    ui.open_page(at, "lesson-1")
    np.testing.assert_allclose(ui.weights(at)[0], [0.150325, 0.849675], atol=1e-6)
    at.toggle(key="scale").set_value(False).run()  # folded into "More controls"
    ui.assert_ok(at)
    assert at.toggle(key="scale").value is False
    raw = np.array([1.0, 4.0])  # query 0's dot products with keys 0 and 1, unscaled
    np.testing.assert_allclose(ui.weights(at)[0], np.exp(raw) / np.exp(raw).sum(), atol=1e-6)


def test_outside_a_lesson_the_sidebar_folds_nothing():
    at = ui.new_session("matrices")
    ui.open_page(at, "lesson-1")
    ui.open_page(at, "matrices")
    ui.assert_ok(at)
    assert not at.sidebar.expander
    assert {"Score function", "Attention sinks", "Position scheme"} <= _labels(at.sidebar)


def test_the_model_view_labels_grow_while_presenting_and_its_cells_stay_in_their_column(
    monkeypatch,
):
    # the model view's grid fits its column: its layer and head labels grow (12 px were ~10 px
    # high on a projector) to 15 px, what the strip above each layer's cells holds; its size,
    # sized to the column, stays
    from attnviz.drawing.model_view import model_view

    fig = model_view(np.full((2, 4, 3, 3), 1 / 3), list("abc"), list("abc"), title="heads")
    assert presenter.readable(fig) is fig  # not presenting: as it is
    monkeypatch.setattr(presenter, "presenting", lambda: True)
    big = presenter.readable(fig).to_dict()["layout"]
    plain = fig.to_dict()["layout"]
    assert big["width"] == plain["width"] and big["height"] == plain["height"]
    assert plain["font"]["size"] == 12 and big["font"]["size"] == 15
    notes = big["annotations"]  # "layer 0", "layer 1", "head 0" ... "head 3"
    assert len(notes) == 6 and all(n.get("font", {}).get("size", 15) == 15 for n in notes)
