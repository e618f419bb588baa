"""The start page's picture: one query, its keys, the weights.

One sentence, "The cat sat on the mat", with small hand-made 2-feature vectors: the query of
"sat" asks who sat and where, and the keys of "cat" and "mat" answer. The weights are computed
(scores q · k, softmax), not drawn by hand: `tiled_attention` with one tile is the plain
computation in numpy, tested equal to `compute_attention`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.core.tiled import tiled_attention

TOKENS = ("The", "cat", "sat", "on", "the", "mat")
QUERY_TOKEN = 2  # "sat" asks
QUERY = (1.5, 1.0)  # (2,) its query: "who did it?" (feature 0) and "where?" (feature 1)
KEYS = ((0.0, 0.2), (2.0, 1.0), (0.5, 0.5), (0.0, 0.3), (0.0, 0.2), (1.5, 0.5))  # (S, 2)


@dataclass(frozen=True)
class FirstLook:
    """One query's attention over a sentence."""

    query_label: str  # the token that asks
    query_position: int  # its place in the sentence (from 0)
    key_labels: tuple[str, ...]  # (S,) the tokens that answer
    query: np.ndarray  # (D,) its query vector
    keys: np.ndarray  # (S, D) their key vectors
    scores: np.ndarray  # (S,) q · k
    weights: np.ndarray  # (S,) softmax of the scores: they sum to 1


def first_look() -> FirstLook:
    """The start page's example, computed."""
    query = np.asarray([QUERY], dtype=np.float64)  # (1, D)
    keys = np.asarray(KEYS, dtype=np.float64)  # (S, D)
    result = tiled_attention(query, keys, keys, key_tile=len(TOKENS), scale=False)
    scores = keys @ query[0]  # (S,) the logits softmax saw
    return FirstLook(
        TOKENS[QUERY_TOKEN], QUERY_TOKEN, TOKENS, query[0], keys, scores, result.weights[0]
    )
