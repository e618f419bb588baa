"""The layout around a chart's cells: labels made safe and measured, ticks, axes, titles,
margins and heights.

- Axes. Cells sit at numeric positions, so repeated tokens stay separate cells. The data axes
  (`xaxis`, `yaxis`) list a name for every cell in `ticktext` but hide it; plotly uses that text
  for `%{x}` / `%{y}` in hover labels. Readable, thinned tick labels live on the overlay axes
  `xaxis2` / `yaxis2`. Both pairs get the same fixed range, so a zoom (which moves overlaid axes
  together) and its reset keep them aligned. Margins are sized here from the labels, not by
  plotly's `automargin` or `matches`: each of those makes plotly lay a chart out twice, which
  was most of the time the page took to redraw its six heatmaps.
- Labels are user text and plotly renders text as HTML-ish markup, so every label and title is
  cut to `LABEL_CHARS` characters and HTML-escaped (`safe_label`); titles are escaped and
  wrapped, never cut (`wrapped_title`).

Pure numpy + plotly's layout as plain dicts.
"""

from __future__ import annotations

import html
import math
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

from attnviz.core.checks import describe
from attnviz.drawing.theme import FONT_SIZE, PLOT_WIDTH

MAX_TICKS = 40  # most token labels per axis; more positions (or too little room) get a subset
MAX_NUMBER_TICKS = 10  # most labels of numbered positions (0, 1, 2, ...): a round step, as
# plotly's own axes do. Each label costs the browser time on every redraw (~0.2 ms).
LABEL_CHARS = 40  # labels longer than this are cut (keeps figures small and readable)
CHAR_WIDTH = 0.6 * FONT_SIZE  # px of an average Latin character; wide (CJK) characters count 2
LINE_HEIGHT = 1.3 * FONT_SIZE  # px of one line of tick or title text
MAX_LABEL_EXTENT = 180  # px: the margin grows with the labels up to this, then labels overflow
TITLE_STANDOFF = 8  # px between an axis's (or the colour bar's) labels and its title
NUMBER_LABEL_CHARS = 4  # characters plotly's own number labels (a colour bar's, a value
# axis's) are given room for: "−0.5", "−200"
NUMBER_LABEL = "−" * NUMBER_LABEL_CHARS  # a stand-in as wide as the widest of them


def safe_label(text: Any) -> str:
    """User text made safe for plotly's HTML-ish rendering, cut to `LABEL_CHARS` characters."""
    text = " ".join(str(text).split())  # newlines and tabs would break tick and hover text
    if len(text) > LABEL_CHARS:
        text = text[: LABEL_CHARS - 1] + "…"
    return html.escape(text, quote=False)


def safe_labels(labels: Sequence[Any] | None, n: int, name: str) -> list[str] | None:
    """Escaped, shortened labels, or None for the default numbering."""
    if labels is None:
        return None
    if isinstance(labels, str) or not hasattr(labels, "__len__") or len(labels) != n:
        raise ValueError(
            f"`{name}` must be a list with one label per position: {n} labels. "
            f"Received: {describe(labels)}."
        )
    return [safe_label(label) for label in labels]


def wrapped_title(text: Any, width: int) -> str:
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


def text_width(text: str) -> float:
    """About how many pixels `text` (escaped for plotly) takes in the tick font."""
    units = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in html.unescape(text))
    return units * CHAR_WIDTH


