"""The model view panel: every layer × head of a Transformer's attentions, what each head does
in numbers, attention rollout, and one head enlarged, which opens step by step in the explorer.
It draws one type, the attention calls of a run (`heads.calls.AttentionCalls`), whatever model
made them: a trained Transformer's trace (`HeadsView.of_trace`), the language model's, the
Decoder mode's decoder run, the inspected calls of a model of yours (stacks named by their
`Section`, grey where their calls' masks blocked, heads opened by the view's `opener`). Wiring
and drawing only: summaries and rollout are `attnviz.heads`', the figures `attnviz.drawing`'s.
Imports no TensorFlow: the pages compute the traces it draws, in `loading.back_end`.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from attnviz.core.ways import WAYS, get_way
from attnviz.core.words import plural
from attnviz.drawing.heatmap import heatmap
from attnviz.drawing.model_view import CELL_MIN, GAP, head_map, model_view
from attnviz.drawing.plain_figure import frozen
from attnviz.drawing.translation import char_labels
from attnviz.heads.rollout import ROLLOUT_TEX, attention_rollout
from attnviz.heads.summaries import (
    SUMMARY_LABELS,
    SUMMARY_SHORT,
    head_summaries,
    induction_targets,
    summary_table,
    top_heads,
)
from attnviz.learn.translation.tasks import known_alignment
from attnviz.ui.explorer.opening import Opened
from attnviz.ui.explorer.state import open_in_explorer
from attnviz.ui.frame.charts import chart, chart_config, fit_toggle, line_view
from attnviz.ui.frame.presenter import chart_columns, readable
from attnviz.ui.frame.state import slot, slot_family
from attnviz.ui.frame.tables import data_table
from attnviz.ui.frame.takeaway import collect, view_download
from attnviz.ui.models.shipped import head_opened

if TYPE_CHECKING:
    from attnviz.heads.calls import AttentionCalls, LayerStack
    from attnviz.learn.translation.transformer_translator import TransformerTrace

TRAINED_AXIS_TITLES = {  # way -> what a trained translator's rows and columns are
    "bidirectional": ("source", "source"),
    "causal": ("fed in", "fed in"),  # the decoder's positions, each fed the character before
    "cross": ("output", "source"),
}
SORT_BY = slot(  # the number heads are sorted by (a link carries its label)
    "mv_by", next(iter(SUMMARY_LABELS)), url=True,
    url_aliases={"weight on the previous token (j = i − 1)": SUMMARY_LABELS["previous"]},
)  # fmt: skip
TOP = slot("mv_top", 2, url=True)  # how many heads are outlined
ENLARGED = slot("mv_head", "", url=True)  # the enlarged head, "way/layer/head" (see _head_id);
# the URL carries the label the box shows ("cross · layer 0 · head 3"), which Streamlit maps back
FIT = slot("mv_fit", False, url=True)  # the enlarged head coloured from 0 to its largest weight
GRIDS = slot("mv_grids", None, kind=dict, kept=True)  # the session's grid figures, by content
WORKED = slot("mv_worked", None, kind=dict, kept=True)  # the session's summaries, rollouts
HEAD_MAPS = slot_family("mv_map", None)  # mv_map_<way>: a head map's click (Streamlit's event)
LOWER_IS_NOTABLE = ("entropy_bits", "mean_distance")  # sorted ascending: focused, local first
GRID_PX = 480  # px the heads of one layer share in the grid, beside the summaries
GRIDS_KEPT = 6  # grid figures a session keeps (three attentions, twice)
WIDE_GRID_PX = 860  # px when the heads do not fit beside the summaries (then they go below)


@dataclass(frozen=True)
class Section:
    """How the model view names one stack of heads."""

    part: str  # the section's name: "encoder self-attention", "self-attention"
    short: str  # the same in a chart title: "encoder self", "self"
    rollout: bool  # self-attention: its attention rollout is drawn
    caption: str = ""  # said under the section's heading (the position scheme, in words)


@dataclass(frozen=True)
class HeadOpening:
    """What the enlarged head says about its Q, K and V, and the explorer's inputs."""

    caption: str  # what Q, K and V are, and whether the explorer reproduces the weights
    opened: Opened | None  # the explorer's inputs; None: the head cannot be opened


