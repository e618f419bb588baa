"""Row statistics and the arithmetic behind one cell: what the step-by-step view shows.

Shape letters: T queries, S keys, D features. Works on one sequence (no batch axis): the UI
picks the sequence first. Pure numpy; recomputes in float64 only to *display* the arithmetic,
the numbers themselves come from the `AttentionResult`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from attnviz.core.checks import read_only
from attnviz.core.masks import NEG_LARGE
from attnviz.core.positions import rope_frequencies, rotate_pairs
from attnviz.core.score_kinds import SCORE_KINDS_BY_NAME

if TYPE_CHECKING:  # only for hints: statistics do not import TensorFlow
    from attnviz.core.attention import AttentionResult


@dataclass(frozen=True)
class RowStats:
    """Per-query-row summary of a weight matrix `(T, S)`."""

    entropy_bits: np.ndarray  # (T,) Shannon entropy of each row in bits (0 = one key takes all)
    max_weight: np.ndarray  # (T,) the largest weight in each row
    argmax: np.ndarray  # (T,) index of the key with the largest weight (-1 if fully masked)
    allowed_keys: np.ndarray  # (T,) how many keys the mask lets each row attend
    fully_masked: np.ndarray  # (T,) bool, the row has no allowed key


def row_stats(weights: np.ndarray, mask: np.ndarray) -> RowStats:
    """Entropy, largest weight and allowed-key count of each row of `weights (T, S)`."""
    w = np.asarray(weights, dtype=np.float64)  # (T, S)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(w > 0, -w * np.log2(np.where(w > 0, w, 1.0)), 0.0)  # (T, S)
    allowed = np.asarray(mask).sum(axis=-1)  # (T,)
    fully = allowed == 0
    return RowStats(
        entropy_bits=terms.sum(axis=-1),
        max_weight=w.max(axis=-1),
        argmax=np.where(fully, -1, w.argmax(axis=-1)),
        allowed_keys=allowed,
        fully_masked=fully,
    )


FULLY_MASKED_WHY = {
    "-inf": (
        "Every key of this row is masked, so softmax has nothing to normalise: attnviz gives "
        "it all-zero weights and a zero output instead of NaN (exp(−∞)/0)."
    ),
    "-1e9": (
        "Every key of this row is masked, so every logit is score − 1e9: in float32 these "
        "are (almost) equal, and softmax spreads the weight (almost) uniformly over keys the "
        "mask was meant to hide — the classic masking pitfall."
    ),
}


@dataclass(frozen=True)
class RopeStep:
    """How RoPE turns q_i and k_j before their dot product (D features, P = D / 2 pairs).

    Feature p pairs with feature p + P; pair p of a token at position m turns by m·ω_p.
    """

    frequencies: np.ndarray  # (P,) ω_p = θ^(-2p/D), radians per position
    query_angles: np.ndarray  # (P,) i·ω_p, how far each pair of q_i turns
    key_angles: np.ndarray  # (P,) j·ω_p
    query: np.ndarray  # (D,) q_i as given
    key: np.ndarray  # (D,) k_j as given
    rotated_query: np.ndarray  # (D,) q_i after the rotation
    rotated_key: np.ndarray  # (D,) k_j after the rotation
    pair_products: np.ndarray  # (P,) each pair's share of the dot product of the rotated
    # vectors: |q_p| |k_p| cos(angle between them + (i − j)·ω_p); for dot scores they add up
    # to the raw score


@dataclass(frozen=True)
class CellStep:
    """The arithmetic from q_i and k_j to weight (i, j), for the step-by-step view."""

    i: int  # query row
    j: int  # key column
    terms: tuple[tuple[float, float], ...]  # (q-side, k-side) factor pairs of the dot product
    # (of the rotated q_i and k_j under RoPE)
    raw_score: float  # score(q_i, k_j) before scaling
    scale_factor: float  # 1/sqrt(Dk), or 1
    score: float  # raw_score * scale_factor
    allowed: bool  # the mask lets query i attend key j
    logit: float  # what softmax sees: score + bias, -inf, or score + bias - 1e9
    row_max: float  # the largest finite logit of row i (subtracted for stability)
    exp_value: float  # exp(logit - row_max)
    row_sum: float  # sum over the row of exp(logit - row_max)
    weight: float  # the weight from the result (exp_value / row_sum)
    fully_masked: bool  # row i has no allowed key
    bias: float = 0.0  # ALiBi's −m·|i − j| added to the score before masking (0 without)
    rope: RopeStep | None = None  # the rotation of q_i and k_j under RoPE, else None


def explain_cell(result: AttentionResult, query: np.ndarray, key: np.ndarray, i: int, j: int):
    """Show how weight (i, j) of one sequence comes about.

    Args:
        result: an unbatched `AttentionResult` (`scores (T, S)`).
        query: `(T, Dq)` the queries the result came from (before RoPE, if it rotated them).
        key: `(S, Dk)` the keys.
        i: query row; j: key column.

    Returns:
        A `CellStep`.
    """
    logits = np.asarray(result.masked_scores[i], dtype=np.float64)  # (S,)
    finite = logits[np.isfinite(logits)]
    row_max = float(finite.max()) if finite.size else 0.0
    exps = np.exp(logits - row_max)  # (S,)
    rope = _rope_step(result, query, key, i, j) if result.rotated_query is not None else None
    q_i = np.asarray(query[i], np.float64) if rope is None else rope.rotated_query  # (Dq,)
    k_j = np.asarray(key[j], np.float64) if rope is None else rope.rotated_key  # (Dk,)
    bias = 0.0 if result.position_bias is None else float(result.position_bias[i, j])
    return CellStep(
        i=i,
        j=j,
        terms=_score_terms(result, q_i, k_j),
        raw_score=float(result.raw_scores[i, j]),
        scale_factor=result.scale_factor,
        score=float(result.scores[i, j]),
        allowed=bool(result.mask[i, j]),
        logit=float(logits[j]),
        row_max=row_max,
        exp_value=float(exps[j]),
        row_sum=float(exps.sum()) if finite.size or result.settings.mask_value == "-1e9" else 0.0,
        weight=float(result.weights[i, j]),
        fully_masked=bool(result.fully_masked[i]),
        bias=bias,
        rope=rope,
    )


def _score_terms(result, q_i, k_j) -> tuple[tuple[float, float], ...]:
    """Factor pairs whose products sum to the raw score (dot and general; concat: the v·h terms)."""
    params = {name: np.asarray(w, np.float64) for name, w in result.params.items()}
    return SCORE_KINDS_BY_NAME[result.settings.score].terms(q_i, k_j, params)


def _rope_step(result: AttentionResult, query, key, i: int, j: int) -> RopeStep:
    """Rotate q_i and k_j again in float64, to show the arithmetic."""
    q_i, k_j = np.asarray(query[i], np.float64), np.asarray(key[j], np.float64)  # (D,) each
    omega = rope_frequencies(q_i.size, result.settings.rope_theta)  # (P,)
    turn_q, turn_k = i * omega, j * omega  # (P,) each
    q_rot = rotate_pairs(q_i[None], np.cos(turn_q)[None], np.sin(turn_q)[None])[0]  # (D,)
    k_rot = rotate_pairs(k_j[None], np.cos(turn_k)[None], np.sin(turn_k)[None])[0]  # (D,)
    products = (q_rot * k_rot).reshape(2, -1).sum(axis=0)  # (2, P) -> (P,): p and p + P
    arrays = (omega, turn_q, turn_k, q_i, k_j, q_rot, k_rot, products)
    return RopeStep(*(read_only(a) for a in arrays))


def format_number(x: float, digits: int = 6) -> str:
    """Format a float for the arithmetic display: −∞ for -inf, fixed precision otherwise."""
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    if x == NEG_LARGE:
        return "−1e9"
    return f"{x:.{digits}g}"
