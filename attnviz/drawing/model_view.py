"""The model view: every layer × every head at once, one small heatmap each.

Shape letters: L layers (grid rows), H heads (grid columns), T queries, S keys.

Like BertViz's model view, with a weight in every cell's hover and one colour scale shared by
all heads (0 to 1). Self- and cross-attention are separate grids: draw each with its own call.
No figure code is copied: every head is `heatmap(..., kind="weights", thumbnail=True)`
(its plain parts, `heatmap_parts`: the pooled values, the blocked cells, the hover
names). The grid draws them all as ONE heatmap (and one grey layer of blocked cells beneath),
each head a square block, the blocks apart by gaps of empty cells: a browser draws one image
instead of one subplot per head (12 layers × 16 heads: 384 subplots took the floor page ~5 s
to paint). Only the layout is new: the blocks' places, a title strip above each layer, head
numbers on top, the shared colour bar, and optional outlines of highlighted heads. Each cell's
hover names its layer, head, query, key and weight. Pure numpy + plotly; `fig.show()` works in
a notebook.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import plotly.graph_objects as go

from attnviz.core.checks import check_int, describe
from attnviz.drawing.heatmap import heatmap_parts
from attnviz.drawing.layout import safe_label, text_width, wrapped_title  # user text made safe
from attnviz.drawing.plain_figure import PlainFigure, unchecked_figure
from attnviz.drawing.theme import FONT_SIZE, THUMB_WIDTH, WEIGHTS_COLORSCALE
from attnviz.heads.stacks import as_layer_stack

if TYPE_CHECKING:  # only for hints: drawing does not import TensorFlow
    from attnviz.heads.calls import AttentionCalls

GRID_WIDTH = 1000  # px the cells of one row share, about
CELL_MIN = 56  # px: the smallest cell side (more heads make a wider figure)
GAP = 8  # px between cells
STRIP = 22  # px above each row of cells, for the layer's title
HEADINGS = 24  # px above the first row, for the head numbers
THUMB_MAX_SIDE = 32  # most cells per side of a thumbnail before it pools (keeps figures small)
HIGHLIGHT_COLOR = "#e8590c"  # orange: not on the Viridis scale, visible on light and dark pages
COLORBAR_PX = 240  # px, the shared colour bar's length (from the top of the grid)
MARGIN = dict(l=10, r=90, b=10)  # px; the right margin holds the shared colour bar


def model_view(
    layers_weights: Any,
    row_labels: Sequence[Any] | None = None,
    col_labels: Sequence[Any] | None = None,
    *,
    titles: Sequence[Any] | None = None,
    title: str = "",
    blocked: Any = None,
    highlight: Iterable[tuple[int, int]] = (),
    row_title: str = "query",
    col_title: str = "key",
    max_side: int = THUMB_MAX_SIDE,
    grid_width: int = GRID_WIDTH,
    head_names: Sequence[Any] | None = None,
) -> go.Figure:
    """A grid of heatmaps, one row per layer and one column per head, on one colour scale.

    Args:
        layers_weights: `(L, H, T, S)`, a list of L `(H, T, S)` of one shape, or `(H, T, S)`
            (one layer): one sequence's weights.
        row_labels: `(T,)` query tokens; col_labels: `(S,)` key tokens (default "0", "1", …).
        titles: one title per layer (default "layer 0", "layer 1", …).
        title: the figure's title.
        blocked: bool, True = drawn grey as masked: `(T, S)`, `(L, T, S)` or `(L, H, T, S)`.
        highlight: `(layer, head)` pairs to outline, e.g. `summaries.top_heads(...)`.
        row_title, col_title: what the hover calls a row and a column.
        max_side: most cells per side of one thumbnail; longer sequences are pooled (see
            `heatmap`); enlarge one head with `heatmap` for exact values.
        grid_width: px the cells of one row share, about (cells stay square, at least
            `CELL_MIN` px: many heads make a wider figure).
        head_names: one name per grid column (default "head 0", "head 1", …), e.g. the
            heads' own numbers when the grid shows some of a layer's heads.

    Returns:
        A `go.Figure`; subplot n (row-major, from 1) is axes `x{n}`/`y{n}` ("x"/"y" for n = 1).

    Raises:
        ValueError: for weights, labels, titles, blocked cells or highlights that do not fit.
    """
    stack = as_layer_stack(layers_weights, "layers_weights")  # (L, H, T, S)
    n_layers, n_heads = stack.shape[:2]
    names = _layer_titles(titles, n_layers)
    heads = _head_names(head_names, n_heads)
    grey = _blocked_stack(blocked, stack.shape)  # (L, H, T, S)
    grid = _grid(n_layers, n_heads, check_int(grid_width, "grid_width", low=1))
    cells = [
        [
            heatmap_parts(
                stack[layer, head],
                row_labels=row_labels,
                col_labels=col_labels,
                kind="weights",
                blocked=grey[layer, head],
                row_title=row_title,
                col_title=col_title,
                max_side=max_side,
                thumbnail=True,
            )
            for head in range(n_heads)
        ]
        for layer in range(n_layers)
    ]  # fmt: skip (each head's traces and layout, plain dicts)
    place = _Placement.of(cells[0][0], stack.shape, grid)
    traces, colors = _joined_traces(cells, place)
    shapes = _outlines(highlight, n_layers, n_heads, place)
    across, down = safe_label(col_title), safe_label(row_title)
    layout = _grid_layout(grid, names, heads, title, shapes) | dict(
        coloraxis=_shared(colors, grid),
        xaxis=place.axis("x", [f"{head} · {across} " for head in heads], cells[0][0]),
        yaxis=place.axis("y", [f"{name} · {down} " for name in names], cells[0][0]),
    )
    return unchecked_figure(traces, layout)


def inspection_view(
    result: AttentionCalls,
    *,
    kind: str | None = "self",
    keys: Sequence[str] | None = None,
    item: int = 0,
    row_labels: Sequence[Any] | None = None,
    col_labels: Sequence[Any] | None = None,
    title: str | None = None,
    highlight: Iterable[tuple[int, int]] = (),
) -> go.Figure:
    """The model view of a run's attention calls: one row per call of one kind.

    Cells the layer's mask blocked and that hold exactly 0 are drawn grey as masked. Each
    row's title is the call's key and, for `inspect`'s calls, how its capture compared with the
    layer's own output in the same run (`AttentionCall.verified`), e.g. "checked against the
    layer's output: exact to 3e-7", or why it was not checked.

    Args:
        result: what `attnviz.heads.inspect` returned, or any model's `AttentionCalls` (a
            trace's `.attention`, `run_decoder(...).attention`).
        kind: "self", "cross" or "unknown" calls, or a way: "bidirectional", "causal" (None:
            all, if they share one shape).
        keys: the calls to draw instead of a kind, in this order.
        item: which sequence of the batch.
        row_labels, col_labels, highlight: as for `model_view` (default: the first call's
            tokens, where it knows them).
        title: the figure's title (default: "<kind> attention").
    """
    stack = result.layer_stack(kind, keys=keys, item=item)
    first = result[stack.keys[0]]  # labels where the calls know their tokens
    row_labels = first.labels(item)[0] if row_labels is None and first.row_labels else row_labels
    col_labels = first.labels(item)[1] if col_labels is None and first.col_labels else col_labels
    grey = ~stack.masks[:, None] & (stack.weights == 0)  # (L, 1, T, S) & (L, H, T, S)
    figure = model_view(
        stack.weights, row_labels, col_labels, titles=stack.keys, blocked=grey,
        title=f"{kind or 'all'} attention" if title is None else title, highlight=highlight,
    )  # fmt: skip
    room = figure.layout.width - MARGIN["l"] - MARGIN["r"]  # px: the grid's width
    for note, key in zip(figure.layout.annotations, stack.keys, strict=False):  # layer titles
        verified = result[key].verified
        if verified is None:  # not an inspected call: nothing was checked
            continue
        said = html.escape(verified.describe(), quote=False)
        if text_width(f"{note.text} · {said}") > room:  # a narrow grid: in brief,
            said, note.hovertext = verified.brief(), said  # the sentence in the hover
        note.text += f" · {said}"
    return figure


def _layer_titles(titles: Sequence[Any] | None, n_layers: int) -> list[str]:
    """One escaped title per layer (default "layer 0", "layer 1", …)."""
    return _names(titles, n_layers, "titles", "title", "layer")


def _head_names(names: Sequence[Any] | None, n_heads: int) -> list[str]:
    """One escaped name per head, a grid column (default "head 0", "head 1", …)."""
    return _names(names, n_heads, "head_names", "name", "head")


def _names(given: Sequence[Any] | None, n: int, arg: str, noun: str, what: str) -> list[str]:
    """`given` escaped, one per `what` (n of them), or f"{what} 0", f"{what} 1", …"""
    if given is None:
        return [f"{what} {i}" for i in range(n)]
    if isinstance(given, str) or not hasattr(given, "__len__") or len(given) != n:
        raise ValueError(
            f"`{arg}` must list one {noun} per {what}: {n} {noun}s. Received: {describe(given)}."
        )
    return [safe_label(text) for text in given]


def _blocked_stack(blocked: Any, shape: tuple[int, ...]) -> np.ndarray:
    """`blocked` broadcast to `(L, H, T, S)` bool (all False if None)."""
    if blocked is None:
        return np.zeros(shape, dtype=bool)
    array = np.asarray(blocked)
    if array.ndim == 3:
        array = array[:, None]  # (L, T, S) -> (L, 1, T, S): the same for every head
    try:
        if array.dtype != bool and not np.isin(array, (0, 1)).all():
            raise ValueError("not True/False")
        return np.broadcast_to(array.astype(bool), shape)
    except ValueError as err:
        layers, heads, t, s = shape
        raise ValueError(
            f"`blocked` must be True/False (True = masked) of shape ({t}, {s}), "
            f"({layers}, {t}, {s}) or ({layers}, {heads}, {t}, {s}). "
            f"Received: {describe(array)}."
        ) from err


@dataclass(frozen=True)
class _Grid:
    """Where the cells of the grid go."""

    cell: int  # px, the side of one (square) cell
    width: int  # px, the plot area: cells and gaps of one row
    height: int  # px, the plot area: every row with its title strip, and gaps
    boxes: tuple  # [layer][head] -> (x0, x1, y0, y1) subplot domain, fractions of the plot area


def _grid(n_layers: int, n_heads: int, grid_width: int = GRID_WIDTH) -> _Grid:
    """Square cells of one size, as many heads as fit `grid_width` (at least `CELL_MIN` px)."""
    cell = int(np.clip(grid_width // n_heads - GAP, CELL_MIN, THUMB_WIDTH))
    width = n_heads * cell + (n_heads - 1) * GAP
    height = n_layers * (STRIP + cell) + (n_layers - 1) * GAP
    boxes = []
    for layer in range(n_layers):
        top = layer * (STRIP + cell + GAP) + STRIP  # px from the top of the plot area
        y0, y1 = 1 - (top + cell) / height, 1 - top / height
        boxes.append(
            tuple((h * (cell + GAP) / width, (h * (cell + GAP) + cell) / width, y0, y1)
                  for h in range(n_heads))
        )  # fmt: skip
    return _Grid(cell, width, height, tuple(boxes))


@dataclass(frozen=True)
class _Placement:
    """Where each head's block of cells goes in the one heatmap, in token units: a head's block
    spans its T × S positions (pooled cells keep their spans), gaps keep the blocks `GAP` px
    apart and leave a `STRIP` above each layer, as the grid's px sizes say."""

    x_offsets: tuple[float, ...]  # per head: where its key 0 goes
    y_offsets: tuple[float, ...]  # per layer: where its query 0 goes
    col_edges: np.ndarray  # (C + 1,) one head's cell edges across, from -0.5 (pooled: wider)
    row_edges: np.ndarray  # (R + 1,) one head's cell edges down
    span: tuple[float, float]  # token units across and down, gaps and strips included

    @classmethod
    def of(cls, cell: tuple[list, dict], shape: tuple[int, ...], grid: _Grid) -> _Placement:
        """The placement of heads whose thumbnail is `cell` in `grid` (`shape` (L, H, T, S))."""
        n_layers, n_heads, t, s = shape
        gap_x = GAP * s / grid.cell  # px -> key positions
        strip, gap_y = STRIP * t / grid.cell, (STRIP + GAP) * t / grid.cell
        value = cell[0][0]
        return cls(
            tuple(h * (s + gap_x) for h in range(n_heads)),
            tuple(strip + layer * (t + gap_y) for layer in range(n_layers)),
            np.asarray(value["x"], dtype=float),
            np.asarray(value["y"], dtype=float),
            ((n_heads - 1) * gap_x + n_heads * s, strip + (n_layers - 1) * gap_y + n_layers * t),
        )

    def edges(self, axis: str) -> np.ndarray:
        """The one heatmap's cell edges: every block's, one gap cell between blocks (and the
        first layer's strip above it)."""
        own, offsets = (
            (self.col_edges, self.x_offsets) if axis == "x" else (self.row_edges, self.y_offsets)
        )
        start = [] if axis == "x" else [-0.5]  # the strip above layer 0: one more gap cell
        return np.concatenate([start, *(own + offset for offset in offsets)])

    def joined(self, blocks: list[list[np.ndarray]], fill: float = np.nan) -> np.ndarray:
        """`(rows, cols)` of the one heatmap: `blocks[layer][head]` `(R, C)` in place, `fill`
        in the gaps."""
        rows, cols = len(self.row_edges) - 1, len(self.col_edges) - 1
        layers, heads = len(self.y_offsets), len(self.x_offsets)
        out = np.full((1 + layers * (rows + 1) - 1, heads * (cols + 1) - 1), fill, np.float32)
        for layer, row in enumerate(blocks):
            for head, block in enumerate(row):
                top, left = 1 + layer * (rows + 1), head * (cols + 1)
                out[top : top + rows, left : left + cols] = block  # (R, C) into its place
        return out

    def axis(self, axis: str, prefixes: list[str], cell: tuple[list, dict]) -> dict[str, Any]:
        """The one data axis: hidden ticks at every cell's centre naming its head (or layer) and
        its key (or query), which the hover shows; its range from edge to edge."""
        own = cell[1][f"{axis}axis"]
        offsets = self.x_offsets if axis == "x" else self.y_offsets
        values = [v + offset for offset in offsets for v in np.asarray(own["tickvals"]).tolist()]
        texts = [prefix + name for prefix in prefixes for name in own["ticktext"]]
        end = self.span[0 if axis == "x" else 1] - 0.5
        return dict(
            own, tickvals=values, ticktext=texts, domain=[0.0, 1.0],
            range=[-0.5, end] if axis == "x" else [end, -0.5],  # layer 0 and query 0 on top
        )  # fmt: skip