@dataclass(frozen=True)
class HeadsView:
    """What the model view draws: some attention calls of one forward pass, stacked like
    layers, each stack `(L, H, T, S)` for one sequence."""

    attention: AttentionCalls  # the run's calls (any model's: `heads.calls`)
    groups: dict[str, tuple[str, ...]] | None = None  # stack name -> its calls' keys, one a
    # layer, in drawing order; None: every call, by way (by kind where the way is not known)
    item: int = 0  # the sequence of the batch drawn
    spans: list | None = None  # cross rows' known source spans (for the alignment score)
    axis_titles: dict[str, tuple[str, str]] = field(  # stack -> (rows, columns) titles
        default_factory=lambda: {name: way.axis_titles for name, way in WAYS.items()}
    )
    sections: dict[str, Section] = field(default_factory=dict)  # stack -> how it is named;
    # stacks not named here are ways of `attnviz.core.ways` (see `section`)
    opener: Callable[[str, int, int], HeadOpening] | None = None  # (stack, layer, head) -> the
    # enlarged head's caption and explorer inputs; None: the head is not opened
    tokens: tuple[str, ...] | None = None  # (T,) the text's tokens, for the induction score of
    # its self-attention stacks; None: no induction score (not a language model's text)

    @functools.cached_property
    def stacked(self) -> dict[str, LayerStack]:
        """Stack name -> its calls' weights for `item`, with the cells drawn grey."""
        groups = self.attention.groups() if self.groups is None else self.groups
        return {
            name: self.attention.layer_stack(keys=keys, item=self.item)
            for name, keys in groups.items()
        }

    @functools.cached_property
    def stacks(self) -> dict[str, np.ndarray]:
        """Stack name -> `(L, H, T, S)` weights, in drawing order."""
        return {name: stack.weights for name, stack in self.stacked.items()}

    @functools.cached_property
    def labels(self) -> dict[str, tuple[list[str], list[str]]]:
        """Stack name -> (row labels, column labels): its first call's tokens (else positions)."""
        return {
            name: tuple(char_labels(x) for x in self.attention[stack.keys[0]].labels(self.item))
            for name, stack in self.stacked.items()
        }

    def blocked(self, way: str) -> np.ndarray | None:
        """`(L, H, T, S)` True = masked and weight 0, drawn grey; None: nothing masked."""
        return self.stacked[way].blocked

    def sort_fields(self) -> list[str]:
        """The summaries heads can be sorted by here: the alignment score only with a cross
        stack whose alignment is known, the induction score only over a text that repeats a
        token (elsewhere every head would have none)."""
        fields = [f for f in SUMMARY_LABELS if f not in ("alignment", "induction")]
        if "cross" in self.stacks and self.spans is not None:
            fields.append("alignment")
        if self.tokens is not None and (induction_targets(self.tokens) >= 0).any():
            fields.append("induction")
        return fields

    def tokens_of(self, way: str) -> tuple[str, ...] | None:
        """The tokens the induction score of stack `way` reads: a self-attention over them."""
        t, s = self.stacks[way].shape[-2:]
        square = self.tokens is not None and t == s == len(self.tokens)
        return self.tokens if square and self.section(way).rollout else None

    def section(self, way: str) -> Section:
        """How the stack `way` is named: as given in `sections`, else as its way."""
        if way in self.sections:
            return self.sections[way]
        known = get_way(way)
        return Section(known.part, known.short, known.queries_from == known.keys_from)

    @classmethod
    def of_trace(cls, trace: TransformerTrace, task: str, shipped: bool) -> HeadsView:
        """All three attentions of a trained Transformer's forward pass (of the shipped model
        of `task`, if `shipped`), its heads opened step by step in the explorer."""
        t = trace.translation
        try:  # the end step has no span; a wrong output has no known alignment
            spans = [*known_alignment(task, t.source, t.output, any_form=True), None]
        except ValueError:
            spans = None
        opener = functools.partial(_trace_opening, trace, task if shipped else None)
        return cls(trace.attention, spans=spans, axis_titles=dict(TRAINED_AXIS_TITLES),
                   opener=opener)  # fmt: skip


