"""A figure made larger for a projector: every font it sets, its margins and its height.

Plotly sets font sizes in many places besides the layout's: tick labels, cell values, colour bars
and annotations each carry their own. Scaling only the layout's font leaves those at 11-13 px on
a projector, so this scales every `font`-like entry of the figure's plain form.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from attnviz.drawing.plain_figure import PlainFigure

FONT_KEYS = ("font", "tickfont", "textfont", "insidetextfont", "outsidetextfont")
TALLER = 1.25  # how much taller a chart that fills its column gets (its width is the column's)
DEFAULT_FONT_SIZE = 12  # plotly's, when the layout sets none
DEFAULT_SIDE = 450  # plotly's default height (and width), in px


def for_projector(fig: go.Figure, scale: float) -> go.Figure:
    """A new figure: `fig`'s fonts, axis titles' distances and margins × `scale`.

    A figure that sets its own width (drawn at its own size, as a head map) grows as a whole:
    width, height and its markers × `scale`. Any other figure fills its column and only gets
    `TALLER`. `fig` itself is not changed.
    """
    plain = _scaled(fig.to_dict(), 1)  # a copy: a frozen figure's plain form is its own
    layout = plain.setdefault("layout", {})
    layout.setdefault("font", {}).setdefault("size", DEFAULT_FONT_SIZE)
    if layout.get("width"):
        layout["width"], layout["height"] = (
            int((layout.get(side) or DEFAULT_SIDE) * scale) for side in ("width", "height")
        )
        for trace in plain.get("data", []):  # its squares with it, or their text overflows
            marker = trace.get("marker") or {}
            if isinstance(marker.get("size"), (int, float)):
                trace["marker"] = {**marker, "size": marker["size"] * scale}
    else:
        layout["height"] = int((layout.get("height") or DEFAULT_SIDE) * TALLER)
    margin = layout.get("margin") or {}  # computed for the labels' widths at the normal size
    layout["margin"] = {
        side: size * scale if side in "lrtb" and isinstance(size, (int, float)) else size
        for side, size in margin.items()
    }
    return _figure(_scaled(plain, scale))


def fonts_for_projector(fig: go.Figure, scale: float) -> go.Figure:
    """A new figure: only `fig`'s fonts × `scale` (every text of it, its annotations' too), its
    size kept: for a figure whose cells are sized to fit its column, which would not fit it
    grown whole. `fig` itself is not changed."""
    plain = _scaled(fig.to_dict(), 1)  # a copy: a frozen figure's plain form is its own
    plain.setdefault("layout", {}).setdefault("font", {}).setdefault("size", DEFAULT_FONT_SIZE)
    return _figure(_scaled(plain, scale))


def _figure(plain: dict[str, Any]) -> go.Figure:
    """A figure of a whole plain form (its template included), built without plotly's checks:
    the presenter view draws every chart through here on every run (a checked `go.Figure` of
    a heatmap's plain form took ~11 ms, measured)."""
    return PlainFigure.of(plain.get("data", []), plain.get("layout", {}))


def _scaled(part: Any, scale: float) -> Any:
    """A copy of a figure's plain dict (or any part of it) with every font's size and axis
    title's standoff × `scale`."""
    if isinstance(part, list):
        return [_scaled(item, scale) for item in part]
    if not isinstance(part, dict):
        return part
    copy = {key: _scaled(value, scale) for key, value in part.items()}
    if isinstance(copy.get("standoff"), (int, float)):  # an axis title's distance from its labels
        copy["standoff"] = copy["standoff"] * scale
    for key in FONT_KEYS:
        font = copy.get(key)
        if isinstance(font, dict) and isinstance(font.get("size"), (int, float)):
            copy[key] = {**font, "size": font["size"] * scale}
    return copy
