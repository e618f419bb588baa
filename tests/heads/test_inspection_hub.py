"""Tests for heads/inspection on keras-hub: every attention-bearing backbone of keras-hub 0.32,
built tiny from a config (`hub_models.MODELS`), and one recomputation per attention family.

Each backbone is built once (cached), run through `inspect`, and checked for the attention
calls × heads it computes, the position scheme read, what is named as unreadable, and each
call's self-check against its layer's own output (`inspection_support.assert_verified`). Then, for
each attention family (standard MHA, grouped-query with RoPE, Gemma's soft-capping and sliding
window, Bloom's ALiBi, T5's buckets, GPT-OSS's sinks, DeBERTa's disentangled terms, ESM's fused
`dot_product_attention`, Swin's shifted windows, SegFormer's reduced keys), one call's heads are
recomputed here in float64 numpy from the layer's own kernels, as the layer computes them, to
1e-5. keras-hub comes with the dev requirements; without it the module is skipped, except in CI.
"""

from __future__ import annotations

import math
import os
import warnings
from functools import cache

import hub_models
import keras
import numpy as np
import pytest
from inspection_support import assert_verified

from attnviz.heads import inspect

pytestmark = pytest.mark.slow  # builds 64 backbones (about 20 s of CPU)
CAUSAL = np.tri(hub_models.TOKENS, dtype=bool)  # (T, S)
KEYS = hub_models.PADDING.astype(bool)[:, None, :]  # (B, 1, S): padded keys masked
ATOL = 1e-5

try:
    import keras_hub
except ImportError:  # pragma: no cover - in CI the dev requirements install it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip("keras-hub is not installed: pip install -r requirements-dev.txt",
                allow_module_level=True)  # fmt: skip


