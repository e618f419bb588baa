"""Heatmaps of attention matrices: one matrix, or the difference of two.

Shape letters: T rows (queries), S columns (keys, or features for output vectors).

Pure numpy + plotly (no streamlit, no TensorFlow), so the figures work in a notebook too. The
colours are the theme's (`theme`), the labels and margins the layout's (`layout`).

Large matrices. Above `max_side` cells per side the heatmap draws an overview of blocks of
ceil(T / max_side) x ceil(S / max_side) cells, and says so in its title. Weights pool to the
attention mass of a block (sum over its keys, mean over its queries): the overview rows still
sum to one, a peak stays visible and a uniform row stays uniform. Other matrices pool to the
mean of the block's allowed cells; the mask pools to "allowed" if any cell is allowed. A block
is blocked only if all its cells are. `focus_row` shows one query's exact values.
"""

from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attnviz.core.checks import check_int, describe
from attnviz.drawing.cell_text import TEXT_SIDE, cell_labels
from attnviz.drawing.drawable import as_blocked, as_matrix, drawable_matrix
from attnviz.drawing.layout import (
    LINE_HEIGHT,
    NUMBER_LABEL,
    TITLE_STANDOFF,
    base_layout,
    cell_names,
    data_axis,
    heatmap_height,
    label_axes_trace,
    label_axis,
    label_margin,
    safe_label,
    safe_labels,
    text_width,
    tick_labels,
    title_room,
    wrapped_title,
    x_axis_ticks,
)
from attnviz.drawing.plain_figure import PlainFigure, with_shapes
from attnviz.drawing.pooling import MAX_SIDE, PooledMatrix, pool_matrix
from attnviz.drawing.theme import (
    BLOCKED_COLORSCALE,
    FONT_SIZE,
    HIGHLIGHT_COLOR,
    KINDS,
    KINDS_BY_NAME,
    PLOT_WIDTH,
    THUMB_WIDTH,
    MatrixKind,
    color_range,
)

MARK_SIDE = TEXT_SIDE  # print "✕" in blocked cells when both sides are at most this
BAR_THICKNESS = 12  # px: the colour bar
BAR_PAD = 10  # px: space on each side of the colour bar
BAR_TICK_GAP = 6  # px between the colour bar and its labels, with room to spare
NOTE_CHARS = 36  # characters a line of a title's small note: a third of a wide page


def heatmap(
    matrix: Any,
    *,
    row_labels: Sequence[Any] | None = None,
    col_labels: Sequence[Any] | None = None,
    kind: str = "signed",
    title: str = "",
    blocked: Any = None,
    blocked_label: str = "masked",
    row_title: str = "query",
    col_title: str | None = None,
    max_side: int = MAX_SIDE,
    annotate: bool = True,
    thumbnail: bool = False,
    fit_scale: bool = False,
) -> go.Figure:
    """A heatmap of one matrix: rows (queries) down, columns (keys or features) across.

    Args:
        matrix: `(T, S)` numbers. -inf cells count as blocked; NaN is allowed in blocked cells.
            For kind "mask": bools or 0/1, True = allowed.
        row_labels: `(T,)` labels (tokens); default "0", "1", ...
        col_labels: `(S,)` labels; default "0", "1", ...
        kind: "signed" (diverging, centred on 0), "weights" (sequential, 0 to 1), "mask"
            (allowed / blocked) or "values" (diverging; rows are queries, columns features).
        title: figure title (shown as plain text).
        blocked: `(T, S)` bool, True = blocked by the mask; drawn grey, not coloured.
        blocked_label: hover text of blocked cells, e.g. "masked (−∞)".
        row_title: name of a row; col_title: name of a column (default "key", or "feature").
        max_side: most cells per side before drawing a pooled overview (see `pool_matrix`).
        annotate: print the values in small matrices' cells.
        thumbnail: a small square heatmap for a grid of many (heads, layers): no values or
            marks in the cells, no colour bar (the caller says the scale is shared), no axis
            titles, and as many token labels as fit in `THUMB_WIDTH` pixels (x labels upright);
            every cell's labels are in its hover.
        fit_scale: kind "weights" only: colour from 0 to the largest weight shown instead of
            0 to 1 (long rows spread thin: a 12-token row's weights are all dark on 0 to 1).

    Returns:
        A `go.Figure`: trace 0 the values (NaN where blocked), trace 1 (if any cell is blocked)
        the blocked cells (1 = blocked, drawn grey beneath trace 0's gaps).

    Raises:
        ValueError: for an unknown kind, bad shapes or labels, or values the kind cannot show.
    """
    return PlainFigure.of(*heatmap_parts(
        matrix, row_labels=row_labels, col_labels=col_labels, kind=kind, title=title,
        blocked=blocked, blocked_label=blocked_label, row_title=row_title, col_title=col_title,
        max_side=max_side, annotate=annotate, thumbnail=thumbnail, fit_scale=fit_scale,
    ))  # fmt: skip


