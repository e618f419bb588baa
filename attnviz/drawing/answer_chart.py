"""The chart an exercise reveals once answered: one matrix as a heatmap, the learner's cells
outlined dashed and the cells that answer it outlined solid, with a key to the two outlines.
Pure plotly."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attnviz.drawing.heatmap import heatmap_parts
from attnviz.drawing.plain_figure import PlainFigure
from attnviz.drawing.theme import HIGHLIGHT_COLOR

GUESS_COLOR = "#e8590c"  # orange, dashed: the learner's answer (on neither colour scale)
RIGHT_COLOR = HIGHLIGHT_COLOR  # red, solid: the cells that answer it


def answer_heatmap(
    matrix: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    title: str,
    kind: str = "weights",
    allowed: np.ndarray | None = None,
    guessed: Sequence[tuple[int, int]] = (),
    right: Sequence[tuple[int, int]] = (),
) -> go.Figure:
    """A `heatmap` of `matrix` `(R, C)` with `guessed` cells outlined dashed (orange) and
    `right` ones solid (red); `allowed` `(R, C)` bool greys the False cells (masked). The
    subtitle says which outline is which."""
    matrix = np.asarray(matrix, dtype=np.float64)
    blocked = None if allowed is None else ~np.asarray(allowed, dtype=bool)
    shown = matrix if blocked is None else np.where(blocked, np.nan, matrix)
    traces, layout = heatmap_parts(
        shown, row_labels=list(rows), col_labels=list(cols),
        kind="weights" if kind == "weights" else "signed", title=title, blocked=blocked,
    )  # fmt: skip
    outlines = [
        _outline(i, j, color, dash)
        for cells, color, dash in ((right, RIGHT_COLOR, "solid"), (guessed, GUESS_COLOR, "dash"))
        for i, j in cells
    ]
    layout["shapes"] = [*layout.get("shapes", ()), *outlines]
    return PlainFigure.of(traces, layout)  # plain: no plotly figure built for one chart


def _outline(i: int, j: int, color: str, dash: str) -> dict:
    """A rectangle around cell (row i, column j) of a heatmap's axes."""
    return dict(
        type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5, xref="x", yref="y",
        line=dict(color=color, width=3, dash=dash), fillcolor="rgba(0,0,0,0)",
    )  # fmt: skip


def outline_key(guessed: bool, right: bool) -> str:
    """The words under the chart that say which outline is which."""
    parts = []
    if right:
        parts.append("solid red: the answer")
    if guessed:
        parts.append("dashed orange: yours")
    return "Outlined cells: " + "; ".join(parts) + "." if parts else ""
