"""Tests for attnviz.drawing.figures: heatmaps, pooling, focus row and difference."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.drawing import figures
from attnviz.drawing.figures import (
    BLOCKED_COLOR,
    SIGNED_COLORSCALE,
    WEIGHTS_COLORSCALE,
    difference_heatmap,
    focus_row,
    heatmap,
    pool_matrix,
)

REPO = Path(__file__).parents[2]
XSS = "<img src=x onerror=alert(1)>"


def _scale(trace) -> list[list]:
    return [[float(stop), color] for stop, color in trace.colorscale]


def _rows(table) -> list[list]:
    return [list(row) for row in table]


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


def _causal_weights(t: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`(t, t)` float32 softmax weights with a causal mask, and the blocked cells."""
    blocked = np.triu(np.ones((t, t), dtype=bool), 1)
    logits = np.random.default_rng(seed).normal(size=(t, t)).astype(np.float32)
    logits[blocked] = -np.inf
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True), blocked


# --- colour scales and ranges -------------------------------------------------------------------


def test_weights_use_viridis_from_exactly_zero_to_one():
    trace = heatmap([[0.2, 0.8], [0.5, 0.5]], kind="weights").data[0]
    assert _scale(trace) == [[float(s), c] for s, c in WEIGHTS_COLORSCALE]
    assert trace.colorscale[0][1] == "#440154" and trace.colorscale[-1][1] == "#fde725"
    assert (trace.zmin, trace.zmax) == (0.0, 1.0)


@pytest.mark.parametrize("kind", ["signed", "values"], ids=["signed", "values"])
def test_signed_kinds_are_diverging_and_symmetric_around_zero(kind):
    trace = heatmap([[-1.0, 3.0], [0.5, -2.0]], kind=kind).data[0]
    assert _scale(trace) == [[float(s), c] for s, c in SIGNED_COLORSCALE]
    assert trace.colorscale[0][1] == "rgb(5,48,97)"  # dark blue = most negative
    assert trace.colorscale[-1][1] == "rgb(103,0,31)"  # dark red = most positive
    assert (trace.zmin, trace.zmax, trace.zmid) == (-3.0, 3.0, 0.0)


def test_signed_range_comes_from_allowed_cells_only():
    scores = np.array([[1.0, -1e9], [-2.0, 0.5]])  # -1e9: a "-1e9" masked logit
    blocked = np.array([[False, True], [False, False]])
    trace = heatmap(scores, kind="signed", blocked=blocked).data[0]
    assert (trace.zmin, trace.zmax) == (-2.0, 2.0)


def test_all_zero_signed_matrix_still_has_a_range():
    trace = heatmap(np.zeros((2, 2)), kind="signed").data[0]
    assert (trace.zmin, trace.zmax) == (-1.0, 1.0)


def test_values_kind_names_columns_features():
    fig = heatmap(np.ones((2, 3)), kind="values")
    assert fig.layout.xaxis2.title.text == "feature"
    assert fig.layout.yaxis2.title.text == "query"
    assert "feature %{x}" in fig.data[0].hovertemplate


def test_mask_kind_draws_two_colours_with_named_colour_bar():
    allowed = np.array([[True, False], [True, True]])
    fig = heatmap(allowed, kind="mask")
    values, grey = fig.data[0], fig.data[1]
    assert list(values.colorbar.ticktext) == ["blocked", "allowed"]
    assert {color for _, color in values.colorscale} == {BLOCKED_COLOR, figures.ALLOWED_COLOR}
    np.testing.assert_array_equal(values.z, [[1.0, np.nan], [1.0, 1.0]])
    np.testing.assert_array_equal(grey.z, [[0, 1], [0, 0]])


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
    assert huge.layout.margin.l <= figures.MAX_LABEL_EXTENT + 60


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
    assert fig.layout.yaxis2.ticktext == ("x" * (figures.LABEL_CHARS - 1) + "…",)


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
    assert 10 <= shown <= figures.PLOT_WIDTH / (1.5 * figures.LINE_HEIGHT)
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


# --- blocked cells ------------------------------------------------------------------------------


