"""Plotly figures of attention matrices: heatmap, focus row and difference.

Shape letters: T rows (queries), S columns (keys, or features for output vectors).

Pure numpy + plotly (no streamlit, no TensorFlow), so the figures work in a notebook too.

Design, in one place:
- Colours. Weights use Viridis from exactly 0 to 1 (perceptually uniform, readable in grey and
  by colour-blind viewers). Signed numbers use ColorBrewer RdBu reversed (blue < 0 < red),
  a diverging scale ColorBrewer lists as colour-blind safe, centred on 0 by a symmetric range.
  Blocked cells are a neutral grey that appears on neither scale, never a colour of the scale.
- Axes. Cells sit at numeric positions, so repeated tokens stay separate cells. The data axes
  (`xaxis`, `yaxis`) list a name for every cell in `ticktext` but hide it; plotly uses that text
  for `%{x}` / `%{y}` in hover labels. Readable, thinned tick labels live on the overlay axes
  `xaxis2` / `yaxis2`. Both pairs get the same fixed range, so a zoom (which moves overlaid axes
  together) and its reset keep them aligned. Margins are sized here from the labels, not by
  plotly's `automargin` or `matches`: each of those makes plotly lay a chart out twice, which
  was most of the time the page took to redraw its six heatmaps.
- Labels are user text and plotly renders text as HTML-ish markup, so every label and title is
  cut to `LABEL_CHARS` characters and HTML-escaped.
- Large matrices. Above `max_side` cells per side the heatmap draws an overview of blocks of
  ceil(T / max_side) x ceil(S / max_side) cells, and says so in its title. Weights pool to the
  attention mass of a block (sum over its keys, mean over its queries): the overview rows still
  sum to one, a peak stays visible and a uniform row stays uniform. Other matrices pool to the
  mean of the block's allowed cells; the mask pools to "allowed" if any cell is allowed. A block
  is blocked only if all its cells are. `focus_row` shows one query's exact values.
"""

from __future__ import annotations

import base64
import functools
import html
import math
import textwrap
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import plotly.io as pio
from _plotly_utils.utils import is_homogeneous_array, is_skipped_key, to_typed_array_spec

from attnviz.core.checks import check_choice, check_int, describe, numeric_array
from attnviz.drawing.pooling import MAX_SIDE, PooledMatrix, pool_matrix
from attnviz.drawing.standalone import Figure  # saves itself as a page or SVG

TEXT_SIDE = 12  # print values in the cells when both sides are at most this
CELL_TEXT_PX = 280  # px a heatmap's cells get at the least where values are printed in them:
# half a desktop page beside the sidebar, or a phone, less the labels and the colour bar
CELL_TEXT_GAP = 4  # px kept free between the printed values of neighbouring cells
SMALLEST_SHOWN = 0.001  # cell text shows smaller magnitudes as "<0.001"
HIGHLIGHT_COLOR = "#ff2b2b"  # the outline of the cell step by step explains
MARK_SIDE = TEXT_SIDE  # print "✕" in blocked cells when both sides are at most this
MAX_TICKS = 40  # most token labels per axis; more positions (or too little room) get a subset
MAX_NUMBER_TICKS = 10  # most labels of numbered positions (0, 1, 2, ...): a round step, as
# plotly's own axes do. Each label costs the browser time on every redraw (~0.2 ms).
LABEL_CHARS = 40  # labels longer than this are cut (keeps figures small and readable)
FONT_SIZE = 12
CHAR_WIDTH = 0.6 * FONT_SIZE  # px of an average Latin character; wide (CJK) characters count 2
LINE_HEIGHT = 1.3 * FONT_SIZE  # px of one line of tick or title text
MAX_LABEL_EXTENT = 180  # px: the margin grows with the labels up to this, then labels overflow
TITLE_STANDOFF = 8  # px between an axis's (or the colour bar's) labels and its title
BAR_THICKNESS = 12  # px: the colour bar
BAR_PAD = 10  # px: space on each side of the colour bar
BAR_TICK_GAP = 6  # px between the colour bar and its labels, with room to spare
BAR_LABEL_CHARS = 4  # characters the colour bar's widest number label is allowed for
# a stand-in as wide as the widest number label plotly's own ticks are given room for
NUMBER_LABEL = "−" * BAR_LABEL_CHARS
NOTE_CHARS = 36  # characters a line of a title's small note: a third of a wide page
PLOT_WIDTH = 480  # px a heatmap's cells get, about: half of a wide page, less the colour bar
THUMB_WIDTH = 180  # px a thumbnail's cells get, about: a quarter of a wide page, less labels

