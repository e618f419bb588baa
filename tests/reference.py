"""A float64 numpy reference for attention, written from the textbook formulas.

Shape letters: B batch, T queries, S keys, Dq/Dk/Dv query/key/value features, U concat units.
Independent of attnviz on purpose: the tests check attnviz against this file, so it must not
share any code with it. Everything is float64 except the "-1e9" masking, which the spec defines
as adding -1e9 in float32 (so that a fully masked row rounds to a uniform distribution).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Reference:
    """Every stage of one reference computation, batched or not like the inputs."""

    scores: np.ndarray  # (…, T, S) float64, scaled, before masking
    mask: np.ndarray  # (…, T, S) bool, True = allowed
    masked_scores: np.ndarray  # (…, T, S) float64 logits the softmax sees
    weights: np.ndarray  # (…, T, S) float64
    output: np.ndarray  # (…, T, Dv) float64
    fully_masked: np.ndarray  # (…, T) bool


def raw_scores(q: np.ndarray, k: np.ndarray, score: str, params: dict) -> np.ndarray:
    """Unscaled scores `(B, T, S)` for `q (B, T, Dq)`, `k (B, S, Dk)`, by explicit loops/sums."""
    if score == "dot":
        return np.einsum("btd,bsd->bts", q, k)  # (B, T, D) . (B, S, D) -> (B, T, S)
    if score == "general":
        w = np.asarray(params["W"], dtype=np.float64)  # (Dq, Dk)
        return np.einsum("btd,de,bse->bts", q, w, k)  # q W kᵀ
    if score == "concat":
        w_q = np.asarray(params["W_q"], dtype=np.float64)  # (Dq, U)
        w_k = np.asarray(params["W_k"], dtype=np.float64)  # (Dk, U)
        v = np.asarray(params["v"], dtype=np.float64)  # (U,)
        b = np.asarray(params.get("b", np.zeros_like(v)), dtype=np.float64)  # (U,)
        hidden = np.tanh(
            (q @ w_q)[:, :, None, :] + (k @ w_k)[:, None, :, :] + b
        )  # (B, T, 1, U) + (B, 1, S, U) -> (B, T, S, U)
        return hidden @ v  # (B, T, S, U) x (U,) -> (B, T, S)
    raise ValueError(f"unknown score {score!r}")


def reference_mask(
    batch: int,
    t: int,
    s: int,
    *,
    causal: bool = False,
    window: int | None = None,
    padding: np.ndarray | None = None,
    sinks: int | None = None,
    documents: tuple[int, ...] | None = None,
    prefix: int | None = None,
    chunk: int | None = None,
) -> np.ndarray:
    """The combined mask `(B, T, S)` built element by element from the definitions.

    Sinks: key j < sinks stays visible when the window or the chunk would hide it. Prefix-LM:
    causal, except that every key j < prefix is visible. Chunks: i // chunk == j // chunk.
    Documents: i and j fall in the same run of `documents` lengths.
    """
    mask = np.ones((batch, t, s), dtype=bool)
    pad = None if padding is None else np.broadcast_to(np.asarray(padding, bool), (batch, s))
    doc = []  # the document of each position, by walking the lengths
    for number, length in enumerate(documents or ()):
        doc += [number] * length
    for b in range(batch):
        for i in range(t):
            for j in range(s):
                allowed = True
                if prefix is not None:
                    if j > i and j >= prefix:
                        allowed = False
                elif causal and j > i:
                    allowed = False
                near = True
                if window is not None and abs(i - j) > window:
                    near = False
                if chunk is not None and i // chunk != j // chunk:
                    near = False
                if not near and not (sinks is not None and j < sinks):
                    allowed = False
                if documents is not None and doc[i] != doc[j]:
                    allowed = False
                if pad is not None and not pad[b, j]:
                    allowed = False
                mask[b, i, j] = allowed
    return mask


def reference_rope(x, positions, theta: float) -> np.ndarray:
    """Rotate `x (..., T, D)`: pair (p, p + D/2) of row t by the 2×2 matrix of angle
    positions[t] · theta^(-2p/D), one pair at a time."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    half = x.shape[-1] // 2
    for t, position in enumerate(positions):
        for p in range(half):
            angle = position * theta ** (-2.0 * p / x.shape[-1])
            rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
            pair = np.stack([x[..., t, p], x[..., t, p + half]], axis=-1)  # (..., 2)
            turned = pair @ rotation.T  # (..., 2) x (2, 2) -> (..., 2)
            out[..., t, p], out[..., t, p + half] = turned[..., 0], turned[..., 1]
    return out


def reference_alibi(slope: float, t: int, s: int) -> np.ndarray:
    """`(T, S)` ALiBi's penalty −slope·|i − j|, cell by cell."""
    return np.array([[-slope * abs(i - j) for j in range(s)] for i in range(t)])


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Softmax over the last axis; a row of all -inf gives zeros."""
    top = logits.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    exps = np.exp(logits - top)
    total = exps.sum(axis=-1, keepdims=True)
    return exps / np.where(total > 0, total, 1.0)


def reference_attention(
    query,
    key,
    value,
    *,
    score: str = "dot",
    scale: bool = True,
    causal: bool = False,
    window: int | None = None,
    padding=None,
    mask_value: str = "-inf",
    params: dict | None = None,
    bias: np.ndarray | None = None,
    **rules,
) -> Reference:
    """Attention in float64 numpy; inputs `(T, D)` or `(B, T, D)`, outputs keep that rank.

    `bias (T, S)` is added to the scaled scores before masking; `rules` are the extra mask
    rules of `reference_mask` (sinks, documents, prefix, chunk)."""
    q = np.asarray(query, dtype=np.float64)
    k = np.asarray(key, dtype=np.float64)
    v = np.asarray(value, dtype=np.float64)
    batched = q.ndim == 3
    if not batched:
        q, k, v = q[None], k[None], v[None]
    batch, t, s = q.shape[0], q.shape[1], k.shape[1]
    scores = raw_scores(q, k, score, params or {})
    if scale:
        scores = scores / np.sqrt(k.shape[-1])
    mask = reference_mask(batch, t, s, causal=causal, window=window, padding=padding, **rules)
    logits = scores if bias is None else scores + bias
    if mask_value == "-inf":
        masked = np.where(mask, logits, -np.inf)
    else:  # "-1e9": the addition happens in float32, as in the Keras tutorials
        shifted = (logits.astype(np.float32) + np.float32(-1e9)).astype(np.float64)
        masked = np.where(mask, logits, shifted)
    weights = softmax_rows(masked)
    output = weights @ v  # (B, T, S) x (B, S, Dv) -> (B, T, Dv)
    fully = ~mask.any(axis=-1)
    pick = (lambda a: a) if batched else (lambda a: a[0])
    return Reference(
        scores=pick(scores),
        mask=pick(mask),
        masked_scores=pick(masked),
        weights=pick(weights),
        output=pick(output),
        fully_masked=pick(fully),
    )