@cache
def _run(name: str):
    """(backbone, inputs, inspection) of the tiny `name` backbone, built and inspected once."""
    (model,) = [m for m in hub_models.MODELS if m.name == name]
    keras.utils.set_random_seed(11)
    backbone = model.build(keras_hub.models)
    inputs = (model.inputs or hub_models.model_inputs)(backbone)
    if not backbone.built:  # subclassed backbones build on their first call
        backbone(inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warnings are checked from the result
        return backbone, inputs, inspect(backbone, inputs)


# ---------------------------------------------------------------- every backbone


@pytest.mark.parametrize("model", hub_models.MODELS, ids=[m.name for m in hub_models.MODELS])
def test_every_attention_bearing_backbone_is_read(model):
    backbone, _, result = _run(model.name)
    assert isinstance(backbone, getattr(keras_hub.models, f"{model.name}Backbone"))
    assert len(result.calls) == model.calls, result.keys()
    assert tuple(sorted({c.weights.shape[1] for c in result.calls})) == model.heads
    schemes = "/".join(dict.fromkeys(c.position.name for c in result.calls))
    assert schemes == model.position
    assert len(result.warnings) == model.warnings, result.warnings
    assert len(set(result.keys())) == len(result.calls)
    assert_verified(result)  # each call recomputes what its layer returned in the run
    weighted = [c for c in result.calls if "weighted values" in c.verified.against]
    assert len(weighted) == model.weighted, [c.key for c in weighted]
    for call in result.calls:
        b, h, t, s = call.weights.shape
        rows = call.head_masks.any(axis=-1)  # (B, H, T): rows with an allowed key
        sums = call.weights.sum(axis=-1)
        ceiling = 1.0 + 1e-5
        if any("Sink" in note for note in call.notes):
            assert (sums[rows] < ceiling).all()  # the sink takes the rest
        else:
            np.testing.assert_allclose(sums[rows], 1.0, atol=1e-5)
        assert (call.weights[~call.head_masks & rows[..., None]] == 0).all()  # masked: zero
        assert call.value_heads.shape[:3] == (b, h, s)
        if call.query_heads is not None:  # the scores were a product Q·Kᵀ
            assert call.query_heads.shape[:3] == (b, h, t)
            assert call.key_heads.shape[:3] == (b, h, s)
            assert len(call.kv_heads) == h


def test_no_attention_bearing_backbone_is_left_out():
    built = {m.name for m in hub_models.MODELS} | set(hub_models.UNBUILT)
    without = {  # convolutional, Fourier mixing (FNet), recurrent (RWKV-7): no softmax attention
        "BASNet", "CSPNet", "DeepLabV3", "DenseNet", "EfficientNet", "FNet", "FeaturePyramid",
        "HGNetV2", "MobileNet", "RWKV7", "ResNet", "RetinaNet", "VGG", "Xception",
    }  # fmt: skip
    names = {n[: -len("Backbone")] for n in dir(keras_hub.models) if n.endswith("Backbone")}
    assert names - {""} - without == built


def test_grouped_query_heads_share_their_key_value_heads():
    call = _run("Llama")[2].calls[0]
    assert call.kv_heads == (0, 0, 1, 1) and call.kind == "self"
    np.testing.assert_array_equal(call.key_heads[:, 0], call.key_heads[:, 1])


def test_folded_batches_are_named():
    swin = _run("SwinTransformer")[2]  # 8 × 8 tokens in 4 × 4 windows, then one window
    folds = [c.fold and (c.fold.what, c.fold.count) for c in swin.calls]
    assert folds == [("windows", 4), ("windows", 4), None, None]
    prism = _run("VideoPrism")[2]
    assert [(c.fold.what, c.fold.count) for c in prism.calls] == [("frames", 2), ("patches", 16)]
    vitdet = _run("ViTDet")[2].calls[0]  # heads folded into the batch, unfolded
    assert vitdet.weights.shape == (hub_models.BATCH * 4, 2, 16, 16)


def test_a_decoders_four_dimensional_mask_is_read():
    moonshine = _run("Moonshine")[2]
    (own,) = [c for c in moonshine.calls if c.kind == "self" and "decoder" in c.path]
    np.testing.assert_array_equal(own.mask, CAUSAL & KEYS)  # given as (B, 1, T, S)


# ---------------------------------------------------------------- float64 recomputations


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _project(dense, x: np.ndarray) -> np.ndarray:
    """A Dense or EinsumDense layer in float64, from its kernel and bias."""
    kernel = _f64(dense.kernel)
    out = np.einsum(dense.equation, x, kernel) if hasattr(dense, "equation") else x @ kernel
    bias = getattr(dense, "bias", None)
    return out if bias is None else out + _f64(bias)


def _softmax(logits: np.ndarray, allowed=True) -> np.ndarray:
    logits = np.where(allowed, logits, -np.inf)
    shifted = np.exp(logits - logits.max(-1, keepdims=True))
    return shifted / shifted.sum(-1, keepdims=True)


def _rope(x: np.ndarray, wavelength: float = 10000.0) -> np.ndarray:
    """Rotary embedding of `x (B, T, H, D)`, rotate-half convention, positions 0..T-1."""
    d = x.shape[-1]
    angles = np.arange(x.shape[1])[:, None] * wavelength ** (-np.arange(0, d, 2) / d)  # (T, D/2)
    cos, sin = np.cos(np.concatenate([angles] * 2, -1)), np.sin(np.concatenate([angles] * 2, -1))
    rotated = np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], axis=-1)
    return x * cos[:, None] + rotated * sin[:, None]  # (B, T, H, D) * (T, 1, D)


def _layer(backbone, path: str):
    """The layer at `path` (names from the backbone down)."""
    layer = backbone
    for name in path.split("/"):
        (layer,) = [s for s in layer._flatten_layers(include_self=False, recursive=False)
                    if s.name == name]  # fmt: skip
    return layer


def _case(name: str, key: str | int):
    """(layer, call, its query input in float64) of call `key` (or number) of `name`'s run."""
    backbone, _, result = _run(name)
    call = result.calls[key] if isinstance(key, int) else result[key]
    return _layer(backbone, call.path), call, _f64(call.inputs["query"])


def _assert_heads(call, expected: np.ndarray, rows=None) -> None:
    """The recorded weights equal `expected (B, H, T, S)` (in `rows (B, T)` if given)."""
    got, want = call.weights.transpose(0, 2, 1, 3), expected.transpose(0, 2, 1, 3)  # (B, T, H, S)
    if rows is not None:
        got, want = got[rows], want[rows]
    np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)


def test_standard_multi_head_attention_bert():
    layer, call, x = _case("Bert", "transformer_layer_0/self_attention_layer")
    q, k = _project(layer._query_dense, x), _project(layer._key_dense, x)  # (B, T, H, D)
    logits = np.einsum("bthd,bshd->bhts", q, k) / math.sqrt(q.shape[-1])
    _assert_heads(call, _softmax(logits, KEYS[:, None]))
    np.testing.assert_array_equal(call.mask, np.broadcast_to(KEYS, call.mask.shape))


