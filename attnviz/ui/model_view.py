"""The model view of a trained Transformer: every layer × head of its three attentions, what
each head does in numbers, attention rollout, and one head enlarged. Wiring and drawing only:
summaries and rollout are `attnviz.heads`', the figures `attnviz.drawing`'s.
"""

from __future__ import annotations

import functools

import numpy as np
import streamlit as st

from attnviz.drawing import figures
from attnviz.drawing.model_view import head_map, model_view
from attnviz.heads.rollout import ROLLOUT_TEX, attention_rollout
from attnviz.heads.summaries import SUMMARY_LABELS, head_summaries, summary_table, top_heads
from attnviz.learn.tasks import known_alignment
from attnviz.learn.transformer import WAYS, TransformerTrace
from attnviz.ui.state import bound
from attnviz.ui.trained import char_labels, open_in_explorer
from attnviz.ui.views import line_view

WAY_TITLES = {
    "encoder self": "Encoder self-attention (source × source)",
    "decoder self": "Decoder masked self-attention (fed × fed)",
    "cross": "Encoder–decoder attention (output × source)",
}
ROW_TITLES = {"encoder self": "source", "decoder self": "fed in", "cross": "output"}
COL_TITLES = {"encoder self": "source", "decoder self": "fed in", "cross": "source"}
HEAD_KEY = "mv_head"  # session key of the enlarged head: (way, layer, head)
LOWER_IS_NOTABLE = ("entropy_bits", "mean_distance")  # sorted ascending: focused, local first
GRID_PX = 480  # px the heads of one layer share in the grid, beside the summaries


def model_view_panel(trace: TransformerTrace, task: str) -> None:
    """Every head of the trace's forward pass, summaries beside, rollout, one head enlarged."""
    stacks = _stacks(trace)
    n_layers, n_heads = stacks["cross"].shape[:2]
    c1, c2 = st.columns([2, 1])
    field = c1.selectbox(
        "Sort and highlight heads by",
        list(SUMMARY_LABELS),
        format_func=SUMMARY_LABELS.get,
        **bound("mv_by"),
    )
    top = int(c2.number_input("Highlight the top", 1, n_layers * n_heads, 2, **bound("mv_top")))
    st.caption(
        "One small heatmap per head, on one colour scale (0 dark to 1 yellow); hover a cell for "
        "its weight. Orange outlines: the top heads by the chosen number. Click a square of a "
        "head map (or pick a head below) to enlarge that head."
    )
    spans = _spans(trace, task)
    for way in WAYS:
        _way_section(trace, way, stacks[way], field, top, spans if way == "cross" else None)
    _rollouts(trace, stacks)
    _enlarged(trace, _best_aligned(stacks["cross"], spans))


def _stacks(trace: TransformerTrace) -> dict[str, np.ndarray]:
    t = trace.translation
    return {"encoder self": t.encoder_self, "decoder self": t.decoder_self, "cross": t.cross}


def _spans(trace: TransformerTrace, task: str):
    """Known source spans of the cross rows (the end step has none), or None if the output
    is not a correct translation (no alignment is known for a wrong one)."""
    t = trace.translation
    try:
        return [*known_alignment(task, t.source, t.output), None]
    except ValueError:
        return None


def _way_section(trace, way: str, stack: np.ndarray, field: str, top: int, spans) -> None:
    st.subheader(WAY_TITLES[way])
    summaries = head_summaries(stack, spans=spans)
    descending = field not in LOWER_IS_NOTABLE
    usable = [s for s in summaries if getattr(s, field) is not None]
    notable = ()
    if usable:
        notable = top_heads(usable, field, min(top, len(usable)), descending=descending)
    rows, cols = (char_labels(labels) for labels in trace.labels(way))
    left, right = st.columns([3, 2])
    with left:
        mask = np.tril(np.ones(stack.shape[-2:], dtype=bool)) if way == "decoder self" else None
        st.plotly_chart(
            model_view(
                stack, rows, cols, highlight=notable, row_title=ROW_TITLES[way],
                col_title=COL_TITLES[way], blocked=None if mask is None else ~mask,
                grid_width=GRID_PX,
            ),
            key=f"mv-grid-{way}",
            width="content",
        )  # fmt: skip
    with right:
        _head_map(way, summary_table(summaries, field), SUMMARY_LABELS[field])
        _summary_table(summaries, field, descending)
    if way == "cross" and spans is None:
        st.caption("No alignment score: the output is not a correct translation of the input.")


def _head_map(way: str, table: np.ndarray, label: str) -> None:
    chosen = st.session_state.get(HEAD_KEY)
    selected = chosen[1:] if chosen and chosen[0] == way else None
    st.plotly_chart(
        head_map(table, label=label, selected=selected),
        key=f"mv-map-{way}",
        on_select=functools.partial(_clicked, way, table.shape[1]),  # no args= on plotly_chart
        selection_mode="points",
    )


def _clicked(way: str, n_heads: int) -> None:
    """A head map was clicked: enlarge the head under the click (a callback, before the run).

    The map's points run layer by layer, head by head, so point index = layer · H + head.
    """
    event = st.session_state.get(f"mv-map-{way}") or {}
    points = event.get("selection", {}).get("points", [])
    index = points[0].get("point_index") if points else None
    if isinstance(index, int):
        st.session_state[HEAD_KEY] = (way, *divmod(index, n_heads))