def test_blocked_cells_are_grey_not_coloured():
    scores = np.array([[1.0, -np.inf], [2.0, 3.0]])
    blocked = np.isinf(scores)
    fig = heatmap(scores, blocked=blocked, blocked_label="masked (−∞)")
    values, grey = fig.data[0], fig.data[1]
    np.testing.assert_array_equal(values.z, [[1.0, np.nan], [2.0, 3.0]])
    np.testing.assert_array_equal(grey.z, [[0, 1], [0, 0]])
    assert grey.z.dtype == np.uint8  # a byte a cell on the wire
    assert [tuple(stop) for stop in grey.colorscale if stop[0] > 0.5] == [(1.0, BLOCKED_COLOR)]
    assert {color for _, color in grey.colorscale} == {BLOCKED_COLOR, figures.CLEAR}
    assert values.zorder > grey.zorder  # values above: they answer the hover where allowed
    assert BLOCKED_COLOR not in {color for _, color in values.colorscale}
    assert grey.showscale is False and values.hoverongaps is False
    assert "masked (−∞)" in grey.hovertemplate
    assert _rows(grey.text) == [["", "✕"], ["", ""]]


def test_minus_inf_counts_as_blocked_without_a_mask():
    fig = heatmap([[0.0, -np.inf]])
    np.testing.assert_array_equal(fig.data[1].z, [[0, 1]])


def test_z_never_holds_infinity():
    weights, blocked = _causal_weights(5)
    scores = np.where(blocked, -np.inf, np.log(np.where(blocked, 1.0, weights)))
    for fig in (heatmap(scores, blocked=blocked), heatmap(weights, kind="weights")):
        z = np.asarray(fig.data[0].z, dtype=float)
        assert not np.isinf(z).any()
        assert "Infinity" not in fig.to_json()
    np.testing.assert_array_equal(np.isnan(heatmap(scores).data[0].z), blocked)


def test_no_grey_trace_when_nothing_is_blocked():
    fig = heatmap(np.ones((2, 2)))
    assert [trace.type for trace in fig.data] == ["heatmap", "scatter"]  # values, label axes


@pytest.mark.parametrize(
    ("value", "message"),
    [(np.nan, "holds nan at \\(0, 1\\)"), (np.inf, "holds inf at \\(0, 1\\)")],
    ids=["nan", "plus-inf"],
)
def test_unblocked_nan_or_plus_inf_is_rejected(value, message):
    with pytest.raises(ValueError, match=message):
        heatmap([[0.0, value]])


def test_nan_in_blocked_cells_is_fine():
    fig = heatmap([[0.0, np.nan]], blocked=[[False, True]])
    assert np.isnan(fig.data[0].z[0, 1])


# --- cell text ----------------------------------------------------------------------------------


def test_small_matrices_print_values_with_three_digits():
    fig = heatmap([[0.123456, -12.3456], [1.0, 1234.5]])
    assert _rows(fig.data[0].text) == [["0.123", "-12.3"], ["1", "1234"]]  # never 1.23e+03
    assert fig.data[0].texttemplate == "%{text}"
    assert fig.data[0].textfont.color is None  # plotly picks a colour contrasting each cell


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.0, "0"), (1e-5, "<0.001"), (-3e-7, ">−0.001"), (0.00123, "0.00123"), (0.5, "0.5"),
     (12.345, "12.3"), (-999.6, "-1000"), (2.5e6, "2500000")],
)  # fmt: skip
def test_cell_numbers_are_never_in_scientific_notation(value, text):
    assert figures.cell_number(value) == text


def test_long_titles_wrap_instead_of_being_cut():
    title = "Epoch 12: Sunday, 22 November 2026 → 2026-11-22 and a few more words to wrap"
    fig = heatmap(np.eye(3), title=title)
    shown = fig.layout.title.text
    assert "…" not in shown and shown.replace("<br>", " ") == title
    assert shown.count("<br>") >= 1 and fig.layout.margin.t > heatmap(np.eye(3)).layout.margin.t


def test_weights_can_be_coloured_from_0_to_their_largest():
    weights = np.full((2, 12), 1 / 12)
    assert heatmap(weights, kind="weights").data[0].zmax == 1.0
    fitted = heatmap(weights, kind="weights", fit_scale=True).data[0]
    assert fitted.zmin == 0.0 and fitted.zmax == pytest.approx(1 / 12)


def test_a_highlighted_cell_is_outlined_and_the_figure_is_unchanged():
    fig = heatmap(np.eye(3))
    marked = figures.highlight_cell(fig, 1, 2)
    (shape,) = marked.layout.shapes
    assert (shape.x0, shape.x1, shape.y0, shape.y1) == (1.5, 2.5, 0.5, 1.5)
    assert fig.layout.shapes == ()


