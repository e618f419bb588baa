"""The app's pages to explore, one module each (named by its URL), in the order the navigation
lists them. The start page (`start`), the glossary (`glossary`) and the lessons' page (`lesson`)
are drawn by the frame's shell around these.

A new page is a module here that ends in `MODE = Mode(...)` (see `attnviz.ui.frame.mode`) and one
line below; `tests/ui/pages/test_pages.py` draws every page listed, so none can be forgotten.
No page imports another page: what several share lives in `controls`, `explorer`, `models` or
the `frame`, and a page opens another through `frame.navigation.go_to`.
"""

from __future__ import annotations

from attnviz.ui.frame.mode import Mode
from attnviz.ui.pages import (
    cross,
    decoder,
    language_model,
    learn,
    matrices,
    model,
    multihead,
    sentences,
)

MODES: tuple[Mode, ...] = (
    matrices.MODE,
    sentences.MODE,
    cross.MODE,
    multihead.MODE,
    decoder.MODE,
    learn.MODE,
    language_model.MODE,
    model.MODE,
)
MODES_BY_NAME = {mode.name: mode for mode in MODES}


def find_mode(name: str) -> Mode | None:
    """The mode a `?mode=` value names (its name or an older label), or None."""
    for mode in MODES:
        if name in (mode.name, mode.label, *mode.old_names):
            return mode
    return None