def _joined_traces(cells: list, place: _Placement) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The grey blocked cells (if any head has some) beneath the values, one heatmap each with
    every head's cells in its block; and the thumbnails' colour settings, which move to the
    shared colour axis (they are the same for every head). The hover says the cell's layer and
    query (its y tick), head and key (its x tick), and the weight."""
    first = cells[0][0][0][0]  # layer 0, head 0: its traces, the value trace
    value = dict(first, x=place.edges("x"), y=place.edges("y"), coloraxis="coloraxis")
    value.update(
        z=place.joined([[traces[0]["z"] for traces, _ in row] for row in cells]),
        hovertemplate=_hover(first["hovertemplate"]), name="weights",
    )  # fmt: skip
    colors = {k: value.pop(k) for k in ("colorscale", "zmin", "zmax", "colorbar")}
    value.pop("showscale", None)
    greys = [[_blocked_cells(traces) for traces, _ in row] for row in cells]
    if not any(grey is not None for row in greys for grey in row):
        return [value], colors
    shown = next(
        traces[1] for row in cells for traces, _ in row if _blocked_cells(traces) is not None
    )
    clear = np.zeros(np.shape(first["z"]), dtype=np.float32)  # a head with nothing blocked
    blocked = dict(
        shown, x=value["x"], y=value["y"], hoverongaps=False,
        z=place.joined([[clear if g is None else g for g in row] for row in greys]),
        hovertemplate=_hover(shown["hovertemplate"]),
    )  # fmt: skip
    return [blocked, value], colors


def _blocked_cells(traces: list[dict[str, Any]]) -> np.ndarray | None:
    """`(R, C)` 1 where a thumbnail's cells are blocked, 0 where not; None if none is (its
    traces: the values, the blocked cells if any, the label axes)."""
    if len(traces) < 3:
        return None
    return np.asarray(traces[1]["z"], dtype=np.float32)


def _hover(template: str) -> str:
    """A thumbnail's hover (`row title %{y}<br>column title %{x}<br>...`) for the one heatmap,
    whose ticks already say the layer, the row title and the query, the head, the column title
    and the key: `%{y}<br>%{x}<br>...`."""
    _, _, rest = template.split("<br>", 2)
    return f"%{{y}}<br>%{{x}}<br>{rest}"


def _shared(colors: dict[str, Any], grid: _Grid) -> dict[str, Any]:
    """The layout's colour axis from the thumbnails' colour settings; the bar from the top."""
    bar = dict(len=min(COLORBAR_PX, grid.height), lenmode="pixels", y=1.0, yanchor="top")
    return dict(
        colorscale=colors["colorscale"],
        cmin=colors["zmin"],
        cmax=colors["zmax"],
        colorbar=colors["colorbar"] | bar,
    )


def _outlines(highlight: Iterable[tuple[int, int]], n_layers: int, n_heads: int,
              place: _Placement) -> list:  # fmt: skip
    """A rectangle around each highlighted head's block, a little wider (in paper coordinates:
    data coordinates would clip it at the plot's edge)."""
    try:
        pairs = [tuple(pair) for pair in highlight]
    except TypeError:
        pairs = [None]
    shapes = []
    for pair in pairs:
        if pair is None or len(pair) != 2:
            raise ValueError(
                "`highlight` must list (layer, head) pairs, e.g. [(0, 1), (2, 3)]. "
                f"Received: {describe(highlight)}."
            )
        layer = check_int(pair[0], "highlight layer", low=0, high=n_layers - 1)
        head = check_int(pair[1], "highlight head", low=0, high=n_heads - 1)
        (x0, x1), (y0, y1) = (
            (offsets[i] + edges[0], offsets[i] + edges[-1])
            for offsets, edges, i in ((place.x_offsets, place.col_edges, head),
                                      (place.y_offsets, place.row_edges, layer))
        )  # fmt: skip
        pad_x, pad_y = 0.03 * (x1 - x0), 0.03 * (y1 - y0)
        width, height = place.span  # paper coordinates: an outline may cross the plot's edge
        shapes.append(
            dict(type="rect", xref="paper", yref="paper", x0=(x0 - pad_x + 0.5) / width,
                 x1=(x1 + pad_x + 0.5) / width, y0=1 - (y1 + pad_y + 0.5) / height,
                 y1=1 - (y0 - pad_y + 0.5) / height, line=dict(color=HIGHLIGHT_COLOR, width=3))
        )  # fmt: skip
    return shapes


