"""What switching one head off does: a head × metric heatmap, coloured by how much worse each
metric gets when that head alone is switched off, each cell saying the metric and its change.

Shape letters: L layers, H heads per layer, M metrics.

Pure numpy + plotly, like the rest of `drawing`: the Learn page's language model draws an
`AblationTable` with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attnviz.drawing.phase_change import head_name
from attnviz.drawing.plain_figure import PlainFigure
from attnviz.drawing.theme import FONT_SIZE, WEIGHTS_COLORSCALE


def harm(values: Any, baseline: Any, higher_is_better: Sequence[bool]) -> np.ndarray:
    """`(L·H, M)` how much worse each metric got, from 0 (no worse, or better) to 1 (the most
    any head made that metric worse): each column scaled by its own largest harm, so losses in
    nats and accuracies in fractions share one colour scale. `values` `(L·H, M)` with the head
    off; `baseline` `(M,)` with nothing off."""
    off = np.asarray(values, dtype=float)
    base = np.asarray(baseline, dtype=float)
    sign = np.where(np.asarray(higher_is_better, dtype=bool), 1.0, -1.0)
    worse = np.clip((base - off) * sign, 0.0, None)  # (L·H, M)
    worse = np.nan_to_num(worse, nan=0.0)
    largest = worse.max(axis=0, initial=0.0)
    return np.divide(worse, largest, out=np.zeros_like(worse), where=largest > 0)


def ablation_figure(
    names: Sequence[str],
    values: Any,
    baseline: Any,
    higher_is_better: Sequence[bool],
    n_heads: int,
    *,
    percent: Sequence[bool] | None = None,
    title: str = "",
) -> go.Figure:
    """The heatmap: one row per head (layer by layer), one column per metric.

    Args:
        names: `(M,)` the metrics' labels.
        values: `(L·H, M)` each metric with that head switched off.
        baseline: `(M,)` each metric with nothing switched off.
        higher_is_better: `(M,)` True for accuracies, False for losses.
        n_heads: H, heads per layer (rows are named "layer l · head h").
        percent: `(M,)` which metrics to print as percentages (default: the accuracies).
        title: the figure title (plain text).
    """
    off = np.asarray(values, dtype=float)
    base = np.asarray(baseline, dtype=float)
    m = len(names)
    if off.ndim != 2 or off.shape[1] != m or base.shape != (m,) or len(higher_is_better) != m:
        raise ValueError(
            f"`values` must be (heads, {m}) and `baseline` ({m},), one column per metric name. "
            f"Received: {off.shape} and {base.shape}."
        )
    if n_heads < 1 or off.shape[0] % n_heads:
        raise ValueError(f"{off.shape[0]} rows are not whole layers of {n_heads} heads.")
    percent = list(higher_is_better) if percent is None else list(percent)
    rows = [head_name(r // n_heads, r % n_heads) for r in range(off.shape[0])]
    colour = harm(off, base, higher_is_better)
    text = [[_cell(off[r, c], base[c], percent[c]) for c in range(m)] for r in range(len(rows))]
    trace = dict(
        type="heatmap",
        z=colour,
        x=list(names),
        y=rows,
        text=text,
        texttemplate="%{text}",
        textfont=dict(size=FONT_SIZE - 1),
        colorscale=WEIGHTS_COLORSCALE,
        zmin=0.0,
        zmax=1.0,
        colorbar=dict(
            title=dict(text="how much worse", side="right"),
            thickness=12,
            tickvals=[0, 1],
            ticktext=["no worse", "worst"],
        ),  # fmt: skip
        hovertemplate="%{y}, switched off<br>%{x}: %{text}<extra></extra>",
        xgap=1,
        ygap=1,
    )
    height = int(min(900, 140 + 34 * len(rows)))
    layout = dict(
        # at the top, above the metrics' names however tall they stand (`automargin`)
        title=dict(
            text=title,
            x=0.0,
            xanchor="left",
            y=1.0,
            yanchor="top",
            yref="container",
            automargin=True,
            pad=dict(t=8, b=6),
        ),
        height=height,
        margin=dict(l=130, r=40, t=100 if title else 50, b=20),
        font=dict(size=FONT_SIZE),
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        # each metric's name on two lines, each cell's change below its value: on one line
        # they ran into their neighbours' on a phone's 60-px columns. Where the columns are
        # narrower still (a 390-px phone: ~33 px), plotly turns the names upright rather than
        # overlap them (`autotickangles`), widening the top margin to hold them
        xaxis=dict(
            side="top",
            autotickangles=[0, 90],
            automargin=True,
            fixedrange=True,
            tickmode="array",
            tickvals=list(names),
            ticktext=[_two_lines(name) for name in names],
        ),
        yaxis=dict(autorange="reversed", fixedrange=True),
    )
    return PlainFigure.of([trace], layout)  # plain: redrawn on every run, no plotly checks


def _cell(value: float, baseline: float, percent: bool) -> str:
    if np.isnan(value):
        return "–"
    if percent:
        return f"{100 * value:.0f} %<br>({_change(100 * (value - baseline), 0)})"
    return f"{value:.2f}<br>({_change(value - baseline, 2)})"


def _two_lines(name: str) -> str:
    """A metric's name on two lines, broken at its first space ("in-context<br>loss (nats)")."""
    return name.replace(" ", "<br>", 1)


def _change(change: float, digits: int) -> str:
    """`change` signed, to `digits` decimals; one that rounds to zero is "+0", never "-0"."""
    return f"{round(change, digits) + 0.0:+.{digits}f}"  # + 0.0 turns -0.0 into 0.0
