"""Line view: queries and keys as two columns of tokens joined by lines (as in BertViz).

A line's opacity is the attention weight; hovering or tapping a token shows only its lines. The
view is a self-contained HTML page (SVG + a few lines of JavaScript) for an iframe. Tokens are
user text, so they travel as JSON data and are drawn with `textContent`: never parsed as HTML.
Shape letters: T queries, S keys.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from attnviz.drawing.layout import heatmap_height

MAX_LINE_TOKENS = 64  # most queries or keys the line view draws
MIN_WEIGHT = 0.01  # weights below this get no line
ROW_HEIGHT = 22  # pixels per token row
THEMES = {  # text, line and highlight colours readable on each Streamlit theme
    "light": ("#31333f", "#1f5fbf", "#d6336c"),
    "dark": ("#e6e6ea", "#7fb2ff", "#ff7aa8"),
}

_PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;font:13px "Source Sans Pro",sans-serif;background:transparent;color:__TEXT__}
text{fill:__TEXT__;cursor:pointer} text.on{fill:__HIGH__;font-weight:bold}
line{stroke:__LINE__} .note{margin:2px 0 6px 4px;opacity:.75}
</style></head><body><div class="note"></div><svg></svg><script>
(() => {
const d = JSON.parse(document.getElementById("data").textContent);
const svg = document.querySelector("svg"), NS = "http://www.w3.org/2000/svg";
const width = Math.max(260, Math.min(520, window.innerWidth || 520));  // as wide as the frame
const rowH = d.rowH, y0 = 14, left = Math.round(width / 3), right = width - left;
const n = Math.max(d.rows.length, d.cols.length);  // (a phone's narrow frame: rows stay tall)
svg.setAttribute("viewBox", `0 0 ${width} ${y0 + rowH * n}`);
svg.setAttribute("width", "100%"); svg.style.maxWidth = width + "px";
document.querySelector(".note").textContent = d.note;
const lines = [];
for (const [i, j, w] of d.lines) {
  const l = document.createElementNS(NS, "line");
  l.setAttribute("x1", left + 6); l.setAttribute("y1", y0 + rowH * i - 4);
  l.setAttribute("x2", right - 6); l.setAttribute("y2", y0 + rowH * j - 4);
  l.setAttribute("stroke-opacity", w); l.setAttribute("stroke-width", 1 + 3 * w);
  svg.appendChild(l); lines.push([i, j, l]);
}
let pinned = null;  // [side, k] of the token tapped or clicked last, until tapped again
function show(side, k, on) {
  for (const [i, j, l] of lines) l.style.display = (!on || (side ? j : i) === k) ? "" : "none";
  labels[side][k].classList.toggle("on", on);
}
const labels = [d.rows, d.cols].map((names, side) => names.map((name, k) => {
  const t = document.createElementNS(NS, "text");
  t.textContent = name;
  t.setAttribute("x", side ? right : left); t.setAttribute("y", y0 + rowH * k);
  t.setAttribute("text-anchor", side ? "start" : "end");
  t.addEventListener("mouseenter", () => { if (!pinned) show(side, k, true); });
  t.addEventListener("mouseleave", () => { if (!pinned) show(side, k, false); });
  t.addEventListener("click", () => {  // a tap (a touch screen has no hover) or a click
    const same = pinned && pinned[0] === side && pinned[1] === k;
    if (pinned) show(pinned[0], pinned[1], false);
    pinned = same ? null : [side, k];
    if (pinned) show(side, k, true);
  });
  svg.appendChild(t); return t;
}));
})();
</script></body></html>"""


def line_view_data(
    weights: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    row_positions: Sequence[int] | None = None,
) -> dict:
    """The lines to draw: `[i, j, weight]` for every weight of at least `MIN_WEIGHT`.

    Args:
        weights: `(T, S)` attention weights in [0, 1].
        row_labels: `(T,)` query tokens; col_labels: `(S,)` key tokens.
        row_positions: `(T,)` the queries' positions shown beside them (default 0 … T − 1);
            one query of a sentence, "sat" at position 2, is `[2]`.
    """
    w = np.asarray(weights, dtype=np.float64)  # (T, S)
    t, s = w.shape
    if max(t, s) > MAX_LINE_TOKENS:
        raise ValueError(
            f"The line view draws at most {MAX_LINE_TOKENS} queries and keys. Received {t} "
            f"queries and {s} keys: use the heatmap, or fewer tokens."
        )
    positions = range(t) if row_positions is None else [int(i) for i in row_positions]
    if len(positions) != t:
        raise ValueError(
            f"`row_positions` needs one position per query: {t} queries, "
            f"{len(positions)} positions."
        )
    rows, cols = np.nonzero(w >= MIN_WEIGHT)
    lines = [[int(i), int(j), round(float(w[i, j]), 4)] for i, j in zip(rows, cols, strict=True)]
    return {
        "rows": [f"{label} ·{i}" for i, label in zip(positions, row_labels, strict=True)],
        "cols": [f"{j}· {label}" for j, label in enumerate(col_labels)],
        "lines": lines,
        "rowH": row_height(t, s),
        "note": "Queries (left) → keys (right). Line opacity = weight. Tap or hover a token to "
        "see only its lines (tap it again for all).",
    }


def line_view_html(
    weights: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    theme: str = "light",
    row_positions: Sequence[int] | None = None,
) -> str:
    """A self-contained HTML page drawing the line view of `weights (T, S)` (`row_positions` as
    in `line_view_data`)."""
    text, line, high = THEMES.get(theme, THEMES["light"])
    data = line_view_data(weights, row_labels, col_labels, row_positions)
    data = json.dumps(data, ensure_ascii=True)
    # JSON inside <script>: escape what could close the element or start markup
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    page = _PAGE.replace("__TEXT__", text).replace("__LINE__", line).replace("__HIGH__", high)
    return page.replace(
        "<script>", f'<script type="application/json" id="data">{data}</script><script>', 1
    )


def row_height(t: int, s: int) -> float:
    """Pixels between two token rows: at least `ROW_HEIGHT`, more for few tokens, so the view
    is as tall as a heatmap of the same rows."""
    n = max(t, s)
    return max(ROW_HEIGHT, (heatmap_height(n) - 40) / n)


def line_view_height(t: int, s: int) -> int:
    """Pixel height of the iframe that holds the view."""
    return int(40 + row_height(t, s) * max(t, s))