def test_values_in_narrow_cells_are_shorter_and_smaller():
    z = np.full((2, 12), 0.0817)
    trace = heatmap(z[:, :4]).data[0]
    assert trace.text[0][0] == "0.0817" and trace.textfont.size == figures.FONT_SIZE
    trace = heatmap(z[:, :8]).data[0]  # 35 px cells: "0.0817" (41 px) would touch its neighbours
    assert trace.text[0][0] == "0.082" and trace.textfont.size == figures.FONT_SIZE - 2
    assert heatmap(z).data[0].text is None  # not even "0.082" fits: the hover tells each value
    whole = heatmap(np.arange(24.0).reshape(2, 12)).data[0]  # short numbers still fit
    assert whole.text[1][11] == "23" and whole.textfont.size == figures.FONT_SIZE


def test_printed_values_never_run_into_each_other():
    # /cross: "-0.0257-0.00951" in a row of 8 scaled scores
    row = [-0.0791, -0.0261, 0.0887, 0.257, 0.878, -0.0257, -0.00951, -1.26]
    trace = heatmap(np.array([row, row])).data[0]
    cell = figures.CELL_TEXT_PX / len(row)
    widths = [figures.number_width(t, trace.textfont.size) for t in trace.text[0]]
    assert max(widths) + figures.CELL_TEXT_GAP <= cell, trace.text[0]
    assert list(trace.text[0]) == [
        "-0.08",
        "-0.03",
        "0.09",
        "0.26",
        "0.88",
        "-0.03",
        "-0.01",
        "-1.26",
    ]  # two decimals: the largest is below 10
    assert list(heatmap(np.array([[0.001, -0.004, 55.0] * 3])).data[0].text[0][:3]) == [
        "0", "0", "55.0"]  # fmt: skip


def test_larger_matrices_print_no_values_or_marks():
    fig = heatmap(np.zeros((13, 13)), blocked=np.eye(13, dtype=bool))
    assert fig.data[0].text is None and fig.data[1].text is None
    fig = heatmap(np.zeros((12, 12)), blocked=np.eye(12, dtype=bool))
    assert fig.data[0].text is not None and fig.data[1].text is not None


# --- errors -------------------------------------------------------------------------------------


def test_unknown_kind_is_rejected():
    with pytest.raises(ValueError, match='`kind` must be one of "signed", "weights", "mask"'):
        heatmap(np.ones((2, 2)), kind="heat")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(matrix=[[1, 2], [3]]), "`matrix` could not be read as a matrix: its rows have"),
        (dict(matrix=np.ones(3)), "non-empty 2-D array. Received shape \\(3,\\)"),
        (dict(matrix=[["a", "b"]]), "`matrix` must hold numbers only"),
        (dict(matrix=np.ones((2, 2)), row_labels=["a"]), "`row_labels` must be a list with"),
        (dict(matrix=np.ones((2, 2)), col_labels="ab"), "`col_labels` must be a list with"),
        (dict(matrix=np.ones((2, 2)), blocked=np.ones((2, 3))), "`blocked` must be True/False"),
        (dict(matrix=[[0.5, 1.5]], kind="weights"), "from 0 to 1, but `matrix` holds values"),
        (dict(matrix=[[0.5, 1.0]], kind="mask"), "must hold only True/False or 1/0"),
        (dict(matrix=np.ones((2, 2)), max_side=0), "`max_side` must be 1 or more"),
    ],
    ids=["ragged", "1-d", "text", "labels", "label-string", "blocked", "weights", "mask", "side"],
)
def test_bad_input_is_rejected_with_a_hint(kwargs, message):
    with pytest.raises(ValueError, match=message):
        heatmap(**kwargs)


# --- pooling and the overview -------------------------------------------------------------------


def test_pool_mean_of_two_by_two_blocks_by_hand():
    values = np.arange(64.0).reshape(8, 8)
    pooled = pool_matrix(values, np.zeros((8, 8), bool), max_side=4, rule="mean")
    # block (r, c) holds 16r + 2c + {0, 1, 8, 9}: mean 16r + 2c + 4.5
    expected = [
        [4.5, 6.5, 8.5, 10.5],
        [20.5, 22.5, 24.5, 26.5],
        [36.5, 38.5, 40.5, 42.5],
        [52.5, 54.5, 56.5, 58.5],
    ]
    np.testing.assert_array_equal(pooled.values, expected)
    assert pooled.block_shape == (2, 2) and pooled.is_overview
    assert list(pooled.row_edges) == [0, 2, 4, 6, 8]


def test_pool_mean_ignores_blocked_cells_and_blocks_only_fully_blocked_blocks():
    values = np.arange(16.0).reshape(4, 4)
    blocked = np.zeros((4, 4), bool)
    blocked[0, 1] = True  # block (0, 0) keeps 0, 4, 5: mean 3
    blocked[0:2, 2:4] = True  # block (0, 1) fully blocked
    values[0:2, 2:4] = -np.inf
    pooled = pool_matrix(values, blocked, max_side=2, rule="mean")
    np.testing.assert_array_equal(pooled.values, [[3.0, np.nan], [10.5, 12.5]])
    np.testing.assert_array_equal(pooled.blocked, [[False, True], [False, False]])