def cell_names(labels: list[str] | None, edges: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Centres `(n,)` of the cells or blocks and their hover names ("3: the", "0–15: a … z")."""
    starts, ends = edges[:-1], edges[1:] - 1
    names = []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        span = f"{a}" if a == b else f"{a}–{b}"
        if labels is not None:
            span += f": {labels[a]}" if a == b else f": {labels[a]} … {labels[b]}"
        names.append(span)
    return (starts + ends) / 2, names


def tick_labels(labels: list[str] | None, n: int, room: int = MAX_TICKS) -> dict[str, Any]:
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


def _tick_step(n: int, most: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... that shows at most `most` of n positions."""
    step, factors = 1, (2, 2.5, 2)
    i = 0
    while math.ceil(n / step) > most:
        step = int(step * factors[i % 3])
        i += 1
    return step


def x_axis_ticks(
    labels: list[str] | None, n: int, width: int = PLOT_WIDTH, tilt: int = -45
) -> tuple[dict[str, Any], int]:
    """The x tick labels and their angle: level if they all fit side by side in about `width`
    pixels, else tilted by `tilt` degrees and thinned to the ones that fit."""
    ticks = tick_labels(labels, n)
    widest = max(text_width(label) for label in ticks["ticktext"])
    if (widest + CHAR_WIDTH) * len(ticks["ticktext"]) <= width:
        return ticks, 0
    room = width / (LINE_HEIGHT if tilt == -90 else 1.5 * LINE_HEIGHT)
    return tick_labels(labels, n, room=int(room)), tilt


def data_axis(cells: tuple[np.ndarray, list[str]], span: tuple[float, float]) -> dict[str, Any]:
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


def label_axis(
    ticks: dict[str, Any], title: str, overlaid: str, span: tuple[float, float]
) -> dict[str, Any]:
    """An overlay axis over the same `span` as the data axis `overlaid` ("x" or "y"), showing
    a readable subset of labels. Labels are not hidden where they pass the chart's edge
    (`ticklabeloverflow`): the margins are made for them, and plotly's check measures every
    label in the browser (~100 ms of forced layout on a page of ten charts)."""
    return dict(
        overlaying=overlaid,
        ticklabeloverflow="allow",
        anchor="y" if overlaid == "x" else "x",
        side="bottom" if overlaid == "x" else "left",
        title=standoff_title(title),
        showgrid=False,
        zeroline=False,
        range=list(span),
        autorange=False,
        **ticks,
    )


def label_axes_trace() -> dict[str, Any]:
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


def standoff_title(text: str) -> dict[str, Any]:
    """An axis title `TITLE_STANDOFF` px from its labels. Set on every axis here: a theme's
    larger standoff (Streamlit's: 24-32 px) would outgrow the margins computed for it, and
    plotly would widen them and draw the chart a second time."""
    return dict(text=text, standoff=TITLE_STANDOFF)


def label_margin(
    x_labels: list[str],
    x_angle: int,
    y_labels: list[str],
    top: int,
    titled: bool = True,
) -> dict[str, int]:
    """Margins that fit the tick labels and axis titles (the colour bar makes its own room),
    `top` pixels above the plot for a title."""
    x_width = min(MAX_LABEL_EXTENT, max(text_width(label) for label in x_labels))
    y_width = min(MAX_LABEL_EXTENT, max(text_width(label) for label in y_labels))
    tilt = math.radians(abs(x_angle))
    x_height = LINE_HEIGHT * math.cos(tilt) + x_width * math.sin(tilt)
    title = 6 + LINE_HEIGHT if titled else 0  # room for the axis title beside the labels
    return dict(
        l=int(10 + y_width + title + 8),
        r=10,
        t=top if titled else 36,
        b=int(10 + x_height + title + 8),
    )


def title_room(title: str) -> int:
    """Pixels above the plot for a title of `title`'s lines (`<br>` breaks them)."""
    return 26 + 24 * (title.count("<br>") + 1)


def base_layout(title: str, n_rows: int) -> dict[str, Any]:
    """Title, height, margins and transparent backgrounds (the page theme shows through)."""
    return dict(
        title=dict(text=title, x=0.0, xanchor="left"),
        height=heatmap_height(n_rows) + title_room(title) - title_room(""),
        margin=dict(l=10, r=10, t=title_room(title), b=10),
        font=dict(size=FONT_SIZE),
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        hovermode="closest",
    )


def heatmap_height(n_rows: int) -> int:
    """A heatmap's height in pixels for `n_rows` rows (and a one-line title): grows with the
    rows, from 300 to 900."""
    return int(min(900, max(300, 160 + 28 * n_rows)))
