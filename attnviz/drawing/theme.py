"""The look every chart shares: the font, the sizes, the colours and the colour scales, and
how each kind of matrix is coloured.

- Weights use Viridis from exactly 0 to 1 (perceptually uniform, readable in grey and by
  colour-blind viewers). Signed numbers use ColorBrewer RdBu reversed (blue < 0 < red), a
  diverging scale ColorBrewer lists as colour-blind safe, centred on 0 by a symmetric range.
- Blocked cells are a neutral grey that appears on neither scale, never a colour of the scale.

Pure numpy + plotly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.colors

FONT_SIZE = 12
PLOT_WIDTH = 480  # px a heatmap's cells get, about: half of a wide page, less the colour bar
THUMB_WIDTH = 180  # px a thumbnail's cells get, about: a quarter of a wide page, less labels

HIGHLIGHT_COLOR = "#ff2b2b"  # the outline of the cell step by step explains
BLOCKED_COLOR = "#9a9a9a"  # neutral mid grey: on neither scale, visible on light and dark pages
ALLOWED_COLOR = "#31688e"  # Viridis blue: darker than the grey and of a different hue


def _even_scale(colors: Sequence[str]) -> list[list[Any]]:
    """A plotly colour scale with `colors` evenly spaced from 0 to 1."""
    last = len(colors) - 1
    return [[i / last, color] for i, color in enumerate(colors)]


WEIGHTS_COLORSCALE = _even_scale(plotly.colors.sequential.Viridis)
SIGNED_COLORSCALE = _even_scale(plotly.colors.diverging.RdBu[::-1])  # blue < 0 < red
MASK_COLORSCALE = [
    [0.0, BLOCKED_COLOR],
    [0.5, BLOCKED_COLOR],
    [0.5, ALLOWED_COLOR],
    [1.0, ALLOWED_COLOR],
]
CLEAR = "rgba(0,0,0,0)"
BLOCKED_COLORSCALE = [[0.0, CLEAR], [0.5, CLEAR], [0.5, BLOCKED_COLOR], [1.0, BLOCKED_COLOR]]


@dataclass(frozen=True)
class MatrixKind:
    """How one kind of matrix is coloured, pooled and described."""

    colorscale: list[list[Any]]  # plotly colour scale
    rule: str  # pooling rule: "mean", "mass" or "any" (see `pool_matrix`)
    value_name: str  # what one cell holds, for hover text
    pooled_name: str  # what one overview cell holds
    col_title: str  # default column title


KINDS_BY_NAME = {
    "signed": MatrixKind(SIGNED_COLORSCALE, "mean", "value", "mean of allowed cells", "key"),
    "weights": MatrixKind(
        WEIGHTS_COLORSCALE,
        "mass",
        "weight",
        "attention mass (sum over keys, mean over queries)",
        "key",
    ),
    "mask": MatrixKind(MASK_COLORSCALE, "any", "allowed", "allowed (some cells)", "key"),
    "values": MatrixKind(SIGNED_COLORSCALE, "mean", "value", "mean of cells", "feature"),
}  # the kinds of matrix a heatmap draws, by name
KINDS = tuple(KINDS_BY_NAME)


def color_range(kind: str, z: np.ndarray, fit: bool = False) -> dict[str, float]:
    """plotly's zmin/zmax for `kind`'s colour scale over the values `z`: 0 to 1 for weights (0
    to their largest, if `fit`) and masks, symmetric around 0 for signed values."""
    if kind == "weights" and fit:
        finite = z[np.isfinite(z)]
        top = float(finite.max()) if finite.size else 0.0
        return dict(zmin=0.0, zmax=top if top > 0 else 1.0)
    if kind in ("weights", "mask"):
        return dict(zmin=0.0, zmax=1.0)
    finite = np.abs(z[np.isfinite(z)])
    top = float(finite.max()) if finite.size else 0.0
    top = top if top > 0 else 1.0
    return dict(zmin=-top, zmax=top, zmid=0.0)
