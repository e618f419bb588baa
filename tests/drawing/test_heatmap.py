"""Tests for attnviz/drawing/heatmap.py: blocked cells, the colour bar, overviews, differences."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from drawing_support import causal_weights

from attnviz.drawing.heatmap import (
    BAR_PAD,
    BAR_THICKNESS,
    _colorbar_room,
    difference_heatmap,
    heatmap,
    highlight_cell,
)
from attnviz.drawing.pooling import MAX_SIDE
from attnviz.drawing.theme import BLOCKED_COLOR, CLEAR

XSS = "<img src=x onerror=alert(1)>"
REPO = Path(__file__).parents[2]


def _rows(table) -> list[list]:
    return [list(row) for row in table]


def test_blocked_cells_are_grey_not_coloured():
    scores = np.array([[1.0, -np.inf], [2.0, 3.0]])
    blocked = np.isinf(scores)
    fig = heatmap(scores, blocked=blocked, blocked_label="masked (−∞)")
    values, grey = fig.data[0], fig.data[1]
    np.testing.assert_array_equal(values.z, [[1.0, np.nan], [2.0, 3.0]])
    np.testing.assert_array_equal(grey.z, [[0, 1], [0, 0]])
    assert grey.z.dtype == np.uint8  # a byte a cell on the wire
    assert [tuple(stop) for stop in grey.colorscale if stop[0] > 0.5] == [(1.0, BLOCKED_COLOR)]
    assert {color for _, color in grey.colorscale} == {BLOCKED_COLOR, CLEAR}
    assert values.zorder > grey.zorder  # values above: they answer the hover where allowed
    assert BLOCKED_COLOR not in {color for _, color in values.colorscale}
    assert grey.showscale is False and values.hoverongaps is False
    assert "masked (−∞)" in grey.hovertemplate
    assert _rows(grey.text) == [["", "✕"], ["", ""]]


def test_no_grey_trace_when_nothing_is_blocked():
    fig = heatmap(np.ones((2, 2)))
    assert [trace.type for trace in fig.data] == ["heatmap", "scatter"]  # values, label axes


def test_shown_labels_fit_the_margins_and_are_not_measured_to_hide_them():
    # plotly hides labels that pass the chart's edge by measuring each in the browser (forced
    # layouts: ~100 ms on a page of ten charts); the margins are made to hold them instead
    fig = heatmap(np.eye(3), row_labels=["a", "b", "c"], col_labels=["x", "y", "z"])
    layout = fig.to_dict()["layout"]
    assert layout["xaxis2"]["ticklabeloverflow"] == layout["yaxis2"]["ticklabeloverflow"] == "allow"
    assert not layout["xaxis"]["showticklabels"] and not layout["yaxis"]["showticklabels"]


def test_unknown_kind_is_rejected():
    with pytest.raises(ValueError, match='`kind` must be one of "signed", "weights", "mask"'):
        heatmap(np.ones((2, 2)), kind="heat")


def test_the_right_margin_holds_the_colour_bar():
    for kind in ("weights", "signed", "values", "mask"):
        fig = heatmap(np.eye(3), kind=kind)
        layout, bar = fig.to_dict()["layout"], fig.to_dict()["data"][0]["colorbar"]
        assert bar["x"] == 1.0 and bar["xpad"] == BAR_PAD  # in the margin, beside
        assert layout["margin"]["r"] == _colorbar_room(kind)
        assert layout["margin"]["r"] >= 2 * BAR_PAD + BAR_THICKNESS + 20
    thumbnail = heatmap(np.eye(3), kind="weights", thumbnail=True).to_dict()
    assert thumbnail["layout"]["margin"]["r"] == 10  # no colour bar


def test_overview_heatmap_says_so_and_hovers_block_ranges():
    labels = list("abcdefgh")
    fig = heatmap(np.arange(64.0).reshape(8, 8), row_labels=labels, col_labels=labels, max_side=4)
    title = fig.layout.title.text
    assert "overview: each cell summarises a 2×2" in title
    assert "focus-row" not in title  # only the Heatmaps tab has one, and says so itself
    notes = [line.removeprefix("<sup>").removesuffix("</sup>") for line in title.split("<br>")[1:]]
    assert " ".join(notes) == "overview: each cell summarises a 2×2 block, mean of allowed cells"
    assert max(len(line) for line in notes) <= 36  # a third of a page wide (Compare) fits it
    np.testing.assert_array_equal(fig.data[0].z[1], [20.5, 22.5, 24.5, 26.5])
    assert fig.layout.yaxis.ticktext[1] == "2–3: c … d"
    assert list(fig.layout.yaxis.tickvals) == [0.5, 2.5, 4.5, 6.5]
    assert list(fig.data[0].y) == [-0.5, 1.5, 3.5, 5.5, 7.5]  # block edges
    assert list(fig.layout.yaxis2.tickvals) == list(range(8))  # labels at source positions
    assert "mean of allowed cells" in fig.data[0].hovertemplate


def test_matrix_at_max_side_is_drawn_exactly():
    fig = heatmap(np.zeros((4, 4)), max_side=4)
    assert "overview" not in fig.layout.title.text


@pytest.fixture(scope="module")
def huge_weights():
    weights, blocked = causal_weights(4096)
    labels = [f"token{i:05d}" for i in range(4096)]  # 10 characters each
    return weights, blocked, labels


@pytest.mark.parametrize("masked", [False, True], ids=["unmasked", "causal"])
def test_4096_heatmap_is_a_small_overview(huge_weights, masked):
    # How long this takes is a benchmark figure (bench/figure_bench.py), not a test.
    weights, blocked, labels = huge_weights
    fig = heatmap(
        weights,
        row_labels=labels,
        col_labels=labels,
        kind="weights",
        blocked=blocked if masked else None,
    )
    assert len(fig.to_json()) < 2_000_000
    assert fig.data[0].z.shape == (256, 256) and fig.data[0].z.dtype == np.float32
    assert "16×16 block" in fig.layout.title.text


def test_largest_exact_heatmap_with_long_labels_stays_small():
    side = MAX_SIDE
    labels = ["a long token label that gets cut somewhere " * 3] * side
    fig = heatmap(
        np.random.default_rng(0).normal(size=(side, side)),
        row_labels=labels,
        col_labels=labels,
        blocked=np.triu(np.ones((side, side), bool), 1),
    )
    assert "overview" not in fig.layout.title.text
    assert len(fig.to_json()) < 2_000_000


def test_a_highlighted_cell_is_outlined_and_the_figure_is_unchanged():
    fig = heatmap(np.eye(3))
    marked = highlight_cell(fig, 1, 2)
    (shape,) = marked.layout.shapes
    assert (shape.x0, shape.x1, shape.y0, shape.y1) == (1.5, 2.5, 0.5, 1.5)
    assert fig.layout.shapes == ()


def test_difference_is_a_minus_b_on_a_signed_scale():
    a = np.array([[0.75, 0.25], [0.5, 0.5]])
    b = np.array([[0.5, 0.5], [1.0, 0.0]])
    fig = difference_heatmap(a, b, row_labels=["x", "y"], col_labels=["x", "y"], title="a − b")
    np.testing.assert_array_equal(fig.data[0].z, [[0.25, -0.25], [-0.5, 0.5]])
    assert (fig.data[0].zmin, fig.data[0].zmax, fig.data[0].zmid) == (-0.5, 0.5, 0.0)


def test_difference_of_masked_scores_blocks_undefined_cells():
    a = np.array([[1.0, -np.inf], [-np.inf, 2.0]])
    b = np.array([[0.5, -np.inf], [3.0, 1.0]])
    fig = difference_heatmap(a, b, row_labels=None, col_labels=None, title="")
    np.testing.assert_array_equal(fig.data[0].z, [[0.5, np.nan], [np.nan, 1.0]])
    np.testing.assert_array_equal(fig.data[1].z, [[0, 1], [1, 0]])
    assert "masked in a or b" in fig.data[1].hovertemplate


def test_difference_rejects_different_shapes():
    with pytest.raises(ValueError, match="same shape. Received: a \\(2, 2\\), b \\(2, 3\\)"):
        difference_heatmap(
            np.ones((2, 2)), np.ones((2, 3)), row_labels=None, col_labels=None, title=""
        )


def test_module_needs_neither_streamlit_nor_tensorflow():
    # Loads attnviz.drawing.heatmap without the package __init__ (which imports TensorFlow).
    code = (
        "import sys, types\n"
        "pkg = types.ModuleType('attnviz'); pkg.__path__ = ['attnviz']\n"
        "sys.modules['attnviz'] = pkg\n"
        "from attnviz.drawing.heatmap import heatmap\n"
        "heatmap([[0.5, 0.5]], kind='weights').to_json()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('tensorflow', 'keras', 'streamlit')))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


HOVER_CHANGED = """(before) => {
  const now = Array.from(document.querySelectorAll('.hoverlayer .hovertext'), e => e.textContent);
  return now.length > 0 && now.join('|') !== before.join('|');
}"""  # a hover box is shown, another than the one before


@pytest.mark.browser
@pytest.mark.slow
def test_browser_hover_shows_labels_and_escaped_text(tmp_path, browser):
    """In Chromium (the session's shared browser): hover names and escaped labels."""
    fig = heatmap(
        [[0.5, 0.5], [0.25, 0.75]],
        row_labels=["the", XSS],
        col_labels=["the", "cat"],
        kind="weights",
        blocked=[[False, False], [True, False]],
    )
    page_html = tmp_path / "figure.html"
    page_html.write_text(fig.to_html(include_plotlyjs=True, full_html=True), encoding="utf-8")
    context = browser.new_context(viewport={"width": 900, "height": 700})
    try:
        page = context.new_page()
        alerts = []
        page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
        page.goto(page_html.as_uri())
        page.wait_for_selector(".nsewdrag")
        box = page.locator(".nsewdrag").first.bounding_box()
        hovers = []
        for fx, fy in [(0.25, 0.25), (0.25, 0.75), (0.75, 0.75)]:
            page.mouse.move(box["x"] + fx * box["width"], box["y"] + fy * box["height"])
            page.wait_for_function(HOVER_CHANGED, arg=hovers[-1] if hovers else [])  # not a sleep
            hovers.append(page.locator(".hoverlayer .hovertext").all_text_contents())
        images = page.locator("img").count()
    finally:
        context.close()
    assert hovers == [
        ["query 0: thekey 0: theweight 0.5"],
        [f"query 1: {XSS}key 0: themasked"],
        [f"query 1: {XSS}key 1: catweight 0.75"],
    ]
    assert alerts == [] and images == 0
