"""`Mode`: what a page of the app says about itself. Each mode is one module of
`attnviz.ui.pages` ending in `MODE = Mode(...)`; `attnviz.ui.pages.MODES` lists them in order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attnviz.ui.frame.state import Slot


@dataclass(frozen=True)
class Mode:
    """One page of the app."""

    name: str  # its URL path ("matrices" -> /matrices) and the `?mode=` value of a link
    label: str  # what the navigation calls it
    icon: str  # the navigation's icon (":material/...:")
    intro: str  # one caption under the title: what this page shows
    draw: Callable[[], None]  # draws the page: its sidebar controls, inputs and views
    url_texts: tuple[Slot[str], ...] = ()  # typed inputs carried in the URL while small
    old_names: tuple[str, ...] = ()  # other `?mode=` values of older links (its old label)
    prepare: Callable[..., None] | None = None  # puts the page in a state a lesson asks for
    # (keyword arguments: see each mode's `prepare`); called before the page is drawn
    warm_up: Callable[[], None] | None = None  # what the page's first open would do first
    # (load its models, trace their TensorFlow functions, fill its cached resources as the
    # page asks for them): done once per server by `attnviz.ui.app.warmup`, outside any session
