"""The numbers printed in a heatmap's cells: short, never in scientific notation, and never
running into their neighbours (else none at all: the hover tells each value).

Shape letters: R x C cells. Pure Python.
"""

from __future__ import annotations

import math

import numpy as np

from attnviz.drawing.theme import FONT_SIZE

TEXT_SIDE = 12  # print values in the cells when both sides are at most this
CELL_TEXT_PX = 280  # px a heatmap's cells get at the least where values are printed in them:
# half a desktop page beside the sidebar, or a phone, less the labels and the colour bar
CELL_TEXT_GAP = 4  # px kept free between the printed values of neighbouring cells
SMALLEST_SHOWN = 0.001  # cell text shows smaller magnitudes as "<0.001"


def cell_labels(z: np.ndarray) -> tuple[list[list[str]], int] | None:
    """The values `(R, C)` as printed in their cells, and the font size: 3 significant digits
    in the tick font while the widest fits its cell (`CELL_TEXT_PX` / C wide, with a gap), else
    2 digits a size smaller, else None: nothing printed (the hover tells each value), never
    numbers that run into each other ("-0.0257-0.00951")."""
    cell = CELL_TEXT_PX / z.shape[1]
    choices = ((_cell_text(z, 3), FONT_SIZE), (_cell_text(z, 2), FONT_SIZE - 2),
               (_fixed_text(z), FONT_SIZE - 2))  # fmt: skip
    for text, size in choices:
        widest = max((number_width(t, size) for row in text for t in row), default=0.0)
        if widest + CELL_TEXT_GAP <= cell:
            return text, size
    return None


def _cell_text(z: np.ndarray, digits: int = 3) -> list[list[str]]:
    """`(R, C)` values with `digits` significant digits, "" for blocked cells."""
    return [["" if math.isnan(v) else cell_number(v, digits) for v in row] for row in z.tolist()]


def _fixed_text(z: np.ndarray) -> list[list[str]]:
    """`(R, C)` values with as many decimals as the largest leaves room for (2 below 10, 1
    below 100, else none): the shortest text that still tells the cells apart at a glance."""
    finite = np.abs(z[np.isfinite(z)])
    top = float(finite.max()) if finite.size else 0.0
    decimals = 2 if top < 10 else 1 if top < 100 else 0

    def fixed(v: float) -> str:
        text = f"{v:.{decimals}f}"
        return "0" if float(text) == 0 else text  # never "-0.00"

    return [["" if math.isnan(v) else fixed(v) for v in row] for row in z.tolist()]


def cell_number(v: float, digits: int = 3) -> str:
    """A number short enough for a cell, never in scientific notation: `digits` significant
    digits, "<0.001" (or ">−0.001") for tiny ones, whole numbers from 10**digits up."""
    if v == 0:
        return "0"
    if abs(v) < SMALLEST_SHOWN:
        return f"<{SMALLEST_SHOWN:g}" if v > 0 else f">−{SMALLEST_SHOWN:g}"
    text = f"{v:.{digits}g}"
    return f"{v:.0f}" if "e" in text else text  # large: whole (small ones never reach "e")


def number_width(text: str, size: float = FONT_SIZE) -> float:
    """About how many pixels a printed number takes at font `size`: digits ~0.56 em, the
    point, signs and "<" narrower."""
    return size * sum(0.3 if c in ".-−<>" else 0.56 for c in text)
