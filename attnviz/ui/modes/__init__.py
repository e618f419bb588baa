"""The app's pages, one module each, in the order the navigation lists them.

A new page is a module here that ends in `MODE = Mode(...)` (see `attnviz.ui.mode`) and one line
below; `tests/ui/test_modes.py` draws every mode listed, so none can be forgotten.
"""

from __future__ import annotations

from attnviz.ui.mode import Mode
from attnviz.ui.modes import (
    cross,
    decoder_stack,
    language_model,
    learning,
    matrices,
    sentences,
    three_ways,
    your_model,
)

MODES: tuple[Mode, ...] = (
    matrices.MODE,
    sentences.MODE,
    cross.MODE,
    three_ways.MODE,
    decoder_stack.MODE,
    learning.MODE,
    language_model.MODE,
    your_model.MODE,
)
MODES_BY_NAME = {mode.name: mode for mode in MODES}


def find_mode(name: str) -> Mode | None:
    """The mode a `?mode=` value names (its name or an older label), or None."""
    for mode in MODES:
        if name in (mode.name, mode.label, *mode.old_names):
            return mode
    return None