def _summary_table(summaries, field: str, descending: bool) -> None:
    ordered = sorted(
        summaries,
        key=lambda s: (getattr(s, field) is None or np.isnan(getattr(s, field)),
                       -(getattr(s, field) or 0) if descending else (getattr(s, field) or 0)),
    )  # fmt: skip
    columns = {"layer": [s.layer for s in ordered], "head": [s.head for s in ordered]}
    for name, label in SUMMARY_LABELS.items():
        values = [getattr(s, name) for s in ordered]
        if all(v is None for v in values):
            continue
        columns[label] = [None if v is None or np.isnan(v) else round(float(v), 3) for v in values]
    st.dataframe(columns, hide_index=True, height=min(400, 38 + 35 * len(ordered)))


def _rollouts(trace: TransformerTrace, stacks: dict[str, np.ndarray]) -> None:
    st.subheader("Attention rollout")
    st.caption(
        "Average the heads of each layer, add the residual connection as the identity, "
        "renormalise the rows, and multiply through the layers (Abnar & Zuidema 2020): how "
        "much of each input position reaches each position after the last layer."
    )
    st.latex(ROLLOUT_TEX)
    columns = st.columns(2)
    for column, way in zip(columns, ("encoder self", "decoder self"), strict=True):
        rows, cols = (char_labels(labels) for labels in trace.labels(way))
        rollout = attention_rollout(stacks[way]).rollout  # (T, T)
        with column:
            st.plotly_chart(
                figures.heatmap(
                    rollout, kind="weights", title=f"Rollout of the {way}-attention",
                    row_labels=rows, col_labels=cols, row_title=ROW_TITLES[way],
                    col_title=COL_TITLES[way], annotate=False,
                ),
                key=f"mv-rollout-{way}",
            )  # fmt: skip


def _best_aligned(cross: np.ndarray, spans) -> tuple[str, int, int]:
    """The cross-attention head with the highest alignment score (the last layer's head 0
    when no alignment is known): the head enlarged first."""
    if spans is None:
        return ("cross", cross.shape[0] - 1, 0)
    best = top_heads(head_summaries(cross, spans=spans), "alignment", 1)[0]
    return ("cross", *best)


def _head_options(trace: TransformerTrace) -> list[tuple[str, int, int]]:
    n_layers, n_heads = trace.translation.cross.shape[:2]
    return [(w, layer, h) for w in WAYS for layer in range(n_layers) for h in range(n_heads)]


def _enlarged(trace: TransformerTrace, default: tuple[str, int, int]) -> None:
    st.subheader("One head, enlarged")
    options = _head_options(trace)
    if st.session_state.get(HEAD_KEY) not in options:
        st.session_state[HEAD_KEY] = default
    way, layer, head = st.selectbox(
        "Head", options, format_func=lambda o: f"{o[0]} · layer {o[1]} · head {o[2]}", key=HEAD_KEY
    )
    result = trace.results[(way, layer)]
    rows, cols = (char_labels(labels) for labels in trace.labels(way))
    weights = result.weights[0, head]  # (T, S)
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(
            figures.heatmap(
                weights, kind="weights", title=f"{way} · layer {layer} · head {head}",
                row_labels=rows, col_labels=cols, row_title=ROW_TITLES[way],
                col_title=COL_TITLES[way], blocked=~result.mask[0] & (weights == 0),
                annotate=max(weights.shape) <= 12,
            ),
            key="mv-enlarged",
        )  # fmt: skip
    with right:
        line_view(weights, rows, cols)
    st.caption(
        f"Recomputed from the layer's inputs and trained kernels: Q, K and V of this head are "
        f"{weights.shape[0]} × {result.d_k}, {weights.shape[1]} × {result.d_k} and "
        f"{weights.shape[1]} × {result.d_v}; scores × 1/√{result.d_k}"
        f"{', causal mask' if way == 'decoder self' else ''}."
    )
    st.button(
        "Open this head step by step in the Matrices explorer",
        on_click=_open_head,
        args=(trace, way, layer, head),
        type="primary",
        icon=":material/open_in_new:",
    )


def _open_head(trace: TransformerTrace, way: str, layer: int, head: int) -> None:
    """Open this head's Q, K and V in the Matrices explorer (a button callback)."""
    result = trace.results[(way, layer)]
    rows, cols = (char_labels(labels) for labels in trace.labels(way))
    open_in_explorer(
        result.query_heads[0, head],  # (T, Dk)
        result.key_heads[0, head],  # (S, Dk)
        result.value_heads[0, head],  # (S, Dv)
        params={},
        labels=(tuple(rows), tuple(cols)),
        source=f"Transformer, {way} · layer {layer} · head {head}",
        note="Q, K and V are this head's projections of the layer's inputs (its trained "
        "W_Q, W_K and W_V applied); the score is the scaled dot product.",
        score="dot",
        scale=True,
        causal=way == "decoder self",
    )