def _grid_layout(grid: _Grid, names: list[str], heads: list[str], title: str,
                 shapes: list) -> dict[str, Any]:  # fmt: skip
    """Size, margins, layer titles, head names and outlines of the grid."""
    top = (40 if title else 10) + HEADINGS  # px: the figure title, then the head numbers
    layer_titles = [
        dict(text=name, x=0, y=grid.boxes[layer][0][3] + STRIP / grid.height, xanchor="left",
             yanchor="top")
        for layer, name in enumerate(names)
    ]  # fmt: skip
    head_numbers = [
        dict(text=head, x=(box[0] + box[1]) / 2, y=1 + 4 / grid.height,
             xanchor="center", yanchor="bottom")
        for head, box in zip(heads, grid.boxes[0], strict=True)
    ]  # fmt: skip
    notes = [note | dict(xref="paper", yref="paper", showarrow=False)
             for note in layer_titles + head_numbers]  # fmt: skip
    return dict(
        title=dict(text=wrapped_title(title, grid.width), x=0.0, xanchor="left"),  # never cut
        width=MARGIN["l"] + grid.width + MARGIN["r"],
        height=top + grid.height + MARGIN["b"],
        margin=MARGIN | dict(t=top),
        annotations=notes,
        shapes=shapes,
        font=dict(size=FONT_SIZE),
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        hovermode="closest",
        showlegend=False,
    )