def test_pool_mass_keeps_rows_summing_to_one_with_short_last_blocks():
    weights, blocked = _causal_weights(10)
    pooled = pool_matrix(weights, blocked, max_side=3, rule="mass")  # blocks of 4, 4, 2
    assert list(pooled.row_edges) == [0, 4, 8, 10]
    np.testing.assert_allclose(np.nansum(pooled.values, axis=1), 1.0, rtol=1e-6)
    by_hand = weights[8:10, 4:8].sum() / 2  # sum over the block's keys, mean over its queries
    np.testing.assert_allclose(pooled.values[2, 1], by_hand, rtol=1e-6)


def test_pool_is_identity_when_the_matrix_fits():
    values = np.random.default_rng(0).normal(size=(5, 7))
    pooled = pool_matrix(values, np.zeros((5, 7), bool), max_side=7, rule="mass")
    np.testing.assert_allclose(pooled.values, values, rtol=1e-6)
    assert not pooled.is_overview


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
    weights, blocked = _causal_weights(4096)
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
    side = figures.MAX_SIDE
    labels = ["a long token label that gets cut somewhere " * 3] * side
    fig = heatmap(
        np.random.default_rng(0).normal(size=(side, side)),
        row_labels=labels,
        col_labels=labels,
        blocked=np.triu(np.ones((side, side), bool), 1),
    )
    assert "overview" not in fig.layout.title.text
    assert len(fig.to_json()) < 2_000_000


# --- focus row ----------------------------------------------------------------------------------


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


# --- difference ---------------------------------------------------------------------------------


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


# --- purity and rendering -----------------------------------------------------------------------


