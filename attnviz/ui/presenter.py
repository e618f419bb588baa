"""The presenter view, for a projector: the sidebar collapsed, larger text and charts, one chart
per row. A switch at the top of every page, kept in the URL (`?present=true`), so a teacher's
link opens straight into it.
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from attnviz.ui.state import slot

PRESENT = slot("present", False, url=True)  # the presenter view is on
SCALE = 1.5  # how much larger charts' text is when presenting
STYLE = """<style>
html { font-size: 21px; }
[data-testid="stMainBlockContainer"] { max-width: 100%; padding-left: 2rem; padding-right: 2rem; }
</style>"""  # our own constant CSS: larger text, the whole width; never user text
# On a phone a heatmap of 8-12 columns gets 20-30 px a cell, too narrow for its printed values
# at the charts' 11-13 px: they ran into each other. There the values are smaller, and a heatmap
# of more than 36 cells prints none (a tap shows any cell's value, as hovering does). Plotly
# draws a heatmap's cells as one image in `g.hm`, then one `g.heatmap-label` per printed value.
# Titles are smaller there too: plotly never wraps one, and a long one ran off the chart.
NARROW_STYLE = """<style>
@media (max-width: 640px) {
  .js-plotly-plot g.heatmap-label text { font-size: 9px !important; }
  .js-plotly-plot g.hm:has(> g.heatmap-label:nth-child(38)) > g.heatmap-label { display: none; }
  .js-plotly-plot .gtitle { font-size: 12px !important; }
}
</style>"""  # our own constant CSS


def presenting() -> bool:
    """True while the presenter view is on; before the switch is first drawn (a session's first
    run: the page's set-up comes first), what the URL says."""
    return bool(PRESENT.get_or_linked())


def presenter_switch() -> None:
    """The switch (drawn at the top of every page) and, when on, the larger style."""
    st.toggle(
        "Presenter view",
        help="For a projector: the sidebar folded away, larger text and charts, one chart per "
        "row. Every chart's toolbar also shows it full screen.",
        **PRESENT.widget(),
    )
    st.html(STYLE if presenting() else NARROW_STYLE)


def chart_columns(spec: int | list[float]) -> list:
    """Columns for charts side by side (`st.columns(spec)`); while presenting, one full-width
    container per column instead, stacked: one chart a row on the projector."""
    if presenting():
        return [st.container() for _ in range(spec if isinstance(spec, int) else len(spec))]
    return st.columns(spec)


FONT_KEYS = ("font", "tickfont", "textfont", "insidetextfont", "outsidetextfont")


def enlarged(fig):
    """`fig` with all its text (and height) scaled for the projector while presenting; else
    `fig`. Every font size the figure sets is scaled, not only the layout's: tick labels, cell
    values, colour bars and annotations set their own. A figure that sets its own width is
    scaled whole: width, height and its markers."""
    if not presenting():
        return fig
    plain = fig.to_dict()
    layout = plain.setdefault("layout", {})
    layout.setdefault("font", {}).setdefault("size", 12)
    if layout.get("width"):  # a figure drawn at its own size (the head map) grows as a whole
        layout["width"], layout["height"] = (
            int((layout.get(side) or 450) * SCALE) for side in ("width", "height")
        )
        for trace in plain.get("data", []):  # its squares with it, or their text overflows
            marker = trace.get("marker") or {}
            if isinstance(marker.get("size"), (int, float)):
                trace["marker"] = {**marker, "size": marker["size"] * SCALE}
    else:
        layout["height"] = int((layout.get("height") or 450) * 1.25)
    margin = layout.get("margin") or {}  # computed for the labels' widths at the normal size
    layout["margin"] = {
        side: size * SCALE if side in "lrtb" and isinstance(size, (int, float)) else size
        for side, size in margin.items()
    }
    return go.Figure(_scaled(plain, SCALE))


def _scaled(part, scale: float):
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
