"""The model view panel: every layer × head of a Transformer's attentions, what each head does
in numbers, attention rollout, and one head enlarged, which opens step by step in the explorer.
Drawn for a trained Transformer's forward pass (`HeadsView.of_trace`) and for the Decoder mode's
decoder stack. Wiring and drawing only: summaries and rollout are `attnviz.heads`', the figures
`attnviz.drawing`'s. Imports TensorFlow: modes load it with `loading.back_end`.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from attnviz.core.ways import WAYS, get_way
from attnviz.drawing import figures
from attnviz.drawing.model_view import CELL_MIN, GAP, head_map, model_view
from attnviz.heads.rollout import ROLLOUT_TEX, attention_rollout
from attnviz.heads.summaries import (
    SUMMARY_LABELS,
    SUMMARY_SHORT,
    head_summaries,
    summary_table,
    top_heads,
)
from attnviz.learn.tasks import known_alignment
from attnviz.ui.charts import line_view
from attnviz.ui.modes.matrices import open_in_explorer
from attnviz.ui.navigation import go_to
from attnviz.ui.shipped import char_labels, head_opened
from attnviz.ui.state import slot, slot_family

if TYPE_CHECKING:
    from attnviz.learn.transformer import TransformerTrace

TRAINED_AXIS_TITLES = {  # way -> what a trained translator's rows and columns are
    "bidirectional": ("source", "source"),
    "causal": ("fed in", "fed in"),  # the decoder's positions, each fed the character before
    "cross": ("output", "source"),
}
SORT_BY = slot("mv_by", next(iter(SUMMARY_LABELS)), url=True)  # the number heads are sorted by
TOP = slot("mv_top", 2, url=True)  # how many heads are outlined
ENLARGED = slot("mv_head", "", url=True)  # the enlarged head: "way/layer/head" (see _head_id)
GRIDS = slot("mv_grids", None, kind=dict)  # the session's grid figures, by what they show
HEAD_MAPS = slot_family("mv_map", None)  # mv_map_<way>: a head map's click (Streamlit's event)
LOWER_IS_NOTABLE = ("entropy_bits", "mean_distance")  # sorted ascending: focused, local first
GRID_PX = 480  # px the heads of one layer share in the grid, beside the summaries
GRIDS_KEPT = 6  # grid figures a session keeps (three attentions, twice)
WIDE_GRID_PX = 860  # px when the heads do not fit beside the summaries (then they go below)


@dataclass(frozen=True)
class HeadsView:
    """What the model view draws: some attentions of one forward pass, each `(L, H, T, S)`."""

    stacks: dict[str, np.ndarray]  # way name -> (L, H, T, S) weights, in drawing order
    labels: dict[str, tuple[list[str], list[str]]]  # way -> (row labels, column labels)
    spans: list | None = None  # cross rows' known source spans (for the alignment score)
    trace: TransformerTrace | None = None  # the forward pass, whose heads open step by step in
    # the explorer (recomputed from their inputs); None: not available
    shipped_task: str | None = None  # the task of the shipped model traced (a link can open
    # its heads again), or None
    axis_titles: dict[str, tuple[str, str]] = field(  # way -> (rows, columns) titles
        default_factory=lambda: {name: way.axis_titles for name, way in WAYS.items()}
    )

    @classmethod
    def of_trace(cls, trace: TransformerTrace, task: str, shipped: bool) -> HeadsView:
        """All three attentions of a trained Transformer's forward pass (of the shipped model
        of `task`, if `shipped`)."""
        t = trace.translation
        stacks = {way: t.weights_of(way) for way in WAYS}
        labels = {way: tuple(char_labels(x) for x in trace.labels(way)) for way in stacks}
        try:  # the end step has no span; a wrong output has no known alignment
            spans = [*known_alignment(task, t.source, t.output, any_form=True), None]
        except ValueError:
            spans = None
        shipped_task = task if shipped else None
        return cls(stacks, labels, spans, trace, shipped_task, dict(TRAINED_AXIS_TITLES))


def _slug(way: str) -> str:
    """A widget-key form of a way's name."""
    return way.replace(" ", "-")


