"""The explorer's "Step by step" tab: the formula stage by stage, each stage beside its matrix
with the explained cell outlined, the learned score weights, and one cell's arithmetic."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.core.stats import explain_cell
from attnviz.drawing.heatmap import heatmap, highlight_cell
from attnviz.drawing.stages import (
    POSITION_TEXT,
    SequenceView,
    cell_text,
    formula_tex,
    named,
    ordered_stages,
    stage_texts,
)
from attnviz.ui.frame.charts import chart
from attnviz.ui.frame.messages import plain, worked
from attnviz.ui.frame.presenter import chart_columns
from attnviz.ui.frame.state import slot

CELL_I = slot("cell_i", 0, url=True)  # the query row of the explained cell
CELL_J = slot("cell_j", 0, url=True)  # ... and its key column


def steps_view(view: SequenceView) -> None:
    """The formula stage by stage, each stage beside its matrix with the explained cell
    outlined, the learned score weights, and one cell's arithmetic up to its output row."""
    r = view.result
    st.latex(formula_tex(r))
    _learned_weights(r)
    i, j = _cell_arithmetic(view)
    figs = ordered_stages(view)
    texts = POSITION_TEXT | stage_texts(r)
    for name, fig in figs.items():
        caption, tex = texts[name]
        left, right = chart_columns([1, 2])
        with left:
            st.markdown(f"**{caption}**")
            st.latex(tex)
        with right:
            cell = (i, None) if name in ("output", "rotated query") else (i, j)
            if name == "rotated key":
                cell = (j, None)
            chart(highlight_cell(fig, *cell), name.replace(" ", "-"))


def _learned_weights(r) -> None:
    """The score's learned weights (general: W; concat: W_q, W_k, v), which the step uses."""
    if not r.params:
        return
    st.markdown(f"**The {r.settings.score} score's learned weights** (drawn from the seed, or "
                "trained in Learn)")  # fmt: skip
    columns = st.columns(len(r.params))
    for column, (name, w) in zip(columns, r.params.items(), strict=True):
        matrix = np.asarray(w)[None, :] if np.ndim(w) == 1 else np.asarray(w)  # v is (U,)
        rows = ["v"] if np.ndim(w) == 1 else None
        with column:
            chart(
                heatmap(
                    matrix, kind="values", title=f"{name} {' × '.join(map(str, np.shape(w)))}",
                    row_labels=rows, row_title="" if rows else "row", col_title="column",
                    annotate=max(matrix.shape) <= 6,
                ),
                f"learned-{name}",
            )  # fmt: skip


def _cell_arithmetic(view: SequenceView) -> tuple[int, int]:
    t, s = view.result.weights.shape
    left, right = st.columns(2)
    i = int(left.number_input(f"Query i (0 – {t - 1})", 0, t - 1, 0, **CELL_I.index_widget(t)))
    j = int(right.number_input(f"Key j (0 – {s - 1})", 0, s - 1, 0, **CELL_J.index_widget(s)))
    if named(i, view.rows) != str(i):  # tokens; typed matrices' rows are only numbers
        left.caption(f"query {i}: {plain(view.rows[i])}")
    if named(j, view.cols) != str(j):
        right.caption(f"key {j}: {plain(view.cols[j])}")
    step = explain_cell(view.result, view.query, view.key, int(i), int(j))
    worked(cell_text(step, view), "cell")
    return i, j
