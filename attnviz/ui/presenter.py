"""The presenter view, for a projector: the sidebar collapsed, larger text and charts, one chart
per row. A switch at the top of every page, kept in the URL (`?present=true`), so a teacher's
link opens straight into it.
"""

from __future__ import annotations

import streamlit as st

from attnviz.drawing.projector import for_projector
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


def enlarged(fig):
    """`fig` made larger for the projector while presenting (`projector.for_projector`: every
    font, the margins, the height; a figure of its own width grows whole); else `fig`."""
    return for_projector(fig, SCALE) if presenting() else fig