def model_view_panel(view: HeadsView) -> None:
    """Every head of every attention, summaries beside, rollout, one head enlarged."""
    n_layers, n_heads = next(iter(view.stacks.values())).shape[:2]
    c1, c2 = st.columns([2, 1])
    field = c1.selectbox(
        "Sort and highlight heads by",
        list(SUMMARY_LABELS),
        format_func=SUMMARY_LABELS.get,
        **SORT_BY.widget(),
    )
    top = int(
        c2.number_input("Highlight the top", 1, n_layers * n_heads, TOP.default, **TOP.widget())
    )
    st.caption(
        "One small heatmap per head, on one colour scale (0 dark to 1 yellow); hover a cell for "
        "its weight. Orange outlines: the top heads by the chosen number. Click a square of a "
        "head map (or pick a head below) to enlarge that head."
    )
    summaries = {  # what each head does, per attention (cross heads with their alignment)
        way: head_summaries(stack, spans=view.spans if way == "cross" else None)
        for way, stack in view.stacks.items()
    }
    for way, stack in view.stacks.items():
        _way_section(view, way, stack, summaries[way], field, top)
    _rollouts(view)
    _enlarged(view, _best_aligned(view, summaries["cross"]))


def _way_section(view: HeadsView, way: str, stack: np.ndarray, summaries, field, top: int) -> None:
    row_title, col_title = view.axis_titles[way]
    st.subheader(f"{get_way(way).part.capitalize()} ({row_title} × {col_title})")
    descending = field not in LOWER_IS_NOTABLE
    usable = [s for s in summaries if getattr(s, field) is not None]
    notable = ()
    if usable:
        notable = top_heads(usable, field, min(top, len(usable)), descending=descending)
    rows, cols = view.labels[way]
    n_heads = stack.shape[1]
    beside = n_heads * (CELL_MIN + GAP) <= GRID_PX  # else the head map goes below the grid
    grid_column, map_column = st.columns([3, 2]) if beside else (st.container(), None)
    with grid_column:
        drawn = (way, rows, cols, notable, row_title, col_title, beside)
        st.plotly_chart(_grid(stack, drawn), key=f"mv-grid-{_slug(way)}", width="content")
    with map_column or st.container():
        _head_map(way, summary_table(summaries, field), SUMMARY_LABELS[field])
    _summary_table(summaries, field, descending)  # the whole width: all its columns show
    if way == "cross" and view.spans is None:
        st.caption("No alignment score: there is no known alignment for this output.")


def _grid(stack: np.ndarray, drawn: tuple):
    """The grid figure of one attention, kept per session (frozen) while nothing it shows
    changes: a click on a head redraws the enlarged head, not 8–72 thumbnails (building them
    took ~270 ms at 6 × 12, and copying the built figure for Streamlit ~45 ms)."""
    way, rows, cols, notable, row_title, col_title, beside = drawn
    key = (hashlib.blake2b(stack.tobytes(), digest_size=16).hexdigest(), stack.shape,
           *(tuple(x) if isinstance(x, list) else x for x in drawn))  # fmt: skip
    kept = GRIDS.get()
    if kept is None:
        kept = {}
        GRIDS.set(kept)
    if key not in kept:
        mask = get_way(way).mask(*stack.shape[-2:]) if get_way(way).causal else None
        figure = figures.frozen(model_view(
            stack, rows, cols, highlight=notable, row_title=row_title, col_title=col_title,
            blocked=None if mask is None else ~mask, grid_width=GRID_PX if beside else WIDE_GRID_PX,
        ))  # fmt: skip
        while len(kept) >= GRIDS_KEPT:
            kept.pop(next(iter(kept)))
        kept[key] = figure
    return kept[key]


def _head_map(way: str, table: np.ndarray, label: str) -> None:
    chosen = _head_of(ENLARGED.get())
    selected = chosen[1:] if chosen and chosen[0] == way else None
    st.plotly_chart(
        head_map(table, label=label, selected=selected),
        key=HEAD_MAPS.of(_slug(way)).key,
        on_select=functools.partial(_clicked, way, table.shape[1]),  # no args= on plotly_chart
        selection_mode="points",
    )


def _clicked(way: str, n_heads: int) -> None:
    """A head map was clicked: enlarge the head under the click (a callback, before the run).

    The map's points run layer by layer, head by head, so point index = layer · H + head.
    """
    event = HEAD_MAPS.of(_slug(way)).get() or {}
    points = event.get("selection", {}).get("points", [])
    index = points[0].get("point_index") if points else None
    if isinstance(index, int):
        ENLARGED.set(_head_id(way, *divmod(index, n_heads)))


def _summary_table(summaries, field: str, descending: bool) -> None:
    ordered = sorted(
        summaries,
        key=lambda s: (getattr(s, field) is None or np.isnan(getattr(s, field)),
                       -(getattr(s, field) or 0) if descending else (getattr(s, field) or 0)),
    )  # fmt: skip
    columns = {"layer": [s.layer for s in ordered], "head": [s.head for s in ordered]}
    config = {}  # one word a column, the whole name in its help: the table fits its column
    for name, label in SUMMARY_LABELS.items():
        values = [getattr(s, name) for s in ordered]
        if all(v is None for v in values):
            continue
        short = SUMMARY_SHORT[name]
        columns[short] = [None if v is None or np.isnan(v) else float(v) for v in values]
        config[short] = st.column_config.NumberColumn(short, help=label, format="%.2f")
    st.dataframe(
        columns,
        hide_index=True,
        column_config=config,
        height=min(400, 38 + 35 * len(ordered)),
        width="stretch",
    )


