"""Per-head summaries: a few numbers that say what each attention head does.

Shape letters: L layers, H heads, T queries (rows), S keys (columns). One sequence at a time.
Pure numpy, in float64.

For a head's weights `w (T, S)` and the real query rows R (all rows unless a token mask says
which are padding), each summary is a mean over rows:

    entropy        mean over i in R of  -Σ_j w_ij log2 w_ij        (bits; 0 = one key takes all)
    mean distance  mean over i in R of   Σ_j w_ij |i − j|          (positions)
    diagonal       mean over i in R of   w_ii                       (rows with a key i)
    previous       mean over i in R of   w_i,i−1                    (rows i ≥ 1 with a key i − 1)
    first          mean over i in R of   w_i0
    alignment      share of rows i in R with a known span whose argmax_j w_ij lies in it
    induction      mean over i in R with a target of  w_i,target(i)  (self-attention over the
                   tokens x: target(i) = j + 1 for the last j < i − 1 with x_j = x_i)

A summary with no row to average (e.g. "previous" of a single token) is NaN. The alignment
score is the Learn one (`attnviz.learn.translation.metrics.alignment_score`): spans are half-open
`(start, end)`, rows whose span is None are left out, and it is 0.0 when no row has a span.
The induction score is the language model's (`attnviz.learn.language.metrics.induction_scores`) on
one text: NaN when no token of it occurred before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.checks import check_choice, check_int, describe
from attnviz.core.stats import row_stats
from attnviz.heads.stacks import as_layer_stack, check_token_mask

SUMMARY_LABELS = {  # summary field -> a short label for tables and plots
    "entropy_bits": "entropy (bits)",
    "mean_distance": "mean distance attended",
    "diagonal": "weight on the diagonal (j = i)",
    "previous": "previous-token score: weight on j = i − 1",
    "first": "weight on the first token (j = 0)",
    "alignment": "alignment score",
    "induction": "induction score: weight on the token after the earlier occurrence",
}
SUMMARY_SHORT = {  # summary field -> one word, for a table's narrow column
    "entropy_bits": "entropy",
    "mean_distance": "distance",
    "diagonal": "diagonal",
    "previous": "previous",
    "first": "first",
    "alignment": "alignment",
    "induction": "induction",
}
SUMMARY_FIELDS = tuple(SUMMARY_LABELS)

Span = tuple[int, int] | None  # a query row's known source span [start, end), or None


@dataclass(frozen=True)
class HeadSummary:
    """What one head does, in numbers (means over the real query rows; see module doc)."""

    layer: int  # layer index l (0 for a single `(H, T, S)` layer)
    head: int  # head index h within the layer
    entropy_bits: float  # mean row entropy in bits: 0 = focused, log2(S) = uniform
    mean_distance: float  # mean over rows of Σ_j w_ij |i − j|, in positions
    diagonal: float  # mean weight on key j = i (rows that have such a key)
    previous: float  # mean weight on key j = i − 1 (rows i ≥ 1 that have such a key)
    first: float  # mean weight on key j = 0
    alignment: float | None  # share of rows whose argmax is in their span; None without spans
    induction: float | None = None  # mean weight on the induction target; None without tokens


def head_summaries(
    weights: Any,
    *,
    mask: Any = None,
    spans: Sequence[Span] | None = None,
    tokens: Sequence[Any] | None = None,
) -> tuple[HeadSummary, ...]:
    """Summarise every head of one layer `(H, T, S)` or of L layers `(L, H, T, S)`.

    Args:
        weights: `(H, T, S)`, `(L, H, T, S)` or a list of L `(H, T, S)` weights of one
            sequence (rows sum to 1), or a trace's `LayerStack` (`AttentionCalls.layer_stack`).
        mask: `(T,)` bool, True = a real query token: padding rows are left out of every mean.
        spans: for cross-attention, one entry per query row: the half-open `(start, end)`
            source span it should attend, or None when it comes from no source token.
        tokens: for self-attention over one text, its `(T,)` tokens (ids or labels): the
            induction score is computed (see module doc).

    Returns:
        One `HeadSummary` per head, layer by layer: `(0, 0), (0, 1), …, (L − 1, H − 1)`.

    Raises:
        ValueError: for weights that are not attention weights, or a mask or spans that do
            not fit them.
    """
    stack = as_layer_stack(weights)  # (L, H, T, S)
    t, s = stack.shape[-2:]
    rows = check_token_mask(mask, t)  # (T,)
    columns = _summary_columns(stack, rows)  # field -> (L, H)
    alignment = None if spans is None else _alignment(stack, rows, _check_spans(spans, t, s))
    induction = None if tokens is None else _induction(stack, rows, _check_tokens(tokens, t, s))
    return tuple(
        HeadSummary(
            layer=layer,
            head=head,
            **{name: float(values[layer, head]) for name, values in columns.items()},
            alignment=None if alignment is None else float(alignment[layer, head]),
            induction=None if induction is None else float(induction[layer, head]),
        )
        for layer in range(stack.shape[0])
        for head in range(stack.shape[1])
    )


def _summary_columns(w: np.ndarray, rows: np.ndarray) -> dict[str, np.ndarray]:
    """Every summary but the alignment, as `(L, H)` means over the real rows."""
    t, s = w.shape[-2:]
    distance = np.abs(np.arange(t)[:, None] - np.arange(s)[None, :])  # (T, 1) - (1, S) -> (T, S)
    per_row = {
        "entropy_bits": row_stats(w, np.ones(w.shape, dtype=bool)).entropy_bits,  # (L, H, T)
        "mean_distance": (w * distance).sum(axis=-1),  # (L, H, T, S) * (T, S) -> (L, H, T)
        "diagonal": _key_at_offset(w, 0),  # (L, H, T), NaN where there is no key i
        "previous": _key_at_offset(w, -1),  # (L, H, T), NaN where there is no key i − 1
        "first": w[..., 0],  # (L, H, T)
    }
    return {name: _row_mean(values, rows) for name, values in per_row.items()}


def _key_at_offset(w: np.ndarray, offset: int) -> np.ndarray:
    """`(L, H, T)`: w[..., i, i + offset] for every row i, NaN where that key does not exist."""
    t, s = w.shape[-2:]
    queries = np.arange(t)  # (T,)
    keys = queries + offset  # (T,)
    exists = (keys >= 0) & (keys < s)  # (T,)
    picked = np.full(w.shape[:-1], np.nan)  # (L, H, T)
    picked[..., exists] = w[..., queries[exists], keys[exists]]
    return picked


def _row_mean(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`(L, H, T)` -> `(L, H)`: mean over the rows in `rows` that are not NaN (NaN if none)."""
    chosen = values[..., rows]  # (L, H, R)
    counted = ~np.isnan(chosen)
    total = np.where(counted, chosen, 0.0).sum(axis=-1)  # (L, H)
    count = counted.sum(axis=-1)  # (L, H)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _check_spans(spans: Any, t: int, s: int) -> list[Span]:
    """One `(start, end)` with 0 <= start < end <= S, or None, per query row."""
    if isinstance(spans, (str, bytes)) or not hasattr(spans, "__len__") or len(spans) != t:
        raise ValueError(
            f"`spans` must list one entry per query row: {t} entries, each a (start, end) "
            f"source span or None. Received: {describe(spans)}."
        )
    for row, span in enumerate(spans):
        if span is None:
            continue
        ints = isinstance(span, (tuple, list)) and len(span) == 2 and all(
            isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in span
        )  # fmt: skip
        if not ints or not 0 <= span[0] < span[1] <= s:
            raise ValueError(
                f"`spans[{row}]` must be None or a half-open (start, end) span of source "
                f"positions with 0 <= start < end <= {s}. Received: {describe(span)}. "
                "A span of one token j is (j, j + 1)."
            )
    return list(spans)


