"""Attention with every intermediate matrix exposed: the front door of attnviz.

Shape letters: B batch, T queries, S keys, Dq/Dk/Dv query/key/value features.

    weights = softmax(score(Q, K) / sqrt(Dk) + bias + M)      output = weights V

Positions inside attention (`positions`): RoPE rotates Q and K before scoring (the rotated
matrices are stages of the result), ALiBi adds a bias `−m·|i − j|` to the scores before masking.

`compute_attention` checks its inputs, builds the mask with `masks`, scores with the Keras
layers of `scoring` and runs `attention_stages`, the one implementation of masking, softmax and
the weighted sum (the `ScoredAttention` layer runs the same function inside Keras models).

Dot-product scores (the common case, and the one the app redraws on every click) run the same
layer and stages as one compiled TensorFlow graph, traced once per (scale, mask, mask value)
for any shape: a call then costs one dispatch instead of a dozen eager ops and a Keras layer
call, and TensorFlow may fuse the element-wise passes over the (T, S) logits.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from attnviz.core.checks import (
    as_float_array,
    check_array_cells,
    check_choice,
    check_score_cells,
    read_only,
)
from attnviz.core.limits import MAX_BATCH
from attnviz.core.masks import MASK_VALUES, NEG_LARGE, build_mask, check_padding_mask
from attnviz.core.positions import alibi_slope, attention_positions
from attnviz.core.scoring import make_score_layer, resolve_params
from attnviz.core.settings import AttentionSettings


@dataclass(frozen=True)
class AttentionResult:
    """Every stage of one attention computation, as read-only numpy arrays (float32 / bool).

    Arrays keep the batch axis when the inputs had one: `(B, T, S)`, else `(T, S)`.
    """

    scores: np.ndarray  # (…, T, S) score(Q, K), divided by sqrt(Dk) when scaling, before masking
    mask: np.ndarray  # (…, T, S) bool, True = the query may attend the key
    masked_scores: np.ndarray  # (…, T, S) the logits softmax sees: scores (+ position_bias);
    # -inf, or that - 1e9, where masked
    weights: np.ndarray  # (…, T, S) softmax over keys; rows sum to 1 (0 if fully masked, -inf)
    output: np.ndarray  # (…, T, Dv) weights @ value
    fully_masked: np.ndarray  # (…, T) bool, True = the query row has no allowed key
    params: dict[str, np.ndarray]  # learned scoring weights actually used (W, W_q, W_k, v, b)
    settings: AttentionSettings  # how the result was computed
    scale_factor: float  # what the raw scores were multiplied by: 1/sqrt(Dk), or 1.0
    d_k: int = field(default=0)  # key features Dk
    rotated_query: np.ndarray | None = None  # (…, T, Dq) Q after RoPE, what was scored; or None
    rotated_key: np.ndarray | None = None  # (…, S, Dk) K after RoPE; None unless position="rope"
    position_bias: np.ndarray | None = None  # (T, S) ALiBi's −m·|i − j|, added to `scores`
    # before masking, the same for every batch item; None unless position="alibi"
    alibi_slope: float | None = None  # ALiBi's m (see AttentionSettings.alibi_head); or None

    def item(self, index: int) -> AttentionResult:
        """The result of one batch item (drops the batch axis)."""
        if self.weights.ndim != 3:
            return self
        arrays = ["scores", "mask", "masked_scores", "weights", "output", "fully_masked"]
        arrays += [
            name for name in ("rotated_query", "rotated_key") if getattr(self, name) is not None
        ]
        return replace(self, **{name: getattr(self, name)[index] for name in arrays})

    @property
    def raw_scores(self) -> np.ndarray:
        """`(…, T, S)` the scores before scaling by 1/sqrt(Dk)."""
        return self.scores / np.float32(self.scale_factor)


def attention_stages(
    scores: Any, mask: Any, value: Any, mask_value: str, bias: Any = None
) -> tuple[Any, Any, Any]:
    """Add the bias, mask the scores, softmax over keys and take the weighted sum of the values.

    Args:
        scores: `(B, T, S)` float tensor.
        mask: `(B, T, S)` bool tensor, True = allowed, or None for no mask.
        value: `(B, S, Dv)` float tensor.
        mask_value: "-inf": masked logits are -inf and a row with no allowed key gets zero
            weights; "-1e9": add -1e9 to masked logits in float32, as the Keras tutorials do
            (a fully masked row then comes out uniform).
        bias: float tensor broadcasting to `(B, T, S)` (ALiBi), added before masking; or None.

    Returns:
        `(masked_scores (B, T, S), weights (B, T, S), output (B, T, Dv))`.
    """
    logits = scores if bias is None else scores + bias  # (B, T, S)
    if mask is None:
        masked = logits
    elif mask_value == "-1e9":
        masked = logits + ops.where(mask, 0.0, NEG_LARGE)  # (B, T, S)
    else:
        masked = ops.where(mask, logits, -math.inf)  # (B, T, S)
    # one softmax for every case (same round-off everywhere); only -inf can block a whole row
    weights = _softmax_or_zeros(
        masked, rows_may_be_blocked=mask is not None and mask_value == "-inf"
    )
    output = ops.matmul(weights, value)  # (B, T, S) x (B, S, Dv) -> (B, T, Dv)
    return masked, weights, output


def _softmax_or_zeros(logits: Any, rows_may_be_blocked: bool = True) -> Any:
    """Softmax over the last axis where a row of all -inf gives zeros instead of NaN.

    TensorFlow's fused softmax kernel (max, exp and sum in one pass over each row; Keras's
    `ops.softmax` would warn at S = 1), then, if some row may hold nothing but -inf, zeros in
    place of that row's NaN.
    """
    weights = tf.nn.softmax(logits, axis=-1)  # (B, T, S); exp(-inf) = 0 exactly
    if not rows_may_be_blocked:
        return weights
    # `initial` skips Keras's eager check for empty tensors (rows are never empty)
    row_max = ops.max(logits, axis=-1, keepdims=True, initial=-math.inf)  # (B, T, 1)
    return ops.where(row_max > -math.inf, weights, 0.0)


@keras.saving.register_keras_serializable(package="attnviz")
class ScoredAttention(keras.layers.Layer):
    """A Keras layer: any attnviz score layer followed by masking, softmax and the weighted sum.

    Call with `query (B, T, Dq)`, `value (B, S, Dv)`, optional `key (B, S, Dk)` (defaults to
    `value`) and optional bool `mask (B, T, S)`; returns the output `(B, T, Dv)`, and the
    weights `(B, T, S)` too with `return_attention_scores=True`.
    """

    def __init__(self, scorer: keras.layers.Layer, mask_value: str = "-inf", **kwargs: Any):
        super().__init__(**kwargs)
        self.scorer = scorer
        self.mask_value = check_choice(mask_value, "mask_value", MASK_VALUES)

    def build(self, query_shape: tuple, value_shape: tuple, key_shape: tuple | None = None) -> None:
        """The score layer's weights, for queries `(B, T, Dq)` and keys `(B, S, Dk)` (a
        score layer built already, e.g. loaded with its own build config, is kept)."""
        if not self.scorer.built:
            self.scorer.build(query_shape, value_shape if key_shape is None else key_shape)

    def call(self, query, value, key=None, mask=None, return_attention_scores=False):
        key = value if key is None else key
        scores = self.scorer(query, key)  # (B, T, S)
        _, weights, output = attention_stages(scores, mask, value, self.mask_value)
        return (output, weights) if return_attention_scores else output

    def get_config(self) -> dict[str, Any]:
        scorer = keras.saving.serialize_keras_object(self.scorer)
        return {**super().get_config(), "scorer": scorer, "mask_value": self.mask_value}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> ScoredAttention:
        config = dict(config)
        config["scorer"] = keras.saving.deserialize_keras_object(config["scorer"])
        return cls(**config)


def compute_attention(
    query: Any,
    key: Any,
    value: Any,
    *,
    key_padding_mask: Any = None,
    params: Mapping[str, Any] | None = None,
    settings: AttentionSettings | None = None,
    **keywords: Any,
) -> AttentionResult:
    """Compute attention and return every intermediate matrix.

    Any number of tokens and features: the inputs and every `(B, T, S)` stage stop only where
    memory would (`MAX_ARRAY_CELLS` numbers in any array, `MAX_SCORE_CELLS` attention cells).

    Args:
        query: `(T, Dq)` or `(B, T, Dq)` array-like.
        key: `(S, Dk)` or `(B, S, Dk)`.
        value: `(S, Dv)` or `(B, S, Dv)`.
        key_padding_mask: bool `(S,)` or `(B, S)`, True = real token, False = padding.
        params: learned scoring weights by name; missing ones are drawn from the `seed` setting.
        settings: how attention is computed, as one `AttentionSettings`; or None, to give its
            fields as keywords instead (not both).
        **keywords: the fields of `AttentionSettings` by name, each as described there: score,
            scale, causal, window, mask_value, seed, sinks, documents, prefix, chunk,
            position, rope_theta, alibi_heads, alibi_head. For example
            `compute_attention(q, k, v, score="general", causal=True, window=2)`.

    Returns:
        An `AttentionResult`.

    Raises:
        ValueError: with what is wrong, what is allowed and what was received.
        TypeError: for a keyword that is not a field of `AttentionSettings`.
    """
    settings = AttentionSettings.from_keywords(settings, keywords, function="compute_attention")
    score, position = settings.score, settings.position
    q, k, v, batched = check_qkv(query, key, value, same_qk_width=score == "dot")
    batch, t, s = q.shape[0], q.shape[1], k.shape[1]
    padding = None
    if key_padding_mask is not None:
        padding = check_padding_mask(key_padding_mask, batch if batched else None, s)
    rules = asdict(settings.mask_spec)  # causal, window, sinks, documents, prefix, chunk
    mask = build_mask(batch, t, s, key_padding_mask=padding, **rules)
    slope = None
    if position == "alibi":
        slope = alibi_slope(settings.alibi_heads, settings.alibi_head)
    q_scored, k_scored, bias = attention_positions(q, k, position, settings.rope_theta, [slope])
    used = resolve_params(score, q.shape[-1], k.shape[-1], params, settings.seed)
    stages = _stages(q_scored, k_scored, v, mask if not mask.all() else None, bias, used, settings)
    unbatch = (lambda a: a) if batched else (lambda a: a[0])
    arrays = [read_only(unbatch(a)) for a in (*stages, mask, ~mask.any(axis=-1))]
    rotated = position == "rope"
    return AttentionResult(
        scores=arrays[0],
        masked_scores=arrays[1],
        weights=arrays[2],
        output=arrays[3],
        mask=arrays[4],
        fully_masked=arrays[5],
        params={name: read_only(w) for name, w in used.items()},
        settings=settings,
        scale_factor=1.0 / math.sqrt(k.shape[-1]) if settings.scale else 1.0,
        d_k=k.shape[-1],
        rotated_query=read_only(unbatch(q_scored)) if rotated else None,
        rotated_key=read_only(unbatch(k_scored)) if rotated else None,
        position_bias=None if bias is None else read_only(bias[0]),
        alibi_slope=slope,
    )


def _stages(q, k, v, mask, bias, used, settings: AttentionSettings) -> list[np.ndarray]:
    """`[scores, masked_scores, weights, output]` as numpy arrays.

    Args:
        q: `(B, T, Dq)` float32 (rotated by RoPE if asked); k: `(B, S, Dk)`; v: `(B, S, Dv)`.
        mask: `(B, T, S)` bool, or None when nothing is masked.
        bias: `(1, T, S)` float32 ALiBi bias, or None.
    """
    score, scale, mask_value = settings.score, settings.scale, settings.mask_value
    if score == "dot":  # |q·k| <= MAX_ARRAY_CELLS * MAX_ABS_VALUE**2 ~ 2.7e38: dot never overflows
        stages = dot_attention(q, k, v, mask, scale, mask_value, bias)
    else:
        scores = _learned_scores(score, q, k, scale, used)  # (B, T, S)
        _check_finite_scores(scores)
        stages = [scores, *attention_stages(scores, mask, v, mask_value, bias)]
    stages = [np.asarray(x) for x in stages]  # scores, masked, weights, output
    if mask is None and bias is None:
        stages[1] = stages[0]
    return stages


_DOT_LAYERS: dict[bool, keras.layers.Layer] = {}  # scale -> the shared dot-product score layer


def _score_layer(
    score: str, dq: int, dk: int, scale: bool, params: dict[str, np.ndarray]
) -> keras.layers.Layer:
    """The score layer: a new one with `params` as its weights, or for "dot", which has no
    weights, one shared layer per `scale` (building a Keras layer costs ~0.5 ms a call)."""
    if score != "dot":
        return make_score_layer(score, dq, dk, scale=scale, params=params)
    if scale not in _DOT_LAYERS:
        _DOT_LAYERS[scale] = make_score_layer("dot", dq, dk, scale=scale, params={})
    return _DOT_LAYERS[scale]


_LEARNED_LAYERS: OrderedDict[tuple, keras.layers.Layer] = OrderedDict()  # most recent last
_LEARNED_LAYERS_KEPT = 16
_LEARNED_LOCK = threading.Lock()  # one call at a time sets a shared layer's weights and runs it


def _learned_scores(score: str, q, k, scale: bool, params: dict[str, np.ndarray]) -> Any:
    """The scores of a scoring function with learned weights ("general", "concat"), `(B, T, S)`.

    Building its Keras layer (creating and initialising its variables) cost ~2/3 of a call, so
    the last `_LEARNED_LAYERS_KEPT` layers, one per kind, scale and weight shapes, are kept and
    given `params` on each call.
    """
    if score == "concat":  # one query row's tanh layer is the smallest block scored at once
        units = params["W_q"].shape[1]
        shape = (q.shape[0], 1, k.shape[1], units)
        hint = "Use fewer sequences, fewer keys or fewer concat units."
        check_array_cells(shape, "one query's concat layer (sequences × 1 × keys × units)", hint)
    key = _learned_key(score, scale, q.shape[-1], k.shape[-1], params)
    with _LEARNED_LOCK:
        layer = _LEARNED_LAYERS.pop(key, None)
        if layer is None:
            layer = _score_layer(score, q.shape[-1], k.shape[-1], scale, params)
        else:
            for weight in layer.weights:
                weight.assign(params[weight.name])
        _LEARNED_LAYERS[key] = layer
        while len(_LEARNED_LAYERS) > _LEARNED_LAYERS_KEPT:
            _LEARNED_LAYERS.popitem(last=False)
        return layer(q, k)


def _learned_key(score: str, scale: bool, dq: int, dk: int, params: dict[str, Any]) -> tuple:
    """The key of a kept learned-score layer: its kind, scale, Q and K widths and weight shapes."""
    shapes = tuple(sorted((name, np.shape(w)) for name, w in params.items()))
    return (score, scale, dq, dk, shapes)


_COMPILED: dict[tuple[bool, bool, str], Any] = {}  # (scale, masked, mask_value) -> graph
_COMPILED_WITH_BIAS: dict[tuple[bool, bool, str], Any] = {}  # the same, adding a bias (ALiBi)


def dot_attention(q, k, v, mask, scale: bool, mask_value: str, bias=None) -> list[Any]:
    """Dot-product scores and every stage, `[scores, masked, weights, output]`, in one
    compiled graph: the shared dot score layer and `attention_stages`, as in eager mode.
    Used by `compute_attention` and, with the heads folded into B, `compute_multihead`.

    Args:
        q: `(B, T, D)` float32; k: `(B, S, D)`; v: `(B, S, Dv)`.
        mask: `(B, T, S)` bool, True = allowed, or None when nothing is masked.
        bias: float32 `(1 or B, T, S)` added to the scores before masking, or None.
    """
    flags = (scale, mask is not None, mask_value)
    graphs = _COMPILED if bias is None else _COMPILED_WITH_BIAS
    if flags not in graphs:
        graphs[flags] = _compile_dot_attention(*flags, biased=bias is not None)
    inputs = [x for x in (q, k, v, mask, bias) if x is not None]
    return list(graphs[flags](*(tf.constant(x) for x in inputs)))


def _compile_dot_attention(scale: bool, masked: bool, mask_value: str, biased: bool) -> Any:
    """A compiled graph for any B, T, S and D (one trace: no retracing as sizes change)."""
    layer = _score_layer("dot", None, None, scale, {})
    floats = tf.TensorSpec([None, None, None], tf.float32)
    signature = [floats] * 3 + ([tf.TensorSpec([None, None, None], tf.bool)] if masked else [])
    signature += [floats] if biased else []

    def stages(q, k, v, *rest):
        mask = rest[0] if masked else None
        bias = rest[-1] if biased else None
        scores = layer(q, k)  # (B, T, S)
        return (scores, *attention_stages(scores, mask, v, mask_value, bias))

    function = tf.function(stages, input_signature=signature, autograph=False)

    # the concrete function: calling it skips tf.function's argument binding (~0.5 ms a call)
    return function.get_concrete_function()


def _check_finite_scores(scores: Any) -> None:
    if not bool(ops.all(ops.isfinite(scores))):
        raise ValueError(
            "The scores overflow float32 (some are infinite or NaN): the inputs or the learned "
            "weights are too large. Rescale Q, K (and `params`) to smaller magnitudes."
        )


def check_qkv(query: Any, key: Any, value: Any, *, same_qk_width: bool):
    """Check Q, K, V and return them as float32 `(B, ·, ·)` arrays plus whether B was given.

    Any number of rows (tokens) and columns (features): each array stops at `MAX_ARRAY_CELLS`
    numbers, and the `(B, T, S)` attention at `MAX_SCORE_CELLS` cells.

    Args:
        same_qk_width: require Dq == Dk (dot-product scores).
    """
    q = as_float_array(query, "query")
    k = as_float_array(key, "key")
    v = as_float_array(value, "value")
    if not q.ndim == k.ndim == v.ndim:
        raise ValueError(
            "`query`, `key` and `value` must all have a batch axis or none. "
            f"Received shapes query {q.shape}, key {k.shape}, value {v.shape}."
        )
    batched = q.ndim == 3
    _check_shapes(q.shape, k.shape, v.shape, same_qk_width)
    if not batched:
        q, k, v = q[None], k[None], v[None]  # (1, ·, ·)
    return q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), batched


def _check_shapes(qs: tuple, ks: tuple, vs: tuple, same_qk_width: bool) -> None:
    """Check shapes as the user gave them (with or without the batch axis)."""
    shapes = f"query {qs}, key {ks}, value {vs}"
    if len(qs) == 2:
        qs, ks, vs = (1, *qs), (1, *ks), (1, *vs)
    if not qs[0] == ks[0] == vs[0]:
        raise ValueError(
            f"`query`, `key` and `value` must have the same batch size. Received: {shapes}."
        )
    if ks[1] != vs[1]:
        raise ValueError(
            f"`key` must have as many rows as `value`. Received: {shapes}. "
            "Give one value row per key row."
        )
    if same_qk_width and qs[2] != ks[2]:
        raise ValueError(
            f'score="dot" needs as many query features as key features (Dq == Dk). Received: '
            f'{shapes}. Give Q and K the same number of columns, or use score="general" or '
            '"concat", which learn a map between them.'
        )
    if qs[0] > MAX_BATCH:
        raise ValueError(
            f"The batch is too large: {qs[0]:,} sequences; the limit is {MAX_BATCH:,}. "
            "Use fewer sequences."
        )
    hint = "Use fewer or shorter sequences."
    sizes = {"sequence": qs[0], "query": qs[1], "key": ks[1]}
    check_score_cells(sizes, hint)
    hint = "Use fewer or shorter sequences, or fewer features."
    for name, shape in (("query", qs), ("key", ks), ("value", vs)):
        check_array_cells(shape, f"`{name}` (sequences × tokens × features)", hint)
