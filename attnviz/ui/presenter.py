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


def presenting() -> bool:
    """True while the presenter view is on; before the switch is first drawn (a session's first
    run: the page's set-up comes first), what the URL says."""
    if PRESENT.is_set():
        return bool(PRESENT.get())
    return st.query_params.get(PRESENT.key, "").lower() == "true"


def presenter_switch() -> None:
    """The switch (drawn at the top of every page) and, when on, the larger style."""
    st.toggle(
        "Presenter view",
        help="For a projector: the sidebar folded away, larger text and charts, one chart per "
        "row. Every chart's toolbar also shows it full screen.",
        **PRESENT.widget(),
    )
    if presenting():
        st.html(STYLE)


def enlarged(fig):
    """`fig` with its text (and height) scaled for the projector while presenting; else `fig`."""
    if not presenting():
        return fig
    layout = fig.layout
    bigger = go.Figure(fig)
    bigger.update_layout(
        font_size=(layout.font.size or 12) * SCALE,
        height=int((layout.height or 450) * 1.25),
    )
    return bigger