def heatmap_parts(
    matrix: Any,
    *,
    row_labels: Sequence[Any] | None = None,
    col_labels: Sequence[Any] | None = None,
    kind: str = "signed",
    title: str = "",
    blocked: Any = None,
    blocked_label: str = "masked",
    row_title: str = "query",
    col_title: str | None = None,
    max_side: int = MAX_SIDE,
    annotate: bool = True,
    thumbnail: bool = False,
    fit_scale: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The traces and the layout `heatmap` draws (same arguments), as plain dicts: no
    `go.Figure` (building one costs ~3 ms, most of a thumbnail's time), for a figure made of
    many heatmaps (`model_view`'s grid)."""
    if kind not in KINDS:
        listed = ", ".join(f'"{k}"' for k in KINDS)
        raise ValueError(f"`kind` must be one of {listed}. Received: {describe(kind)}.")
    style = KINDS_BY_NAME[kind]
    values, blocked = drawable_matrix(matrix, blocked, kind)
    rows = safe_labels(row_labels, values.shape[0], "row_labels")
    cols = safe_labels(col_labels, values.shape[1], "col_labels")
    max_side = check_int(max_side, "max_side", low=1)
    grid = pool_matrix(values, blocked, max_side=max_side, rule=style.rule)
    names = (safe_label(row_title), safe_label(style.col_title if col_title is None else col_title))
    traces = [_value_trace(grid, style, kind, names, annotate and not thumbnail, fit_scale)]
    if thumbnail:
        traces[0]["showscale"] = False
    if grid.blocked.any():
        traces.append(_blocked_trace(grid, names, safe_label(blocked_label), marks=not thumbnail))
    traces.append(label_axes_trace())
    heading = (title, _overview_note(grid, style) if grid.is_overview else "")
    layout = _layout(grid, values.shape, (rows, cols), names, heading, kind, thumbnail, fit_scale)
    return traces, layout


def _layout(
    grid: PooledMatrix,
    shape: tuple[int, int],
    labels: tuple[list[str] | None, list[str] | None],
    names: tuple[str, str],
    heading: tuple[str, str],
    kind: str,
    thumbnail: bool,
    fit_scale: bool,
) -> dict[str, Any]:
    """The layout of a heatmap of a `(T, S)` `shape` drawn as `grid`: the ticks of `labels`
    (rows, columns), the axis titles `names`, and `heading` (the title, the overview note)."""
    (t, s), (rows, cols) = shape, labels
    n_rows = len(grid.row_edges) - 1
    height = THUMB_WIDTH + 40 if thumbnail else heatmap_height(n_rows)
    width = THUMB_WIDTH if thumbnail else PLOT_WIDTH
    title = wrapped_title(heading[0], width) + heading[1]
    x_ticks, x_angle = x_axis_ticks(cols, s, width, tilt=-90 if thumbnail else -45)
    y_ticks = tick_labels(rows, t, room=int((height - (40 if thumbnail else 130)) / LINE_HEIGHT))
    axis_titles = ("", "") if thumbnail else names
    margin = label_margin(
        x_ticks["ticktext"], x_angle, y_ticks["ticktext"], title_room(title), titled=not thumbnail
    ) | dict(r=10 if thumbnail else _colorbar_room(kind, fit_scale))
    layout = base_layout(title, n_rows) | dict(
        margin=margin,
        xaxis=data_axis(cell_names(cols, grid.col_edges), (-0.5, s - 0.5)),
        yaxis=data_axis(cell_names(rows, grid.row_edges), (t - 0.5, -0.5)),  # row 0 on top
        xaxis2=label_axis(x_ticks, axis_titles[1], "x", (-0.5, s - 0.5)) | dict(tickangle=x_angle),
        yaxis2=label_axis(y_ticks, axis_titles[0], "y", (t - 0.5, -0.5)),
    )
    if thumbnail:  # the cells' square gets THUMB_WIDTH; the margins come on top
        layout["height"] = height + margin["b"]
    return layout


def difference_heatmap(
    a: Any,
    b: Any,
    *,
    row_labels: Sequence[Any] | None = None,
    col_labels: Sequence[Any] | None = None,
    title: str = "",
    blocked: Any = None,
    row_title: str = "query",
    col_title: str = "key",
    max_side: int = MAX_SIDE,
    annotate: bool = True,
) -> go.Figure:
    """A diverging heatmap of `a - b` (for example weights with and without a mask).

    A cell that is not finite in `a` or in `b` (-inf where masked) has no finite difference:
    it is drawn grey as "masked in a or b", together with the cells of `blocked`. Weights are
    always finite (0 where masked), so their differences are all drawn.

    Args:
        a: `(T, S)` numbers.
        b: `(T, S)` numbers.
        row_labels, col_labels, title, row_title, col_title, max_side, annotate: as for
            `heatmap`.
        blocked: `(T, S)` bool, True = blocked.

    Returns:
        The `heatmap` of `a - b` with kind "signed".
    """
    first, second = as_matrix(a, "a", ndim=2), as_matrix(b, "b", ndim=2)
    if first.shape != second.shape:
        raise ValueError(
            f"`a` and `b` must have the same shape. Received: a {first.shape}, b {second.shape}. "
            "Compare two matrices of the same query and key tokens."
        )
    undefined = ~np.isfinite(first) | ~np.isfinite(second) | as_blocked(blocked, first.shape)
    with np.errstate(invalid="ignore"):
        difference = np.where(undefined, np.nan, first - second)  # (T, S)
    return heatmap(
        difference,
        row_labels=row_labels,
        col_labels=col_labels,
        kind="signed",
        title=title,
        blocked=undefined,
        blocked_label="masked in a or b",
        row_title=row_title,
        col_title=col_title,
        max_side=max_side,
        annotate=annotate,
    )


def highlight_cell(fig: go.Figure, i: int, j: int | None) -> go.Figure:
    """`fig` (a `heatmap`) with cell (row i, column j) outlined, or all of row i for j None:
    the cell step by step explains. `fig` is left as it was."""
    across = (
        dict(x0=j - 0.5, x1=j + 0.5, xref="x")
        if j is not None
        else dict(x0=0, x1=1, xref="x domain")
    )  # a whole row: the plot's width
    return with_shapes(fig, dict(
        type="rect", y0=i - 0.5, y1=i + 0.5, yref="y", **across,
        line=dict(color=HIGHLIGHT_COLOR, width=3), fillcolor="rgba(0,0,0,0)",
    ))  # fmt: skip


def _value_trace(
    grid: PooledMatrix,
    style: MatrixKind,
    kind: str,
    names: tuple[str, str],
    annotate: bool,
    fit_scale: bool = False,
) -> dict[str, Any]:
    """The coloured cells; blocked cells are NaN gaps without hover."""
    what = style.pooled_name if grid.is_overview else style.value_name
    value = "" if kind == "mask" else " %{z:.6~g}"
    hover = f"{names[0]} %{{y}}<br>{names[1]} %{{x}}<br>{what}{value}<extra></extra>"
    trace = dict(
        type="heatmap",
        z=grid.values,
        x=grid.col_edges - 0.5,  # (C + 1,) cell edges
        y=grid.row_edges - 0.5,  # (R + 1,)
        colorscale=style.colorscale,
        hoverongaps=False,
        zorder=0,  # the default layer, above the blocked cells (zorder -1)
        hovertemplate=hover,
        colorbar=_colorbar(kind, style),
        **color_range(kind, grid.values, fit_scale),
    )
    printed = None
    if annotate and max(grid.values.shape) <= TEXT_SIDE and kind != "mask":
        printed = cell_labels(grid.values)
    if printed is not None:
        text, size = printed
        trace.update(text=text, texttemplate="%{text}", textfont=dict(size=size))
    return trace


def _colorbar(kind: str, style: MatrixKind) -> dict[str, Any]:
    """A slim colour bar; the mask's shows "blocked" / "allowed" instead of numbers. It sits
    in the right margin (`_colorbar_room`), beside the cells."""
    bar: dict[str, Any] = dict(
        thickness=BAR_THICKNESS, tickfont=dict(size=FONT_SIZE), x=1.0, xpad=BAR_PAD
    )
    if kind == "mask":
        return bar | dict(tickmode="array", tickvals=[0.25, 0.75], ticktext=["blocked", "allowed"])
    return bar | dict(title=dict(text=style.value_name, side="right"))


def _colorbar_room(kind: str, fit_scale: bool = False) -> int:
    """Pixels of right margin that hold the colour bar, its labels and its title.

    A margin that is too small is widened by plotly once the bar is drawn, and then plotly
    draws the whole chart a second time (the Streamlit theme's axes widen their margins the
    same way; `TITLE_STANDOFF` and these margins leave them nothing to widen). Numeric labels
    are taken as at most `NUMBER_LABEL_CHARS` characters ("−0.5", "−200"): a wider one costs that
    second drawing, nothing else.
    """
    if kind == "mask":
        labels, titled = max(text_width(t) for t in ("blocked", "allowed")), False
    else:
        widest = "0.8" if kind == "weights" and not fit_scale else NUMBER_LABEL
        labels, titled = text_width(widest), True
    title = TITLE_STANDOFF + LINE_HEIGHT if titled else 0
    return math.ceil(2 * BAR_PAD + BAR_THICKNESS + BAR_TICK_GAP + labels + title)


def _blocked_trace(
    grid: PooledMatrix, names: tuple[str, str], label: str, marks: bool = True
) -> dict[str, Any]:
    """Grey blocked cells under the values (1 = blocked, drawn grey; 0 = clear), "✕" in small
    matrices. One byte a cell, not a float: the page sends three of these on every redraw. The
    value trace lies above it (`zorder`), so it answers the hover on allowed cells and this
    trace, seen through the value trace's gaps, on blocked ones."""
    what = f"all cells {label}" if grid.is_overview else label
    trace = dict(
        type="heatmap",
        z=grid.blocked.astype(np.uint8),
        x=grid.col_edges - 0.5,
        y=grid.row_edges - 0.5,
        colorscale=BLOCKED_COLORSCALE,
        zmin=0.0,
        zmax=1.0,
        zorder=-1,  # beneath the values (their layer is plotly's default, zorder 0)
        showscale=False,
        hovertemplate=f"{names[0]} %{{y}}<br>{names[1]} %{{x}}<br>{what}<extra></extra>",
        name=label,
    )
    if marks and max(grid.blocked.shape) <= MARK_SIDE:
        crosses = np.where(grid.blocked, "✕", "").tolist()
        trace.update(text=crosses, texttemplate="%{text}", textfont=dict(size=FONT_SIZE))
    return trace


def _overview_note(grid: PooledMatrix, style: MatrixKind) -> str:
    """The small title lines that say the heatmap is a pooled overview, short enough for a
    chart a third of a page wide (Compare's three): no view it may sit above is promised (the
    Heatmaps tab alone adds an exact focus row, and says so itself)."""
    rows, cols = grid.block_shape
    words = f"overview: each cell summarises a {rows}×{cols} block, {style.pooled_name}"
    lines = textwrap.wrap(html.escape(words, quote=False), NOTE_CHARS)
    return "".join(f"<br><sup>{line}</sup>" for line in lines)