def _alignment(w: np.ndarray, rows: np.ndarray, spans: list[Span]) -> np.ndarray:
    """`(L, H)`: share of the real rows with a span whose argmax key lies in it (0 if none)."""
    known = rows & np.array([span is not None for span in spans])  # (T,)
    if not known.any():
        return np.zeros(w.shape[:2])
    start = np.array([span[0] if span else 0 for span in spans])  # (T,)
    end = np.array([span[1] if span else 0 for span in spans])  # (T,)
    top = w.argmax(axis=-1)  # (L, H, T) the key each row looks at most
    hits = (start <= top) & (top < end)  # (L, H, T)
    return hits[..., known].mean(axis=-1)


def induction_targets(tokens: Sequence[Any]) -> np.ndarray:
    """`(T,)` int: for each position i, j + 1 for the last earlier j < i − 1 whose token is
    the same as i's, or −1 (none)."""
    x = list(tokens)
    targets = np.full(len(x), -1)
    for i, token in enumerate(x):
        earlier = [j for j in range(i - 1) if x[j] == token]
        if earlier:
            targets[i] = earlier[-1] + 1
    return targets


def _check_tokens(tokens: Any, t: int, s: int) -> np.ndarray:
    """The induction targets of `tokens`, one per query row of a square (self-) attention."""
    if isinstance(tokens, (str, bytes)) or not hasattr(tokens, "__len__") or len(tokens) != t:
        raise ValueError(
            f"`tokens` must list one token per query row: {t} tokens. Received: {describe(tokens)}."
        )
    if t != s:
        raise ValueError(
            f"The induction score needs self-attention over the tokens: as many keys as "
            f"queries. Received weights of {t} queries × {s} keys."
        )
    return induction_targets(tokens)