def test_grouped_query_attention_with_rope_llama():
    layer, call, x = _case("Llama", "transformer_layer_0/self_attention")
    q = _rope(_project(layer._query_dense, x))  # (B, T, 4, D)
    k = np.repeat(_rope(_project(layer._key_dense, x)), 2, axis=2)  # 2 kv heads, 2 queries each
    logits = np.einsum("bthd,bshd->bhts", q, k) / math.sqrt(q.shape[-1])
    _assert_heads(call, _softmax(logits, (CAUSAL & KEYS)[:, None]))
    assert call.position.name == "rope" and call.position.applied == "qk"
    np.testing.assert_allclose(call.query_heads, q.transpose(0, 2, 1, 3), atol=ATOL)


def test_gemma_soft_capping_and_sliding_window():
    layer, call, x = _case("Gemma", "decoder_block_0/attention")
    assert layer.use_sliding_window_attention and layer.logit_soft_cap == 20.0
    q = _rope(_project(layer.query_dense, x)) / math.sqrt(layer.head_dim)  # (B, T, 4, D)
    k = np.repeat(_rope(_project(layer.key_dense, x)), 2, axis=2)
    logits = 20.0 * np.tanh(np.einsum("bthd,bshd->bhts", q, k) / 20.0)
    i, j = np.indices(CAUSAL.shape)
    window = np.abs(i - j) <= layer.sliding_window_size - 1
    allowed = CAUSAL & window & KEYS  # (B, T, S)
    _assert_heads(call, _softmax(logits, allowed[:, None]))
    np.testing.assert_array_equal(call.mask, allowed)
    assert any("Soft-capped" in n for n in call.notes) and any("Sliding" in n for n in call.notes)


def test_alibi_bloom():
    layer, call, x = _case("Bloom", "transformer_layer_0/self_attention")
    q, k = _project(layer._query_dense, x), _project(layer._key_dense, x)
    heads = q.shape[2]
    slopes = np.array([2 ** (-8 / heads * (h + 1)) for h in range(heads)])  # Press et al.
    s = x.shape[1]
    bias = slopes[:, None, None] * (np.arange(s) - (s - 1))  # (H, 1, S): slope × key offset
    logits = np.einsum("bthd,bshd->bhts", q, k) / math.sqrt(q.shape[-1]) + bias
    _assert_heads(call, _softmax(logits, (CAUSAL & KEYS)[:, None]))
    np.testing.assert_allclose(call.position.details["slopes"], slopes)


def _t5_bucket(relative: np.ndarray, buckets: int = 32, distance: int = 128) -> np.ndarray:
    """T5's bidirectional bucket of each relative position (key − query)."""
    half = buckets // 2
    base = (relative > 0) * half
    n = np.abs(relative)
    exact = half // 2
    large = exact + (np.log(np.maximum(n, 1) / exact) / np.log(distance / exact)
                     * (half - exact)).astype(int)  # fmt: skip
    return base + np.where(n < exact, n, np.minimum(large, half - 1))


def test_t5_relative_buckets():
    layer, call, x = _case("T5", "transformer_encoder_layer_0/self_attention")
    heads, size = layer.num_heads, layer.key_value_dim
    q = (x @ _f64(layer.query_projector.kernel)).reshape(*x.shape[:2], heads, size)
    k = (x @ _f64(layer.key_projector.kernel)).reshape(*x.shape[:2], heads, size)
    i, j = np.indices(CAUSAL.shape)
    table = _f64(layer.relative_attention_bias)  # (buckets, H)
    bias = table[_t5_bucket(j - i)].transpose(2, 0, 1)  # (T, S, H) -> (H, T, S)
    logits = np.einsum("bthd,bshd->bhts", q, k) + bias  # T5 does not scale
    _assert_heads(call, _softmax(logits, KEYS[:, None]))
    assert call.position.details["num_buckets"] == 32 and call.position.applied == "scores"


