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

from attnviz.core.words import plural
from attnviz.drawing.layout import standoff_title
from attnviz.drawing.plain_figure import PlainFigure
from attnviz.drawing.theme import FONT_SIZE

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
    trace = dict(
        type="bar",
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
    return PlainFigure.of([trace], layout)  # plain: drawn on every run, no plotly checks


def copyable(read: Sequence[str]) -> np.ndarray:
    """`(N,)` bool over the positions that predict (all of `read` but the last): True where
    copying gives the next token, i.e. the token read occurred before (not just before) and the
    token after its last such occurrence is the one that comes next (`learn.language.metrics`'
    in-context positions).

    Args:
        read: `(N + 1,)` the tokens of the text, `<s>` first.
    """
    x = list(read)
    found = np.zeros(max(len(x) - 1, 0), dtype=bool)
    for i in range(len(x) - 1):
        earlier = [j for j in range(i - 1) if x[j] == x[i]]  # j < i − 1
        found[i] = bool(earlier) and x[earlier[-1] + 1] == x[i + 1]
    return found


def copying_words(read: Sequence[str], sure: Any, guessed: Sequence[str]) -> str:
    """What the next-token chart shows of copying, in words, from the same numbers: at the
    positions where copying gives the next token, how many the model guessed right and how sure
    it was (nothing is promised: a model that does not copy is said not to).

    Args:
        read: `(N + 1,)` the tokens of the text, `<s>` first.
        sure: `(N,)` the probability the model gave each next token `read[1:]`.
        guessed: `(N,)` its best guess at each position.
    """
    p = np.asarray(sure, dtype=float)
    where = copyable(read)
    if p.shape != where.shape or len(guessed) != where.size:
        raise ValueError(
            f"`read` must have one token more than `sure` and `guessed`. Received: {len(read)}, "
            f"{p.shape} and {len(guessed)}."
        )
    k = int(where.sum())
    if k == 0:
        return (
            "Nothing in this text can be copied: no token's earlier occurrence tells what "
            "comes next."
        )
    right = sum(guessed[i] == read[i + 1] for i in np.flatnonzero(where))
    mean = float(p[where].mean())
    return (
        f"Where the text repeats, copying what followed the earlier occurrence gives the next "
        f"token at {plural(k, 'position')}: the model's best guess was right at {right}, and it "
        f"gave the right token a mean probability of {mean:.2f}."
    )


def _plain(text: Any) -> str:
    """Text as plotly shows it literally (its labels are HTML-ish markup)."""
    return html.escape(str(text), quote=False)