BLOCKED_COLOR = "#9a9a9a"  # neutral mid grey: on neither scale, visible on light and dark pages
ALLOWED_COLOR = "#31688e"  # Viridis blue: darker than the grey and of a different hue


def _even_scale(colors: Sequence[str]) -> list[list[Any]]:
    """A plotly colour scale with `colors` evenly spaced from 0 to 1."""
    last = len(colors) - 1
    return [[i / last, color] for i, color in enumerate(colors)]


WEIGHTS_COLORSCALE = _even_scale(plotly.colors.sequential.Viridis)
SIGNED_COLORSCALE = _even_scale(plotly.colors.diverging.RdBu[::-1])  # blue < 0 < red
MASK_COLORSCALE = [
    [0.0, BLOCKED_COLOR],
    [0.5, BLOCKED_COLOR],
    [0.5, ALLOWED_COLOR],
    [1.0, ALLOWED_COLOR],
]
CLEAR = "rgba(0,0,0,0)"
BLOCKED_COLORSCALE = [[0.0, CLEAR], [0.5, CLEAR], [0.5, BLOCKED_COLOR], [1.0, BLOCKED_COLOR]]


@dataclass(frozen=True)
class _Kind:
    """How one kind of matrix is coloured, pooled and described."""

    colorscale: list[list[Any]]  # plotly colour scale
    rule: str  # pooling rule: "mean", "mass" or "any" (see `pool_matrix`)
    value_name: str  # what one cell holds, for hover text
    pooled_name: str  # what one overview cell holds
    col_title: str  # default column title


