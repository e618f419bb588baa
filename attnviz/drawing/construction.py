"""How Q, K and V are made from tokens, as figures and text: token embeddings, plus positions,
times W_Q, W_K and W_V. What the "Q, K, V" view shows for sentences, built in plain Python.

Shape letters: T tokens, D model features (d_model), Dk query/key features, Dv value features.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.core.stats import format_number
from attnviz.drawing.heatmap import heatmap
from attnviz.drawing.stages import MAX_TERMS
from attnviz.inputs.text import EncodedSentences

PROJECTIONS = {"Q": "W_Q", "K": "W_K", "V": "W_V"}  # each matrix and the weights that make it
NUMBERED_COLUMNS = 4  # a third of a page holds the values of this many columns (hover has all)


@dataclass(frozen=True)
class Side:
    """One side's tokens and how they became vectors, for one batch item."""

    name: str  # what the side is: "sentence", "target (queries)", "source (keys and values)"
    tokens: tuple[str, ...]  # (T,) the tokens, padding included
    embeddings: np.ndarray  # (T, D) token embeddings
    positional: np.ndarray | None  # (T, D) the positional encoding added, or None (off)
    inputs: np.ndarray  # (T, D) X = embeddings + positional
    params: dict[str, np.ndarray]  # "W_Q" (D, Dk), "W_K" (D, Dk), "W_V" (D, Dv)
    outputs: dict[str, np.ndarray]  # "Q" (T, Dk), ... the projections this side gives


def side_of(encoded: EncodedSentences, b: int, name: str, makes: tuple[str, ...]) -> Side:
    """Item `b` of `encoded` as a side that makes the matrices `makes` (of "Q", "K", "V")."""
    made = {"Q": encoded.query, "K": encoded.key, "V": encoded.value}
    return Side(
        name,
        encoded.tokens[b],
        np.asarray(encoded.embeddings[b]),
        np.asarray(encoded.positional) if encoded.use_positional else None,
        np.asarray(encoded.inputs[b]),
        {PROJECTIONS[m]: np.asarray(encoded.params[PROJECTIONS[m]]) for m in makes},
        {m: np.asarray(made[m][b]) for m in makes},
    )


def head_side(
    encoded: EncodedSentences, b: int, name: str, makes: tuple[str, ...], result, head: int
) -> Side:
    """Item `b` of `encoded` as a side of one head of a `MultiHeadResult`: its W_Q, W_K, W_V
    are the head's slices (with grouped K/V heads, those of the K/V head it shares)."""
    side = side_of(encoded, b, name, ())
    group = head if result.kv_head_of is None else int(result.kv_head_of[head])
    slices = {"Q": ("W_Q", head, result.query_heads), "K": ("W_K", group, result.key_heads),
              "V": ("W_V", group, result.value_heads)}  # fmt: skip
    params = {slices[m][0]: np.asarray(result.params[slices[m][0]][slices[m][1]]) for m in makes}
    outputs = {m: np.asarray(slices[m][2][b, head]) for m in makes}  # (T, Dk) or (S, Dv)
    return Side(side.name, side.tokens, side.embeddings, side.positional, side.inputs, params,
                outputs)  # fmt: skip


def side_figures(side: Side) -> dict[str, object]:
    """The figures of one side, in the order they are computed: embeddings, positions, X, then
    each W and the matrix it makes."""
    rows = {"row_labels": side.tokens, "row_title": "token", "col_title": "feature"}
    figs = {
        "embeddings": heatmap(
            side.embeddings, kind="values", title="Token embeddings (T × d_model)", **rows
        )
    }
    if side.positional is not None:
        figs["positional"] = heatmap(
            side.positional, kind="values", title="+ positional encoding (T × d_model)", **rows
        )
    figs["inputs"] = heatmap(
        side.inputs, kind="values", title="= X, the inputs (T × d_model)", **rows
    )
    for matrix, made in side.outputs.items():
        w = side.params[PROJECTIONS[matrix]]  # (D, Dk) or (D, Dv)
        figs[PROJECTIONS[matrix]] = heatmap(
            w,
            kind="values",
            title=f"{PROJECTIONS[matrix]} (d_model × {w.shape[1]})",
            row_title="input feature",
            col_title="feature",
        )
        figs[matrix] = heatmap(
            made,
            kind="values",
            title=f"{matrix} = X · {PROJECTIONS[matrix]}",
            annotate=made.shape[1] <= NUMBERED_COLUMNS,
            **rows,
        )
    return figs


def projection_text(side: Side, matrix: str, i: int, j: int) -> str:
    """The arithmetic of one cell of `matrix` ("Q", "K" or "V"): row i of X times column j of
    its W, as plain text lines."""
    f = format_number
    x_row = side.inputs[i]  # (D,)
    w_col = side.params[PROJECTIONS[matrix]][:, j]  # (D,)
    pairs = list(zip(x_row, w_col, strict=True))[:MAX_TERMS]
    terms = " + ".join(f"{f(a, 4)}×{f(b, 4)}" for a, b in pairs)
    if x_row.size > MAX_TERMS:
        terms += f" + … ({x_row.size - MAX_TERMS} more terms)"
    lines = [f"{matrix}[{i}, {j}]: token {i} ({side.tokens[i]}), feature {j}"]
    if side.positional is not None:
        lines.append(
            f"1. input    X[{i}, m] = embedding[{i}, m] + position[{i}, m]"
            f"   (m = 0: {f(side.embeddings[i, 0], 4)} + {f(side.positional[i, 0], 4)}"
            f" = {f(x_row[0], 4)})"
        )
    else:
        lines.append(f"1. input    X[{i}, m] = embedding[{i}, m] (no positional encoding)")
    lines.append(
        f"2. project  Σ_m X[{i}, m] × {PROJECTIONS[matrix]}[m, {j}] = {terms}"
        f" = {f(float(x_row @ w_col))}"
    )
    lines.append(f"   the page's {matrix}[{i}, {j}] = {f(float(side.outputs[matrix][i, j]))}")
    return "\n".join(lines)
