"""A language model's training, epoch by epoch: the losses and the in-context accuracy above,
every head's previous-token and induction scores below, on one epoch axis, so the phase change
(the loss dropping in a step as an induction head forms) shows in both at the same epoch.

Shape letters: E epochs (epoch 0 = untrained first), L layers, H heads per layer.

Pure numpy + plotly, like the rest of `drawing`: the Learn page's language model draws it after
every epoch, and a notebook can draw a run's `LMCurves` the same way.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attnviz.drawing.plain_figure import PlainFigure
from attnviz.drawing.theme import FONT_SIZE

PREVIOUS_COLOR = "#1f77b4"  # the best previous-token head
INDUCTION_COLOR = "#d62728"  # the best induction head
OTHER_COLOR = "rgba(120, 120, 120, 0.45)"  # every other head's scores
JUMP_COLOR = "rgba(214, 39, 40, 0.5)"  # the epoch of the biggest jump in in-context accuracy


def head_name(layer: int, head: int) -> str:
    """How a head is named on the page: "layer 1 · head 0"."""
    return f"layer {layer} · head {head}"


def biggest_jump(epochs: Any, accuracy: Any) -> int | None:
    """The epoch whose in-context accuracy rose most over the epoch before, or None (fewer than
    two epochs, or no rise at all)."""
    acc = np.asarray(accuracy, dtype=float)
    if acc.size < 2:
        return None
    rise = np.diff(np.nan_to_num(acc, nan=0.0))
    k = int(np.argmax(rise))
    return int(np.asarray(epochs)[k + 1]) if rise[k] > 0 else None


def best_heads(
    previous_token: Any, induction: Any
) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """`((layer, head) of the highest previous-token score, (layer, head) of the highest
    induction score)` in `(L, H)` score arrays (the last epoch's, say); None where no score was
    recorded."""

    def best(scores: np.ndarray) -> tuple[int, int] | None:
        if not np.isfinite(scores).any():
            return None
        layer, head = np.unravel_index(int(np.nanargmax(scores)), scores.shape)
        return int(layer), int(head)

    return best(np.asarray(previous_token, dtype=float)), best(np.asarray(induction, dtype=float))


def phase_change_figure(curves: Any, *, title: str = "") -> go.Figure:
    """Two panels on one epoch axis.

    Args:
        curves: an `LMCurves` (or anything with its fields): `epochs (E,)`, `loss (E,)`
            (NaN at epoch 0), `val_loss (E,)`, `val_in_context_accuracy (E,)` from 0 to 1,
            `previous_token (E, L, H)` and `induction (E, L, H)` scores from 0 to 1 (NaN for a
            head whose scores were not recorded: it is not drawn).
        title: the figure title (plain text).

    Returns:
        Above: training and validation loss (left axis) and in-context accuracy in % (right
        axis). Below: every head's induction score (solid) and previous-token score (dotted),
        the heads that score highest at the last epoch in colour, the others grey. A dashed line
        in both marks the epoch of the biggest rise in in-context accuracy.
    """
    epochs = [int(e) for e in np.asarray(curves.epochs)]
    prev = np.asarray(curves.previous_token, dtype=float)  # (E, L, H)
    ind = np.asarray(curves.induction, dtype=float)
    if prev.ndim != 3 or prev.shape != ind.shape or prev.shape[0] != len(epochs):
        raise ValueError(
            "`previous_token` and `induction` must both be (epochs, layers, heads) with one row "
            f"per epoch ({len(epochs)}). Received: {prev.shape} and {ind.shape}."
        )
    best_prev, best_ind = best_heads(prev[-1], ind[-1])
    traces = [
        _line(epochs, curves.loss, "training loss", "y", "solid", "#444", "loss %{y:.3f}"),
        _line(epochs, curves.val_loss, "validation loss", "y", "dash", "#444", "loss %{y:.3f}"),
        _line(epochs, 100 * np.asarray(curves.val_in_context_accuracy, dtype=float),
              "in-context accuracy", "y2", "solid", "#2ca02c", "%{y:.1f} %"),
    ]  # fmt: skip
    others_named = False
    for layer in range(prev.shape[1]):
        for head in range(prev.shape[2]):
            for scores, kind, dash, best, color in (
                (ind, "induction", "solid", best_ind, INDUCTION_COLOR),
                (prev, "previous-token", "dot", best_prev, PREVIOUS_COLOR),
            ):
                if np.isnan(scores[:, layer, head]).all():  # not recorded: nothing to draw
                    continue
                mine = (layer, head) == best
                name = f"{kind}: {head_name(layer, head)}" if mine else "other heads"
                trace = _line(epochs, scores[:, layer, head], name, "y3", dash,
                              color if mine else OTHER_COLOR,
                              f"{head_name(layer, head)} {kind} %{{y:.2f}}")  # fmt: skip
                trace["showlegend"] = mine or not others_named
                trace["legendrank"] = 1 if mine else 1000
                others_named = others_named or not mine
                traces.append(trace)
    traces.sort(key=lambda t: t.get("legendrank", 0) == 1)  # the best heads drawn on top
    jump = biggest_jump(epochs, curves.val_in_context_accuracy)
    shapes = []
    if jump is not None:
        line = dict(color=JUMP_COLOR, dash="dash", width=2)
        for axis in ("y", "y3"):
            shapes.append(dict(type="line", xref="x", x0=jump, x1=jump, yref=f"{axis} domain",
                               y0=0, y1=1, line=line))  # fmt: skip
    layout = dict(
        title=dict(text=title, x=0.0, xanchor="left"),
        height=560,
        margin=dict(l=60, r=60, t=50, b=40),
        font=dict(size=FONT_SIZE),
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        xaxis=dict(
            title=dict(text="epoch"), dtick=_dtick(len(epochs)), rangemode="tozero", anchor="y3"
        ),
        yaxis=dict(title=dict(text="loss (nats)"), rangemode="tozero", domain=[0.58, 1.0]),
        yaxis2=dict(
            title=dict(text="in-context accuracy (%)"),
            overlaying="y",
            side="right",
            range=[0, 100],
            tickvals=[0, 25, 50, 75, 100],
            showgrid=False,
        ),
        yaxis3=dict(title=dict(text="head score"), range=[0, 1.02], domain=[0.0, 0.45]),
        legend=dict(orientation="h", y=-0.12),
        hovermode="x",
        shapes=shapes,
    )
    if jump is not None:
        layout["annotations"] = [dict(
            x=jump, xref="x", y=1.0, yref="y domain", yanchor="bottom", showarrow=False,
            text=f"biggest jump: epoch {jump}", font=dict(size=FONT_SIZE, color=INDUCTION_COLOR),
        )]  # fmt: skip
    return PlainFigure.of(traces, layout)  # plain: redrawn on every run, no plotly checks


def _line(x, y, name: str, axis: str, dash: str, color: str, hover: str) -> dict:
    values = [None if v is None or math.isnan(float(v)) else float(v) for v in np.asarray(y)]
    return dict(
        type="scatter",
        x=x,
        y=values,
        name=name,
        mode="lines+markers" if len(x) <= 30 else "lines",
        line=dict(dash=dash, color=color, width=2.5 if color != OTHER_COLOR else 1.2),
        marker=dict(size=5),
        yaxis=axis,
        hovertemplate=f"epoch %{{x}}<br>{hover}<extra></extra>",
    )


def _dtick(n: int) -> int:
    """A round step between epoch labels: every epoch up to 15, then 2, 5, 10, ..."""
    for step in (1, 2, 5, 10, 20, 50):
        if n / step <= 15:
            return step
    return 100
