"""Weights made by hand so that each head of a multi-head block looks in its own place: one head
at the previous token, one at the token itself, one at the first token, one at the next token.

Shape letters: B batch, T queries, S keys, D model features, H query heads, G key/value heads,
Dk features per head.

Random weights give heads that all look nearly evenly; a trained model's heads learn to look in
different places. These heads are built instead, so that a lesson can show the idea plainly:

- every key is given a **position code**, `k_j = code(j)`: Dk/2 pairs of features
  `(cos(m·a·j), sin(m·a·j))`, m = 1 … Dk/2, with a = 2π/P for a period P longer than the
  sentences; `code(p) · code(p')` is largest when p = p';
- head h's query at position i is the code of the place it looks for, made sharp:
  `q_i = c · code(place_h(i))`, place "previous" i − 1, "itself" i, "first" 0, "next" i + 1;
  so its largest score is at that place, larger than every other by `SHARPNESS` after scaling.
- W_Q[h] and W_K are the least-squares solutions of `X W = target` over the real (not padding)
  tokens of the inputs X: exact when there are at most D of them (their rows of X are then
  independent), only approximate with more (`MadeHeads.exact`).

W_V and W_O are not made: `compute_multihead` draws them from the seed as for random weights.
Pure numpy (float64 solving, float32 weights as every attnviz weight).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.checks import as_float_array, check_heads
from attnviz.core.ways import get_way
from attnviz.core.words import plural
from attnviz.transformer.head_weights import check_kv_heads

SHARPNESS = 6.0  # how much the largest scaled score of a row leads the next one (softmax: e^-6)
EXACT_TOLERANCE = 1e-6  # the largest |X W − target| / c that still counts as exact


@dataclass(frozen=True)
class Place:
    """Where a head looks: at an offset from the query's own position, or at one end."""

    name: str  # what it looks at, in words: "the previous token"
    offset: int = 0  # the key at query position + offset (when `end` is None)
    end: str | None = None  # "first" or "last": that token of the sentence, whatever the query

    def target(self, position: int, length: int) -> int:
        """The key position it looks for from query `position` in a sentence of `length` keys
        (may lie outside 0 … length − 1: there is no such token)."""
        if self.end == "first":
            return 0
        if self.end == "last":
            return length - 1
        return position + self.offset


PLACES: tuple[Place, ...] = (  # in the order heads get them, then again from the start
    Place("the previous token", -1),
    Place("itself", 0),
    Place("the first token", end="first"),
    Place("the next token", 1),
    Place("two tokens back", -2),
    Place("two tokens ahead", 2),
    Place("the last token", end="last"),
)
PLACE_NAMES = tuple(place.name for place in PLACES)


@dataclass(frozen=True)
class MadeHeads:
    """Weights made so that each head looks in its place, and how well they fit."""

    params: dict[str, np.ndarray]  # "W_Q" (H, D, Dk), "W_K" (G, D, Dk), float32
    places: tuple[Place, ...]  # (H,) where each head looks
    exact: bool  # the weights give the target queries and keys exactly
    tokens: int  # the real tokens the queries (or keys, if more) were solved over
    d_model: int  # D


def head_places(num_heads: int, order: Sequence[str] | None = None) -> tuple[Place, ...]:
    """The place of each of `num_heads` heads: `order` (names of `PLACES`) or `PLACES`, again
    from its start when there are more heads than places."""
    num_heads = check_heads(num_heads)
    if order is None:
        chosen = PLACES
    else:
        unknown = [name for name in order if name not in PLACE_NAMES]
        if unknown or not order:
            raise ValueError(
                f"A head's place must be one of {', '.join(map(repr, PLACE_NAMES))}. Received: "
                f"{list(order)!r}."
            )
        chosen = tuple(PLACES[PLACE_NAMES.index(name)] for name in order)
    return tuple(chosen[h % len(chosen)] for h in range(num_heads))


