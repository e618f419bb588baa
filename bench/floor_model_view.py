"""The floor of the model-view benchmark: the least Streamlit page that draws the heatmaps
attnviz's model view draws, with the same click to enlarge a head.

Shape letters: L layers, H heads, T queries (output tokens), S keys (source tokens).

Random attention weights (softmax of standard normal logits, numpy float32, from a seed) for
each way, named as attnviz names them ("bidirectional" S × S, "causal" T × T with a causal mask,
"cross" T × S), and the plotly charts attnviz's model view draws for them, with the same keys
(a head map's is `mv_map_<way>`, so one selector finds it in both apps), titles and sizes:
for each way one figure of its L × H heads on one colour axis, as ONE heatmap with gaps of empty
cells between the heads (the decoder's masked cells a second, grey heatmap beneath), as attnviz
draws them, and one clickable "head map" (L × H square scatter markers, `on_select`); the
attention rollout of each self-attention (numpy); and the enlarged head, titled "<short name> ·
layer <l> · head <h>" ("encoder self", "decoder self" or "cross", as attnviz's titles). Clicking
a square of a head map enlarges that head (point index = layer · H + head), as in attnviz. No
TensorFlow, no summaries (the map's colour is the head's maximum weight), no tables, no hover
text, no tick labels in the grid, plotly's default ticks elsewhere and no other widgets:
whatever attnviz takes beyond this page is its own overhead.

The sizes come from the URL: `layers`, `heads`, `ways` (3: bidirectional, causal and
cross, as a trained Transformer; 2: causal and cross, as the Decoder page), `t`, `s` and
`seed`. Run from `bench/`: `streamlit run floor_model_view.py`, then open
`/?layers=2&heads=4&ways=3&t=11&s=24` (the Learn page's Transformer) or
`/?layers=6&heads=12&ways=2&t=5&s=5` (the Decoder page, 6 layers of 12 heads).
"""

from __future__ import annotations

import functools

import numpy as np
import plotly.graph_objects as go
import streamlit as st

WAYS = {"bidirectional": "encoder self", "causal": "decoder self", "cross": "cross"}  # way ->
# its short name in titles, as attnviz's `core/ways.py`
GRID_PX, WIDE_GRID_PX = 480, 860  # px a row of heads gets beside / above the head map
CELL_MIN, CELL_MAX, GAP, STRIP = 56, 180, 8, 22  # px, as attnviz's model view
GREY = "#9a9a9a"
HEAD_KEY = "head"  # session key of the enlarged head: (way, layer, head)


def param(name: str, default: int) -> int:
    """A whole number from the URL."""
    return int(st.query_params.get(name, default))


def weights(rng: np.random.Generator, shape: tuple[int, ...], causal: bool) -> np.ndarray:
    """`(L, H, T, S)` softmax rows of random logits; with `causal`, 0 above the diagonal."""
    logits = rng.standard_normal(shape, dtype=np.float32)
    if causal:
        logits = np.where(np.tri(*shape[-2:], dtype=bool), logits, -np.inf)
    exps = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return exps / exps.sum(axis=-1, keepdims=True)


def rollout(stack: np.ndarray) -> np.ndarray:
    """`(T, T)`: the heads' mean plus the identity, rows renormalised, multiplied through."""
    result = np.eye(stack.shape[-1], dtype=np.float32)
    for layer in stack.mean(axis=1):  # (T, T) per layer
        mixed = layer + np.eye(len(layer), dtype=np.float32)
        result = (mixed / mixed.sum(axis=1, keepdims=True)) @ result
    return result


def joined(blocks: np.ndarray) -> np.ndarray:
    """`(L, H, T, S)` as one matrix, as attnviz draws a grid: a NaN row on top and one between
    layers, a NaN column between heads."""
    n_layers, n_heads, t, s = blocks.shape
    out = np.full((n_layers * (t + 1), n_heads * (s + 1) - 1), np.nan, dtype=np.float32)
    for layer in range(n_layers):
        for head in range(n_heads):
            top, left = 1 + layer * (t + 1), head * (s + 1)
            out[top : top + t, left : left + s] = blocks[layer, head]  # (T, S) into its place
    return out


