"""The "Download this view" button: the charts a view draws, taken away as one standalone
HTML page.

A view is drawn inside `view_download(...)`; every chart drawn there (`charts.chart` reports it
with `collect`) goes on the page, with the inputs and settings the view names and the attnviz
version (the page itself is `attnviz.drawing.standalone`'s). The button sits where the view
starts, above its charts; the page is built only when it is clicked (Streamlit's deferred
download), so drawing a view costs nothing more. Views inside views (the language model's heads
tab holds the model view panel) offer one button: the outermost's, with all their charts.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any

import streamlit as st

from attnviz.drawing.standalone import Chart, standalone_html

LABEL = "Download this view"
HELP = (
    "One HTML file with these charts as you see them (hover, zoom, PNG and SVG in each chart's "
    "toolbar), the inputs and settings that made them and the attnviz version. It opens in a "
    "browser without a network."
)
_DRAWN: ContextVar[list[Chart] | None] = ContextVar("attnviz_drawn", default=None)


def collect(figure: Any, name: str) -> None:
    """Put `figure` on the page of the view being drawn, if any (saved as attnviz-`name`)."""
    drawn = _DRAWN.get()
    if drawn is not None:
        drawn.append(Chart(figure, name))


@contextlib.contextmanager
def view_download(
    title: str, key: str, about: Callable[[], Mapping[str, Any]] | None = None
) -> Iterator[None]:
    """Offer the charts drawn inside as one page, titled `title`, with a button placed here.

    Args:
        title: the page's title (plain text), also its file name.
        key: the button's widget key.
        about: called on a click: `standalone_html`'s `settings`, `inputs` and `notes`.
    """
    if _DRAWN.get() is not None:  # inside a view that offers its own page: the charts go there
        yield
        return
    spot = st.empty()  # the button goes above the view's charts, once they are known
    drawn: list[Chart] = []
    token = _DRAWN.set(drawn)
    try:
        yield
    finally:
        _DRAWN.reset(token)
    if drawn:
        charts = tuple(drawn)
        spot.download_button(
            LABEL,
            lambda: standalone_html(charts, title, **(dict(about()) if about else {})),
            file_name=f"{_slug(title)}.html",
            mime="text/html",
            on_click="ignore",
            icon=":material/download:",
            help=HELP,
            key=key,
        )


def _slug(title: str) -> str:
    """A file-name form of `title`, starting "attnviz": "attnviz explorer: Heatmaps" ->
    "attnviz-explorer-heatmaps", "Mine" -> "attnviz-mine"."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60]
    return slug if slug.startswith("attnviz") else f"attnviz-{slug}".strip("-")