def _trace_opening(trace: TransformerTrace, task: str | None, way: str, layer: int,
                   head: int) -> HeadOpening:  # fmt: skip
    """A trained Transformer's head: its Q, K and V recomputed from the layer's inputs."""
    call = trace.attention.at(way, layer)
    _, _, t, s = call.weights.shape
    d_k, d_v = call.query_heads.shape[-1], call.value_heads.shape[-1]
    caption = (
        f"Recomputed from the layer's inputs and trained kernels: Q, K and V of this head are "
        f"{t} × {d_k}, {s} × {d_k} and {s} × {d_v}; scores × 1/√{d_k}"
        f"{', causal mask' if get_way(way).causal else ''}."
    )
    return HeadOpening(caption, head_opened(trace, way, layer, head, task))


def _slug(way: str) -> str:
    """A widget-key form of a way's name."""
    return way.replace(" ", "-")


def model_view_panel(view: HeadsView) -> None:
    """Every head of every attention, summaries beside, rollout, one head enlarged; offered
    as one page by "Download this view" (unless the page around it offers its own)."""
    with view_download("attnviz model view", "mv-take-away", functools.partial(view_about, view)):
        _model_view_panel(view)


def view_about(view: HeadsView) -> dict:
    """What the model view's page says beside its charts (`takeaway.view_download`'s `about`):
    each attention's shape and caption, and its tokens."""
    settings, inputs = {}, {}
    for way, stack in view.stacks.items():
        layers, heads, t, s = stack.shape
        section = view.section(way)
        sizes = f"{plural(layers, 'layer')} × {plural(heads, 'head')}, {t} × {s}"
        settings[section.part] = f"{sizes}. {section.caption}"
        rows, cols = view.labels[way]
        inputs[f"{section.part}: rows ({t})"] = " ".join(map(str, rows))
        inputs[f"{section.part}: columns ({s})"] = " ".join(map(str, cols))
    return {"settings": settings, "inputs": inputs}


def _model_view_panel(view: HeadsView) -> None:
    n_layers, n_heads = next(iter(view.stacks.values())).shape[:2]
    c1, c2 = st.columns([2, 1])
    offered = view.sort_fields()
    if SORT_BY.get() not in offered:  # e.g. the alignment score, from a page with cross heads
        SORT_BY.set(offered[0])
    field = c1.selectbox(
        "Sort and highlight heads by",
        offered,
        format_func=SUMMARY_LABELS.get,
        **SORT_BY.widget(),
    )
    top = int(
        c2.number_input("Highlight the top", 1, n_layers * n_heads, TOP.default, **TOP.widget())
    )
    st.caption(
        "One small heatmap per head, on one colour scale (0 dark to 1 yellow); hover or tap a "
        "cell for its weight. Orange outlines: the top heads by the chosen number. Click or tap "
        "a square of a head map (or pick a head below) to enlarge that head."
    )
    digests = {way: _digest(stack) for way, stack in view.stacks.items()}
    summaries = {  # what each head does, per attention (cross heads with their alignment, a
        # text's self-attention with its induction score)
        way: _worked(("summaries", digests[way], way == "cross" and repr(view.spans),
                      view.tokens_of(way)),
                     lambda s=stack, w=way: head_summaries(
                         s, spans=view.spans if w == "cross" else None,
                         tokens=view.tokens_of(w)))
        for way, stack in view.stacked.items()
    }  # fmt: skip
    for way, stack in view.stacks.items():
        _way_section(view, way, stack, summaries[way], field, top)
    _rollouts(view, digests)
    _enlarged(view, _best_aligned(view, summaries.get("cross")))


