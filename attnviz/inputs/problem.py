"""`Problem`: the inputs of one attention computation, as the user gave them.

Shape letters: B batch, T queries, S keys, Dq/Dk/Dv features. Pure numpy: the input panels build
a Problem, the result views compute and draw it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.inputs.text import EncodedSentences


@dataclass(frozen=True)
class LearnedWeights:
    """A trained attention opened in the explorer: its score weights and where they came from."""

    params: dict[str, np.ndarray]  # the trained score weights ({} for a dot-product head)
    labels: tuple[tuple[str, ...], tuple[str, ...]]  # (query labels, key labels)
    source: str  # what it is ("Dates, dot score, step 3 ...")
    note: str  # what Q, K and V are there
    origin: str | None = None  # how to open it again (a link's `from` field), or None


@dataclass(frozen=True)
class Problem:
    """The inputs of one attention computation, shaped as they were given: plain matrices for
    one sequence, a leading batch axis B for a batch (typed 3-D, or sentences). Nothing adds or
    drops that axis but `compute_attention`, once, so its messages speak of the shapes the user
    gave."""

    query: np.ndarray  # (T, Dq) or (B, T, Dq)
    key: np.ndarray  # (S, Dk) or (B, S, Dk)
    value: np.ndarray  # (S, Dv) or (B, S, Dv)
    query_labels: tuple[tuple[str, ...], ...]  # (B, T) token or index of each query (B = 1
    key_labels: tuple[tuple[str, ...], ...]  # (B, S) of each key             for a matrix)
    padding: np.ndarray | None  # (S,) or (B, S) bool, True = real key; None = nothing marked
    item: int = 0  # the batch item the views draw (the sequence chosen)
    params: dict[str, np.ndarray] | None = None  # learned score weights (from Learn), or None
    query_encoding: EncodedSentences | None = None  # how the queries were made from sentences
    key_encoding: EncodedSentences | None = None  # ... and the keys and values (None: typed)

    @classmethod
    def of_sentences(
        cls, queries: EncodedSentences, keys: EncodedSentences, item: int = 0
    ) -> Problem:
        """The problem of encoded sentences: `queries` make Q, `keys` make K and V (the same
        encoding for self-attention), item `item` drawn."""
        return cls(
            np.asarray(queries.query),
            np.asarray(keys.key),
            np.asarray(keys.value),
            queries.tokens,
            keys.tokens,
            keys.padding_mask,
            item,
            query_encoding=queries,
            key_encoding=keys,
        )

    @property
    def batched(self) -> bool:
        """True if the inputs carry a batch axis."""
        return self.query.ndim == 3

    @property
    def batch(self) -> int:
        """B, the number of sequences (1 for plain matrices)."""
        return self.query.shape[0] if self.batched else 1

    def sequence(self, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """`(query (T, Dq), key (S, Dk), value (S, Dv), padding (S,) or None)` of item `b`."""
        arrays = (self.query, self.key, self.value, self.padding)
        if not self.batched:
            return arrays
        return tuple(None if a is None else a[b] for a in arrays)
