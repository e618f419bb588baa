"""The room's answers to a question, drawn for the projector: a bar per option (how many picked
each key), a histogram of estimates, or how many picked each cell drawn over the question's grid
(`answer_heatmap`, each cell's share of the room). The right answer, once revealed, is marked.
Plain figures (`plain_figure`): every phone draws the room's answers after the reveal. The
counts come in as plain numbers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attnviz.drawing.answer_chart import RIGHT_COLOR, answer_heatmap
from attnviz.drawing.plain_figure import PlainFigure
from attnviz.drawing.theme import ALLOWED_COLOR, FONT_SIZE

HEIGHT = 300  # px: a bar chart beside the count


def option_bars(
    options: Sequence[str], counts: Sequence[int], *, title: str, right: str | None = None
) -> go.Figure:
    """A bar per option, its height how many picked it; the `right` option's bar in red (after
    the reveal), the others blue; each bar says its count."""
    colors = [RIGHT_COLOR if option == right else ALLOWED_COLOR for option in options]
    bar = dict(
        type="bar", x=list(options), y=list(counts), marker=dict(color=colors),
        text=[str(c) for c in counts], textposition="outside", cliponaxis=False,
        hovertemplate="%{x}: %{y} answers<extra></extra>",
    )  # fmt: skip
    return PlainFigure.of([bar], _layout(title, max(counts, default=0), "answers"))


def estimate_histogram(
    edges: Sequence[float], counts: Sequence[int], *, title: str, right: float | None = None
) -> go.Figure:
    """The estimates' histogram: a bar per bin from `edges[k]` to `edges[k + 1]`; a red line at
    the `right` value (after the reveal)."""
    edges = np.asarray(edges, dtype=np.float64)  # (BINS + 1,)
    middles, widths = (edges[:-1] + edges[1:]) / 2, np.diff(edges)  # (BINS,) each
    bar = dict(
        type="bar", x=middles, y=list(counts), width=widths * 0.95,
        marker=dict(color=ALLOWED_COLOR), text=[str(c) if c else "" for c in counts],
        textposition="outside", cliponaxis=False,
        customdata=np.stack([edges[:-1], edges[1:]], axis=1),
        hovertemplate="%{customdata[0]:.2f} to %{customdata[1]:.2f}: %{y} answers"
                      "<extra></extra>",
    )  # fmt: skip
    layout = _layout(title, max(counts, default=0), "answers")
    layout["xaxis"] = dict(title=dict(text="estimate"), range=[edges[0], edges[-1]])
    if right is not None:  # a line across the plot at the answer, named at its top
        layout["shapes"] = [dict(type="line", x0=right, x1=right, xref="x", y0=0, y1=1,
                                 yref="y domain",
                                 line=dict(color=RIGHT_COLOR, width=3))]  # fmt: skip
        layout["annotations"] = [dict(text=f"the answer: {right:.2f}", x=right, xref="x", y=1,
                                      yref="y domain", xanchor="left", yanchor="top",
                                      showarrow=False)]  # fmt: skip
    return PlainFigure.of([bar], layout)


def cell_shares(
    counts: np.ndarray,
    answered: int,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    title: str,
    right: Sequence[tuple[int, int]] = (),
) -> go.Figure:
    """How many of the `answered` picked each cell, as a share from 0 to 1 over the question's
    grid (`counts` `(rows, cols)`); the `right` cells outlined (after the reveal)."""
    shares = np.asarray(counts, dtype=np.float64) / max(answered, 1)  # (rows, cols)
    return answer_heatmap(shares, rows, cols, title=title, right=right)


def _layout(title: str, highest: int, what: str) -> dict:
    return dict(
        title=dict(text=title), height=HEIGHT, margin=dict(l=50, r=20, t=60, b=40),
        font=dict(size=FONT_SIZE), showlegend=False, bargap=0.1,
        yaxis=dict(title=dict(text=what), range=[0, max(1, highest) * 1.25], dtick=_tick(highest)),
    )  # fmt: skip


def _tick(highest: int) -> int:
    """Whole-number ticks, at most about 6 of them."""
    return max(1, -(-max(highest, 1) // 5))