def test_module_needs_neither_streamlit_nor_tensorflow():
    # Loads attnviz.drawing.figures without the package __init__ (which imports TensorFlow).
    code = (
        "import sys, types\n"
        "pkg = types.ModuleType('attnviz'); pkg.__path__ = ['attnviz']\n"
        "sys.modules['attnviz'] = pkg\n"
        "from attnviz.drawing.figures import heatmap\n"
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


def test_a_frozen_figure_draws_the_same_and_builds_its_plain_form_once():
    import plotly.graph_objects as go
    import plotly.io

    figure = figures.heatmap(np.eye(3), kind="weights", title="eye")
    frozen = figures.frozen(figure)
    assert isinstance(frozen, go.Figure)
    drawn = [json.loads(plotly.io.to_json(f, validate=False)) for f in (frozen, figure)]
    assert drawn[0] == drawn[1]
    assert frozen.to_dict() is frozen.to_dict()  # built once, not copied per draw
    assert frozen.layout.width == figure.layout.width


def _heatmap_cases() -> list[dict]:
    """Heatmaps of every kind: exact and pooled, with and without blocked cells, thumbnails."""
    rng = np.random.default_rng(3)
    cases = []
    for n in (3, 16, 300):
        signed = rng.normal(size=(n, n))
        causal = np.triu(np.ones((n, n), bool), 1)
        weights = np.abs(signed) / np.abs(signed).sum(axis=1, keepdims=True)
        for kind, matrix in (("signed", signed), ("weights", weights), ("values", signed)):
            for blocked in (None, causal):
                for thumbnail in (False, True):
                    cases.append(dict(matrix=matrix, kind=kind, blocked=blocked,
                                      thumbnail=thumbnail, title=f"{XSS} {n}"))  # fmt: skip
        cases.append(dict(matrix=signed > 0, kind="mask", row_labels=[XSS] * n))
    return cases


@pytest.mark.parametrize("case", _heatmap_cases(), ids=lambda case: f"{case['kind']}")
def test_a_plain_figure_draws_exactly_what_plotlys_figure_draws(case):
    # what Streamlit sends (the plain form as JSON) equals what plotly's own figure of the same
    # traces and layout gives, arrays as typed arrays and the default template included
    import plotly.graph_objects as go
    import plotly.io

    traces, layout = figures.heatmap_parts(**case)
    plotlys = go.Figure(data=traces, layout=layout, _validate=False)
    plain = figures.heatmap(**case)
    assert isinstance(plain, go.Figure)
    drawn = [json.loads(plotly.io.to_json(f.to_dict(), validate=False)) for f in (plain, plotlys)]
    assert drawn[0] == drawn[1]
    assert "template" in drawn[0]["layout"]


def test_a_plain_figure_writes_every_kind_of_array_as_plotly_does():
    # the typed arrays are written here, not by plotly: every dtype, order and place must give
    # plotly's JSON (64-bit integers narrowed, bools and strings as lists, nothing under "range")
    import plotly.graph_objects as go
    import plotly.io

    arrays = {
        "z": np.arange(12, dtype=np.float32).reshape(3, 4),
        "x": np.linspace(0, 1, 4),
        "y": np.array([1, 2, 3]),  # int64
        "text": np.array(["<b>a</b>", "b", "c"]),
        "customdata": np.array([True, False, True]),
        "ids": np.arange(6, dtype=np.uint64)[::2],  # strided
        "meta": np.arange(4, dtype=">f4"),  # big-endian
        "hovertext": np.zeros((0,)),
        "zmax": np.float32(2.5),  # a numpy scalar, not an array
        "marker": {"color": np.arange(3, dtype=np.int16), "size": [np.ones(3)]},
    }
    traces = [{"type": "heatmap", **arrays}]
    layout = {"xaxis": {"range": np.array([0.0, 1.0])}, "title": {"text": "arrays"}}
    plain = figures.PlainFigure.of(traces, layout)
    plotlys = go.Figure(data=traces, layout=layout, _validate=False)
    drawn = [json.loads(plotly.io.to_json(f.to_dict(), validate=False)) for f in (plain, plotlys)]
    assert drawn[0] == drawn[1]
    assert drawn[0]["data"][0]["z"]["dtype"] == "f4"


def test_axis_titles_keep_their_own_distance_from_the_labels():
    # a theme's larger standoff (Streamlit's is 24-32 px) would widen the margins computed here
    # and make plotly draw every chart twice; a browser test checks that no chart is widened
    figs = [
        figures.heatmap(np.eye(3), kind="weights", row_labels=["a", "b", "c"]),
        figures.focus_row([0.2, 0.8], col_labels=["x", "y"]),
    ]
    for fig in figs:
        layout = fig.to_dict()["layout"]
        titled = [a for name, a in layout.items() if name.startswith(("xaxis", "yaxis"))]
        titled = [a for a in titled if a.get("title", {}).get("text")]
        assert titled and all(a["title"]["standoff"] == figures.TITLE_STANDOFF for a in titled)


def test_the_right_margin_holds_the_colour_bar():
    for kind in ("weights", "signed", "values", "mask"):
        fig = figures.heatmap(np.eye(3), kind=kind)
        layout, bar = fig.to_dict()["layout"], fig.to_dict()["data"][0]["colorbar"]
        assert bar["x"] == 1.0 and bar["xpad"] == figures.BAR_PAD  # in the margin, beside
        assert layout["margin"]["r"] == figures._colorbar_room(kind)
        assert layout["margin"]["r"] >= 2 * figures.BAR_PAD + figures.BAR_THICKNESS + 20
    thumbnail = figures.heatmap(np.eye(3), kind="weights", thumbnail=True).to_dict()
    assert thumbnail["layout"]["margin"]["r"] == 10  # no colour bar


def test_a_plain_figure_becomes_a_figure_when_used_as_one():
    import copy
    import pickle

    figure = figures.heatmap(np.eye(3), kind="weights", title="eye")
    plain = figure.to_dict()
    plain["layout"]["height"] = 1  # changing the plain form leaves the figure as it was
    plain["layout"]["xaxis"]["range"][0] = 99
    assert figure.to_dict()["layout"]["height"] != 1
    assert figure.to_dict()["layout"]["xaxis"]["range"][0] == -0.5
    for same in (copy.deepcopy(figure), pickle.loads(pickle.dumps(figure))):
        assert same.to_dict() == figure.to_dict()
    figure.update_layout(height=321)  # used as a figure: plotly's figure from then on
    assert figure.layout.height == 321 and figure.to_dict()["layout"]["height"] == 321
    assert figure.data[0].type == "heatmap"


def test_threads_using_one_plain_figure_all_get_the_built_figure():
    # a cached figure is shared by every session: the first uses build it once, the others wait
    from concurrent.futures import ThreadPoolExecutor

    figure = figures.heatmap(np.eye(4), kind="weights", title="shared")
    with ThreadPoolExecutor(8) as pool:
        heights = list(pool.map(lambda _: figure.layout.height, range(64)))
    assert heights == [figure.layout.height] * 64
    assert [trace.type for trace in figure.data] == ["heatmap", "scatter"]
