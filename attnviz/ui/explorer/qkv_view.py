"""The explorer's "Q, K, V" tab, for sentence inputs: how the tokens became Q, K and V
(embeddings plus positions, times W_Q, W_K and W_V), and one cell of that arithmetic."""

from __future__ import annotations

import streamlit as st

from attnviz.drawing.construction import projection_text, side_of
from attnviz.inputs.problem import Problem
from attnviz.ui.frame.charts import made_from_tokens
from attnviz.ui.frame.messages import worked
from attnviz.ui.frame.state import slot

QKV_MATRIX = slot("qkv_matrix", "Q", url=True)  # the matrix of the cell explained
QKV_I = slot("qkv_i", 0, url=True)  # ... its token row
QKV_J = slot("qkv_j", 0, url=True)  # ... its feature column


def qkv_view(problem: Problem) -> None:
    """How Q, K and V were made from the tokens: embeddings plus positions (X), times W_Q, W_K
    and W_V; for two sentences, the target makes Q and the source K and V. Then one cell's
    arithmetic."""
    b = problem.item
    if problem.query_encoding is problem.key_encoding:
        sides = [side_of(problem.query_encoding, b, "Each token", ("Q", "K", "V"))]
    else:
        sides = [
            side_of(problem.query_encoding, b, "The target's tokens make the queries", ("Q",)),
            side_of(problem.key_encoding, b, "The source's tokens make the keys and values",
                    ("K", "V")),
        ]  # fmt: skip
    st.caption(
        "Every token is looked up in an embedding table (random but fixed by the seed here; "
        "learned in a trained model), the positional encoding is added so that the order "
        "counts, and three weight matrices project the result to its query, key and value."
    )
    for n, side in enumerate(sides):
        made_from_tokens(side, f"made-{n}")
    _projection_cell(sides)


def _projection_cell(sides) -> None:
    by_matrix = {m: side for side in sides for m in side.outputs}
    left, middle, right = st.columns(3)
    matrix = left.radio(
        "Explain a cell of", list(by_matrix), horizontal=True, **QKV_MATRIX.widget()
    )
    side = by_matrix.get(matrix, sides[0])
    matrix = matrix if matrix in by_matrix else next(iter(by_matrix))
    t, d = side.outputs[matrix].shape
    i = int(middle.number_input(f"Token (0 – {t - 1})", 0, t - 1, 0, **QKV_I.index_widget(t)))
    j = int(right.number_input(f"Feature (0 – {d - 1})", 0, d - 1, 0, **QKV_J.index_widget(d)))
    worked(projection_text(side, matrix, i, j), "projection")