def _induction(w: np.ndarray, rows: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """`(L, H)`: mean weight on each real row's induction target (NaN if no row has one)."""
    picked = np.full(w.shape[:-1], np.nan)  # (L, H, T)
    has = targets >= 0  # (T,)
    picked[..., has] = w[..., np.flatnonzero(has), targets[has]]
    return _row_mean(picked, rows)


def summary_table(summaries: Sequence[HeadSummary], field: str) -> np.ndarray:
    """One summary of every head as an `(L, H)` float array (NaN for a missing alignment).

    Handy to colour or annotate a layers × heads grid, e.g. the model view's.
    """
    check_choice(field, "field", SUMMARY_FIELDS)
    summaries = _check_summaries(summaries)
    shape = (1 + max(x.layer for x in summaries), 1 + max(x.head for x in summaries))  # (L, H)
    table = np.full(shape, np.nan)
    for summary in summaries:
        value = getattr(summary, field)
        table[summary.layer, summary.head] = np.nan if value is None else value
    return table


def sort_heads(
    summaries: Sequence[HeadSummary], by: str, *, descending: bool = False
) -> tuple[HeadSummary, ...]:
    """The summaries ordered by one field; heads without a value (NaN, None) come last.

    Args:
        summaries: `HeadSummary`s, e.g. from `head_summaries`.
        by: a field of `SUMMARY_FIELDS`, e.g. "previous" to find previous-token heads first.
        descending: largest first (e.g. highest alignment) instead of smallest first.
    """
    check_choice(by, "by", SUMMARY_FIELDS)
    summaries = _check_summaries(summaries)

    def order(summary: HeadSummary) -> tuple[bool, float]:
        value = getattr(summary, by)
        missing = value is None or math.isnan(value)
        return missing, 0.0 if missing else (-value if descending else value)

    return tuple(sorted(summaries, key=order))


def top_heads(
    summaries: Sequence[HeadSummary], by: str, n: int = 3, *, descending: bool = True
) -> tuple[tuple[int, int], ...]:
    """`(layer, head)` of the first `n` heads of `sort_heads`: e.g. to highlight in a grid."""
    n = check_int(n, "n", low=1)
    return tuple((x.layer, x.head) for x in sort_heads(summaries, by, descending=descending)[:n])


def _check_summaries(summaries: Any) -> list[HeadSummary]:
    """A non-empty list of `HeadSummary`s."""
    listed = list(summaries) if isinstance(summaries, (list, tuple)) else []
    if not listed or not all(isinstance(x, HeadSummary) for x in listed):
        raise ValueError(
            "`summaries` must be a non-empty list of HeadSummary, as `head_summaries` returns. "
            f"Received: {describe(summaries)}."
        )
    return listed