def grid(stack: np.ndarray, causal: bool, width_px: int) -> go.Figure:
    """Every head in one heatmap, layers down, heads across, gaps of empty cells between them,
    as attnviz draws its grid (the decoder's masked cells a grey heatmap beneath). Heatmap
    traces as plain dicts, not validated (plotly's checks cost ~0.5 ms a trace)."""
    n_layers, n_heads = stack.shape[:2]
    cell = int(np.clip(width_px // n_heads - GAP, CELL_MIN, CELL_MAX))
    width = n_heads * cell + (n_heads - 1) * GAP
    height = n_layers * (STRIP + cell) + (n_layers - 1) * GAP
    traces = []
    if causal:
        blocked = np.broadcast_to(~np.tri(*stack.shape[-2:], dtype=bool), stack.shape)
        stack = np.where(blocked, np.nan, stack)
        traces.append(dict(type="heatmap", z=joined(blocked.astype(np.float32)), showscale=False,
                           colorscale=[[0, "rgba(0,0,0,0)"], [0.5, "rgba(0,0,0,0)"],
                                       [0.5, GREY], [1, GREY]], zmin=0, zmax=1))  # fmt: skip
    traces.append(dict(type="heatmap", z=joined(stack), coloraxis="coloraxis"))
    layout = dict(
        coloraxis=dict(colorscale="Viridis", cmin=0, cmax=1),
        xaxis=dict(showticklabels=False, showgrid=False, zeroline=False),
        yaxis=dict(showticklabels=False, showgrid=False, zeroline=False, autorange="reversed"),
        width=10 + width + 90,
        height=34 + height + 10,
        margin=dict(l=10, r=90, t=34, b=10),
    )
    return go.Figure(data=traces, layout=layout, _validate=False)  # as attnviz builds its grid


def head_map(table: np.ndarray, selected: tuple[int, int] | None) -> go.Figure:
    """One clickable square per head (point index = layer · H + head)."""
    n_layers, n_heads = table.shape
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    side = int(np.clip(1000 // 3 // n_heads, 22, 44))
    fig = go.Figure(
        go.Scatter(
            x=head.ravel(), y=layer.ravel(), mode="markers",
            marker=dict(symbol="square", size=side, color=table.ravel(), colorscale="Viridis",
                        showscale=True),
        )
    )  # fmt: skip
    if selected is not None:
        sl, sh = selected
        fig.add_shape(type="rect", x0=sh - 0.5, x1=sh + 0.5, y0=sl - 0.5, y1=sl + 0.5,
                      line=dict(color="#e8590c", width=3))  # fmt: skip
    fig.update_layout(
        width=110 + n_heads * (side + 6),
        height=50 + n_layers * (side + 6),
        margin=dict(l=70, r=70, t=10, b=30),
        yaxis=dict(autorange="reversed", fixedrange=True),
        xaxis=dict(fixedrange=True),
    )
    return fig


def heatmap(matrix: np.ndarray, title: str) -> go.Figure:
    """A plain weights heatmap with attnviz's height rule (300 to 900 px)."""
    fig = go.Figure(go.Heatmap(z=matrix, colorscale="Viridis", zmin=0, zmax=1))
    height = int(min(900, max(300, 160 + 28 * matrix.shape[0])))
    fig.update_layout(title=dict(text=title), height=height, yaxis=dict(autorange="reversed"))
    return fig


def clicked(way: str, n_heads: int) -> None:
    """A head map was clicked: enlarge the head under the click (before the run)."""
    event = st.session_state.get(f"mv_map_{way}") or {}
    points = event.get("selection", {}).get("points", [])
    index = points[0].get("point_index") if points else None
    if isinstance(index, int):
        st.session_state[HEAD_KEY] = (way, *divmod(index, n_heads))


def way_section(way: str, stack: np.ndarray) -> None:
    """The grid of one way's heads and its head map (beside it if the heads fit, else below)."""
    st.subheader(WAYS[way])
    n_heads = stack.shape[1]
    beside = n_heads * (CELL_MIN + GAP) <= GRID_PX
    left, right = st.columns([3, 2]) if beside else (st.container(), None)
    with left:
        fig = grid(stack, way == "causal", GRID_PX if beside else WIDE_GRID_PX)
        st.plotly_chart(fig, key=f"mv-grid-{way}", width="content")
    if right is None:
        right, _ = st.columns(2)
    chosen = st.session_state[HEAD_KEY]
    with right:
        st.plotly_chart(
            head_map(stack.max(axis=(2, 3)), chosen[1:] if chosen[0] == way else None),
            key=f"mv_map_{way}",
            on_select=functools.partial(clicked, way, n_heads),
            selection_mode="points",
        )


def main() -> None:
    """Draw the page: every way's grid and head map, the rollouts, the enlarged head."""
    st.set_page_config(page_title="attnviz model-view floor", layout="wide")
    n_layers, n_heads = param("layers", 2), param("heads", 4)
    t, s = param("t", 11), param("s", 24)
    rng = np.random.default_rng(param("seed", 0))
    shapes = {"bidirectional": (s, s), "causal": (t, t), "cross": (t, s)}
    stacks = {
        way: weights(rng, (n_layers, n_heads, *shapes[way]), way == "causal")
        for way in list(WAYS)[-param("ways", 3) :]
    }
    st.title("attnviz model-view floor")
    st.caption(f"{n_layers} layers × {n_heads} heads · T {t} · S {s} · numpy float32")
    st.session_state.setdefault(HEAD_KEY, ("cross", n_layers - 1, 0))
    for way, stack in stacks.items():
        way_section(way, stack)
    st.subheader("Attention rollout")
    selves = [way for way in ("bidirectional", "causal") if way in stacks]
    for column, way in zip(st.columns(2), selves, strict=False):
        with column:
            fig = heatmap(rollout(stacks[way]), f"Rollout of the {WAYS[way]}-attention")
            st.plotly_chart(fig, key=f"mv-rollout-{way}")
    st.subheader("One head, enlarged")
    way, layer, head = st.session_state[HEAD_KEY]
    left, _ = st.columns([3, 2])
    with left:
        title = f"{WAYS[way]} · layer {layer} · head {head}"
        st.plotly_chart(heatmap(stacks[way][layer, head], title), key="mv-enlarged")


main()