def _way_section(view: HeadsView, way: str, stack: np.ndarray, summaries, field, top: int) -> None:
    row_title, col_title = view.axis_titles[way]
    section = view.section(way)
    st.subheader(f"{section.part[:1].upper()}{section.part[1:]} ({row_title} × {col_title})")
    if section.caption:
        st.caption(section.caption)
    descending = field not in LOWER_IS_NOTABLE
    usable = [s for s in summaries if getattr(s, field) is not None]
    notable = ()
    if usable:
        notable = top_heads(usable, field, min(top, len(usable)), descending=descending)
    rows, cols = view.labels[way]
    n_heads = stack.shape[1]
    beside = n_heads * (CELL_MIN + GAP) <= GRID_PX  # else the head map goes below the grid
    grid_column, map_column = st.columns([3, 2]) if beside else (st.container(), None)
    # (not stacked while presenting: the head map belongs beside its grid)
    with grid_column:
        drawn = (way, rows, cols, notable, row_title, col_title, beside)
        figure = _grid(stack, view.blocked(way), drawn)
        name = f"model-view-{_slug(way)}"
        collect(figure, name)  # on the page of "Download this view"
        config = chart_config(name)
        st.plotly_chart(
            readable(figure), key=f"mv-grid-{_slug(way)}", width="content", config=config
        )
    with map_column or st.container():
        _head_map(way, summary_table(summaries, field), SUMMARY_LABELS[field])
    _summary_table(summaries, field, descending)  # the whole width: all its columns show
    if way == "cross" and view.spans is None:
        st.caption("No alignment score: there is no known alignment for this output.")


def _digest(stack: np.ndarray) -> str:
    """A short fingerprint of a stack's weights (what the session's caches are keyed by)."""
    return hashlib.blake2b(stack.tobytes(), digest_size=16).hexdigest() + str(stack.shape)


def _worked(key: tuple, work: Callable[[], object]) -> object:
    """`work()`, kept per session under `key` (the last `GRIDS_KEPT` · 2 results): a click
    on a head does not recompute every head's summaries (~30 ms at 12 × 12 heads of 128
    tokens) or the rollout."""
    kept = WORKED.get()
    if kept is None:
        kept = {}
        WORKED.set(kept)
    if key not in kept:
        while len(kept) >= 2 * GRIDS_KEPT:
            kept.pop(next(iter(kept)))
        kept[key] = work()
    return kept[key]


def _grid(stack: np.ndarray, blocked: np.ndarray | None, drawn: tuple):
    """The grid figure of one attention, kept per session (frozen) while nothing it shows
    changes: a click on a head redraws the enlarged head, not 8–144 thumbnails (building them
    took ~270 ms at 6 × 12, and copying the built figure for Streamlit ~45 ms)."""
    way, rows, cols, notable, row_title, col_title, beside = drawn
    grey = b"" if blocked is None else np.packbits(blocked).tobytes()
    key = (hashlib.blake2b(stack.tobytes() + grey, digest_size=16).hexdigest(), stack.shape,
           *(tuple(x) if isinstance(x, list) else x for x in drawn))  # fmt: skip
    kept = GRIDS.get()
    if kept is None:
        kept = {}
        GRIDS.set(kept)
    if key not in kept:
        figure = frozen(model_view(
            stack, rows, cols, highlight=notable, row_title=row_title, col_title=col_title,
            blocked=blocked, grid_width=GRID_PX if beside else WIDE_GRID_PX,
        ))  # fmt: skip
        while len(kept) >= GRIDS_KEPT:
            kept.pop(next(iter(kept)))
        kept[key] = figure
    return kept[key]


