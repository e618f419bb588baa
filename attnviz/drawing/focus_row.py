"""The focus row: one query's exact values as bars, the zoom-in for a heatmap overview.

Shape letters: S keys (or features). Pure numpy + plotly; coloured like the heatmap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.colors
import plotly.graph_objects as go

from attnviz.core.checks import check_choice, check_int
from attnviz.drawing.drawable import as_blocked, as_matrix, drawable_matrix
from attnviz.drawing.layout import (
    NUMBER_LABEL,
    base_layout,
    label_margin,
    safe_label,
    safe_labels,
    standoff_title,
    wrapped_title,
    x_axis_ticks,
)
from attnviz.drawing.plain_figure import PlainFigure
from attnviz.drawing.theme import BLOCKED_COLOR, KINDS_BY_NAME, PLOT_WIDTH, MatrixKind, color_range


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
    style = KINDS_BY_NAME[check_choice(kind, "kind", ("weights", "signed", "values"))]
    row = as_matrix(values, "values", ndim=1)
    if row.size > check_int(max_points, "max_points", low=1):
        raise ValueError(
            f"`values` has {row.size} points but `focus_row` draws at most {max_points}. "
            "Pass a shorter row or raise `max_points`."
        )
    _, blocked = drawable_matrix(row[None, :], as_blocked(blocked, row.shape)[None, :], kind)
    span = color_range(kind, row[~blocked[0]])  # the allowed values', as the heatmap's colours
    labels = safe_labels(col_labels, row.size, "col_labels")
    names = [str(i) if labels is None else f"{i}: {labels[i]}" for i in range(row.size)]
    axis_title = safe_label(style.col_title if col_title is None else col_title)
    traces = [_allowed_bars(row, ~blocked[0], names, style, span, axis_title)]
    if blocked.any():
        traces.append(_blocked_bars(np.flatnonzero(blocked[0]), names, axis_title))
    return PlainFigure.of(traces, _layout(labels, row.size, title, (axis_title, style.value_name)))


def _layout(
    labels: list[str] | None, n: int, title: str, axis_titles: tuple[str, str]
) -> dict[str, Any]:
    """The layout of `n` bars: x ticks of `labels`, the axis titles (keys, values) and the
    title, with margins that fit them."""
    x_ticks, x_angle = x_axis_ticks(labels, n)
    layout = base_layout(wrapped_title(title, PLOT_WIDTH), 0)
    margin = label_margin(
        x_ticks["ticktext"], x_angle, [NUMBER_LABEL], layout["margin"]["t"]
    )  # the value axis's labels are plotly's numbers
    layout |= dict(
        margin=margin,
        hovermode="x",
        bargap=0.1,
        xaxis=dict(
            title=standoff_title(axis_titles[0]),
            showgrid=False,
            tickangle=x_angle,
            **x_ticks,
        ),
        yaxis=dict(
            title=standoff_title(axis_titles[1]),
            rangemode="tozero",
            zeroline=True,
        ),
    )
    return layout


def _allowed_bars(
    row: np.ndarray,
    allowed: np.ndarray,
    names: list[str],
    style: MatrixKind,
    span: dict[str, float],
    axis: str,
) -> dict[str, Any]:
    """Bars of the allowed keys, coloured like the heatmap over `span` (`zmin`, `zmax`)."""
    keys = np.flatnonzero(allowed)
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