_KINDS = {
    "signed": _Kind(SIGNED_COLORSCALE, "mean", "value", "mean of allowed cells", "key"),
    "weights": _Kind(
        WEIGHTS_COLORSCALE,
        "mass",
        "weight",
        "attention mass (sum over keys, mean over queries)",
        "key",
    ),
    "mask": _Kind(MASK_COLORSCALE, "any", "allowed", "allowed (some cells)", "key"),
    "values": _Kind(SIGNED_COLORSCALE, "mean", "value", "mean of cells", "feature"),
}
KINDS = tuple(_KINDS)


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
    return _figure(*heatmap_parts(
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
    style = _KINDS[kind]
    values, blocked = _prepare_matrix(matrix, blocked, kind)
    rows = _labels(row_labels, values.shape[0], "row_labels")
    cols = _labels(col_labels, values.shape[1], "col_labels")
    max_side = check_int(max_side, "max_side", low=1)
    grid = pool_matrix(values, blocked, max_side=max_side, rule=style.rule)
    names = (_escape(row_title), _escape(style.col_title if col_title is None else col_title))
    traces = [_value_trace(grid, style, kind, names, annotate and not thumbnail, fit_scale)]
    if thumbnail:
        traces[0]["showscale"] = False
    if grid.blocked.any():
        traces.append(_blocked_trace(grid, names, _escape(blocked_label), marks=not thumbnail))
    traces.append(_label_axes_trace())
    note = _overview_note(grid, style) if grid.is_overview else ""
    t, s = values.shape
    n_rows = len(grid.row_edges) - 1
    height = THUMB_WIDTH + 40 if thumbnail else _height(n_rows)
    width = THUMB_WIDTH if thumbnail else PLOT_WIDTH
    x_ticks, x_angle = _x_ticks(cols, s, width, tilt=-90 if thumbnail else -45)
    y_ticks = _tick_labels(rows, t, room=int((height - (40 if thumbnail else 130)) / LINE_HEIGHT))
    axis_titles = ("", "") if thumbnail else names
    title_room = _title_room(_title(title, width) + note)
    margin = _heatmap_margin(
        x_ticks["ticktext"], x_angle, y_ticks["ticktext"], title_room, titled=not thumbnail
    ) | dict(r=10 if thumbnail else _colorbar_room(kind, fit_scale))
    layout = _base_layout(_title(title, width) + note, n_rows) | dict(
        margin=margin,
        xaxis=_data_axis(_cell_names(cols, grid.col_edges), (-0.5, s - 0.5)),
        yaxis=_data_axis(_cell_names(rows, grid.row_edges), (t - 0.5, -0.5)),  # row 0 on top
        xaxis2=_label_axis(x_ticks, axis_titles[1], "x", (-0.5, s - 0.5)) | dict(tickangle=x_angle),
        yaxis2=_label_axis(y_ticks, axis_titles[0], "y", (t - 0.5, -0.5)),
    )
    if thumbnail:  # the cells' square gets THUMB_WIDTH; the margins come on top
        layout["height"] = height + margin["b"]
    return traces, layout


def _figure(traces: list[dict[str, Any]], layout: dict[str, Any]) -> go.Figure:
    """A figure of traces and layout built here, kept plain until it is used as a figure
    (`PlainFigure`): plotly's validation is skipped either way.

    Validating a figure's every property costs plotly ~15 ms per heatmap; the page draws six of
    them on every click. The tests check the figures these functions build.
    """
    return PlainFigure.of(traces, layout)


class PlainFigure(Figure):
    """A figure held as the traces and layout built here, until something uses it as a figure.

    Streamlit needs only a figure's plain form (`to_dict`). From plain traces plotly builds a
    `go.Figure` property by property, then copies it all back for `to_dict`: ~7 ms a heatmap
    (measured), most of a page's run, against ~0.5 ms to write the JSON Streamlit sends. So
    `PlainFigure.of(traces, layout)` keeps them as they are and `to_dict` returns them with the
    default template, as `go.Figure(data=traces, layout=layout, _validate=False).to_dict()`
    would. Anything else (`.data`, `.layout`, `update_layout`, a copy) first builds that
    `go.Figure`. Do not change the traces or layout passed in afterwards.
    """

    @classmethod
    def of(cls, traces: list[dict[str, Any]], layout: dict[str, Any]) -> PlainFigure:
        figure = cls.__new__(cls)  # go.Figure.__init__ runs on first use as a figure
        figure.__dict__["_plain_parts"] = (traces, layout)
        return figure

    def __getattr__(self, name: str) -> Any:  # what the instance does not hold (yet)
        with _BUILDING:  # one thread builds the figure; another waits, then finds it built
            parts = self.__dict__.pop("_plain_parts", None)
            if parts is not None:
                go.Figure.__init__(self, data=parts[0], layout=parts[1], _validate=False)
        return object.__getattribute__(self, name)

    def to_dict(self) -> dict[str, Any]:
        parts = self.__dict__.get("_plain_parts")
        if parts is None:
            return super().to_dict()
        traces, layout = parts
        template = _default_template()
        plain = {"data": _plain(traces), "layout": _plain(layout)}
        if template is not None:
            plain["layout"]["template"] = _copied(template)
        return plain


_BUILDING = threading.RLock()  # held while a PlainFigure becomes a go.Figure (re-entered then)


def _copied(value: Any) -> Any:
    """`value` with its dicts and lists copied (not the arrays and strings in them), so the
    plain form can be changed without changing the figure."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_copied(item) for item in value]
    return value


def _plain(value: Any) -> Any:
    """`_copied(value)` with the numpy arrays held by its dicts as typed arrays, as plotly's
    `to_dict` writes them (`convert_to_base64`, whose every array passes through narwhals:
    ~0.1 ms an array, most of a heatmap's `to_dict`)."""
    if isinstance(value, dict):
        return {key: _plain_item(key, item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _plain_item(key: str, value: Any) -> Any:
    """One entry of a dict in `_plain`: the rules of plotly's `convert_to_base64`."""
    if is_skipped_key(key):
        return _copied(value)  # plotly converts nothing under these keys
    if isinstance(value, np.ndarray):
        short = _TYPED_ARRAYS.get(value.dtype.str)  # numbers plotly.js reads as they are
        if short is None or value.size == 0:
            return to_typed_array_spec(value)  # anything else: plotly's own conversion
        typed = {"dtype": short, "bdata": base64.b64encode(np.ascontiguousarray(value)).decode()}
        if value.ndim > 1:
            typed["shape"] = str(value.shape)[1:-1]
        return typed
    if not isinstance(value, dict | list | tuple | str) and is_homogeneous_array(value):
        return to_typed_array_spec(value)
    return _plain(value)


# little-endian numpy dtypes plotly.js reads as typed arrays (`plotlyjsShortTypes`); 64-bit
# integers, which plotly narrows first, and other byte orders go through plotly
_TYPED_ARRAYS = {
    "|i1": "i1", "|u1": "u1", "<i2": "i2", "<u2": "u2", "<i4": "i4", "<u4": "u4",
    "<f4": "f4", "<f8": "f8",
}  # fmt: skip


def _default_template() -> dict[str, Any] | None:
    """The plain form of plotly's default template, as a `go.Figure` puts it in its layout;
    None if there is none. Kept per template name (a template object is read each time)."""
    default = pio.templates.default
    if default is None or isinstance(default, str):
        return _template_named(default)
    return go.Figure().to_dict()["layout"].get("template")


@functools.lru_cache(maxsize=4)
def _template_named(name: str | None) -> dict[str, Any] | None:
    """`_default_template()` while the default template is `name`."""
    return go.Figure().to_dict()["layout"].get("template")


class FrozenFigure(PlainFigure):
    """A figure drawn again and again unchanged: its plain form (`to_dict`) is built once.

    Streamlit turns a figure into its plain form on every script run, a deep copy of every
    trace: ~22 ms for a model view of 72 heads, redrawn on every click elsewhere on the page.
    Build one with `frozen(figure)` and do not change it afterwards.
    """

    def to_dict(self) -> dict[str, Any]:
        plain = self.__dict__.get("_plain")
        if plain is None:
            plain = super().to_dict()
            self.__dict__["_plain"] = plain
        return plain


def frozen(figure: go.Figure) -> FrozenFigure:
    """`figure` itself, made a `FrozenFigure`: its plain form is built now, once. No second
    figure is built (that would make every trace an object again: ~0.2 s for a model view's
    grid of 576 heatmaps); do not change `figure` afterwards."""
    plain = figure.to_dict()
    figure.__class__ = FrozenFigure  # a go.Figure subclass with no state of its own
    figure.__dict__["_plain"] = plain
    return figure


def _prepare_matrix(matrix: Any, blocked: Any, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Check the matrix and the blocked cells; return `(T, S)` float values and bool blocked."""
    values = _as_matrix(matrix, "matrix", ndim=2)
    blocked = _as_blocked(blocked, values.shape)
    if kind == "mask":
        if not np.isin(values, (0.0, 1.0)).all():
            raise ValueError(
                "kind 'mask' draws a mask: `matrix` must hold only True/False or 1/0 "
                f"(1 = allowed). Received values from {np.nanmin(values):.3g} to "
                f"{np.nanmax(values):.3g}. Use kind 'weights' or 'signed' for numbers."
            )
        return values, blocked | (values == 0)
    finite = np.isfinite(values)
    if not finite.all():
        blocked = blocked | (values == -np.inf)
        _check_drawable(values, finite | blocked, "matrix")
    if kind == "weights":
        _check_weights(values, blocked, "matrix")
    return values, blocked


def _as_matrix(value: Any, name: str, *, ndim: int) -> np.ndarray:
    """An `ndim`-D, non-empty float32 or float64 array (NaN and infinities still allowed)."""
    array = numeric_array(value, name)
    if array.ndim != ndim or 0 in array.shape:
        raise ValueError(
            f"`{name}` must be a non-empty {ndim}-D array. Received shape {array.shape}. "
            "Draw one matrix at a time (pick one batch item and one head)."
        )
    return array if array.dtype in (np.float32, np.float64) else array.astype(np.float64)


def _as_blocked(blocked: Any, shape: tuple[int, ...]) -> np.ndarray:
    """`blocked` as a bool array of `shape` (all False if None)."""
    if blocked is None:
        return np.zeros(shape, dtype=bool)
    array = np.asarray(blocked)
    if array.shape != shape or not (array.dtype == bool or np.isin(array, (0, 1)).all()):
        raise ValueError(
            f"`blocked` must be True/False with the values' shape {shape} (True = blocked). "
            f"Received: {describe(array)}."
        )
    return array.astype(bool)


def _check_drawable(values: np.ndarray, drawable: np.ndarray, name: str) -> None:
    """Reject cells that are neither finite nor blocked (NaN, +inf): no colour can show them."""
    if not drawable.all():
        where = tuple(int(i) for i in np.argwhere(~drawable)[0])
        raise ValueError(
            f"`{name}` holds {values[where]} at {where}, a cell that is not blocked. Only "
            "finite numbers can be drawn; mark masked cells in `blocked` (-inf counts as blocked)."
        )


def _check_weights(values: np.ndarray, blocked: np.ndarray, name: str) -> None:
    """Allowed weights must lie in [0, 1] (a little float32 slack allowed)."""
    allowed = ~blocked
    low = float(np.min(values, where=allowed, initial=np.inf))
    high = float(np.max(values, where=allowed, initial=-np.inf))
    if low < -1e-6 or high > 1 + 1e-6:
        raise ValueError(
            f"kind 'weights' draws probabilities from 0 to 1, but `{name}` holds values from "
            f"{low:.4g} to {high:.4g}. Use kind 'signed' for scores."
        )


def _labels(labels: Sequence[Any] | None, n: int, name: str) -> list[str] | None:
    """Escaped, shortened labels, or None for the default numbering."""
    if labels is None:
        return None
    if isinstance(labels, str) or not hasattr(labels, "__len__") or len(labels) != n:
        raise ValueError(
            f"`{name}` must be a list with one label per position: {n} labels. "
            f"Received: {describe(labels)}."
        )
    return [_escape(label) for label in labels]


def _title(text: Any, width: int) -> str:
    """A title as plain text (escaped, never cut), broken into lines that fit `width` pixels."""
    words = html.escape(" ".join(str(text).split()), quote=False).split(" ")
    per_line = max(12, int(width / (CHAR_WIDTH * 1.15)))  # title text is a little larger
    lines, line = [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > per_line:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "<br>".join([*lines, line])


def highlight_cell(fig: go.Figure, i: int, j: int | None) -> go.Figure:
    """`fig` (a `heatmap`) with cell (row i, column j) outlined, or all of row i for j None:
    the cell step by step explains."""
    left, right = (j - 0.5, j + 0.5) if j is not None else fig.layout.xaxis.range
    marked = go.Figure(fig)
    marked.add_shape(
        type="rect", x0=left, x1=right, y0=i - 0.5, y1=i + 0.5, xref="x", yref="y",
        line=dict(color=HIGHLIGHT_COLOR, width=3), fillcolor="rgba(0,0,0,0)",
    )  # fmt: skip
    return marked


def _escape(text: Any) -> str:
    """User text made safe for plotly's HTML-ish rendering, cut to `LABEL_CHARS` characters."""
    text = " ".join(str(text).split())  # newlines and tabs would break tick and hover text
    if len(text) > LABEL_CHARS:
        text = text[: LABEL_CHARS - 1] + "…"
    return html.escape(text, quote=False)


def _cell_names(labels: list[str] | None, edges: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Centres `(n,)` of the cells or blocks and their hover names ("3: the", "0–15: a … z")."""
    starts, ends = edges[:-1], edges[1:] - 1
    names = []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        span = f"{a}" if a == b else f"{a}–{b}"
        if labels is not None:
            span += f": {labels[a]}" if a == b else f": {labels[a]} … {labels[b]}"
        names.append(span)
    return (starts + ends) / 2, names


def _value_trace(
    grid: PooledMatrix,
    style: _Kind,
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
        **_color_range(kind, grid.values, fit_scale),
    )
    printed = None
    if annotate and max(grid.values.shape) <= TEXT_SIDE and kind != "mask":
        printed = cell_labels(grid.values)
    if printed is not None:
        text, size = printed
        trace.update(text=text, texttemplate="%{text}", textfont=dict(size=size))
    return trace


def cell_labels(z: np.ndarray) -> tuple[list[list[str]], int] | None:
    """The values `(R, C)` as printed in their cells, and the font size: 3 significant digits
    in the tick font while the widest fits its cell (`CELL_TEXT_PX` / C wide, with a gap), else
    2 digits a size smaller, else None: nothing printed (the hover tells each value), never
    numbers that run into each other ("-0.0257-0.00951")."""
    cell = CELL_TEXT_PX / z.shape[1]
    choices = ((_cell_text(z, 3), FONT_SIZE), (_cell_text(z, 2), FONT_SIZE - 2),
               (_fixed_text(z), FONT_SIZE - 2))  # fmt: skip
    for text, size in choices:
        widest = max((number_width(t, size) for row in text for t in row), default=0.0)
        if widest + CELL_TEXT_GAP <= cell:
            return text, size
    return None


def _fixed_text(z: np.ndarray) -> list[list[str]]:
    """`(R, C)` values with as many decimals as the largest leaves room for (2 below 10, 1
    below 100, else none): the shortest text that still tells the cells apart at a glance."""
    finite = np.abs(z[np.isfinite(z)])
    top = float(finite.max()) if finite.size else 0.0
    decimals = 2 if top < 10 else 1 if top < 100 else 0

    def fixed(v: float) -> str:
        text = f"{v:.{decimals}f}"
        return "0" if float(text) == 0 else text  # never "-0.00"

    return [["" if math.isnan(v) else fixed(v) for v in row] for row in z.tolist()]


def number_width(text: str, size: float = FONT_SIZE) -> float:
    """About how many pixels a printed number takes at font `size`: digits ~0.56 em, the
    point, signs and "<" narrower."""
    return size * sum(0.3 if c in ".-−<>" else 0.56 for c in text)


def _color_range(kind: str, z: np.ndarray, fit: bool = False) -> dict[str, float]:
    """zmin/zmax: 0 to 1 for weights (0 to their largest, if `fit`) and masks, symmetric around
    0 for signed values."""
    if kind == "weights" and fit:
        finite = z[np.isfinite(z)]
        top = float(finite.max()) if finite.size else 0.0
        return dict(zmin=0.0, zmax=top if top > 0 else 1.0)
    if kind in ("weights", "mask"):
        return dict(zmin=0.0, zmax=1.0)
    finite = np.abs(z[np.isfinite(z)])
    top = float(finite.max()) if finite.size else 0.0
    top = top if top > 0 else 1.0
    return dict(zmin=-top, zmax=top, zmid=0.0)


def _colorbar(kind: str, style: _Kind) -> dict[str, Any]:
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
    are taken as at most `BAR_LABEL_CHARS` characters ("−0.5", "−200"): a wider one costs that
    second drawing, nothing else.
    """
    if kind == "mask":
        labels, titled = max(_text_width(t) for t in ("blocked", "allowed")), False
    else:
        widest = "0.8" if kind == "weights" and not fit_scale else NUMBER_LABEL
        labels, titled = _text_width(widest), True
    title = TITLE_STANDOFF + LINE_HEIGHT if titled else 0
    return math.ceil(2 * BAR_PAD + BAR_THICKNESS + BAR_TICK_GAP + labels + title)


def _cell_text(z: np.ndarray, digits: int = 3) -> list[list[str]]:
    """`(R, C)` values with `digits` significant digits, "" for blocked cells."""
    return [["" if math.isnan(v) else cell_number(v, digits) for v in row] for row in z.tolist()]


def cell_number(v: float, digits: int = 3) -> str:
    """A number short enough for a cell, never in scientific notation: `digits` significant
    digits, "<0.001" (or ">−0.001") for tiny ones, whole numbers from 10**digits up."""
    if v == 0:
        return "0"
    if abs(v) < SMALLEST_SHOWN:
        return f"<{SMALLEST_SHOWN:g}" if v > 0 else f">−{SMALLEST_SHOWN:g}"
    text = f"{v:.{digits}g}"
    return f"{v:.0f}" if "e" in text else text  # large: whole (small ones never reach "e")


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


def _overview_note(grid: PooledMatrix, style: _Kind) -> str:
    """The small title lines that say the heatmap is a pooled overview, short enough for a
    chart a third of a page wide (Compare's three): no view it may sit above is promised (the
    Heatmaps tab alone adds an exact focus row, and says so itself)."""
    rows, cols = grid.block_shape
    words = f"overview: each cell summarises a {rows}×{cols} block, {style.pooled_name}"
    lines = textwrap.wrap(html.escape(words, quote=False), NOTE_CHARS)
    return "".join(f"<br><sup>{line}</sup>" for line in lines)


def _title_room(title: str) -> int:
    """Pixels above the plot for a title of `title`'s lines (`<br>` breaks them)."""
    return 26 + 24 * (title.count("<br>") + 1)


def _base_layout(title: str, n_rows: int) -> dict[str, Any]:
    """Title, height, margins and transparent backgrounds (the page theme shows through)."""
    return dict(
        title=dict(text=title, x=0.0, xanchor="left"),
        height=_height(n_rows) + _title_room(title) - _title_room(""),
        margin=dict(l=10, r=10, t=_title_room(title), b=10),
        font=dict(size=FONT_SIZE),
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        hovermode="closest",
    )


def heatmap_height(n_rows: int) -> int:
    """A heatmap's height in pixels for `n_rows` rows (and a one-line title)."""
    return _height(n_rows)


def _height(n_rows: int) -> int:
    """Figure height in pixels: grows with the rows, from 300 to 900."""
    return int(min(900, max(300, 160 + 28 * n_rows)))


def _data_axis(cells: tuple[np.ndarray, list[str]], span: tuple[float, float]) -> dict[str, Any]:
    """The axis the traces use, over `span`: every cell's hover name as hidden tick text."""
    centres, names = cells
    return dict(
        tickmode="array",
        tickvals=centres,
        ticktext=names,
        showticklabels=False,
        ticks="",
        showgrid=False,
        zeroline=False,
        range=list(span),
        autorange=False,
    )


def standoff_title(text: str) -> dict[str, Any]:
    """An axis title `TITLE_STANDOFF` px from its labels. Set on every axis here: a theme's
    larger standoff (Streamlit's: 24-32 px) would outgrow the margins computed for it, and
    plotly would widen them and draw the chart a second time."""
    return dict(text=text, standoff=TITLE_STANDOFF)


def _label_axis(
    ticks: dict[str, Any], title: str, data_axis: str, span: tuple[float, float]
) -> dict[str, Any]:
    """An overlay axis over the same `span` as `data_axis`, showing a readable subset of labels."""
    return dict(
        overlaying=data_axis,
        anchor="y" if data_axis == "x" else "x",
        side="bottom" if data_axis == "x" else "left",
        title=standoff_title(title),
        showgrid=False,
        zeroline=False,
        range=list(span),
        autorange=False,
        **ticks,
    )


def _text_width(text: str) -> float:
    """About how many pixels `text` (escaped for plotly) takes in the tick font."""
    units = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in html.unescape(text))
    return units * CHAR_WIDTH


def _x_ticks(
    labels: list[str] | None, n: int, width: int = PLOT_WIDTH, tilt: int = -45
) -> tuple[dict[str, Any], int]:
    """The x tick labels and their angle: level if they all fit side by side in about `width`
    pixels, else tilted by `tilt` degrees and thinned to the ones that fit."""
    ticks = _tick_labels(labels, n)
    widest = max(_text_width(label) for label in ticks["ticktext"])
    if (widest + CHAR_WIDTH) * len(ticks["ticktext"]) <= width:
        return ticks, 0
    room = width / (LINE_HEIGHT if tilt == -90 else 1.5 * LINE_HEIGHT)
    return _tick_labels(labels, n, room=int(room)), tilt


def _heatmap_margin(
    x_labels: list[str],
    x_angle: int,
    y_labels: list[str],
    title_room: int,
    titled: bool = True,
) -> dict[str, int]:
    """Margins that fit the tick labels and axis titles (the colour bar makes its own room)."""
    x_width = min(MAX_LABEL_EXTENT, max(_text_width(label) for label in x_labels))
    y_width = min(MAX_LABEL_EXTENT, max(_text_width(label) for label in y_labels))
    tilt = math.radians(abs(x_angle))
    x_height = LINE_HEIGHT * math.cos(tilt) + x_width * math.sin(tilt)
    title = 6 + LINE_HEIGHT if titled else 0  # room for the axis title beside the labels
    return dict(
        l=int(10 + y_width + title + 8),
        r=10,
        t=title_room if titled else 36,
        b=int(10 + x_height + title + 8),
    )


def _tick_labels(labels: list[str] | None, n: int, room: int = MAX_TICKS) -> dict[str, Any]:
    """tickvals / ticktext: evenly spaced positions of `n`, at most `room` and `MAX_TICKS` of
    them (`MAX_NUMBER_TICKS` for numbered positions)."""
    numbers = [str(i) for i in range(n)]
    numbered = labels is None or list(labels) == numbers  # positions, not tokens
    most = min(room, MAX_NUMBER_TICKS if numbered else MAX_TICKS)
    shown = numbers if labels is None else labels
    positions = list(range(0, n, _tick_step(n, max(1, most))))
    return dict(
        tickmode="array",
        tickvals=positions,
        ticktext=[shown[p] for p in positions],
        tickfont=dict(size=FONT_SIZE),
    )


def _label_axes_trace() -> dict[str, Any]:
    """An empty trace on the overlay axes: plotly draws only axes that some trace uses."""
    return dict(
        type="scatter",
        x=[],
        y=[],
        xaxis="x2",
        yaxis="y2",
        mode="markers",
        hoverinfo="skip",
        showlegend=False,
    )


def _tick_step(n: int, most: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... that shows at most `most` of n positions."""
    step, factors = 1, (2, 2.5, 2)
    i = 0
    while math.ceil(n / step) > most:
        step = int(step * factors[i % 3])
        i += 1
    return step


def focus_row(
    values: Any,
    *,
    col_labels: Sequence[Any] | None = None,
    title: str = "",
    kind: str = "weights",
    blocked: Any = None,
    max_points: int = 4096,
    col_title: str | None = None,
) -> go.Figure:
    """A bar chart of one query row's exact values: the zoom-in for a heatmap overview.

    Args:
        values: `(S,)` numbers of one row (-inf counts as blocked).
        col_labels: `(S,)` labels; default "0", "1", ...
        title: figure title (shown as plain text).
        kind: "weights" (0 to 1, Viridis), "signed" or "values" (diverging).
        blocked: `(S,)` bool, True = blocked: drawn as grey bars at 0 with hover "masked".
        max_points: most bars.
        col_title: name of a column (default "key", or "feature" for kind "values").

    Returns:
        A `go.Figure`: trace 0 the allowed bars (exact float64 values), trace 1 (if any key is
        blocked) the blocked ones.
    """
    style = _KINDS[check_choice(kind, "kind", ("weights", "signed", "values"))]
    row = _as_matrix(values, "values", ndim=1)
    if row.size > check_int(max_points, "max_points", low=1):
        raise ValueError(
            f"`values` has {row.size} points but `focus_row` draws at most {max_points}. "
            "Pass a shorter row or raise `max_points`."
        )
    _, blocked = _prepare_matrix(row[None, :], _as_blocked(blocked, row.shape)[None, :], kind)
    labels = _labels(col_labels, row.size, "col_labels")
    names = [str(i) if labels is None else f"{i}: {labels[i]}" for i in range(row.size)]
    axis_title = _escape(style.col_title if col_title is None else col_title)
    traces = [_allowed_bars(row, ~blocked[0], names, style, kind, axis_title)]
    if blocked.any():
        traces.append(_blocked_bars(np.flatnonzero(blocked[0]), names, axis_title))
    x_ticks, x_angle = _x_ticks(labels, row.size)
    layout = _base_layout(_title(title, PLOT_WIDTH), 0)
    margin = _heatmap_margin(
        x_ticks["ticktext"], x_angle, [NUMBER_LABEL], layout["margin"]["t"]
    )  # the value axis's labels are plotly's numbers
    layout |= dict(
        margin=margin,
        hovermode="x",
        bargap=0.1,
        xaxis=dict(
            title=standoff_title(axis_title),
            showgrid=False,
            tickangle=x_angle,
            **x_ticks,
        ),
        yaxis=dict(
            title=standoff_title(style.value_name),
            rangemode="tozero",
            zeroline=True,
        ),
    )
    return _figure(traces, layout)


def _allowed_bars(
    row: np.ndarray, allowed: np.ndarray, names: list[str], style: _Kind, kind: str, axis: str
) -> dict[str, Any]:
    """Bars of the allowed keys, coloured like the heatmap."""
    keys = np.flatnonzero(allowed)
    span = _color_range(kind, row[keys])
    shares = (row[keys] - span["zmin"]) / (span["zmax"] - span["zmin"])  # (K,) in [0, 1]
    return dict(
        type="bar",
        x=keys,
        y=row[keys],
        customdata=[names[k] for k in keys],
        marker=dict(color=plotly.colors.sample_colorscale(style.colorscale, np.clip(shares, 0, 1))),
        hovertemplate=f"{axis} %{{customdata}}<br>{style.value_name} %{{y:.6~g}}<extra></extra>",
        name=style.value_name,
        showlegend=False,
    )


def _blocked_bars(keys: np.ndarray, names: list[str], axis: str) -> dict[str, Any]:
    """Grey zero-height bars of the blocked keys, marked "✕" for short rows."""
    return dict(
        type="bar",
        x=keys,
        y=np.zeros(keys.size),
        customdata=[names[k] for k in keys],
        marker=dict(color=BLOCKED_COLOR),
        text=["✕"] * keys.size if keys.size <= 64 else None,
        textposition="outside",
        hovertemplate=f"{axis} %{{customdata}}<br>masked<extra></extra>",
        name="masked",
        showlegend=False,
    )


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
    first, second = _as_matrix(a, "a", ndim=2), _as_matrix(b, "b", ndim=2)
    if first.shape != second.shape:
        raise ValueError(
            f"`a` and `b` must have the same shape. Received: a {first.shape}, b {second.shape}. "
            "Compare two matrices of the same query and key tokens."
        )
    undefined = ~np.isfinite(first) | ~np.isfinite(second) | _as_blocked(blocked, first.shape)
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
