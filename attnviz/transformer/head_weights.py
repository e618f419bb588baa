"""The weights of multi-head attention with shared key/value heads, and what they cost.

Shape letters: H query heads, G key/value heads (G divides H), D model features, Dk query/key
features per head, Dv value features per head.

Grouped-query attention (Ainslie et al., 2023) keeps H query heads but only G key/value heads:
query head h reads K/V head `h // (H / G)`, so each group of H / G consecutive query heads
shares its keys and values. G = H is multi-head attention, G = 1 multi-query attention
(Shazeer, 2019); Llama 3 8B has H = 32, G = 8. Keras's `GroupQueryAttention` repeats the K/V
heads the same way.

Weights ("params"), no biases:
- "W_Q" `(H, D, Dk)`; "W_K" `(G, D, Dk)`; "W_V" `(G, D, Dv)`: head h projects with `W_Q[h]`,
  K/V head g with `W_K[g]`, `W_V[g]`.
- "W_O" `(H·Dv, D)`: rows h·Dv … (h+1)·Dv take head h.
Missing weights are drawn from `seed`: the multi-head draw of `text.projection_weights` split
into heads by columns, and with G < H the K/V heads are the first head of each group of that
draw (so head 0 of every group keeps its multi-head keys and values).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.checks import check_int
from attnviz.core.seeding import seeded_rng
from attnviz.core.weights import resolve_weights
from attnviz.inputs.text import draw_projections

PARAM_NAMES = ("W_Q", "W_K", "W_V", "W_O")
BYTES_PER_NUMBER = 4  # float32, what attnviz computes in and what the cache sizes count


@dataclass(frozen=True)
class HeadCosts:
    """What a choice of heads costs: learned numbers and KV-cache memory (float32)."""

    num_heads: int  # H query heads
    num_kv_heads: int  # G key/value heads
    param_count: int  # numbers in W_Q, W_K, W_V and W_O (no biases)
    kv_cache_bytes_per_token: int  # one token's cached keys and values: G·(Dk + Dv)·4 bytes
    mha_kv_cache_bytes_per_token: int  # the same with G = H (plain multi-head), to compare


def check_kv_heads(num_kv_heads: Any, num_heads: int) -> int:
    """G as an int that divides H (None means G = H), or a ValueError listing the choices."""
    if num_kv_heads is None:
        return num_heads
    g = check_int(num_kv_heads, "num_kv_heads", low=1, high=num_heads)
    if num_heads % g:
        allowed = ", ".join(str(n) for n in range(1, num_heads + 1) if num_heads % n == 0)
        raise ValueError(
            f"`num_kv_heads` must divide `num_heads`, so that every K/V head serves the same "
            f"number of query heads. Received: num_heads={num_heads}, num_kv_heads={g}. "
            f"Allowed for {num_heads} heads: {allowed} (1 = multi-query, {num_heads} = "
            "multi-head)."
        )
    return g


def kv_head_of(num_heads: int, num_kv_heads: int) -> np.ndarray:
    """`(H,)` the K/V head each query head reads: `h // (H / G)`."""
    return np.arange(num_heads) // (num_heads // num_kv_heads)


def head_costs(d_model: int, num_heads: int, num_kv_heads: int, d_k: int, d_v: int) -> HeadCosts:
    """Parameters and KV-cache bytes per token (per layer) of one attention layer."""
    g = check_kv_heads(num_kv_heads, num_heads)
    shapes = multihead_param_shapes(num_heads, d_model, d_k, d_v, g)
    return HeadCosts(
        num_heads=num_heads,
        num_kv_heads=g,
        param_count=sum(math.prod(shape) for shape in shapes.values()),
        kv_cache_bytes_per_token=g * (d_k + d_v) * BYTES_PER_NUMBER,
        mha_kv_cache_bytes_per_token=num_heads * (d_k + d_v) * BYTES_PER_NUMBER,
    )


def multihead_param_shapes(
    num_heads: int, d_model: int, d_k: int, d_v: int, num_kv_heads: int | None = None
) -> dict[str, tuple[int, ...]]:
    """The weights of multi-head attention, by name, with their shapes (G = H by default)."""
    g = num_heads if num_kv_heads is None else num_kv_heads
    return {
        "W_Q": (num_heads, d_model, d_k),
        "W_K": (g, d_model, d_k),
        "W_V": (g, d_model, d_v),
        "W_O": (num_heads * d_v, d_model),
    }


def resolve_multihead_params(
    num_heads: int,
    d_model: int,
    d_k: int,
    d_v: int,
    params: Mapping[str, Any] | None,
    seed: int,
    num_kv_heads: int | None = None,
) -> dict[str, np.ndarray]:
    """Check the user's weights and draw the missing ones from `seed`.

    Returns:
        The float32 "W_Q", "W_K", "W_V" and "W_O" the heads will use.
    """
    g = num_heads if num_kv_heads is None else num_kv_heads
    return resolve_weights(
        params,
        multihead_param_shapes(num_heads, d_model, d_k, d_v, g),
        lambda: draw_multihead_params(num_heads, d_model, d_k, d_v, seed, g),
        "multi-head attention",
    )


def draw_multihead_params(
    num_heads: int, d_model: int, d_k: int, d_v: int, seed: int, num_kv_heads: int | None = None
) -> dict[str, np.ndarray]:
    """Draw all four weights reproducibly from `seed` (normal, std 1/sqrt(fan-in)), float32."""
    h = num_heads
    wide = draw_projections(d_model, h * d_k, h * d_v, seed)  # (D, H·Dk) and (D, H·Dv)
    drawn = {
        name: np.ascontiguousarray(
            matrix.reshape(d_model, h, -1).transpose(1, 0, 2)  # (D, H·d) -> (D, H, d) -> (H, D, d)
        )
        for name, matrix in wide.items()
    }
    group = h // (h if num_kv_heads is None else num_kv_heads)
    for name in ("W_K", "W_V"):
        drawn[name] = np.ascontiguousarray(drawn[name][::group])  # (H, D, d) -> (G, D, d)
    rng = seeded_rng(seed, "weights\0W_O")
    drawn["W_O"] = rng.standard_normal((h * d_v, d_model)) / math.sqrt(h * d_v)  # (H·Dv, D)
    return {name: w.astype(np.float32) for name, w in drawn.items()}
