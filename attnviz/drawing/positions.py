"""The position scheme's pattern, drawn: what RoPE or ALiBi alone does to the scores of identical
tokens (`attnviz.inputs.probe.position_probe`), as a heatmap and as the score by offset i − j.
Plain plotly: a notebook can show it too.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attnviz.drawing.heatmap import heatmap
from attnviz.drawing.plain_figure import PlainFigure
from attnviz.drawing.theme import FONT_SIZE

SCHEME_NAMES = {"rope": "RoPE", "alibi": "ALiBi", "sinusoidal": "sinusoidal", "none": "none"}


def probe_heatmap(probe, head: int = 0) -> go.Figure:
    """The `(T, T)` scores of head `head` of a position probe: identical tokens, so only the
    positions make the pattern."""
    name = SCHEME_NAMES[probe.position]
    return heatmap(
        probe.scores[head], kind="signed", row_title="query position",
        col_title="key position", title=f"{name} alone: scores of identical tokens",
        annotate=probe.scores.shape[-1] <= 8,
    )  # fmt: skip


def offset_lines(probe) -> go.Figure:
    """Each head's score against the offset i − j (when the pattern depends on nothing else)."""
    t = probe.scores.shape[-1]
    offsets = np.arange(-(t - 1), t)  # (2T − 1,)
    traces = []
    for h, row in enumerate(probe.by_offset):
        label = f"head {h}" if probe.slopes is None else f"head {h} (m = {probe.slopes[h]:.3g})"
        traces.append(dict(type="scatter", x=offsets, y=row, mode="lines+markers", name=label))
    layout = dict(
        title=dict(text="The score depends only on the offset i − j", x=0.0, xanchor="left"),
        xaxis=dict(title=dict(text="offset i − j (query after key: positive)")),
        yaxis=dict(title=dict(text="score")),
        height=360, margin=dict(l=10, r=10, t=50, b=10), font=dict(size=FONT_SIZE),
        paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="rgba(0,0,0,0)",
    )  # fmt: skip
    return PlainFigure.of(traces, layout)  # plain: drawn on every run, no plotly checks
