"""Charts every mode draws the same way: a plotly chart with its PNG and SVG buttons, the line
view, and a grid of heads. The figures themselves are `attnviz.drawing`'s.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.drawing.construction import Side, side_figures
from attnviz.drawing.lineview import MAX_LINE_TOKENS, line_view_height, line_view_html
from attnviz.drawing.model_view import model_view
from attnviz.ui.frame.presenter import chart_columns, enlarged
from attnviz.ui.frame.state import Slot
from attnviz.ui.frame.takeaway import collect

CHART_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}
ACROSS = ": queries down, keys across"  # how a head grid's cells read, ending its titles
HEAD_GRID_PX = 760  # px the heads of one grid share: four heads get a thumbnail's 180 px


def chart(fig, name: str, **kwargs) -> None:
    """A plotly figure whose toolbar saves it as `attnviz-<name>.png` (larger in the presenter
    view), and on the page of "Download this view" (`takeaway`) when the view offers one."""
    collect(fig, name)
    st.plotly_chart(enlarged(fig), config=chart_config(name), theme="streamlit", **kwargs)


def chart_config(name: str) -> dict:
    """The toolbar of a chart saved as `attnviz-<name>.png` (and `.svg`: `presenter`'s script)."""
    images = {**CHART_CONFIG["toImageButtonOptions"], "filename": f"attnviz-{name}"}
    return {**CHART_CONFIG, "toImageButtonOptions": images}


def fit_toggle(fit: Slot[bool]) -> bool:
    """The switch that colours weights from 0 to their largest instead of 0 to 1 (`fit` keeps
    it): a long row's weights, each about 1/S, all look dark on 0 to 1."""
    return st.toggle(
        "Colour the weights from 0 to their largest",
        help="On a 0 to 1 scale, the weights of a long row (each about 1/S) all look dark.",
        **fit.widget(),
    )


def folded(label: str, key: str):
    """An expander whose content is drawn only while it is open: the container to draw it in,
    or None while folded. A folded expander's charts would cost the browser their full drawing
    time on every run (Multi-head's nine Q, K, V charts were most of its first open)."""
    box = st.expander(label, key=key, on_change="rerun")
    return box if box.open else None


def line_view(weights: np.ndarray, rows, cols, row_positions=None) -> None:
    """The line view of one `(T, S)` weight matrix, or a note when it has too many tokens;
    `row_positions`: the queries' positions, when not 0 … T − 1."""
    t, s = weights.shape
    if max(t, s) > MAX_LINE_TOKENS:
        st.caption(f"The line view shows up to {MAX_LINE_TOKENS} tokens a side.")
        return
    theme = getattr(getattr(st.context, "theme", None), "type", None) or "light"
    # our own page; the tokens inside are JSON data drawn with textContent (see lineview)
    page = line_view_html(weights, rows, cols, theme=theme, row_positions=row_positions)
    st.iframe(page, height=line_view_height(t, s))


def head_grid(
    weights: np.ndarray,
    mask: np.ndarray,
    rows,
    cols,
    title: str,
    key: str,
    heads: list[int] | None = None,
) -> None:
    """Every head's `(H, T, S)` weights (or those of `heads`) side by side in one chart titled
    `title` (ending in `ACROSS`: the cells have no axis labels), on one shared colour scale;
    `mask (T, S)` True = allowed. One chart, not one per head: a browser draws each chart's
    axes, colour bar and layout anew, which made a page of thumbnails the slowest to open."""
    heads = list(range(weights.shape[0])) if heads is None else heads
    chosen = weights[heads]  # (H', T, S)
    st.caption(
        "All heads share one colour scale: weight 0 (dark) to 1 (yellow); grey = masked. "
        "Hover or tap a cell for its head, query, key and weight."
    )
    chart(
        model_view(
            chosen,
            rows,
            cols,
            title=title,
            titles=[""],  # the title says what the row is
            blocked=(~mask & (chosen == 0))[None],  # (1, H', T, S): one layer
            head_names=[f"head {head}" for head in heads],
            grid_width=HEAD_GRID_PX,
        ),
        name=key,
        key=key,
    )


def made_from_tokens(side: Side, key: str) -> None:
    """How one side's tokens became Q, K, V: embeddings, positions, X; the W's; Q, K, V."""
    st.markdown(f"**{side.name}**")
    figs = side_figures(side)
    for names in (("embeddings", "positional", "inputs"), ("W_Q", "W_K", "W_V"), ("Q", "K", "V")):
        shown = [name for name in names if name in figs]
        for column, name in zip(chart_columns(3), shown, strict=False):
            with column:
                chart(figs[name], f"{key}-{name.lower().replace('_', '')}", key=f"{key}-{name}")
