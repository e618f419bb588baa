"""Training curves: loss and accuracy per epoch, as one plotly figure with two y axes.

Plain numpy + plotly, like the rest of `drawing`: the Learn view draws it after every epoch and a
notebook can draw a model's `stats.history` the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

from attnviz.drawing.layout import standoff_title
from attnviz.drawing.plain_figure import PlainFigure
from attnviz.drawing.theme import FONT_SIZE

ACCURACY_SERIES = (  # (field of a history row, legend name, dash)
    (2, "training characters", "dot"),
    (3, "validation characters", "solid"),
    (4, "validation exact match", "dash"),
)


def training_curves(history: Sequence[Sequence[float]], *, title: str = "") -> go.Figure:
    """Loss (left axis) and accuracies in % (right axis) against the epoch.

    Args:
        history: rows `(epoch, loss, train char accuracy, val char accuracy, val exact match,
            seconds)`; NaN where a value does not exist (epoch 0 has no loss).
        title: the figure title (plain text).
    """
    epochs = [int(row[0]) for row in history]
    traces = [
        dict(
            type="scatter",
            x=epochs,
            y=[_or_none(row[1]) for row in history],
            name="training loss",
            mode="lines+markers",
            yaxis="y",
            hovertemplate="epoch %{x}<br>loss %{y:.4f}<extra></extra>",
        )
    ]
    for field, name, dash in ACCURACY_SERIES:
        traces.append(
            dict(
                type="scatter",
                x=epochs,
                y=[_percent(row[field]) for row in history],
                name=name,
                mode="lines+markers",
                line=dict(dash=dash),
                yaxis="y2",
                hovertemplate=f"epoch %{{x}}<br>{name} %{{y:.2f}} %<extra></extra>",
            )
        )
    layout = dict(
        title=dict(text=title, x=0.0, xanchor="left"),
        height=320,
        margin=dict(l=60, r=60, t=50, b=88),  # the axis title, then the legend (y=-0.25)
        font=dict(size=FONT_SIZE),
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        xaxis=dict(title=standoff_title("epoch"), dtick=1, rangemode="tozero"),
        yaxis=dict(title=standoff_title("loss"), rangemode="tozero"),
        yaxis2=dict(
            title=standoff_title("accuracy (%)"),
            overlaying="y",
            side="right",
            range=[0, 100],
            # plotly's default for an overlaying axis puts its ticks at the loss axis's grid
            # lines (20.2, 40.4, ... %): whole tens of percent instead, on their own grid
            tickmode="linear",
            tick0=0,
            dtick=20,
            showgrid=False,
        ),
        legend=dict(orientation="h", y=-0.25),
        hovermode="x unified",
    )
    return PlainFigure.of(traces, layout)  # plain: redrawn on every run, no plotly checks


def _or_none(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def _percent(x: float) -> float | None:
    value = _or_none(x)
    return None if value is None else 100.0 * value
