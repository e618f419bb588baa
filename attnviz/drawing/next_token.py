"""How sure a language model was of each next token: one bar per position, the probability it
gave the token that really came next, coloured by whether that token was its best guess.

Pure numpy + plotly, like the rest of `drawing`: the Language model page draws it over the text;
copying shows as a run of bars near 1 where the text repeats.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attnviz.drawing.figures import FONT_SIZE, standoff_title

RIGHT_COLOR = "#2ca02c"  # the token that came next was the model's best guess
WRONG_COLOR = "#9a9a9a"  # it was not


def next_token_figure(
    tokens: Sequence[str], sure: Any, guessed: Sequence[str], *, title: str = ""
) -> go.Figure:
    """The bars.

    Args:
        tokens: `(N,)` the tokens that came next (position 1 on), as they are labelled.
        sure: `(N,)` the probability the model gave each of them, from the position before.
        guessed: `(N,)` the model's best guess at each position.
        title: the figure title (plain text).
    """
    p = np.asarray(sure, dtype=float)
    n = len(tokens)
    if p.shape != (n,) or len(guessed) != n:
        raise ValueError(
            f"`tokens`, `sure` and `guessed` must have one entry per position. Received: {n}, "
            f"{p.shape} and {len(guessed)}."
        )
    right = [g == t for g, t in zip(guessed, tokens, strict=True)]
    labels = [_plain(t) for t in tokens]
    trace = go.Bar(
        x=list(range(1, n + 1)),
        y=p,
        marker=dict(color=[RIGHT_COLOR if r else WRONG_COLOR for r in right]),
        customdata=[[label, _plain(g)] for label, g in zip(labels, guessed, strict=True)],
        hovertemplate="position %{x}: %{customdata[0]}<br>probability it gave this token "
        "%{y:.3f}<br>its best guess: %{customdata[1]}<extra></extra>",
        showlegend=False,
    )
    every = max(1, int(np.ceil(n / 64)))  # at most 64 labels across
    layout = dict(
        title=dict(text=_plain(title), x=0.0, xanchor="left"),
        height=260,
        margin=dict(l=60, r=20, t=50 if title else 20, b=60),
        font=dict(size=FONT_SIZE),
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        bargap=0.15,
        xaxis=dict(
            tickmode="array",
            tickvals=list(range(1, n + 1))[::every],
            ticktext=labels[::every],
            tickangle=0,
            title=standoff_title("next token"),
        ),
        yaxis=dict(
            range=[0, 1.02],
            title=standoff_title("probability"),
            tickvals=[0, 0.5, 1],
        ),
    )
    return go.Figure(data=[trace], layout=layout)


def _plain(text: Any) -> str:
    """Text as plotly shows it literally (its labels are HTML-ish markup)."""
    return html.escape(str(text), quote=False)
