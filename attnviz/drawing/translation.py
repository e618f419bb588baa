"""A translation's attention: one row per output character, one column per input character.

Plain numpy + plotly, like the rest of `drawing`: the Learn page draws a trained model's
translation with it (its probe after each epoch, the Translate and Compare views), and the
Transformer's views label their characters with `char_labels`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attnviz.drawing.heatmap import heatmap

SPACE = "␣"  # how a space is labelled on the axes


def char_labels(tokens: Iterable[str]) -> list[str]:
    """Axis labels of characters (a space shown as ␣)."""
    return [SPACE if t == " " else t for t in tokens]


def translation_figure(translation: Any, title: str) -> go.Figure:
    """The heatmap of a translation's attention: output characters down, input across.

    `translation` has `weights` `(T_out, T_in)`, `source_tokens` `(T_in,)` and
    `target_tokens` `(T_out,)` (a seq2seq `Translation`, a Transformer's heads' mean, a probe).
    Nothing decoded draws one empty row, so the figure stays drawable.
    """
    rows = char_labels(translation.target_tokens) or ["(none)"]
    cols = char_labels(translation.source_tokens)
    weights = np.asarray(translation.weights)
    if weights.size == 0:
        weights = np.zeros((1, len(cols)))
    return heatmap(
        weights,
        kind="weights",
        title=title,
        row_labels=rows,
        col_labels=cols,
        row_title="output",
        col_title="input",
        annotate=False,
    )