def _rollouts(view: HeadsView) -> None:
    selves = [way for way in view.stacks if get_way(way).queries_from == get_way(way).keys_from]
    st.subheader("Attention rollout")
    st.caption(
        "Average the heads of each layer, add the residual connection as the identity, "
        "renormalise the rows, and multiply through the layers (Abnar & Zuidema 2020): how "
        "much of each input position reaches each position after the last layer."
    )
    st.latex(ROLLOUT_TEX)
    columns = st.columns(2)
    for column, way in zip(columns, selves, strict=False):
        rows, cols = view.labels[way]
        row_title, col_title = view.axis_titles[way]
        rollout = attention_rollout(view.stacks[way]).rollout  # (T, T)
        with column:
            st.plotly_chart(
                figures.heatmap(
                    rollout, kind="weights", title=f"Rollout of the {get_way(way).short}-attention",
                    row_labels=rows, col_labels=cols, row_title=row_title,
                    col_title=col_title, annotate=False,
                ),
                key=f"mv-rollout-{_slug(way)}",
            )  # fmt: skip


def _best_aligned(view: HeadsView, cross_summaries) -> tuple[str, int, int]:
    """The cross-attention head with the highest alignment score (the last layer's head 0
    when no alignment is known): the head enlarged first."""
    cross = view.stacks["cross"]
    if view.spans is None:
        return ("cross", cross.shape[0] - 1, 0)
    best = top_heads(cross_summaries, "alignment", 1)[0]
    return ("cross", *best)


def _head_id(way: str, layer: int, head: int) -> str:
    """A head as the URL keeps it: "cross/0/3"."""
    return f"{way}/{layer}/{head}"


def _head_of(head_id: str) -> tuple[str, int, int] | None:
    """`(way, layer, head)` of a `_head_id`, or None for anything else (a hand-edited link)."""
    parts = str(head_id).split("/")
    if len(parts) != 3 or not all(p.isdigit() for p in parts[1:]):
        return None
    return parts[0], int(parts[1]), int(parts[2])


def _named(head: tuple[str, int, int]) -> tuple[str, int, int]:
    return get_way(head[0]).short, head[1], head[2]


def _head_options(view: HeadsView) -> list[str]:
    return [
        _head_id(way, layer, head)
        for way, stack in view.stacks.items()
        for layer in range(stack.shape[0])
        for head in range(stack.shape[1])
    ]


def _enlarged(view: HeadsView, default: tuple[str, int, int]) -> None:
    st.subheader("One head, enlarged")
    options = _head_options(view)
    if ENLARGED.get() not in options:
        ENLARGED.set(_head_id(*default))
    chosen = st.selectbox(
        "Head",
        options,
        format_func=lambda o: "{} · layer {} · head {}".format(*_named(_head_of(o))),
        **ENLARGED.widget(),
    )
    way, layer, head = _head_of(chosen)
    rows, cols = view.labels[way]
    row_title, col_title = view.axis_titles[way]
    weights = view.stacks[way][layer, head]  # (T, S)
    blocked = ~get_way(way).mask(*weights.shape)
    title = f"{get_way(way).short} · layer {layer} · head {head}"
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(
            figures.heatmap(
                weights, kind="weights", title=title,
                row_labels=rows, col_labels=cols, row_title=row_title,
                col_title=col_title, blocked=blocked & (weights == 0),
                annotate=max(weights.shape) <= 12,
            ),
            key="mv-enlarged",
        )  # fmt: skip
    with right:
        line_view(weights, rows, cols)
    if view.trace is None:
        return
    result = view.trace.results[(way, layer)]
    st.caption(
        f"Recomputed from the layer's inputs and trained kernels: Q, K and V of this head are "
        f"{weights.shape[0]} × {result.d_k}, {weights.shape[1]} × {result.d_k} and "
        f"{weights.shape[1]} × {result.d_v}; scores × 1/√{result.d_k}"
        f"{', causal mask' if get_way(way).causal else ''}."
    )
    st.button(
        "Open this head step by step in the Matrices explorer",
        on_click=_open_head,
        args=(view, way, layer, head),
        type="primary",
        icon=":material/open_in_new:",
    )


def _open_head(view: HeadsView, way: str, layer: int, head: int) -> None:
    """Open this head's Q, K and V in the Matrices explorer (a button callback)."""
    open_in_explorer(head_opened(view.trace, way, layer, head, view.shipped_task))
    go_to("matrices")