def position_codes(positions: Any, d_k: int, period: int) -> np.ndarray:
    """`(N, Dk)` the code of each position: pairs `(cos(m·a·p), sin(m·a·p))`, m = 1 … Dk/2,
    a = 2π/period (a last feature 0 when Dk is odd)."""
    p = np.asarray(positions, dtype=np.float64)[:, None]  # (N, 1)
    steps = 2 * np.pi / period * np.arange(1, d_k // 2 + 1)  # (Dk/2,)
    angles = p * steps  # (N, 1) * (Dk/2,) -> (N, Dk/2)
    codes = np.zeros((p.shape[0], d_k))
    codes[:, 0 : 2 * (d_k // 2) : 2] = np.cos(angles)
    codes[:, 1 : 2 * (d_k // 2) : 2] = np.sin(angles)
    return codes


def code_gap(d_k: int, period: int) -> float:
    """How much `code(p) · code(p)` exceeds `code(p) · code(p')` for the nearest rival p' ≠ p
    (the same for every p: it depends on p − p' only)."""
    same = position_codes([0], d_k, period)[0]  # (Dk,)
    others = position_codes(np.arange(1, period), d_k, period)  # (P − 1, Dk)
    return float(same @ same - np.max(others @ same))


def made_params(
    queries: Any,
    keys: Any,
    *,
    num_heads: int,
    num_kv_heads: int | None = None,
    query_mask: Any = None,
    key_mask: Any = None,
    order: Sequence[str] | None = None,
    scale: bool = True,
) -> MadeHeads:
    """W_Q and W_K made so that each head looks in its place (see the module doc).

    Args:
        queries: the inputs the queries are made from, `(T, D)` or `(B, T, D)`.
        keys: the inputs the keys are made from, `(S, D)` or `(B, S, D)` (the same array for
            self-attention).
        num_heads: H; each head gets D // H features (D must be divisible by H, Dk ≥ 2).
        num_kv_heads: G, key/value heads (None = H); every K/V head gets the same W_K.
        query_mask, key_mask: bool `(T,)` / `(B, T)` and `(S,)` / `(B, S)`, True = a real
            token (padding is not solved for); None = every token is real.
        order: the names of the heads' places (`PLACE_NAMES`); None = `PLACES` in order.
        scale: the scores will be divided by √Dk (make the heads that much sharper).

    Raises:
        ValueError: with what is wrong, what is allowed and what was received.
    """
    q, k = _batched(queries, "queries"), _batched(keys, "keys")
    d_model = q.shape[-1]
    if k.shape[-1] != d_model or k.shape[0] != q.shape[0]:
        raise ValueError(
            "`queries` and `keys` must have the same number of sentences and of features "
            f"(d_model). Received shapes {q.shape} and {k.shape}."
        )
    num_heads = check_heads(num_heads)
    g = check_kv_heads(num_kv_heads, num_heads)
    d_k = _head_width(d_model, num_heads)
    places = head_places(num_heads, order)
    q_real, k_real = _real(query_mask, q.shape[:2], "query"), _real(key_mask, k.shape[:2], "key")
    period = max(q.shape[1], k.shape[1]) + 4  # longer than any target, -2 … T + 1 included
    sharp = SHARPNESS * (math.sqrt(d_k) if scale else 1.0) / code_gap(d_k, period)
    w_k, k_exact = _solve(k[k_real], position_codes(np.nonzero(k_real)[1], d_k, period))
    solved = [
        _solve(q[q_real], sharp * position_codes(targets, d_k, period), sharp)
        for targets in _targets(places, q_real, k_real.sum(axis=1))
    ]  # per head: (W_Q[h] (D, Dk), exact)
    w_q, q_exact = [w for w, _ in solved], all(exact for _, exact in solved)
    return MadeHeads(
        params={
            "W_Q": np.stack(w_q).astype(np.float32),  # (H, D, Dk)
            "W_K": np.repeat(w_k[None], g, axis=0).astype(np.float32),  # (G, D, Dk)
        },
        places=places,
        exact=bool(k_exact and q_exact),
        tokens=int(max(q_real.sum(), k_real.sum())),
        d_model=d_model,
    )


def made_for_way(
    way: str,
    source: Any,
    target: Any,
    *,
    num_heads: int,
    num_kv_heads: int | None = None,
    source_padding_mask: Any = None,
    target_padding_mask: Any = None,
    scale: bool = True,
) -> MadeHeads:
    """`made_params` for the inputs way `way` attends (`core.ways`): its queries' side and its
    keys' side of `source` and `target`, as `compute_way` takes them."""
    chosen = get_way(way)
    inputs = {"source": source, "target": target}
    masks = {"source": source_padding_mask, "target": target_padding_mask}
    return made_params(
        inputs[chosen.queries_from],
        inputs[chosen.keys_from],
        num_heads=num_heads,
        num_kv_heads=num_kv_heads,
        query_mask=masks[chosen.queries_from],
        key_mask=masks[chosen.keys_from],
        scale=scale,
    )


def place_shares(
    weights: Any,
    mask: Any,
    places: Sequence[Place],
    key_mask: Any = None,
    query_mask: Any = None,
) -> np.ndarray:
    """`(H,)` the average weight each head puts on its place, over the real query rows whose
    place is a real key the query may attend; NaN for a head whose place no row may attend.

    Args:
        weights: `(H, T, S)` or `(B, H, T, S)`, a multi-head result's weights.
        mask: `(T, S)` or `(B, T, S)` bool, True = the query may attend the key.
        places: `(H,)` where each head looks.
        key_mask: bool `(S,)` / `(B, S)`, True = a real key; None = every key is real.
        query_mask: bool `(T,)` / `(B, T)`, True = a real query; None = every query is real.
    """
    w = np.asarray(weights, dtype=np.float64)
    w = w if w.ndim == 4 else w[None]  # (B, H, T, S)
    allowed = np.asarray(mask, dtype=bool)
    allowed = np.broadcast_to(allowed if allowed.ndim == 3 else allowed[None], (w.shape[0],
                              *w.shape[2:]))  # fmt: skip
    real = _real(key_mask, (w.shape[0], w.shape[3]), "key")
    asked = _real(query_mask, (w.shape[0], w.shape[2]), "query")
    shares = []
    for h, place in enumerate(places):
        taken = []
        for b in range(w.shape[0]):
            length = int(real[b].sum())
            for i in np.nonzero(asked[b])[0]:
                j = place.target(int(i), length)
                if 0 <= j < length and allowed[b, i, j]:
                    taken.append(w[b, h, i, j])
        shares.append(float(np.mean(taken)) if taken else math.nan)
    return np.array(shares)


def said(made: MadeHeads, shares: Sequence[float]) -> str:
    """Where each head looks, how much of its weight goes there, and whether the weights are
    exact, in plain words (markdown)."""
    parts = []
    for h, (place, share) in enumerate(zip(made.places, shares, strict=True)):
        there = "hidden by the mask here" if math.isnan(share) else f"{share:.2f} of its weight"
        parts.append(f"head {h} looks at {place.name} ({there})")
    text = (
        "Weights made to differ, built by hand, not learned: W_Q and W_K are solved from "
        "these tokens so that each head's queries seek a position; "
        + "; ".join(parts)
        + ". W_V and W_O are random."
    )
    if not made.exact:
        text += (
            f" With {plural(made.tokens, 'token')} and d_model = {made.d_model}, no weights "
            "give every token its exact code, so the heads blur: raise d_model to at least "
            f"{made.tokens}, or type fewer tokens."
        )
    return text


def _batched(x: Any, name: str) -> np.ndarray:
    """`x` as float64 `(B, N, D)`, from `(N, D)` or `(B, N, D)`."""
    array = as_float_array(x, f"`{name}`", ndim=(2, 3))
    return array if array.ndim == 3 else array[None]


def _real(mask: Any, shape: tuple[int, int], side: str) -> np.ndarray:
    """The bool `(B, N)` real tokens of one side (every token when `mask` is None)."""
    if mask is None:
        return np.ones(shape, dtype=bool)
    real = np.broadcast_to(np.asarray(mask, dtype=bool), shape) if np.ndim(mask) in (1, 2) else None
    if real is None or np.asarray(mask).shape[-1] != shape[1]:
        raise ValueError(
            f"The {side} mask must be bool (tokens,) or (sentences, tokens) matching the {side}s "
            f"{shape}. Received shape {np.shape(mask)}."
        )
    return real


def _head_width(d_model: int, num_heads: int) -> int:
    """Dk = D // H, which must be whole and at least 2 (one pair of code features)."""
    if d_model % num_heads or d_model // num_heads < 2:
        raise ValueError(
            "Weights made to differ give each head d_model / h features, which must be a whole "
            "number of at least 2 (a head's position code is made of pairs of features). "
            f"Received d_model={d_model} and {plural(num_heads, 'head')}. Use fewer heads or a "
            "wider d_model."
        )
    return d_model // num_heads


def _targets(places: Sequence[Place], q_real: np.ndarray, key_lengths: np.ndarray):
    """Per head, the key position each real query looks for (in `q_real`'s row-major order)."""
    batch_rows, positions = np.nonzero(q_real)  # (N,) each real query's sentence and position
    for place in places:
        yield [
            place.target(int(i), int(key_lengths[b]))
            for b, i in zip(batch_rows, positions, strict=True)
        ]


def _solve(x: np.ndarray, target: np.ndarray, sharp: float = 1.0) -> tuple[np.ndarray, bool]:
    """The least-squares `W (D, Dk)` of `x W = target` for `x (N, D)`, and whether it is exact
    (within `EXACT_TOLERANCE` of `target / sharp`)."""
    w, *_ = np.linalg.lstsq(x, target, rcond=None)
    error = float(np.max(np.abs(x @ w - target))) / sharp if len(x) else 0.0
    return w, error <= EXACT_TOLERANCE
