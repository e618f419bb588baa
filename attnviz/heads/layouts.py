"""Reading a product's operands as attention: which operand holds the queries, keys, weights or
values, and each as an array of one layout.

Shape letters: B batch, H heads, T queries, S keys, X either, F features per head.

Attention multiplies twice: the scores `Q·Kᵀ` and the output `A·V`. Layers write each product
as an `Einsum` with any equation (Keras's `MultiHeadAttention` scores with "aecd,abcd->acbe")
or as a batched `MatMul`, transposes folded into adjoint flags. `product_axes` names the axes of
both operands and of the output with letters, the way an einsum equation does (a matmul gets
letters "...mk,...kn->...mn"); the role functions then read those letters:

- scores: two of the output's axes are the query axis T and the key axis S (the last two,
  unless a transpose moved them before the softmax); the operand holding T (not S) is Q, the
  one holding S is K, the letters they share are features;
- output: the weights operand's last axis is S and must be summed over (shared with V and not
  in the output); its axis before that is T; V's letters not in the weights are its features.

`canonical` then lays an operand out as `(B, H, X, F)`: the leading batch letter becomes B, the
other batch letters (heads, or key/value heads × groups) are flattened into H, an operand that
lacks a batch letter is broadcast over it first (a shared key head, repeated for its group).
`fit_heads` matches an operand to the weights' heads when the product grouped them otherwise.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass

import numpy as np

from attnviz.heads.tracing import OpNode

PRODUCTS = ("Einsum", "BatchMatMulV2", "BatchMatMulV3", "BatchMatMul", "MatMul")
_FRESH = string.digits + "αβγδεζηθικλμνξπρστυφχψω"  # letters for "..." (never in an equation)


@dataclass(frozen=True)
class ProductAxes:
    """A product's axes named by letters, einsum style."""

    inputs: tuple[str, str]  # one letter per axis of each operand
    output: str  # one letter per axis of the result


@dataclass(frozen=True)
class Roles:
    """Which operand of a product plays which part, and the letters of each part."""

    first: int  # the operand index of Q (scores) or of the weights A (output)
    second: int  # the operand index of K (scores) or of V (output)
    batch: str  # batch letters, B first then the head letters
    rows: str  # the letter of T (several when attention spans several axes, flattened)
    cols: str  # the letter of S (likewise)


def product_axes(node: OpNode, ranks: tuple[int, int]) -> ProductAxes | None:
    """The letters of a product op's operands (of ranks `ranks`) and output, or None if the op
    is not a two-operand product."""
    if node.op_type == "Einsum":
        return _einsum_axes(node.attr("equation", ""), ranks)
    if node.op_type in PRODUCTS:
        adjoint = ("transpose_a", "transpose_b") if node.op_type == "MatMul" else ("adj_x", "adj_y")
        return _matmul_axes(ranks, bool(node.attr(adjoint[0])), bool(node.attr(adjoint[1])))
    return None


def _einsum_axes(equation: str, ranks: tuple[int, int]) -> ProductAxes | None:
    """The letters of a two-operand einsum `equation`, "..." spelt out for `ranks`."""
    if "->" not in equation or equation.count(",") != 1:
        return None
    left, output = equation.replace(" ", "").split("->")
    terms = left.split(",")
    spans = [rank - len(term.replace("...", "")) for term, rank in zip(terms, ranks, strict=True)]
    width = max(spans)
    fresh = _FRESH[:width]
    named = [t.replace("...", fresh[width - n :]) for t, n in zip(terms, spans, strict=True)]
    output = output.replace("...", fresh)
    if any(len(t) != r for t, r in zip(named, ranks, strict=True)):
        return None
    return ProductAxes((named[0], named[1]), output)


def _matmul_axes(ranks: tuple[int, int], adj_x: bool, adj_y: bool) -> ProductAxes | None:
    """Letters of a batched matmul "...mk,...kn->...mn" with its adjoint (transpose) flags."""
    if min(ranks) < 2:
        return None
    batch = _FRESH[: max(ranks) - 2]
    x = batch[len(batch) - (ranks[0] - 2) :] + ("km" if adj_x else "mk")
    y = batch[len(batch) - (ranks[1] - 2) :] + ("nk" if adj_y else "kn")
    return ProductAxes((x, y), batch + "mn")


