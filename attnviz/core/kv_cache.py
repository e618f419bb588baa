"""Causal decoding token by token with a key/value cache, as a language model generates.

Shape letters: H query heads, G key/value heads (G divides H; query head h reads K/V head
h // (H / G)), T tokens (steps), Dk query/key features, Dv value features.

At step t the model sees one new token: it computes that token's query, key and value, appends
the key and value to the cache (keys rotated by RoPE at their own position, once, when cached),
and the one new query row attends to the t + 1 cached rows. Nothing is recomputed for earlier
tokens: the rows assembled from every step are the rows of full causal attention. The cache
grows by G·(Dk + Dv) float32 numbers per token; with a sliding window, chunks or packed
documents a step never sees some old rows again, and a rolling cache may drop them
(`kept_rows`; attention sinks stay).

Pure numpy, float32 like the cache it shows; each step costs O(t·(Dk + Dv)) per head.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.checks import as_float_array, check_array_cells, check_score_cells, read_only
from attnviz.core.positions import alibi_slope, alibi_slopes, apply_rope
from attnviz.core.settings import AttentionSettings

BYTES_PER_NUMBER = 4  # float32


@dataclass(frozen=True)
class CacheStep:
    """One decoding step t: the new query row against the t + 1 cached rows."""

    t: int  # the step, from 0: the token at position t
    query: np.ndarray  # (H, Dk) the new query of each head (rotated to position t under RoPE)
    keys: np.ndarray  # (G, t + 1, Dk) the cache's keys after appending the new one
    values: np.ndarray  # (G, t + 1, Dv) the cache's values
    visible: np.ndarray  # (t + 1,) bool, the cached rows this query may see
    scores: np.ndarray  # (H, t + 1) q·k (scaled) plus ALiBi's bias, before masking
    weights: np.ndarray  # (H, t + 1) softmax over the visible rows; 0 elsewhere
    output: np.ndarray  # (H, Dv) weights @ values: row t of every head's output
    cache_bytes: int  # what the cache holds now: (t + 1)·G·(Dk + Dv)·4 bytes
    kept_bytes: int  # what a rolling cache must keep: the visible rows only


@dataclass(frozen=True)
class CacheDecoding:
    """Every step of one decoding run, stacked (read-only arrays); `step(t)` gives one step."""

    queries: np.ndarray  # (H, T, Dk) each step's query row (rotated under RoPE)
    keys: np.ndarray  # (G, T, Dk) the full cache after the last step (rotated under RoPE)
    values: np.ndarray  # (G, T, Dv)
    visible: np.ndarray  # (T, T) bool, row t = the cached rows step t sees (j <= t always)
    scores: np.ndarray  # (H, T, T) row t = step t's scores (+ bias); 0 for j > t (not cached)
    weights: np.ndarray  # (H, T, T) row t = step t's weights: the full causal weight matrix
    outputs: np.ndarray  # (H, T, Dv) row t = step t's output
    alibi_slopes: np.ndarray | None  # (H,) ALiBi's slope m_h (step t adds −m_h·(t − j)), or None
    kv_head_of: np.ndarray  # (H,) int, the K/V head each query head reads
    cache_rows: np.ndarray  # (T,) int, rows cached after step t: t + 1
    cache_bytes: np.ndarray  # (T,) int, bytes cached after step t: (t + 1)·G·(Dk + Dv)·4
    mha_cache_bytes: np.ndarray  # (T,) int, the same with one K/V head per query head (G = H)
    kept_rows: np.ndarray  # (T,) int, rows a rolling cache keeps after step t (the visible ones)
    kept_bytes: np.ndarray  # (T,) int, their bytes
    settings: AttentionSettings  # causal, window, sinks, documents, chunk and position
    scale_factor: float  # 1/sqrt(Dk), or 1.0

    def step(self, t: int) -> CacheStep:
        """Step t (from 0) as the cache saw it."""
        if not 0 <= t < self.weights.shape[1]:
            raise ValueError(
                f"`t` must be a step from 0 to {self.weights.shape[1] - 1}. Received {t}."
            )
        rows = slice(0, t + 1)
        return CacheStep(
            t=t,
            query=self.queries[:, t],
            keys=self.keys[:, rows],
            values=self.values[:, rows],
            visible=self.visible[t, rows],
            scores=self.scores[:, t, rows],
            weights=self.weights[:, t, rows],
            output=self.outputs[:, t],
            cache_bytes=int(self.cache_bytes[t]),
            kept_bytes=int(self.kept_bytes[t]),
        )


def decode_with_cache(
    query: Any,
    key: Any,
    value: Any,
    *,
    settings: AttentionSettings | None = None,
    **keywords: Any,
) -> CacheDecoding:
    """Decode causally, one token a step, with a KV cache; return every step.

    Args:
        query: `(T, Dk)` one head, or `(H, T, Dk)` heads (e.g. `MultiHeadResult.query_heads`
            of one sequence, before RoPE): any number of heads, tokens and features while the
            `(H, T, T)` weights stay within `MAX_SCORE_CELLS` cells and every other array within
            `MAX_ARRAY_CELLS` numbers.
        key: `(T, Dk)` or `(G, T, Dk)`: one key per token (`shared_key_heads`, before RoPE).
        value: `(T, Dv)` or `(G, T, Dv)`.
        settings: the mask rules, scaling and positions as one `AttentionSettings`; decoding
            is causal dot-product attention, so its `score` must be "dot", `causal` True and
            `prefix` None (prefix-LM reads its prefix at once: it is not decoding); its
            `mask_value` and `seed` are unused (a step always sees its own key). Or None, to
            give them as keywords instead (not both).
        **keywords: the fields of `AttentionSettings` by name that decoding uses, as in
            `compute_attention`: scale, window, sinks, documents, chunk (always on top of
            the causal order), position ("rope": query and key rotated at their token's
            position), rope_theta, alibi_heads and alibi_head (one head, 2-D inputs, takes
            that head's slope as `compute_attention` does; H heads take the paper's slopes
            for H heads).

    Returns:
        A `CacheDecoding`; its `weights` and `outputs` equal causal `compute_attention` (per
        head) up to float32 rounding.

    Raises:
        ValueError: with what is wrong, what is allowed and what was received.
        TypeError: for a keyword that is not one of the attention keywords above.
    """
    settings = AttentionSettings.from_keywords(
        settings,
        keywords,
        function="decode_with_cache",
        fixed={"score": "dot", "causal": True, "prefix": None},
        derived={"mask_value": "-inf", "seed": 0},
    )
    position, theta = settings.position, settings.rope_theta
    q, k, v, one_head = _check_inputs(query, key, value, position)
    h, t = q.shape[0], q.shape[1]
    settings.mask_spec.check_fits(t, t)
    visible = settings.mask_spec.allowed(np.arange(t), np.arange(t))  # (T, T), j <= i
    if position == "rope":
        q = apply_rope(q, np.arange(t), theta).astype(np.float32)  # (H, T, Dk)
        k = apply_rope(k, np.arange(t), theta).astype(np.float32)  # (G, T, Dk), once
    slopes = None
    if position == "alibi" and one_head:
        slopes = np.array([alibi_slope(settings.alibi_heads, settings.alibi_head)])
    elif position == "alibi":
        slopes = alibi_slopes(h)
    factor = 1.0 / np.sqrt(k.shape[-1]) if settings.scale else 1.0
    scores, weights, outputs = _decode(q, k, v, visible, slopes, np.float32(factor))
    return _result(q, k, v, visible, scores, weights, outputs, slopes, settings, float(factor))


def _decode(q, k, v, visible, slopes, factor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The steps: query row t of every head against cache rows 0 … t, grouped by K/V head.

    `slopes (H,)`: ALiBi's, or None; step t adds −m_h·(t − j) to cached row j."""
    (h, t, _), g = q.shape, k.shape[0]
    scores = np.zeros((h, t, t), np.float32)  # (H, T, T), filled row by row
    weights = np.zeros((h, t, t), np.float32)
    outputs = np.zeros((h, t, v.shape[-1]), np.float32)  # (H, T, Dv)
    grouped_q = q.reshape(g, h // g, t, -1)  # (H, T, Dk) -> (G, H/G, T, Dk): head h = g·H/G + r
    k_t = np.ascontiguousarray(k.transpose(0, 2, 1))  # (G, Dk, T): cached keys as columns
    for step in range(t):
        seen = step + 1  # rows in the cache after appending this token
        # (G, H/G, Dk) x (G, Dk, t+1) -> (G, H/G, t+1) -> (H, t+1)
        row = (grouped_q[:, :, step] @ k_t[:, :, :seen]).reshape(h, seen) * factor
        if slopes is not None:  # (H, 1) * (1, t+1) -> (H, t+1)
            row += (-slopes[:, None] * (step - np.arange(seen))[None, :]).astype(np.float32)
        logits = np.where(visible[step, :seen], row, -np.inf)  # (H, t+1)
        exps = np.exp(logits - logits.max(axis=-1, keepdims=True))  # a step always sees itself
        w = exps / exps.sum(axis=-1, keepdims=True)  # (H, t+1)
        # (G, H/G, t+1) x (G, t+1, Dv) -> (G, H/G, Dv) -> (H, Dv)
        outputs[:, step] = (w.reshape(g, h // g, seen) @ v[:, :seen]).reshape(h, -1)
        scores[:, step, :seen], weights[:, step, :seen] = row, w
    return scores, weights, outputs


def _result(q, k, v, visible, scores, weights, outputs, slopes, settings, factor) -> CacheDecoding:
    (h, t, d_k), (g, _, d_v) = q.shape, v.shape
    per_row = g * (d_k + d_v) * BYTES_PER_NUMBER  # bytes one token adds to the cache
    rows = np.arange(1, t + 1)  # (T,)
    kept = visible.sum(axis=-1)  # (T,)
    return CacheDecoding(
        queries=read_only(q),
        keys=read_only(k),
        values=read_only(v),
        visible=read_only(visible),
        scores=read_only(scores),
        weights=read_only(weights),
        outputs=read_only(outputs),
        alibi_slopes=None if slopes is None else read_only(slopes),
        kv_head_of=read_only(np.arange(h) // (h // g)),
        cache_rows=read_only(rows),
        cache_bytes=read_only(rows * per_row),
        mha_cache_bytes=read_only(rows * h * (d_k + d_v) * BYTES_PER_NUMBER),
        kept_rows=read_only(kept),
        kept_bytes=read_only(kept * per_row),
        settings=settings,
        scale_factor=factor,
    )


def _check_inputs(query, key, value, position: str):
    """Q `(H, T, Dk)`, K `(G, T, Dk)`, V `(G, T, Dv)` as float32, and whether one head was given."""
    q = as_float_array(query, "query")
    k = as_float_array(key, "key")
    v = as_float_array(value, "value")
    shapes = f"query {q.shape}, key {k.shape}, value {v.shape}"
    if not q.ndim == k.ndim == v.ndim:
        raise ValueError(
            "`query`, `key` and `value` must all be 2-D (one head: tokens × features) or all "
            f"3-D (heads × tokens × features). Received: {shapes}."
        )
    one_head = q.ndim == 2
    if one_head:
        q, k, v = q[None], k[None], v[None]  # (1, T, ·)
    (h, t, d_q), (g, s, d_k), (g_v, s_v, _) = q.shape, k.shape, v.shape
    if not t == s == s_v:
        raise ValueError(
            "Decoding caches one key and one value per token: `query`, `key` and `value` need "
            f"the same number of tokens (rows). Received: {shapes}."
        )
    if g != g_v or h % g:
        raise ValueError(
            f"`key` and `value` need the same number of K/V heads G, dividing the {h} query "
            f"heads. Received: {shapes}."
        )
    if d_q != d_k or (position == "rope" and d_k % 2):
        even = ', an even number for position="rope"' if position == "rope" else ""
        raise ValueError(
            f"`query` and `key` need the same number of features (Dq == Dk{even}). "
            f"Received: {shapes}."
        )
    sizes = {"head": h, "token": t, "cached token": t}
    check_score_cells(sizes, "Decode fewer heads or fewer tokens.")
    hint = "Decode fewer heads, fewer tokens or fewer features."
    for name, shape in (("query", q.shape), ("key", k.shape), ("value", v.shape)):
        check_array_cells(shape, f"`{name}` (heads × tokens × features)", hint)
    return q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), one_head
