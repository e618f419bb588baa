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

from attnviz.core.masks import NEG_LARGE
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
class CellStep:
    """The arithmetic from q_i and k_j to weight (i, j), for the step-by-step view."""

    i: int  # query row
    j: int  # key column
    terms: tuple[tuple[float, float], ...]  # (q-side, k-side) factor pairs of the dot product
    raw_score: float  # score(q_i, k_j) before scaling
    scale_factor: float  # 1/sqrt(Dk), or 1
    score: float  # raw_score * scale_factor
    allowed: bool  # the mask lets query i attend key j
    logit: float  # what softmax sees: score, -inf, or score - 1e9
    row_max: float  # the largest finite logit of row i (subtracted for stability)
    exp_value: float  # exp(logit - row_max)
    row_sum: float  # sum over the row of exp(logit - row_max)
    weight: float  # the weight from the result (exp_value / row_sum)
    fully_masked: bool  # row i has no allowed key


def explain_cell(result: AttentionResult, query: np.ndarray, key: np.ndarray, i: int, j: int):
    """Show how weight (i, j) of one sequence comes about.

    Args:
        result: an unbatched `AttentionResult` (`scores (T, S)`).
        query: `(T, Dq)` the queries the result came from.
        key: `(S, Dk)` the keys.
        i: query row; j: key column.

    Returns:
        A `CellStep`.
    """
    logits = np.asarray(result.masked_scores[i], dtype=np.float64)  # (S,)
    finite = logits[np.isfinite(logits)]
    row_max = float(finite.max()) if finite.size else 0.0
    exps = np.exp(logits - row_max)  # (S,)
    return CellStep(
        i=i,
        j=j,
        terms=_score_terms(
            result, np.asarray(query, np.float64), np.asarray(key, np.float64), i, j
        ),
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
    )


def _score_terms(result, query, key, i, j) -> tuple[tuple[float, float], ...]:
    """Factor pairs whose products sum to the raw score (dot and general; concat: the v·h terms)."""
    params = {name: np.asarray(w, np.float64) for name, w in result.params.items()}
    return SCORE_KINDS_BY_NAME[result.settings.score].terms(query[i], key[j], params)


def format_number(x: float, digits: int = 6) -> str:
    """Format a float for the arithmetic display: −∞ for -inf, fixed precision otherwise."""
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    if x == NEG_LARGE:
        return "−1e9"
    return f"{x:.{digits}g}"