def score_roles(axes: ProductAxes, rows: str, cols: str) -> Roles | None:
    """Q and K of a product whose output axes `rows` and `cols` (letters, one per attended axis)
    are the scores' T and S, or None if it cannot be: Q holds T and not S, K holds S and not T,
    they share features."""
    out = axes.output
    if len(out) < 2 + len(rows) or set(rows) & set(cols) or not set(rows + cols) <= set(out):
        return None
    holds = lambda i, these, not_these: (  # noqa: E731
        set(these) <= set(axes.inputs[i]) and not set(not_these) & set(axes.inputs[i])
    )
    holders = [i for i in (0, 1) if holds(i, rows, cols)]
    keyed = [i for i in (0, 1) if holds(i, cols, rows)]
    shared = set(axes.inputs[0]) & set(axes.inputs[1]) - set(out)
    if len(holders) != 1 or len(keyed) != 1 or holders == keyed or not shared:
        return None
    batch = "".join(c for c in out if c not in rows + cols)
    return Roles(holders[0], keyed[0], batch, rows, cols)


def output_roles(axes: ProductAxes, weights: int, spans: int = 1) -> Roles | None:
    """A and V of a product whose operand `weights` is attention weights `(…, T, S)` summed
    over S into the output, or None if the product does not use it that way. `spans`: how many
    axes T and S each are (2 for attention over an image's rows and columns at once)."""
    a, v = axes.inputs[weights], axes.inputs[1 - weights]
    if len(a) < 1 + 2 * spans:
        return None
    rows, cols = a[-2 * spans : -spans], a[-spans:]
    if not set(cols) <= set(v) or set(cols) & set(axes.output):
        return None
    if not set(rows) <= set(axes.output) or set(rows) & set(v):
        return None
    return Roles(weights, 1 - weights, a[: -2 * spans], rows, cols)


def canonical(
    array: np.ndarray, letters: str, batch: str, seq: str, batch_sizes: tuple[int, ...]
) -> np.ndarray | None:
    """`array` (axes named by `letters`) as `(B, H, X, F)`, or None if its batch axes do not
    broadcast to `batch_sizes`.

    Args:
        array: one operand of a product.
        letters: a letter per axis of `array`.
        batch: the product's batch letters (B first, then heads); absent ones are broadcast.
        seq: the letter of the axis that becomes X (T for queries, S for keys and values);
            several letters are flattened into X, in their order.
        batch_sizes: the size of each batch letter in the product's output.
    """
    moved = np.transpose(array, layout_order(letters, batch, seq))
    present = [c for c in batch if c in letters]
    kept = iter(moved.shape)
    sizes = [next(kept) if c in letters else 1 for c in batch]  # 1 where a letter is absent
    rest = moved.shape[len(present) :]
    length, width = math.prod(rest[: len(seq)]), math.prod(rest[len(seq) :])
    try:
        moved = moved.reshape(*sizes, length, width)
        moved = np.broadcast_to(moved, (*batch_sizes, length, width))
    except ValueError:
        return None
    b = batch_sizes[0] if batch_sizes else 1
    return moved.reshape(b, math.prod(batch_sizes[1:]), length, width)


def layout_order(letters: str, batch: str, seq: str) -> list[int]:
    """The permutation `canonical` applies to an array with axes `letters`: its batch letters
    (in `batch`'s order), then `seq`, then the rest (features)."""
    features = [c for c in letters if c not in batch and c not in seq]
    order = [c for c in batch if c in letters] + list(seq) + features
    return [letters.index(c) for c in order]


def fit_heads(array: np.ndarray | None, heads: int, length: int) -> np.ndarray | None:
    """`array (B, H', X', F)` as `(B, heads, length, F)`, or None if it cannot be.

    Two groupings are undone: H' key/value heads each shared by `heads / H'` query heads
    (repeated, in order), and query groups folded into the rows (`X' = groups × length`, as
    TensorFlow's einsum lays out Gemma's "btkgh,bskh->bkgts" for its matmul).
    """
    if array is None or heads % array.shape[1]:
        return None
    b, h, x, f = array.shape
    groups = heads // h
    if x == length:
        return np.repeat(array, groups, axis=1) if groups > 1 else array
    if x == groups * length:
        return array.reshape(b, h * groups, length, f)  # (B, H', G·X, F) -> (B, H'·G, X, F)
    return None