def _head_map(way: str, table: np.ndarray, label: str) -> None:
    chosen = _head_of(ENLARGED.get())
    selected = chosen[1:] if chosen and chosen[0] == way else None
    chart(
        head_map(table, label=label, selected=selected),
        key=HEAD_MAPS.of(_slug(way)).key,
        on_select=functools.partial(_clicked, way, table.shape[1]),  # no args= on plotly_chart
        selection_mode="points",
        name="head-map",
        width="content",  # its squares' own width: stretched below a wide grid, they spread
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
    config = {  # one word a column, the whole name in its help: the table fits its column on a
        # wide page; a phone scrolls the numbers sideways under the pinned layer and head
        name: st.column_config.NumberColumn(name, pinned=True, width=56)
        for name in columns
    }
    for name, label in SUMMARY_LABELS.items():
        values = [getattr(s, name) for s in ordered]
        if all(v is None for v in values):
            continue
        short = SUMMARY_SHORT[name]
        columns[short] = [None if v is None or np.isnan(v) else float(v) for v in values]
        config[short] = st.column_config.NumberColumn(short, help=label, format="%.2f")
    data_table(
        columns,
        column_config=config,
        height=min(400, 38 + 35 * len(ordered)),
        width="stretch",
    )


def _rollouts(view: HeadsView, digests: dict[str, str]) -> None:
    selves = [way for way in view.stacks if view.section(way).rollout]
    if not selves:
        return
    st.subheader("Attention rollout")
    st.caption(
        "Average the heads of each layer, add the residual connection as the identity, "
        "renormalise the rows, and multiply through the layers (Abnar & Zuidema 2020): how "
        "much of each input position reaches each position after the last layer."
    )
    st.latex(ROLLOUT_TEX)
    columns = chart_columns(2)
    for column, way in zip(columns, selves, strict=False):
        rows, cols = view.labels[way]
        row_title, col_title = view.axis_titles[way]
        title = f"Rollout of the {view.section(way).short}-attention"

        def draw(stack=view.stacked[way], drawn=(title, rows, cols, row_title, col_title)):
            rollout = attention_rollout(stack).rollout  # (T, T)
            return frozen(heatmap(
                rollout, kind="weights", title=drawn[0], row_labels=drawn[1],
                col_labels=drawn[2], row_title=drawn[3], col_title=drawn[4], annotate=False,
            ))  # fmt: skip

        key = ("rollout", digests[way], title, tuple(rows), tuple(cols), row_title, col_title)
        with column:  # the figure kept: a click on a head does not rebuild it
            chart(_worked(key, draw), key=f"mv-rollout-{_slug(way)}", name="rollout")


def _best_aligned(view: HeadsView, cross_summaries) -> tuple[str, int, int]:
    """The cross-attention head with the highest alignment score (the last layer's head 0
    when no alignment is known; without cross-attention, the last stack's): the head enlarged
    first."""
    if "cross" not in view.stacks:
        last = next(reversed(view.stacks))
        return (last, view.stacks[last].shape[0] - 1, 0)
    cross = view.stacks["cross"]
    if view.spans is None or cross_summaries is None:
        return ("cross", cross.shape[0] - 1, 0)
    best = top_heads(cross_summaries, "alignment", 1)[0]
    return ("cross", *best)


def _head_id(way: str, layer: int, head: int) -> str:
    """A head as the session keeps it: "cross/0/3"."""
    return f"{way}/{layer}/{head}"


def _head_of(head_id: str) -> tuple[str, int, int] | None:
    """`(way, layer, head)` of a `_head_id`, or None for anything else (a hand-edited link)."""
    parts = str(head_id).split("/")
    if len(parts) != 3 or not all(p.isdigit() for p in parts[1:]):
        return None
    return parts[0], int(parts[1]), int(parts[2])


def _named(view: HeadsView, head: tuple[str, int, int]) -> tuple[str, int, int]:
    return view.section(head[0]).short, head[1], head[2]


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
        format_func=lambda o: "{} · layer {} · head {}".format(*_named(view, _head_of(o))),
        **ENLARGED.widget(),
    )
    way, layer, head = _head_of(chosen)
    fit = fit_toggle(FIT)
    rows, cols = view.labels[way]
    row_title, col_title = view.axis_titles[way]
    weights = view.stacks[way][layer, head]  # (T, S)
    section = view.section(way)
    grey = view.blocked(way)
    blocked = None if grey is None else grey[layer, head] & (weights == 0)
    title = f"{section.short} · layer {layer} · head {head}"
    left, right = chart_columns([3, 2])
    with left:
        chart(
            heatmap(
                weights, kind="weights", title=title,
                row_labels=rows, col_labels=cols, row_title=row_title,
                col_title=col_title, blocked=blocked, fit_scale=fit,
                annotate=max(weights.shape) <= 12,
            ),
            key="mv-enlarged",name="head-enlarged"
        )  # fmt: skip
    with right:
        line_view(weights, rows, cols)
    if view.opener is not None:
        _opening(view.opener(way, layer, head))


def _opening(opening: HeadOpening) -> None:
    """The enlarged head's caption, and its button to the explorer when it can be opened."""
    st.caption(opening.caption)
    if opening.opened is None:
        return
    st.button(
        "Open this head step by step in the Matrices explorer",
        on_click=open_in_explorer,
        args=(opening.opened,),
        type="primary",
        icon=":material/open_in_new:",
    )
