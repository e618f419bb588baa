"""The explorer's "Tiled" view: how a fused attention kernel computes the same numbers without
ever holding the whole T × S matrix. Keys and values come in tiles; each query row keeps a
running maximum m and a running sum l, and its partial output is rescaled as each tile arrives
(the online softmax). A slider steps tile by tile. Wiring and drawing only: the steps are
`attnviz.core.tiled.tiled_attention`'s.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.core import limits
from attnviz.core.tiled import tiled_attention
from attnviz.core.words import plural_of
from attnviz.drawing.heatmap import heatmap
from attnviz.drawing.stages import SequenceView
from attnviz.ui.frame.charts import chart
from attnviz.ui.frame.messages import counted, shown
from attnviz.ui.frame.presenter import chart_columns
from attnviz.ui.frame.state import slot

KEY_TILE = slot("tile_k", 2, url=True)  # keys (and values) per tile
QUERY_TILE = slot("tile_q", 0, url=True)  # queries per tile; 0: all queries in one tile
STEP = slot("tile_step", 0, url=True)  # the step shown


def tiled_view(view: SequenceView) -> None:
    """The tiled computation of one sequence's attention (dot-product score)."""
    r = view.result
    t, s = r.weights.shape
    if r.settings.score != "dot":
        st.info("Fused kernels tile the dot-product score: choose it to see the tiles.",
                icon=":material/info:")  # fmt: skip
        return
    left, right = st.columns(2)
    most = limits.APP_MAX_TOKENS  # a tile of this page's longest sequence
    key_tile = int(left.number_input("Keys per tile", 1, most, step=1,
                                     **KEY_TILE.widget("value")))  # fmt: skip
    query_tile = int(right.number_input("Queries per tile (0: all)", 0, most, step=1,
                                        **QUERY_TILE.widget("value")))  # fmt: skip
    tiled = shown(lambda: tiled_attention(
        view.query, view.key, view.value, key_tile=key_tile, query_tile=query_tile or None,
        key_padding_mask=view.padding, settings=r.settings,
    ))  # fmt: skip
    if tiled is None:
        return
    _memory(tiled, t, s)
    last = len(tiled.steps) - 1
    if not 0 <= STEP.get() <= last:
        STEP.set(0)
    n = int(st.slider("Tile step", 0, last, **STEP.widget())) if last else 0
    _step(view, tiled, tiled.steps[n], n == last)


def _memory(tiled, t: int, s: int) -> None:
    m = tiled.memory
    st.caption(
        f"{counted(tiled.num_query_tiles, 'query tile')} × "
        f"{counted(tiled.num_key_tiles, 'key tile')} = {counted(len(tiled.steps), 'step')}. "
        f"Plain attention holds the whole {t} × {s} score matrix, "
        f"{m.full_matrix_bytes:,} bytes of float32; one tile step needs {m.tile_matrix_bytes:,} "
        f"bytes of scores and {m.working_set_bytes:,} bytes in all (Q, K and V tiles, m, l and "
        "the partial output)."
    )


def _span(start: int, stop: int, noun: str) -> str:
    """Positions start … stop − 1 in words: "queries 0–3", "query 4" (a tile of one)."""
    if stop - start == 1:
        return f"{noun} {start}"
    return f"{plural_of(noun)} {start}–{stop - 1}"


def _step(view: SequenceView, tiled, step, final: bool) -> None:
    (a, b), (c, d) = step.rows, step.cols
    rows = list(view.rows[a:b])
    what = ("skipped: the mask hides the whole tile" if step.skipped
            else "m rises to the tile's largest logit; l and the output are rescaled by "
                 "e^(m_before − m_after), then the tile's terms are added")  # fmt: skip
    st.markdown(f"**Step: {_span(a, b, 'query')} × {_span(c, d, 'key')}** · {what}")
    left, right = chart_columns(2)
    with left:
        chart(
            heatmap(
                np.where(np.isfinite(step.logits), step.logits, np.nan),
                kind="signed", title="This tile's logits", row_labels=rows,
                col_labels=list(view.cols[c:d]), blocked=~np.isfinite(step.logits),
            ),
            "tile-logits",
        )  # fmt: skip
    with right:
        state = np.stack([_finite(step.max_before), _finite(step.max_after), step.sum_before,
                          step.sum_after], axis=1)  # (Tq, 4)  # fmt: skip
        chart(
            heatmap(
                np.nan_to_num(state), kind="values", col_title="",
                title="Running max m and sum l of each query row", row_labels=rows,
                col_labels=["m before", "m after", "l before", "l after"],
                blocked=np.isnan(state), blocked_label="no key seen yet",
            ),
            "tile-state",
        )  # fmt: skip
    chart(
        heatmap(step.output_so_far, kind="values", row_labels=rows, col_title="feature",
                        title="Output so far: acc / l (rescaled at every tile)"),
        "tile-output",
    )  # fmt: skip
    if final:
        weights = float(np.abs(tiled.weights - view.result.weights).max())
        output = float(np.abs(tiled.output - view.result.output).max())
        st.caption(
            f"After the last tile, the weights and output equal the plain computation of the "
            f"Heatmaps view: largest differences {weights:.2g} and {output:.2g}."
        )


def _finite(x: np.ndarray) -> np.ndarray:
    """−∞ (no key seen yet) drawn as NaN: a gap, not a colour."""
    return np.where(np.isfinite(x), x, np.nan)
