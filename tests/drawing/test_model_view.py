"""Tests for drawing/model_view: the layers × heads grid built from the heatmap thumbnails."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from app_support import grid_blocks
from figure_support import plain_and_checked

from attnviz.drawing.model_view import head_map, inspection_view, model_view
from attnviz.drawing.theme import WEIGHTS_COLORSCALE

ROOT = Path(__file__).parents[2]
RNG = np.random.default_rng(8)
QUERIES = ["the", "cat", "sat", "down"]
KEYS = ["le", "chat", "s'est", "assis", "<b>"]


@pytest.fixture(scope="module")
def cross():
    """Two layers × three heads of cross-attention, 4 queries × 5 keys."""
    weights = RNG.dirichlet(np.ones(5), size=(2, 3, 4))  # (L, H, T, S)
    fig = model_view(weights, QUERIES, KEYS, titles=["enc-dec 0", "enc-dec 1"], title="cross")
    return weights, fig


def _value_traces(fig: go.Figure) -> list:
    return [t for t in fig.data if t.coloraxis == "coloraxis"]


def test_every_head_is_a_block_of_one_heatmap_holding_its_weights(cross):
    weights, fig = cross
    (values,) = _value_traces(fig)  # one heatmap for the whole grid: one image to draw
    blocks = grid_blocks(values.z, 2, 3)  # (L, H, T, S)
    np.testing.assert_allclose(blocks, weights, atol=1e-7)  # float32 cells
    z = np.asarray(values.z, dtype=float)
    assert np.isnan(z[0]).all() and np.isnan(z[:, 5]).all()  # a strip on top, gaps between
    assert len(values.x) == z.shape[1] + 1 and len(values.y) == z.shape[0] + 1  # cell edges


def test_hover_names_layer_head_query_key_and_weight(cross):
    _, fig = cross
    (values,) = _value_traces(fig)
    assert values.hovertemplate.startswith("%{y}<br>%{x}<br>weight %{z")
    assert values.hoverongaps is False  # the gaps have no hover
    # %{y} / %{x} show the data axes' tick text: layer, position and token of the cell
    y_names, x_names = list(fig.layout.yaxis.ticktext), list(fig.layout.xaxis.ticktext)
    assert y_names[4:6] == ["enc-dec 1 · query 0: the", "enc-dec 1 · query 1: cat"]
    assert x_names[5:7] == ["head 1 · key 0: le", "head 1 · key 1: chat"]
    assert x_names[4] == "head 0 · key 4: &lt;b&gt;"  # user text is escaped
    # each tick sits at its cell's centre: the second layer's query 1, the second head's key 0
    y, x = np.asarray(values.y, dtype=float), np.asarray(values.x, dtype=float)
    row = np.searchsorted(y, fig.layout.yaxis.tickvals[5]) - 1
    col = np.searchsorted(x, fig.layout.xaxis.tickvals[5]) - 1
    np.testing.assert_allclose(np.asarray(values.z)[row, col], cross[0][1, 1, 1, 0], atol=1e-7)


def test_one_shared_colour_scale_from_0_to_1(cross):
    _, fig = cross
    axis = fig.layout.coloraxis
    assert (axis.cmin, axis.cmax) == (0.0, 1.0)
    assert [list(step) for step in axis.colorscale] == WEIGHTS_COLORSCALE
    assert all(t.showscale is None and t.colorbar.title.text is None for t in _value_traces(fig))


def test_grid_layout_titles_and_head_numbers(cross):
    _, fig = cross
    notes = [a.text for a in fig.layout.annotations]
    assert notes == ["enc-dec 0", "enc-dec 1", "head 0", "head 1", "head 2"]
    assert fig.layout.title.text == "cross"
    (values,) = _value_traces(fig)
    x, y = np.asarray(values.x, dtype=float), np.asarray(values.y, dtype=float)
    assert list(fig.layout.xaxis.range) == [x[0], x[-1]]  # the blocks fill the width
    assert list(fig.layout.yaxis.range) == [y[-1], y[0]]  # layer 0 on top
    # square blocks apart by GAP px: a head's 5 keys span as many px as a layer's 4 queries
    margin = fig.layout.margin
    width = fig.layout.width - margin.l - margin.r
    height = fig.layout.height - margin.t - margin.b
    per_key, per_query = width / (x[-1] - x[0]), height / (y[-1] - y[0])
    assert 5 * per_key == pytest.approx(4 * per_query, rel=0.02)


def test_default_titles_blocked_cells_and_highlights():
    w = np.tril(RNG.dirichlet(np.ones(3), size=(1, 2, 3)))  # (1, 2, 3, 3) causal
    w /= w.sum(axis=-1, keepdims=True)
    future = np.triu(np.ones((3, 3), dtype=bool), k=1)
    fig = model_view(w, blocked=future, highlight=[(0, 1)])
    assert fig.layout.annotations[0].text == "layer 0"
    (values,) = _value_traces(fig)
    assert np.isnan(grid_blocks(values.z, 1, 2)[0, 0][future]).all()  # blocked: grey, no value
    (grey,) = [t for t in fig.data if t.coloraxis is None]  # one grey layer beneath
    assert grey.zorder == -1 and (grid_blocks(grey.z, 1, 2)[0] == future).all()
    assert grey.hovertemplate == "%{y}<br>%{x}<br>masked<extra></extra>"
    (outline,) = fig.layout.shapes
    assert (outline.xref, outline.yref) == ("paper", "paper")  # not clipped at the plot's edge
    x = np.asarray(values.x, dtype=float)
    paper = (x - x[0]) / (x[-1] - x[0])  # the cell edges across, as fractions of the plot
    assert outline.x0 < paper[4] < paper[6] < 1 < outline.x1  # around head 1's three keys
    assert outline.x0 > paper[3]  # not head 0's
    y = np.asarray(values.y, dtype=float)
    top = 1 - (y[1] - y[0]) / (y[-1] - y[0])  # layer 0's first row, below the strip
    assert outline.y0 < 0 < top < outline.y1


def test_twelve_by_twelve_heads_stay_small_and_valid():
    w = RNG.dirichlet(np.ones(16), size=(12, 12, 16))  # (12, 12, 16, 16)
    tokens = [f"token{i}" for i in range(16)]
    fig = model_view(w, tokens, tokens)
    (values,) = _value_traces(fig)
    assert grid_blocks(values.z, 12, 12).shape == (12, 12, 16, 16)
    assert len(fig.to_json()) < 1_000_000
    go.Figure(fig.to_dict())  # plotly's own validation accepts every property
    assert "Plotly.newPlot" in fig.to_html(include_plotlyjs=False)  # what fig.show() renders


def test_long_sequences_are_pooled_into_overviews():
    w = RNG.dirichlet(np.ones(100), size=(1, 1, 100))
    (trace,) = _value_traces(model_view(w, max_side=25))
    assert grid_blocks(trace.z, 1, 1).shape == (1, 1, 25, 25)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(titles=["only one"]), "one title per layer: 2"),
        (dict(blocked=np.zeros((4, 4), bool)), r"shape \(4, 5\)"),
        (dict(blocked=np.full((4, 5), 0.5)), "True/False"),
        (dict(highlight=[(2, 0)]), "highlight layer"),
        (dict(highlight=[3]), r"\(layer, head\) pairs"),
        (dict(row_labels=["a"]), "one label per position: 4"),
        (dict(head_names=["a", "b"]), "one name per head: 3 names"),
    ],
    ids=["titles", "blocked-shape", "blocked-values", "highlight-range", "highlight-pairs",
         "labels", "head-names"],
)  # fmt: skip
def test_bad_arguments_are_rejected(kwargs, message):
    weights = RNG.dirichlet(np.ones(5), size=(2, 3, 4))
    with pytest.raises(ValueError, match=message):
        model_view(weights, **kwargs)


def test_head_names_head_the_columns_and_the_hover():
    weights = RNG.dirichlet(np.ones(5), size=(1, 2, 4))  # (1, 2, T, S): two of a layer's heads
    fig = model_view(weights, QUERIES, KEYS, head_names=["head 5", "<i>h7</i>"], title="t" * 90)
    notes = [note.text for note in fig.layout.annotations]
    assert notes[-2:] == ["head 5", "&lt;i&gt;h7&lt;/i&gt;"]  # escaped: a name may be user text
    assert fig.layout.xaxis.ticktext[0] == "head 5 · key 0: le"
    assert fig.layout.title.text.replace("<br>", "") == "t" * 90  # a long title is never cut


def test_layers_of_different_shapes_are_rejected():
    with pytest.raises(ValueError, match="Self-attention .* separate stacks"):
        model_view([np.eye(3)[None], np.ones((1, 3, 4)) / 4])


def test_drawing_and_head_maths_need_no_tensorflow():
    probe = (
        "import sys\n"
        "import numpy as np\n"
        "from attnviz.drawing.model_view import model_view\n"
        "from attnviz.heads import attention_rollout, head_summaries\n"
        "w = np.full((1, 2, 3, 3), 1 / 3)\n"
        "model_view(w); head_summaries(w); attention_rollout(w)\n"
        "print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_head_map_is_one_clickable_square_per_head():
    table = np.array([[0.5, np.nan, 1.25], [2.0, 0.0, 3.5]])  # (L, H)
    fig = head_map(table, label="entropy (bits)", titles=["enc 0", "<b>enc 1</b>"], selected=(1, 2))
    (trace,) = fig.data
    assert trace.type == "scatter" and trace.marker.symbol == "square"  # clicks select points
    assert list(trace.x) == [0, 1, 2, 0, 1, 2] and list(trace.y) == [0, 0, 0, 1, 1, 1]
    assert [list(p) for p in trace.customdata] == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    assert list(trace.text) == ["0.50", "–", "1.25", "2.00", "0.00", "3.50"]
    colors = np.asarray(trace.marker.color, dtype=float)
    np.testing.assert_array_equal(colors[[0, 2, 3, 4, 5]], [0.5, 1.25, 2.0, 0.0, 3.5])
    assert np.isnan(colors[1])
    assert trace.hovertext[5] == "&lt;b&gt;enc 1&lt;/b&gt; · head 2"  # titles never render HTML
    (outline,) = fig.layout.shapes
    assert (outline.x0, outline.x1, outline.y0, outline.y1) == (1.5, 2.5, 0.5, 1.5)
    assert list(fig.layout.yaxis.ticktext) == ["enc 0", "&lt;b&gt;enc 1&lt;/b&gt;"]
    assert list(fig.layout.xaxis.ticktext) == ["0", "1", "2"]  # short: never run together
    margin, span = fig.layout.margin, fig.layout.xaxis.range[1] - fig.layout.xaxis.range[0]
    per_head = (fig.layout.width - margin.l - margin.r) / span  # px from a square to the next
    assert per_head - trace.marker.size >= 5  # squares apart, not touching
    rows = fig.layout.yaxis.range[0] - fig.layout.yaxis.range[1]  # reversed: layer 0 on top
    per_layer = (fig.layout.height - margin.t - margin.b) / rows
    assert rows > 0 and per_layer - trace.marker.size >= 5
    assert fig.layout.xaxis.title.text == "head"
    # the labels fit the margins: plotly need not measure each one to hide it past the edge
    assert fig.layout.xaxis.ticklabeloverflow == fig.layout.yaxis.ticklabeloverflow == "allow"


def test_heads_that_print_the_same_number_get_the_same_colour():
    tied = head_map(np.array([[3.676974, 3.676972], [3.67697, 3.676973]]), label="entropy (bits)")
    (trace,) = tied.data
    assert set(trace.text) == {"3.68"}  # all one number, as printed ...
    low, high = trace.marker.cmin, trace.marker.cmax  # ... so nearly one colour: the middle
    assert low < 3.67697 and high > 3.676974 and high - low > 100 * (3.676974 - 3.67697)
    spread = head_map(np.array([[0.5, 2.0]]), label="entropy (bits)").data[0].marker
    assert spread.cmin is None and spread.cmax is None  # smallest to largest


@pytest.mark.parametrize(
    ("table", "kwargs", "message"),
    [
        ([1, 2, 3], {}, "2-D array of numbers"),
        ([["a", "b"]], {}, "2-D array of numbers"),
        ([[1.0, 2.0]], {"selected": (0, 5)}, "selected head"),
        ([[1.0, 2.0]], {"titles": ["a", "b"]}, "one title per layer"),
    ],
    ids=["1-d", "text", "selected", "titles"],
)
def test_head_map_bad_arguments(table, kwargs, message):
    with pytest.raises(ValueError, match=message):
        head_map(table, label="x", **kwargs)


def test_grid_width_sets_the_cell_size():
    weights = RNG.dirichlet(np.ones(4), size=(1, 4, 4))
    narrow = model_view(weights, grid_width=480)
    wide = model_view(weights, grid_width=1000)
    assert narrow.layout.width < wide.layout.width
    with pytest.raises(ValueError, match="grid_width"):
        model_view(weights, grid_width=0)


def test_any_model_s_attention_calls_draw_with_their_tokens_and_no_check():
    # the one trace type: a run that is not `inspect`'s (no layer check) draws its calls by
    # their keys, labelled by their own tokens, grey where their mask blocked
    from attnviz.heads.calls import AttentionCall, AttentionCalls, frozen_labels

    tokens = frozen_labels([["<s>", "a", "b"]])
    tri = np.tri(3, dtype=bool)
    weights = (tri / tri.sum(axis=-1, keepdims=True))[None, None].repeat(2, axis=1)  # (1, 2, 3, 3)
    calls = AttentionCalls(tuple(
        AttentionCall(key=f"block_{i}/attention", kind="self", way="causal", layer=i,
                      weights=weights.astype(np.float32), mask=tri[None], row_labels=tokens,
                      col_labels=tokens)
        for i in range(2)
    ))  # fmt: skip
    drawn = inspection_view(calls, kind="causal")
    expected = model_view(
        np.stack([weights[0]] * 2), ["<s>", "a", "b"], ["<s>", "a", "b"], blocked=~tri,
        titles=["block_0/attention", "block_1/attention"], title="causal attention",
    )  # fmt: skip
    assert drawn.to_plotly_json() == expected.to_plotly_json()


def test_the_head_map_is_a_plain_figure_that_draws_what_plotly_s_checked_figure_draws():
    # drawn on every run of a model view's page: built without plotly's checks of each property
    table = np.array([[0.5, np.nan, 0.25], [1.0, 0.75, 0.0]])
    figure = head_map(table, label="<b>score</b>", selected=(1, 2), title="Heads <i>x</i>")
    plain, checked = plain_and_checked(figure)
    assert plain == checked
    assert figure.data[0].customdata.tolist()[5] == [1, 2]  # still a figure when used as one
