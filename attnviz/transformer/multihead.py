"""Multi-head attention with every head exposed, on the single-head machinery of `attention`.

Shape letters: B batch, H query heads, G key/value heads (G divides H), T queries, S keys,
D model features (`d_model`), Dk query/key features per head (`d_k`), Dv value features per
head (`d_v`).

    head_h = softmax(Q W_Q[h] (K W_K[g(h)])ᵀ / sqrt(Dk) + bias_h + M) V W_V[g(h)]
    output = concat(head_1, ..., head_H) W_O

With G = H (the default) every head has its own keys and values, g(h) = h; with fewer K/V heads
(grouped-query attention; G = 1 is multi-query) query head h reads K/V head g(h) = h // (H / G)
(see `head_weights`). Positions inside attention: RoPE rotates each head's queries and keys
(Dk even); ALiBi adds head h's bias `−m_h·|i − j|`, slopes as in the paper.

The heads are folded into the batch axis, `(B, H, T, Dk) -> (B·H, T, Dk)`, and scored, masked
and softmaxed by `scoring.DotScore`, `masks.build_mask` and `attention.attention_stages`: one
implementation of masking and softmax for one head or many. No biases, as in Vaswani et al.

Weights ("params"), as in Keras's `MultiHeadAttention` and `GroupQueryAttention` up to an axis
order (shapes in `head_weights`):
- "W_Q" `(H, D, Dk)`, "W_K" `(G, D, Dk)`, "W_V" `(G, D, Dv)`: head h projects with `W_Q[h]`.
  Keras's query kernel `(D, H, Dk)` is `W_Q.transpose(1, 0, 2)`.
- "W_O" `(H·Dv, D)`: rows h·Dv … (h+1)·Dv take head h. Keras's output kernel `(H, Dv, D)` is
  `W_O.reshape(H, Dv, D)`.
Missing weights are drawn from `seed` as `text.projection_weights` draws them: one `(D, H·Dk)`
matrix per name split into heads by columns, so with one head and `Dk = d_k` the projections
equal those `text.encode_sentences` uses with the same seed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from keras import ops

from attnviz.core.attention import check_qkv, dot_attention
from attnviz.core.checks import (
    check_array_cells,
    check_heads,
    check_score_cells,
    check_size,
    read_only,
)
from attnviz.core.masks import build_mask, check_padding_mask
from attnviz.core.positions import alibi_slopes, attention_positions
from attnviz.core.settings import AttentionSettings
from attnviz.transformer.head_weights import (
    HeadCosts,
    check_kv_heads,
    head_costs,
    kv_head_of,
    resolve_multihead_params,
)


@dataclass(frozen=True)
class MultiHeadResult:
    """Every stage of one multi-head attention computation, as read-only float32 / bool arrays.

    Arrays keep the batch axis when the inputs had one: `(B, H, T, S)`, else `(H, T, S)`.
    """

    query_heads: np.ndarray  # (…, H, T, Dk) the queries of each head, query @ W_Q[h]
    key_heads: np.ndarray  # (…, H, S, Dk) the keys head h reads, key @ W_K[g(h)] (before RoPE)
    value_heads: np.ndarray  # (…, H, S, Dv) the values head h reads, value @ W_V[g(h)]
    scores: np.ndarray  # (…, H, T, S) q·k per head, divided by sqrt(Dk) when scaling
    mask: np.ndarray  # (…, T, S) bool, True = the query may attend the key (same for all heads)
    masked_scores: np.ndarray  # (…, H, T, S) the logits softmax sees (scores + bias, masked)
    weights: np.ndarray  # (…, H, T, S) softmax over keys per head; rows sum to 1 (or 0)
    fully_masked: np.ndarray  # (…, T) bool, True = the query row has no allowed key
    head_outputs: np.ndarray  # (…, H, T, Dv) weights @ values, per head
    concat: np.ndarray  # (…, T, H·Dv) the head outputs side by side, head 0 first
    output: np.ndarray  # (…, T, D) concat @ W_O
    head_average: np.ndarray  # (…, T, S) the mean of the H weight matrices
    params: dict[str, np.ndarray]  # "W_Q", "W_K", "W_V", "W_O" actually used (see module doc)
    settings: AttentionSettings  # masks, scaling, positions and seed (score is always "dot")
    num_heads: int  # H
    d_k: int  # Dk, query/key features per head
    d_v: int  # Dv, value features per head
    scale_factor: float  # what q·k was multiplied by: 1/sqrt(Dk), or 1.0
    num_kv_heads: int = 0  # G, key/value heads (G = H: multi-head; 1: multi-query)
    kv_head_of: np.ndarray | None = None  # (H,) int, the K/V head g(h) each query head reads
    shared_key_heads: np.ndarray | None = None  # (…, G, S, Dk) key @ W_K[g], one per K/V head
    shared_value_heads: np.ndarray | None = None  # (…, G, S, Dv) value @ W_V[g]
    rotated_query_heads: np.ndarray | None = None  # (…, H, T, Dk) after RoPE; None without
    rotated_key_heads: np.ndarray | None = None  # (…, H, S, Dk) after RoPE; None without
    position_bias: np.ndarray | None = None  # (H, T, S) ALiBi's −m_h·|i − j| per head; or None
    alibi_slopes: np.ndarray | None = None  # (H,) ALiBi's slope per head; or None
    costs: HeadCosts | None = None  # parameters and KV-cache bytes per token of these heads


def compute_multihead(
    query: Any,
    key: Any,
    value: Any,
    *,
    num_heads: int,
    d_k: int | None = None,
    d_v: int | None = None,
    num_kv_heads: int | None = None,
    key_padding_mask: Any = None,
    params: Mapping[str, Any] | None = None,
    settings: AttentionSettings | None = None,
    **keywords: Any,
) -> MultiHeadResult:
    """Compute multi-head scaled dot-product attention and return every head's matrices.

    Any number of heads, tokens and features, within the memory limits: `MAX_SCORE_CELLS`
    for the `(B, H, T, S)` weights and `MAX_ARRAY_CELLS` for every other array (inputs,
    weights, heads).

    Args:
        query: `(T, D)` or `(B, T, D)` array-like.
        key: `(S, D)` or `(B, S, D)`.
        value: `(S, D)` or `(B, S, D)`.
        num_heads: H, any number of heads (MPT-7B has 32, Llama 3.1 405B 128).
        d_k: Dk, query/key features per head, independent of D (H·Dk need not be D, as in
            Keras's `GroupQueryAttention` with its `head_dim`); defaults to D // H, which
            needs D divisible by H.
        d_v: Dv, value features per head; defaults to D // H, likewise.
        num_kv_heads: G, key/value heads, dividing H; None = H (multi-head), 1 = multi-query.
        key_padding_mask: bool `(S,)` or `(B, S)`, True = real token, False = padding.
        params: "W_Q", "W_K", "W_V", "W_O" (shapes in the module doc); missing ones are drawn
            from the `seed` setting.
        settings: masks, scaling, positions and seed as one `AttentionSettings` (its `score`
            must be "dot"; its `alibi_heads` and `alibi_head` are replaced: head h takes the
            paper's slope for H heads); or None, to give them as keywords instead (not both).
        **keywords: the fields of `AttentionSettings` by name but `score`, `alibi_heads` and
            `alibi_head`, as in `compute_attention`: scale, causal, window, mask_value, seed,
            sinks, documents, prefix, chunk, position ("rope" rotates each head's queries and
            keys, Dk even; "alibi": head h adds `−m_h·|i − j|`) and rope_theta.

    Returns:
        A `MultiHeadResult`.

    Raises:
        ValueError: with what is wrong, what is allowed and what was received.
        TypeError: for a keyword that is not one of the attention keywords above.
    """
    num_heads = check_heads(num_heads)
    settings = AttentionSettings.from_keywords(
        settings,
        keywords,
        function="compute_multihead",
        fixed={"score": "dot"},
        derived={"alibi_heads": num_heads, "alibi_head": 0},
    )
    position, seed = settings.position, settings.seed
    num_kv_heads = check_kv_heads(num_kv_heads, num_heads)
    q, k, v, batched = check_qkv(query, key, value, same_qk_width=False)
    d_model = _check_model_width(q.shape, k.shape, v.shape, num_heads, d_k, d_v)
    d_k, d_v = _check_head_sizes(d_model, num_heads, d_k, d_v, num_kv_heads)
    _check_cells(q.shape[0], num_heads, q.shape[1], k.shape[1], d_k, d_v)
    _check_rope_head_size(position, d_k)
    padding = None
    if key_padding_mask is not None:
        padding = check_padding_mask(key_padding_mask, q.shape[0] if batched else None, k.shape[1])
    rules = asdict(settings.mask_spec)  # causal, window, sinks, documents, prefix, chunk
    mask = build_mask(q.shape[0], q.shape[1], k.shape[1], key_padding_mask=padding, **rules)
    used = resolve_multihead_params(num_heads, d_model, d_k, d_v, params, seed, num_kv_heads)
    stages = _run_heads(q, k, v, mask, used, settings)
    unbatch = (lambda a: a) if batched else (lambda a: a[0])
    bias = stages.pop("position_bias")  # (H, T, S) or None: no batch axis
    arrays = {
        name: None if a is None else read_only(unbatch(np.asarray(a))) for name, a in stages.items()
    }
    return MultiHeadResult(
        **arrays,
        mask=read_only(unbatch(mask)),
        fully_masked=read_only(unbatch(~mask.any(axis=-1))),
        params={name: read_only(w) for name, w in used.items()},
        settings=settings,
        num_heads=num_heads,
        d_k=d_k,
        d_v=d_v,
        scale_factor=1.0 / math.sqrt(d_k) if settings.scale else 1.0,
        num_kv_heads=num_kv_heads,
        kv_head_of=read_only(kv_head_of(num_heads, num_kv_heads)),
        position_bias=None if bias is None else read_only(bias),
        alibi_slopes=read_only(alibi_slopes(num_heads)) if position == "alibi" else None,
        costs=head_costs(d_model, num_heads, num_kv_heads, d_k, d_v),
    )


def _run_heads(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray,
    params: Mapping[str, np.ndarray],
    settings: AttentionSettings,
) -> dict[str, Any]:
    """Project into heads, attend with the heads folded into the batch, concatenate, mix."""
    batch, t = q.shape[0], q.shape[1]
    h, d_v = params["W_Q"].shape[0], params["W_V"].shape[2]
    heads = _project(q, k, v, params, settings)
    rope = settings.position == "rope"
    scored_queries = heads["rotated_query_heads" if rope else "query_heads"]  # (B, H, T, Dk)
    scored_keys = heads["rotated_key_heads" if rope else "key_heads"]  # (B, H, S, Dk)
    any_masked = not mask.all()
    folded_mask = np.repeat(mask, h, axis=0) if any_masked else None  # (B, T, S) -> (B·H, T, S)
    bias = heads["position_bias"]  # (H, T, S) or None
    folded_bias = (
        bias if bias is None or batch == 1 else np.tile(bias, (batch, 1, 1))
    )  # (B·H, T, S)
    scores, masked, weights, out = (
        np.asarray(x)
        for x in dot_attention(
            _fold(scored_queries),
            _fold(scored_keys),
            _fold(heads["value_heads"]),
            folded_mask,
            settings.scale,
            settings.mask_value,
            folded_bias,
        )
    )  # (B·H, T, S) scores, masked scores and weights; (B·H, T, Dv) outputs
    if not any_masked and bias is None:
        masked = scores  # no mask: softmax saw the scores themselves
    head_outputs = _unfold(out, batch)  # (B, H, T, Dv)
    # (B, H, T, Dv) -> (B, T, H, Dv) -> (B, T, H·Dv)
    concat = head_outputs.transpose(0, 2, 1, 3).reshape(batch, t, h * d_v)
    weights = _unfold(weights, batch)  # (B, H, T, S)
    return {
        **heads,
        "scores": _unfold(scores, batch),
        "masked_scores": _unfold(masked, batch),
        "weights": weights,
        "head_outputs": head_outputs,
        "concat": concat,
        "output": ops.matmul(concat, params["W_O"]),  # (B, T, H·Dv) x (H·Dv, D) -> (B, T, D)
        "head_average": ops.mean(weights, axis=1),  # (B, H, T, S) -> (B, T, S)
    }


def _per_head(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """`(B, T, D) x (H, D, Dk) -> (B, H, T, Dk)` as one matrix product `(B·T, D) x (D, H·Dk)`.
    numpy's `einsum("btd,hdk->bhtk")` runs its own loop instead: at the decoder page's largest
    sizes (64 sequences of 5 tokens, d_model 512, 16 heads, 12 layers) 1.2 s, against ~20 ms."""
    b, t, d = x.shape
    h, _, k = w.shape
    flat = np.matmul(x.reshape(b * t, d), w.transpose(1, 0, 2).reshape(d, h * k))  # (B·T, H·Dk)
    return np.ascontiguousarray(flat.reshape(b, t, h, k).transpose(0, 2, 1, 3))


def _project(q, k, v, params, settings: AttentionSettings) -> dict[str, Any]:
    """Each head's queries, keys and values (K/V repeated over each group), rotated by RoPE
    or with ALiBi's bias `(H, T, S)` as asked."""
    h, g = params["W_Q"].shape[0], params["W_K"].shape[0]
    # (B, T, D) x (H, D, Dk) -> (B, H, T, Dk); keys and values likewise with G heads. In numpy:
    # three float32 products, each ~15x cheaper than an eager Keras einsum at small sizes
    q_heads = _per_head(q, params["W_Q"])  # (B, H, T, Dk)
    k_shared = _per_head(k, params["W_K"])  # (B, G, S, Dk)
    v_shared = _per_head(v, params["W_V"])  # (B, G, S, Dv)

    def repeat(x: np.ndarray) -> np.ndarray:
        """`(B, G, …) -> (B, H, …)`: each K/V head once per query head of its group."""
        return x if g == h else np.repeat(x, h // g, axis=1)

    heads = {
        "query_heads": q_heads,
        "key_heads": repeat(k_shared),
        "value_heads": repeat(v_shared),
        "shared_key_heads": k_shared,
        "shared_value_heads": v_shared,
        "rotated_query_heads": None,
        "rotated_key_heads": None,
    }
    slopes = alibi_slopes(h) if settings.position == "alibi" else None
    q_rot, k_rot, bias = attention_positions(
        q_heads, k_shared, settings.position, settings.rope_theta, slopes
    )  # (B, H, T, Dk), (B, G, S, Dk) rotated by RoPE; ALiBi's (H, T, S)
    if settings.position == "rope":
        heads["rotated_query_heads"], heads["rotated_key_heads"] = q_rot, repeat(k_rot)
    heads["position_bias"] = bias
    return heads


def _fold(x: np.ndarray) -> np.ndarray:
    """`(B, H, N, F) -> (B·H, N, F)`: heads into the batch axis, batch-major."""
    return x.reshape(-1, *x.shape[2:])


def _unfold(x: np.ndarray, batch: int) -> np.ndarray:
    """`(B·H, N, F) -> (B, H, N, F)`: the inverse of `_fold`."""
    return x.reshape(batch, -1, *x.shape[1:])


def _check_model_width(qs: tuple, ks: tuple, vs: tuple, num_heads: int, d_k: Any, d_v: Any) -> int:
    """Check that Q, K and V share D columns (divisible by H where Dk or Dv defaults to
    D // H) and return D."""
    d_model = qs[-1]
    if not ks[-1] == vs[-1] == d_model:
        raise ValueError(
            "`query`, `key` and `value` must have the same number of columns (d_model): every "
            "head projects all three from the model width. Received columns: "
            f"query {qs[-1]}, key {ks[-1]}, value {vs[-1]}."
        )
    if d_model % num_heads and (d_k is None or d_v is None):
        allowed = _divisors(d_model)
        raise ValueError(
            f"d_model must be divisible by `num_heads` when `d_k` or `d_v` is not given, so that "
            f"each head gets d_model / h features. Received: d_model={d_model} (columns of "
            f"`query`), num_heads={num_heads}. Allowed num_heads for d_model={d_model}: "
            f"{', '.join(map(str, allowed))}; or give `d_k` and `d_v` (any head size, as in "
            "Keras's GroupQueryAttention with `head_dim`)."
        )
    return d_model


def _divisors(n: int) -> list[int]:
    """Every whole number dividing `n`, smallest first (found up to its square root)."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


def _check_head_sizes(
    d_model: int, num_heads: int, d_k: Any, d_v: Any, num_kv_heads: int | None = None
) -> tuple[int, int]:
    """Resolve Dk and Dv (any size; default D // H) and keep each weight within
    `MAX_ARRAY_CELLS` numbers."""
    sizes = []
    for name, size in (("d_k", d_k), ("d_v", d_v)):
        if size is not None:
            sizes.append(check_size(size, name, unit="features"))
        else:
            sizes.append(d_model // num_heads)
    g = num_heads if num_kv_heads is None else num_kv_heads
    hint = "Use fewer heads, fewer features per head or a narrower model."
    shapes = {"W_Q": (num_heads, sizes[0]), "W_K": (g, sizes[0]), "W_V": (g, sizes[1])}
    shapes["W_O"] = (num_heads, sizes[1])  # (H·Dv, D): as many numbers as H × Dv × D
    for name, (heads, size) in shapes.items():
        check_array_cells((heads, d_model, size), f"the weight {name} (heads × D × size)", hint)
    return sizes[0], sizes[1]


def _check_cells(batch: int, num_heads: int, t: int, s: int, d_k: int, d_v: int) -> None:
    """Keep the `(B, H, T, S)` weight tensors within `MAX_SCORE_CELLS` numbers and the heads
    `(B, H, T or S, Dk or Dv)` within `MAX_ARRAY_CELLS`."""
    sizes = {"sequence": batch, "head": num_heads, "query": t, "key": s}
    check_score_cells(sizes, "Use fewer heads or fewer or shorter sequences.")
    hint = "Use fewer heads, fewer features per head or fewer or shorter sequences."
    shape = (batch, num_heads, max(t, s), max(d_k, d_v))
    check_array_cells(shape, "the heads (sequences × heads × tokens × features)", hint)


def _check_rope_head_size(position: str, d_k: int) -> None:
    """RoPE rotates each head's query/key features in pairs: Dk must be even."""
    if position == "rope" and d_k % 2:
        raise ValueError(
            'position="rope" rotates each head\'s query and key features in pairs, so the '
            f"features per head (d_k) must be even. Received: d_k={d_k}. Choose an even d_k "
            '(or d_model / num_heads), or use position="none" or "alibi".'
        )