def test_gpt_oss_sinks_and_sliding_window():
    layer, call, x = _case("GptOss", "transformer_layer_1/self_attention")
    q = _rope(_project(layer.query_dense, x)) * layer._inv_norm_factor
    k = np.repeat(_rope(_project(layer.key_dense, x)), 2, axis=2)
    logits = np.einsum("bthd,bshd->bhts", q, k)  # (B, H, T, S)
    i, j = np.indices(CAUSAL.shape)
    allowed = (CAUSAL & (j >= i - layer.sliding_window) & KEYS)[:, None]  # (B, 1, T, S)
    logits = np.where(allowed, logits, -1e9)
    sinks = np.broadcast_to(_f64(layer.sinks)[None, :, None, None], (*logits.shape[:3], 1))
    expected = _softmax(np.concatenate([logits, sinks], axis=-1))[..., :-1]  # drop the sink
    _assert_heads(call, expected)
    assert (call.weights.sum(-1) < 1).all() and any("Sink" in n for n in call.notes)
    assert call.verified.against == "the layer's output"  # the sink's share goes nowhere


def _deberta_buckets(relative: np.ndarray, span: int, positions: int) -> np.ndarray:
    """DeBERTa's log-bucketed relative positions (query − key)."""
    mid = span // 2
    inside = (relative < mid) & (relative > -mid)
    magnitude = np.where(inside, mid - 1, np.abs(relative))
    log_pos = np.ceil(np.log(magnitude / mid) * (mid - 1) / np.log((positions - 1) / mid)) + mid
    return np.where(magnitude <= mid, relative, log_pos * np.sign(relative)).astype(int)


def test_deberta_disentangled_attention():
    backbone, _, _ = _run("DebertaV3")
    key = "disentangled_attention_encoder_layer_0/self_attention_layer"
    layer, call, x = _case("DebertaV3", key)
    table = backbone.relative_embeddings
    rel = _f64(table.rel_embeddings)  # (2·span, D), then LayerNorm
    norm = table.layer_norm
    rel = (rel - rel.mean(-1, keepdims=True)) / np.sqrt(rel.var(-1, keepdims=True) + norm.epsilon)
    rel = rel * _f64(norm.gamma) + _f64(norm.beta)
    q, k = _project(layer._query_dense, x), _project(layer._key_dense, x)  # (B, T, H, D)
    pos_q = _project(layer._query_dense, rel[None])[0]  # (2k, H, D)
    pos_k = _project(layer._key_dense, rel[None])[0]
    span, n = layer.bucket_size, x.shape[1]
    i, j = np.indices((n, n))
    buckets = _deberta_buckets(i - j, span, layer.max_position_embeddings)  # (T, S)
    c2c = np.einsum("bthd,bshd->bhts", q, k)
    c2p = np.einsum("bthd,rhd->bhtr", q, pos_k)  # (B, H, T, 2k): query i against position r
    c2p = np.take_along_axis(c2p, np.clip(buckets + span, 0, 2 * span - 1)[None, None], axis=-1)
    p2c = np.einsum("bshd,rhd->bhsr", k, pos_q)  # (B, H, S, 2k): key j against position r
    index = np.clip(-buckets + span, 0, 2 * span - 1)  # [j, i]: −bucket(j − i) + span
    p2c = np.take_along_axis(p2c, index[None, None], axis=-1).transpose(0, 1, 3, 2)
    logits = (c2c + c2p + p2c) * layer.scale_factor
    _assert_heads(call, _softmax(logits, KEYS[:, None]))
    assert call.position.name == "disentangled"


def test_fused_dot_product_attention_esm():
    layer, call, x = _case("ESM", "transformer_layer_0/attention_layer")
    split = lambda dense: _project(dense, x).reshape(*x.shape[:2], layer.heads, -1)  # noqa: E731
    q, k = _rope(split(layer.q_dense)), _rope(split(layer.k_dense))
    logits = np.einsum("bthd,bshd->bhts", q, k) / math.sqrt(layer.head_size)
    real = hub_models.PADDING.astype(bool)  # (B, T): ESM's mask (B, 1, T, 1) masks query rows
    _assert_heads(call, _softmax(logits), rows=real)
    np.testing.assert_array_equal(call.mask, np.broadcast_to(real[:, :, None], call.mask.shape))
    np.testing.assert_allclose(call.weights[0, :, -1], 1 / x.shape[1], atol=1e-6)  # as computed
    assert call.position.name == "rope" and call.class_name.endswith("EsmSelfAttention")
    assert any(n.startswith("Query mask: the padded positions' query rows") for n in call.notes)
    assert not call.mask[0, -1].any() and call.mask[0, 0, -1]  # padded keys stay visible