def head_map(
    table: Any,
    *,
    label: str,
    titles: Sequence[Any] | None = None,
    selected: tuple[int, int] | None = None,
    title: str = "",
    digits: int = 2,
) -> go.Figure:
    """One square per head, coloured by a summary: a layers × heads map to read and click.

    Plotly heatmaps send no click selections to Streamlit, so this map is drawn with square
    scatter markers: a click selects one point, number `layer · H + head` (also its
    `customdata`, `[layer, head]`).

    Args:
        table: `(L, H)` one number per head (NaN: no value), e.g. `summaries.summary_table`.
        label: what the numbers are, for the colour bar and the hover.
        titles: one title per layer (default "layer 0", "layer 1", …).
        selected: `(layer, head)` to outline, e.g. the enlarged head.
        title: the figure's title.
        digits: decimals shown on each square.

    Raises:
        ValueError: for a table that is not a 2-D array of numbers, or titles that do not fit.
    """
    values = np.asarray(table, dtype=float) if _numeric(table) else None
    if values is None or values.ndim != 2 or 0 in values.shape:
        raise ValueError(
            f"`table` must be a 2-D array of numbers (layers × heads). Received: {describe(table)}."
        )
    n_layers, n_heads = values.shape
    names = _layer_titles(titles, n_layers)
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")  # (L, H)
    finite = np.isfinite(values)
    text = np.where(finite, np.vectorize(lambda v: f"{v:.{digits}f}")(values), "–")
    side = int(np.clip(GRID_WIDTH // 3 // max(n_heads, 1), 22, 44))  # px per square
    marker = dict(
        symbol="square", size=side, color=np.where(finite, values, np.nan).ravel().tolist(),
        colorscale=WEIGHTS_COLORSCALE, showscale=True, line=dict(width=0),  # Viridis
        colorbar=dict(title=dict(text=safe_label(label), side="right"), thickness=10),
        **_colour_range(values[finite], digits),
    )  # fmt: skip
    where = [f"{names[i]} · head {h}" for i, h in zip(layer.ravel(), head.ravel(), strict=True)]
    trace = dict(
        type="scatter", x=head.ravel(), y=layer.ravel(), mode="markers+text", marker=marker,
        text=text.ravel().tolist(), textfont=dict(size=max(8, side // 4), color="white"),
        customdata=np.stack([layer.ravel(), head.ravel()], axis=-1), hovertext=where,
        hovertemplate=f"%{{hovertext}}<br>{safe_label(label)}: %{{text}}<br>click to enlarge"
        "<extra></extra>",
        showlegend=False,
    )  # fmt: skip
    shapes = []
    if selected is not None:
        sl = check_int(selected[0], "selected layer", low=0, high=n_layers - 1)
        sh = check_int(selected[1], "selected head", low=0, high=n_heads - 1)
        shapes.append(
            dict(type="rect", x0=sh - 0.5, x1=sh + 0.5, y0=sl - 0.5, y1=sl + 0.5,
                 line=dict(color=HIGHLIGHT_COLOR, width=3))
        )  # fmt: skip
    top = 40 if title else 10
    width = 150 + int((n_heads + 0.2) * (side + 6))  # margins 70 + 80; the x range's n + 0.2
    # heads (and layers) side + 6 px apart: 6 px between squares
    return PlainFigure.of(  # plain: redrawn on every run of its page, no plotly checks
        [trace],
        dict(
            title=dict(text=wrapped_title(title, width), x=0.0, xanchor="left"),  # never cut
            width=width, height=top + 56 + int((n_layers + 0.2) * (side + 6)),
            margin=dict(l=70, r=80, t=top, b=56),  # room for the labels: drawn once
            # the heads' numbers under an axis title: "head 7" under each square would run
            # into its neighbours' on squares of 22 px, or in the presenter's larger font
            xaxis=dict(tickvals=list(range(n_heads)), range=[-0.6, n_heads - 0.4],
                       ticktext=[str(h) for h in range(n_heads)],
                       title=dict(text="head", standoff=10), **_BARE_AXIS),
            yaxis=dict(tickvals=list(range(n_layers)), ticktext=names,
                       range=[n_layers - 0.4, -0.6], **_BARE_AXIS),  # layer 0 on top
            shapes=shapes, font=dict(size=FONT_SIZE), hovermode="closest",
            paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="rgba(0,0,0,0)",
        ),
    )  # fmt: skip


_BARE_AXIS = dict(
    showgrid=False,
    zeroline=False,
    fixedrange=True,  # no grid, no zoom
    ticklabeloverflow="allow",
)  # no check of every label's box: see `label_axis`


def _colour_range(values: np.ndarray, digits: int) -> dict[str, float]:
    """The colour scale's ends for a head map: its own smallest to largest value; but when
    the values differ by less than their printed `digits` show (an untrained model's heads all
    "3.68"), a span of one printed step either side, so that equal numbers look equal instead
    of spreading a rounding difference over the whole scale."""
    if values.size == 0:
        return {}
    low, high = float(values.min()), float(values.max())
    step = 10.0**-digits
    if high - low >= step:
        return {}  # plotly's own: smallest to largest
    return {"cmin": low - step, "cmax": high + step}


def _numeric(table: Any) -> bool:
    try:
        np.asarray(table, dtype=float)
    except (TypeError, ValueError):
        return False
    return True