def test_roformer_v2_masks_padded_queries_and_says_so():
    # RoformerV2 masks token id 0 with a (B, 1, S, 1) mask: padded query rows, not padded keys
    backbone, inputs, _ = _run("RoformerV2")
    padded = {**inputs, "token_ids": inputs["token_ids"] * hub_models.PADDING}  # ids 0: padding
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = inspect(backbone, padded)
    assert_verified(result)
    real = hub_models.PADDING.astype(bool)  # (B, T)
    for call in result.calls:
        np.testing.assert_array_equal(call.mask, np.broadcast_to(real[:, :, None], call.mask.shape))
        assert any(n.startswith("Query mask:") for n in call.notes)
        np.testing.assert_allclose(call.weights[0, :, -1], 1 / 6, atol=1e-6)  # even, as computed


def _swin_regions(size: int, window: int, shift: int) -> np.ndarray:
    """Swin's region id of each token of each window `(W, N)` after the cyclic shift."""
    regions, count = np.zeros((size, size), int), 0
    spans = [(0, size - window), (size - window, size - shift), (size - shift, size)]
    for top, bottom in spans:
        for left, right in spans:
            regions[top:bottom, left:right] = count
            count += 1
    blocks = regions.reshape(size // window, window, size // window, window).transpose(0, 2, 1, 3)
    return blocks.reshape(-1, window * window)


def test_swin_shifted_windows_with_relative_bias():
    backbone, _, _ = _run("SwinTransformer")
    layer, call, x = _case("SwinTransformer", "stage_0/blocks_1/attn")  # a shifted block
    block = _layer(backbone, "stage_0/blocks_1")
    heads, window = layer.num_heads, layer.win_h
    qkv = _project(layer.qkv, x).reshape(*x.shape[:2], 3, heads, -1)  # (B·W, N, 3, H, D)
    q, k = qkv[:, :, 0] * layer.scale, qkv[:, :, 1]
    coords = np.stack(np.indices((window, window))).reshape(2, -1)  # (2, N)
    offsets = coords[:, :, None] - coords[:, None, :] + window - 1  # (2, N, N)
    index = offsets[0] * (2 * window - 1) + offsets[1]
    bias = _f64(layer.relative_position_bias_table)[index].transpose(2, 0, 1)  # (H, N, N)
    ids = _swin_regions(block.input_resolution[0], window, block.shift_size)  # (W, N)
    same = np.tile(ids[:, :, None] == ids[:, None, :], (hub_models.BATCH, 1, 1))  # (B·W, N, N)
    logits = np.einsum("bthd,bshd->bhts", q, k) + bias + np.where(same, 0.0, -100.0)[:, None]
    _assert_heads(call, _softmax(logits))
    np.testing.assert_array_equal(call.mask, same)  # −100 is read as a mask (Swin's adapter)
    assert call.fold.what == "windows" and call.position.name == "relative-table"


def test_segformer_reduced_keys():
    layer, call, x = _case("SegFormer", 0)  # the first stage: keys pooled 2 × 2
    b, n, c = x.shape
    side, ratio = int(math.isqrt(n)), layer.sr_ratio
    grid = x.reshape(b, side // ratio, ratio, side // ratio, ratio, c)  # pooled patches
    kernel = _f64(layer.sr.kernel)  # (ratio, ratio, C, C), stride = ratio
    reduced = np.einsum("bxiyjc,ijcd->bxyd", grid, kernel) + _f64(layer.sr.bias)
    reduced = reduced.reshape(b, -1, c)  # (B, N / ratio², C)
    mean, var = reduced.mean(-1, keepdims=True), reduced.var(-1, keepdims=True)
    reduced = (reduced - mean) / np.sqrt(var + layer.norm.epsilon) * _f64(layer.norm.gamma)
    reduced += _f64(layer.norm.beta)
    heads = layer.num_heads
    q = _project(layer.q, x).reshape(b, n, heads, -1)
    k = _project(layer.k, reduced).reshape(b, reduced.shape[1], heads, -1)
    _assert_heads(call, _softmax(np.einsum("bthd,bshd->bhts", q, k) * layer.scale))
    assert call.weights.shape[-2:] == (n, n // ratio**2)
    assert any("Reduced keys" in note for note in call.notes)
