"""Tests for attention: compute_attention, AttentionResult and the ScoredAttention layer.

Shape letters: B batch, T queries, S keys, D features (Dq/Dk/Dv), U concat units.
The float64 numpy reference in `reference.py` shares no code with attnviz.
"""

import concurrent.futures
import dataclasses
import math
import re

import keras
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_support import examples
from reference import reference_attention, reference_mask, softmax_rows

from attnviz import (
    AttentionResult,
    AttentionSettings,
    ConcatScore,
    DotScore,
    GeneralScore,
    ScoredAttention,
    attention_stages,
    compute_attention,
)
from attnviz.core import attention as attention_module
from attnviz.core.scoring import make_score_layer

T, F = True, False
TOL = {"rtol": 1e-5, "atol": 1e-5}
ARRAY_FIELDS = ("scores", "mask", "masked_scores", "weights", "output", "fully_masked")

# The NumPy lab's worked example.
LAB_Q = [[1, 0, 0], [0, 1, 0]]
LAB_K = [[1, 2, 3], [4, 5, 6]]
LAB_V = [[0, 1, 0], [1, 0, 1]]


def _assert_matches_reference(result: AttentionResult, expected) -> None:
    np.testing.assert_array_equal(result.mask, expected.mask)
    np.testing.assert_array_equal(result.fully_masked, expected.fully_masked)
    for name in ("scores", "masked_scores", "weights", "output"):
        np.testing.assert_allclose(getattr(result, name), getattr(expected, name), **TOL)


# --- 1. the seeds' worked examples ---------------------------------------------------------------


def test_numpy_lab_example_with_causal_mask():
    result = compute_attention(LAB_Q, LAB_K, LAB_V, scale=True, causal=True)
    np.testing.assert_allclose(result.weights, [[1, 0], [0.150325, 0.849675]], atol=1e-6)
    np.testing.assert_allclose(
        result.output, [[0, 1, 0], [0.849675, 0.150325, 0.849675]], atol=1e-6
    )
    assert result.weights[0, 1] == 0.0  # masked exactly, not approximately


def test_numpy_lab_example_without_mask():
    # q0·k = [1, 4], q1·k = [2, 5]; divided by √3: [0.577350, 2.309401], [1.154701, 2.886751].
    # Both rows differ by 3/√3 = √3, so both softmax to [1/(1+e^√3), e^√3/(1+e^√3)]
    # = [0.150325, 0.849675], and the output is 0.150325·v0 + 0.849675·v1 = [0.849675,
    # 0.150325, 0.849675] for both queries.
    result = compute_attention(LAB_Q, LAB_K, LAB_V)
    np.testing.assert_allclose(
        result.scores, [[0.577350, 2.309401], [1.154701, 2.886751]], atol=1e-6
    )
    np.testing.assert_allclose(result.raw_scores, [[1, 4], [2, 5]], atol=1e-5)
    np.testing.assert_allclose(result.weights, [[0.150325, 0.849675]] * 2, atol=1e-6)
    np.testing.assert_allclose(result.output, [[0.849675, 0.150325, 0.849675]] * 2, atol=1e-6)
    assert result.scale_factor == pytest.approx(1 / math.sqrt(3))
    assert result.d_k == 3
    assert not result.fully_masked.any()


def test_keras_tutorial_batch_matches_float64_numpy():
    rng = np.random.default_rng(0)
    q, k, v = rng.random((64, 5, 64)), rng.random((64, 5, 64)), rng.random((64, 5, 64))
    result = compute_attention(q, k, v)
    assert result.output.shape == (64, 5, 64)
    assert result.weights.shape == (64, 5, 5)
    weights = softmax_rows(q @ k.transpose(0, 2, 1) / math.sqrt(64))  # (B, T, S)
    np.testing.assert_allclose(result.weights, weights, **TOL)
    np.testing.assert_allclose(result.output, weights @ v, **TOL)


# --- 2. every score kind x scale x mask against the float64 reference ---------------------------

RNG = np.random.default_rng(2024)
SHAPES = {"dot": (2, 2), "general": (3, 2), "concat": (3, 2), "concat-bias": (3, 2)}  # Dq, Dk
PARAMS = {
    "dot": None,
    "general": {"W": RNG.normal(size=(3, 2))},
    "concat": {
        "W_q": RNG.normal(size=(3, 4)),
        "W_k": RNG.normal(size=(2, 4)),
        "v": RNG.normal(size=4),
    },
}
PARAMS["concat-bias"] = {**PARAMS["concat"], "b": RNG.normal(size=4)}
QUERIES = {kind: RNG.normal(size=(4, dq)) for kind, (dq, _) in SHAPES.items()}  # T = 4
KEYS = {kind: RNG.normal(size=(5, dk)) for kind, (_, dk) in SHAPES.items()}  # S = 5
VALUES = RNG.normal(size=(5, 3))  # Dv = 3
PADDING = [F, T, T, F, T]  # with causal masking, query 0 has no allowed key
MASKS = {
    "none": {},
    "causal": {"causal": True},
    "padding": {"key_padding_mask": PADDING},
    "window": {"window": 1},
    "causal+padding+window": {"causal": True, "key_padding_mask": PADDING, "window": 1},
}


@pytest.mark.parametrize("mask_value", ["-inf", "-1e9"])
@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("scale", [True, False], ids=["scaled", "unscaled"])
@pytest.mark.parametrize("kind", list(SHAPES))
def test_matches_float64_reference(kind, scale, mask, mask_value):
    score = kind.removesuffix("-bias")
    masks = MASKS[mask]
    result = compute_attention(
        QUERIES[kind],
        KEYS[kind],
        VALUES,
        score=score,
        scale=scale,
        mask_value=mask_value,
        params=PARAMS[kind],
        **masks,
    )
    expected = reference_attention(
        QUERIES[kind],
        KEYS[kind],
        VALUES,
        score=score,
        scale=scale,
        causal=masks.get("causal", False),
        window=masks.get("window"),
        padding=masks.get("key_padding_mask"),
        mask_value=mask_value,
        params=PARAMS[kind],
    )
    _assert_matches_reference(result, expected)
    np.testing.assert_allclose(result.raw_scores * result.scale_factor, result.scores, **TOL)
    assert result.scale_factor == (1 / math.sqrt(SHAPES[kind][1]) if scale else 1.0)
    assert result.d_k == SHAPES[kind][1]


@pytest.mark.parametrize("mask_value", ["-inf", "-1e9"])
@pytest.mark.parametrize("kind", list(SHAPES))
def test_batched_inputs_with_per_sequence_padding_match_reference(kind, mask_value):
    score = kind.removesuffix("-bias")
    rng = np.random.default_rng(5)
    dq, dk = SHAPES[kind]
    q, k, v = rng.normal(size=(3, 4, dq)), rng.normal(size=(3, 5, dk)), rng.normal(size=(3, 5, 2))
    padding = [[T, T, T, T, T], [T, T, F, F, F], [F, F, F, F, F]]  # (B, S); the last is all padding
    result = compute_attention(
        q,
        k,
        v,
        score=score,
        causal=True,
        key_padding_mask=padding,
        mask_value=mask_value,
        params=PARAMS[kind],
    )
    expected = reference_attention(
        q,
        k,
        v,
        score=score,
        causal=True,
        padding=padding,
        mask_value=mask_value,
        params=PARAMS[kind],
    )
    _assert_matches_reference(result, expected)
    assert result.fully_masked[2].all() and not result.fully_masked[:2].any()


def test_batched_shapes_are_kept_in_every_output():
    rng = np.random.default_rng(6)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 6))
    result = compute_attention(q, k, v, key_padding_mask=[T, T, F, T, T])  # (S,) shared
    shapes = {name: getattr(result, name).shape for name in ARRAY_FIELDS}
    assert shapes == {
        "scores": (2, 3, 5),
        "mask": (2, 3, 5),
        "masked_scores": (2, 3, 5),
        "weights": (2, 3, 5),
        "output": (2, 3, 6),
        "fully_masked": (2, 3),
    }
    assert result.raw_scores.shape == (2, 3, 5)


def test_unbatched_shapes_and_dtypes():
    result = compute_attention(LAB_Q, LAB_K, LAB_V, score="general", causal=True)
    assert result.scores.shape == result.weights.shape == result.mask.shape == (2, 2)
    assert result.output.shape == (2, 3) and result.fully_masked.shape == (2,)
    for name in ("scores", "masked_scores", "weights", "output"):
        assert getattr(result, name).dtype == np.float32, name
    assert result.mask.dtype == bool and result.fully_masked.dtype == bool


def test_settings_are_recorded():
    result = compute_attention(
        LAB_Q,
        LAB_K,
        LAB_V,
        score="concat",
        scale=False,
        causal=True,
        window=2,
        mask_value="-1e9",
        seed=7,
    )
    assert result.settings == AttentionSettings(
        score="concat", scale=False, causal=True, window=2, mask_value="-1e9", seed=7
    )
    assert result.scale_factor == 1.0


def test_inputs_may_be_int_lists_or_float32_arrays():
    from_lists = compute_attention(LAB_Q, LAB_K, LAB_V)
    from_arrays = compute_attention(*(np.array(m, np.float32) for m in (LAB_Q, LAB_K, LAB_V)))
    np.testing.assert_array_equal(from_lists.weights, from_arrays.weights)


def test_no_mask_gives_the_same_result_for_both_mask_values():
    inf = compute_attention(LAB_Q, LAB_K, LAB_V, mask_value="-inf")
    large = compute_attention(LAB_Q, LAB_K, LAB_V, mask_value="-1e9")
    np.testing.assert_array_equal(inf.weights, large.weights)
    np.testing.assert_array_equal(inf.masked_scores, inf.scores)


def test_masked_scores_pin_both_mask_values():
    inf = compute_attention(LAB_Q, LAB_K, LAB_V, causal=True, mask_value="-inf")
    assert inf.masked_scores[0, 1] == -np.inf
    large = compute_attention(LAB_Q, LAB_K, LAB_V, causal=True, mask_value="-1e9")
    assert large.masked_scores[0, 1] == np.float32(-1e9)  # 2.31 - 1e9 rounds to -1e9 in float32
    np.testing.assert_array_equal(large.scores, inf.scores)  # scores are before masking


def test_minus_1e9_is_added_in_float32_like_keras():
    # Scores [100, 0] (unscaled), both keys padding. Near 1e9 float32 numbers are 64 apart:
    # 100 - 1e9 rounds to -999999872, so the logits differ by 128 and the fully masked row is
    # [1, 0], not uniform. Keras's Attention layer does the same; "-inf" would give zeros.
    q, k, v = [[10.0, 0.0]], [[10.0, 0.0], [0.0, 0.0]], [[1.0], [2.0]]
    result = compute_attention(q, k, v, scale=False, key_padding_mask=[F, F], mask_value="-1e9")
    np.testing.assert_array_equal(result.masked_scores, [[-999999872.0, -1e9]])
    np.testing.assert_allclose(result.weights, [[1.0, 0.0]], atol=1e-7)
    assert result.fully_masked.all()
    out, weights = keras.layers.Attention()(
        [np.array([q], np.float32), np.array([v], np.float32), np.array([k], np.float32)],
        mask=[None, np.array([[F, F]])],
        return_attention_scores=True,
    )
    np.testing.assert_allclose(result.weights, np.asarray(weights)[0], atol=1e-7)
    np.testing.assert_allclose(result.output, np.asarray(out)[0], atol=1e-6)


# --- params and seeds ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "names"),
    [("dot", set()), ("general", {"W"}), ("concat", {"W_q", "W_k", "v"})],
    ids=["dot", "general", "concat"],
)
def test_params_used_are_reported(score, names):
    result = compute_attention(LAB_Q, LAB_K, LAB_V, score=score)
    assert set(result.params) == names


def test_concat_bias_is_used_only_when_given():
    plain = compute_attention(LAB_Q, LAB_K, LAB_V, score="concat", seed=1)
    zero_bias = compute_attention(
        LAB_Q, LAB_K, LAB_V, score="concat", seed=1, params={"b": np.zeros(3)}
    )
    bias = compute_attention(LAB_Q, LAB_K, LAB_V, score="concat", seed=1, params={"b": np.ones(3)})
    assert "b" not in plain.params and "b" in bias.params
    np.testing.assert_allclose(zero_bias.scores, plain.scores, rtol=1e-6)
    assert not np.allclose(bias.scores, plain.scores)


def test_concat_units_come_from_a_given_weight():
    result = compute_attention(LAB_Q, LAB_K, LAB_V, score="concat", params={"v": np.ones(5)})
    assert result.params["W_q"].shape == (3, 5) and result.params["W_k"].shape == (3, 5)


def test_giving_one_weight_leaves_the_drawn_ones_unchanged():
    drawn = compute_attention(LAB_Q, LAB_K, LAB_V, score="concat", seed=9)
    w_q = np.full((3, 3), 0.25)
    given = compute_attention(LAB_Q, LAB_K, LAB_V, score="concat", seed=9, params={"W_q": w_q})
    np.testing.assert_array_equal(given.params["W_q"], w_q)
    np.testing.assert_array_equal(given.params["W_k"], drawn.params["W_k"])
    np.testing.assert_array_equal(given.params["v"], drawn.params["v"])


@settings(max_examples=examples(25), deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    other=st.integers(0, 2**32 - 1),
    score=st.sampled_from(["general", "concat"]),
)
def test_same_seed_same_params_different_seed_different(seed, other, score):
    first = compute_attention(LAB_Q, LAB_K, LAB_V, score=score, seed=seed)
    again = compute_attention(LAB_Q, LAB_K, LAB_V, score=score, seed=seed)
    for name in first.params:
        np.testing.assert_array_equal(first.params[name], again.params[name])
    np.testing.assert_array_equal(first.output, again.output)
    if other != seed:
        changed = compute_attention(LAB_Q, LAB_K, LAB_V, score=score, seed=other)
        assert all(not np.array_equal(first.params[n], changed.params[n]) for n in first.params)


# --- results are read-only -----------------------------------------------------------------------


def test_result_arrays_are_read_only():
    result = compute_attention(LAB_Q, LAB_K, LAB_V, score="concat", causal=True)
    for name in ARRAY_FIELDS:
        array = getattr(result, name)
        with pytest.raises(ValueError, match="read-only"):
            array[0] = array[0]
    for weight in result.params.values():
        with pytest.raises(ValueError, match="read-only"):
            weight[0] = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.weights = np.zeros((2, 2))  # type: ignore[misc]


def test_given_params_are_copied_not_frozen_in_place():
    w = np.eye(3)
    result = compute_attention(LAB_Q, LAB_K, LAB_V, score="general", params={"W": w})
    w[0, 0] = 5.0  # the caller's array stays writable and the result does not change
    assert result.params["W"][0, 0] == 1.0


# --- 5. fully masked rows ------------------------------------------------------------------------


def test_fully_masked_rows_with_minus_inf_are_zero_and_flagged():
    # Both keys are padding: no query may attend anything.
    result = compute_attention(LAB_Q, LAB_K, LAB_V, key_padding_mask=[F, F])
    np.testing.assert_array_equal(result.weights, np.zeros((2, 2)))
    np.testing.assert_array_equal(result.output, np.zeros((2, 3)))
    np.testing.assert_array_equal(result.fully_masked, [T, T])
    assert np.isneginf(result.masked_scores).all()
    # causal + padding: only query 0 is fully masked; query 1 attends key 1 alone.
    v = [[1, 2], [3, 4], [5, 9]]
    partly = compute_attention(
        [[1, 0], [0, 1]], [[1, 1], [2, 2], [3, 3]], v, causal=True, key_padding_mask=[F, T, T]
    )
    np.testing.assert_array_equal(partly.fully_masked, [T, F])
    np.testing.assert_array_equal(partly.weights, [[0, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(partly.output, [[0, 0], [3, 4]])


def test_fully_masked_rows_with_minus_1e9_are_uniform_and_flagged():
    v = [[1, 2], [3, 4], [5, 9]]
    result = compute_attention(
        [[1, 0], [0, 1]],
        [[1, 1], [2, 2], [3, 3]],
        v,
        key_padding_mask=[F, F, F],
        mask_value="-1e9",
    )
    np.testing.assert_allclose(result.weights, np.full((2, 3), 1 / 3), atol=1e-7)
    np.testing.assert_allclose(result.output, [[3, 5], [3, 5]], atol=1e-6)  # mean of v rows
    np.testing.assert_array_equal(result.fully_masked, [T, T])


# --- 3. against Keras's own attention layers ----------------------------------------------------

KERAS_RNG = np.random.default_rng(11)
KQ = KERAS_RNG.normal(size=(2, 3, 4)).astype(np.float32)  # (B, T, D)
KK = KERAS_RNG.normal(size=(2, 5, 4)).astype(np.float32)  # (B, S, D)
KV = KERAS_RNG.normal(size=(2, 5, 4)).astype(np.float32)  # (B, S, D)
KPAD = np.array([[T, T, F, T, F], [F, F, F, F, F]])  # (B, S): sequence 1 is all padding


@pytest.mark.parametrize(
    ("causal", "padding"),
    [(False, None), (True, None), (False, KPAD), (True, KPAD)],
    ids=["no-mask", "causal", "padding", "causal+padding"],
)
def test_matches_keras_attention_layer(causal, padding):
    layer = keras.layers.Attention(use_scale=False)
    mask = None if padding is None else [None, padding]  # [query_mask, value_mask]
    out, weights = layer(
        [KQ / math.sqrt(4), KV, KK],
        mask=mask,
        use_causal_mask=causal,
        return_attention_scores=True,
    )
    ours = compute_attention(KQ, KK, KV, causal=causal, key_padding_mask=padding, mask_value="-1e9")
    np.testing.assert_allclose(ours.weights, np.asarray(weights), **TOL)
    np.testing.assert_allclose(ours.output, np.asarray(out), **TOL)


def _identity_mha(d: int) -> keras.layers.MultiHeadAttention:
    """One-head MultiHeadAttention whose projections are all the identity."""
    mha = keras.layers.MultiHeadAttention(num_heads=1, key_dim=d, use_bias=False)
    mha.build((None, None, d), (None, None, d), (None, None, d))
    eye = np.eye(d, dtype=np.float32)
    for dense in (mha.query_dense, mha.key_dense, mha.value_dense):
        assert tuple(dense.kernel.shape) == (d, 1, d)
        dense.kernel.assign(eye.reshape(d, 1, d))  # (D, heads, D)
    assert tuple(mha.output_dense.kernel.shape) == (1, d, d)
    mha.output_dense.kernel.assign(eye.reshape(1, d, d))  # (heads, D, D)
    return mha


@pytest.mark.parametrize(
    ("causal", "padding", "window"),
    [(False, None, None), (True, KPAD, None), (False, None, 1), (True, [T, F, T, T, T], 1)],
    ids=["no-mask", "causal+padding", "window", "causal+padding+window"],
)
def test_matches_keras_multi_head_attention_with_identity_projections(causal, padding, window):
    mha = _identity_mha(4)
    ours = compute_attention(KQ, KK, KV, causal=causal, key_padding_mask=padding, window=window)
    mask = reference_mask(2, 3, 5, causal=causal, window=window, padding=padding)  # (B, T, S)
    out, scores = mha(
        KQ,
        KV,
        key=KK,
        attention_mask=mask if not mask.all() else None,
        return_attention_scores=True,
    )
    assert tuple(scores.shape) == (2, 1, 3, 5)  # (B, heads, T, S)
    # Keras zeroes masked weights after its softmax, so fully masked rows match "-inf".
    np.testing.assert_allclose(ours.weights, np.asarray(scores)[:, 0], **TOL)
    np.testing.assert_allclose(ours.output, np.asarray(out), **TOL)


@pytest.mark.parametrize(
    ("causal", "padding"),
    [(False, None), (True, None), (False, KPAD)],
    ids=["no-mask", "causal", "padding"],
)
def test_matches_keras_additive_attention(causal, padding):
    layer = keras.layers.AdditiveAttention(use_scale=True)
    layer.build([KQ.shape, KV.shape, KK.shape])
    v = np.random.default_rng(12).normal(size=4).astype(np.float32)
    assert tuple(layer.scale.shape) == (4,)
    layer.scale.assign(v)
    mask = None if padding is None else [None, padding]
    out, weights = layer(
        [KQ, KV, KK], mask=mask, use_causal_mask=causal, return_attention_scores=True
    )
    eye = np.eye(4)
    ours = compute_attention(
        KQ,
        KK,
        KV,
        score="concat",
        scale=False,
        causal=causal,
        key_padding_mask=padding,
        mask_value="-1e9",
        params={"W_q": eye, "W_k": eye, "v": v},
    )
    np.testing.assert_allclose(ours.weights, np.asarray(weights), **TOL)
    np.testing.assert_allclose(ours.output, np.asarray(out), **TOL)


# --- ScoredAttention inside Keras ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "make"),
    [
        pytest.param("dot", lambda: DotScore(), id="dot"),
        pytest.param("general", lambda: GeneralScore(scale=False), id="general"),
        pytest.param("concat", lambda: ConcatScore(units=3, use_bias=True), id="concat-bias"),
    ],
)
@pytest.mark.filterwarnings("ignore:Layer .* was passed an input with a mask:UserWarning")
def test_scored_attention_in_a_functional_model_matches_compute_attention(kind, make):
    t, s, d = 3, 4, 2
    query, value, key = keras.Input((t, d)), keras.Input((s, d)), keras.Input((s, d))
    mask = keras.Input((t, s), dtype="bool")
    layer = ScoredAttention(make(), mask_value="-inf")
    out, weights = layer(query, value, key=key, mask=mask, return_attention_scores=True)
    model = keras.Model([query, value, key, mask], [out, weights])
    rng = np.random.default_rng(13)
    q, v, k = rng.normal(size=(2, t, d)), rng.normal(size=(2, s, d)), rng.normal(size=(2, s, d))
    padding = np.array([[T, T, F, T], [F, T, T, T]])
    m = reference_mask(2, t, s, causal=True, padding=padding)  # row 0 of sequence 1 fully masked
    got_out, got_weights = model.predict([q, v, k, m], verbose=0)
    params = {w.name: w.numpy() for w in layer.scorer.weights}  # what Keras initialised
    ours = compute_attention(
        q,
        k,
        v,
        score=kind,
        scale=layer.scorer.scale,
        causal=True,
        key_padding_mask=padding,
        params=params,
    )
    np.testing.assert_allclose(got_weights, ours.weights, **TOL)
    np.testing.assert_allclose(got_out, ours.output, **TOL)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: DotScore(), id="dot"),
        pytest.param(lambda: GeneralScore(), id="general"),
        pytest.param(
            lambda: ConcatScore(units=3),
            id="concat",
        ),
    ],
)
def test_scored_attention_accepts_variable_length_sequences(make):
    query, value = keras.Input((None, 2)), keras.Input((None, 2))  # (B, T?, D), (B, S?, D)
    model = keras.Model([query, value], ScoredAttention(make())(query, value))
    rng = np.random.default_rng(14)
    out = model.predict([rng.normal(size=(1, 3, 2)), rng.normal(size=(1, 5, 2))], verbose=0)
    assert out.shape == (1, 3, 2)


def test_model_with_scored_attention_saves_and_loads(tmp_path):
    query, value = keras.Input((3, 2)), keras.Input((4, 2))
    layer = ScoredAttention(ConcatScore(units=3, use_bias=True), mask_value="-1e9")
    model = keras.Model([query, value], layer(query, value))
    rng = np.random.default_rng(16)
    inputs = [rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 4, 2))]
    expected = model.predict(inputs, verbose=0)
    model.save(tmp_path / "model.keras")
    loaded = keras.models.load_model(tmp_path / "model.keras")
    np.testing.assert_array_equal(loaded.predict(inputs, verbose=0), expected)


def test_scored_attention_without_mask_and_key_defaults_to_value():
    layer = ScoredAttention(DotScore(scale=True))
    rng = np.random.default_rng(15)
    q, v = rng.normal(size=(1, 3, 2)).astype(np.float32), rng.normal(size=(1, 4, 2))
    ours = compute_attention(q, v, v)
    np.testing.assert_allclose(np.asarray(layer(q, v)), ours.output, **TOL)


def test_scored_attention_config_round_trip():
    layer = ScoredAttention(ConcatScore(units=3, use_bias=True, scale=False), mask_value="-1e9")
    config = layer.get_config()
    clone = ScoredAttention.from_config(config)
    assert clone.mask_value == "-1e9"
    assert isinstance(clone.scorer, ConcatScore)
    assert (clone.scorer.units, clone.scorer.use_bias, clone.scorer.scale) == (3, True, False)
    assert clone.get_config() == config
    serialised = keras.saving.serialize_keras_object(layer)
    assert serialised["registered_name"] == "attnviz>ScoredAttention"
    again = keras.saving.deserialize_keras_object(serialised)
    assert isinstance(again, ScoredAttention) and again.get_config() == config


def test_scored_attention_rejects_unknown_mask_values():
    with pytest.raises(ValueError, match=r'`mask_value` must be one of "-inf", "-1e9"'):
        ScoredAttention(DotScore(), mask_value="-1e4")


def test_attention_stages_pinned():
    scores = np.array([[[0.0, math.log(3.0)], [5.0, 1.0]]], np.float32)  # (1, T=2, S=2)
    mask = np.array([[[T, T], [F, F]]])
    value = np.array([[[4.0], [8.0]]], np.float32)  # (1, S, 1)
    masked, weights, output = attention_stages(scores, mask, value, "-inf")
    # row 0: softmax([0, ln 3]) = [1/4, 3/4] -> 1 + 6 = 7; row 1 fully masked -> 0.
    np.testing.assert_allclose(np.asarray(weights), [[[0.25, 0.75], [0, 0]]], atol=1e-7)
    np.testing.assert_allclose(np.asarray(output), [[[7.0], [0.0]]], atol=1e-6)
    assert np.isneginf(np.asarray(masked)[0, 1]).all()


# --- 4. invariants (hypothesis) ------------------------------------------------------------------


@st.composite
def attention_cases(draw, score=None, causal=None):
    """Small random attention problems: inputs, masks and settings."""
    t, s = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    kind = score or draw(st.sampled_from(["dot", "general", "concat"]))
    dq = draw(st.integers(1, 4))
    dk = dq if kind == "dot" else draw(st.integers(1, 4))
    dv = draw(st.integers(1, 4))
    batch = draw(st.sampled_from([None, 1, 2]))
    lead = () if batch is None else (batch,)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    padding = draw(st.sampled_from([None, "1d", "2d"] if batch else [None, "1d"]))
    if padding == "1d":
        padding = rng.random(s) < 0.7
    elif padding == "2d":
        padding = rng.random((batch, s)) < 0.7
    return {
        "query": rng.normal(scale=2.0, size=(*lead, t, dq)),
        "key": rng.normal(scale=2.0, size=(*lead, s, dk)),
        "value": rng.normal(scale=2.0, size=(*lead, s, dv)),
        "score": kind,
        "scale": draw(st.booleans()),
        "causal": draw(st.booleans()) if causal is None else causal,
        "window": draw(st.one_of(st.none(), st.integers(0, 5))),
        "key_padding_mask": padding,
        "seed": draw(st.integers(0, 1000)),
    }


@settings(max_examples=examples(150), deadline=None)
@given(case=attention_cases())
def test_weights_are_distributions_and_masked_weights_are_exactly_zero(case):
    result = compute_attention(**case)
    allowed_rows = ~result.fully_masked
    assert (result.weights >= 0).all()
    np.testing.assert_allclose(result.weights.sum(axis=-1)[allowed_rows], 1.0, atol=1e-5)
    assert (result.weights[~result.mask] == 0.0).all()
    assert (result.weights[result.fully_masked] == 0.0).all()
    assert (result.output[result.fully_masked] == 0.0).all()
    np.testing.assert_array_equal(result.fully_masked, ~result.mask.any(axis=-1))


@settings(max_examples=examples(100), deadline=None)
@given(case=attention_cases(), mask_value=st.sampled_from(["-inf", "-1e9"]))
def test_random_cases_match_reference(case, mask_value):
    result = compute_attention(**case, mask_value=mask_value)
    expected = reference_attention(
        case["query"],
        case["key"],
        case["value"],
        score=case["score"],
        scale=case["scale"],
        causal=case["causal"],
        window=case["window"],
        padding=case["key_padding_mask"],
        mask_value=mask_value,
        params=result.params,
    )
    _assert_matches_reference(result, expected)


@settings(max_examples=examples(80), deadline=None)
@given(case=attention_cases(), mask_value=st.sampled_from(["-inf", "-1e9"]))
def test_output_is_a_convex_combination_of_values(case, mask_value):
    result = compute_attention(**case, mask_value=mask_value)
    value = np.asarray(case["value"])
    if value.ndim == 2:
        value, output, rows = value[None], result.output[None], ~result.fully_masked[None]
    else:
        output, rows = result.output, ~result.fully_masked
    if mask_value == "-1e9":
        rows = np.ones_like(rows)  # fully masked rows are uniform averages, still convex
    low = value.min(axis=1, keepdims=True) - 1e-5  # (B, 1, Dv)
    high = value.max(axis=1, keepdims=True) + 1e-5
    inside = (output >= low) & (output <= high)  # (B, T, Dv)
    assert inside[rows].all()


@settings(max_examples=examples(80), deadline=None)
@given(case=attention_cases(causal=True), data=st.data())
def test_causal_rows_ignore_future_keys_and_values(case, data):
    t = case["query"].shape[-2]
    i = data.draw(st.integers(0, t - 1), label="query row")
    before = compute_attention(**case)
    changed = dict(case)
    rng = np.random.default_rng(data.draw(st.integers(0, 1000), label="noise seed"))
    for name in ("key", "value"):
        array = np.array(case[name], copy=True)
        array[..., i + 1 :, :] = rng.normal(scale=5.0, size=array[..., i + 1 :, :].shape)
        changed[name] = array
    after = compute_attention(**changed)
    np.testing.assert_allclose(
        after.output[..., : i + 1, :], before.output[..., : i + 1, :], rtol=1e-6, atol=1e-6
    )
    np.testing.assert_array_equal(after.weights[..., : i + 1, :], before.weights[..., : i + 1, :])


# --- 6. validation errors ------------------------------------------------------------------------

Q2 = [[1, 0], [0, 1]]  # (T=2, D=2)
K3 = [[1, 2], [3, 4], [5, 6]]  # (S=3, D=2)
V3 = [[1], [2], [3]]  # (S=3, Dv=1)
NAN_Q = [[np.nan, 0], [0, 1]]
ERRORS = [
    (
        "dot-dq-ne-dk",
        {"query": [[1, 2, 3]]},
        r'score="dot" needs as many query features as key features \(Dq == Dk\)\. Received: '
        r'query .*Give Q and K the same number of columns, or use score="general" or "concat"',
    ),
    (
        "value-rows-ne-key-rows",
        {"value": [[1], [2]]},
        r"`key` must have as many rows as `value`\..*Give one value row per key row\.",
    ),
    (
        "padding-wrong-length",
        {"key_padding_mask": [T, F]},
        r"`key_padding_mask` must have shape \(3,\): one entry per key \(the key matrix has 3 "
        r"rows\)",
    ),
    (
        "padding-2d-unbatched",
        {"key_padding_mask": [[T, T, F]]},
        r"`key_padding_mask` must have shape \(3,\).*Received shape \(1, 3\)",
    ),
    (
        "padding-batch-mismatch",
        {"query": [Q2], "key": [K3], "value": [V3], "key_padding_mask": [[T, T, T]] * 2},
        r"`key_padding_mask` must have shape \(3,\) or \(1, 3\).*Received shape \(2, 3\)",
    ),
    (
        "padding-value-2",
        {"key_padding_mask": [1, 2, 1]},
        r"`key_padding_mask` must hold True/False \(or 1/0\) values",
    ),
    ("padding-text", {"key_padding_mask": ["yes", "no", "yes"]}, r"must hold True/False"),
    (
        "nan-in-query",
        {"query": NAN_Q},
        r"`query` holds a non-finite number \(nan\) at index \(0, 0\)\. Only finite numbers",
    ),
    (
        "inf-in-key",
        {"key": [[1, 2], [3, np.inf], [5, 6]]},
        r"`key` holds a non-finite number \(inf\) at index \(1, 1\)",
    ),
    (
        "minus-inf-in-value",
        {"value": [[1], [-np.inf], [3]]},
        r"`value` holds a non-finite number \(-inf\) at index \(1, 0\)",
    ),
    (
        "huge-in-query",
        {"query": [[1e300, 0], [0, 1]]},
        r"`query` holds a number too large to compute with \(1e\+300\)\. .*at most 1e\+15",
    ),
    ("empty-list", {"query": []}, r"`query` must be 2-D or 3-D .*Received shape \(0,\)"),
    (
        "empty-rows",
        {"key": np.zeros((0, 2))},
        r"`key` is empty: shape \(0, 2\)\. Give at least one row and one column\.",
    ),
    ("one-by-zero", {"value": [[]]}, r"`value` is empty: shape \(1, 0\)"),
    ("vector", {"query": [1, 0]}, r"`query` must be 2-D or 3-D .*Received shape \(2,\)"),
    ("4d", {"query": np.zeros((1, 1, 2, 2))}, r"Received shape \(1, 1, 2, 2\)"),
    (
        "ragged",
        {"query": [[1, 2], [3]]},
        r"`query` could not be read as a matrix: its rows have different lengths",
    ),
    ("text", {"query": ["a", "b"]}, r"`query` must hold numbers only\. Received: \['a', 'b'\]"),
    (
        "text-in-rows",
        {"key": [["1", "2"], ["3", "4"], ["5", "x"]]},
        r"`key` must hold numbers only",
    ),
    ("missing", {"value": None}, r"`value` is missing\."),
    ("complex", {"query": np.array(Q2, dtype=complex)}, r"`query` must hold real numbers"),
    (
        "unknown-score",
        {"score": "cosine"},
        r'`score` must be one of "dot", "general", "concat"\. Received: \'cosine\'\.',
    ),
    (
        "unknown-mask-value",
        {"mask_value": "-1e4"},
        r'`mask_value` must be one of "-inf", "-1e9"\. Received: \'-1e4\'\.',
    ),
    ("mask-value-float", {"mask_value": -1e9}, r"`mask_value` must be one of"),
    ("negative-window", {"window": -1}, r"`window` must be 0 or more\. Received: -1\."),
    ("non-int-window", {"window": 1.5}, r"`window` must be a whole number\. Received: 1\.5\."),
    (
        "too-large-batch",
        {
            "query": np.zeros((1025, 1, 1)),
            "key": np.zeros((1025, 1, 1)),
            "value": np.zeros((1025, 1, 1)),
        },
        r"The batch is too large: 1,025 sequences; the limit is 1,024\. Use fewer sequences\.",
    ),
    (
        "too-many-cells",  # memory's limit, not a page's: 16,385² cells of float32 > 1 GiB
        {
            "query": np.zeros((16385, 1)),
            "key": np.zeros((16385, 1)),
            "value": np.zeros((16385, 1)),
        },
        r"^Too many attention cells: 1 sequence × 16,385 queries × 16,385 keys = 268,468,225; "
        r"the limit is 268,435,456 \(the memory limit: each stage is one array of float32\)\. "
        r"Use fewer or shorter sequences\.$",
    ),
    (
        "batch-mismatch",
        {"query": np.zeros((2, 2, 2)), "key": np.zeros((3, 3, 2)), "value": np.zeros((3, 3, 1))},
        r"must have the same batch size\. Received: query \(2, 2, 2\), key \(3, 3, 2\)",
    ),
    (
        "mixed-batch-ranks",
        {"query": np.zeros((1, 2, 2))},
        r"must all have a batch axis or none\. Received shapes query \(1, 2, 2\), key \(3, 2\)",
    ),
    (
        "params-wrong-shape",
        {"score": "general", "params": {"W": np.ones((3, 2))}},
        r"`params\['W'\]` must have shape \(2, 2\)\. Received shape \(3, 2\)\.",
    ),
    (
        "params-unknown-name",
        {"score": "concat", "params": {"W": np.ones((2, 2))}},
        r'`params` has weights that score="concat" does not use: W\. Allowed: W_q, W_k, v, b\.',
    ),
    ("params-for-dot", {"params": {"W": np.ones((2, 2))}}, r"Allowed: none\."),
    (
        "params-nan",
        {"score": "general", "params": {"W": [[np.nan, 0], [0, 1]]}},
        r"`params\['W'\]` holds a non-finite number \(nan\)",
    ),
    ("negative-seed", {"seed": -1}, r"`seed` must be from 0 to 4294967295\. Received: -1\."),
    ("huge-seed", {"seed": 2**32}, r"`seed` must be from 0 to 4294967295"),
    ("non-int-seed", {"seed": 0.5}, r"`seed` must be a whole number\. Received: 0\.5\."),
    ("scale-yes", {"scale": "yes"}, r"`scale` must be True or False\. Received: 'yes'\."),
    ("causal-one", {"causal": 1}, r"`causal` must be True or False\. Received: 1\."),
]


@pytest.mark.parametrize(
    ("overrides", "match"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS]
)
def test_validation_errors(overrides, match):
    kwargs = {"query": Q2, "key": K3, "value": V3, **overrides}
    with pytest.raises(ValueError, match=match):
        compute_attention(**kwargs)


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"query": [[1, 2, 3]]}, r"Received: query \(1, 3\), key \(3, 2\), value \(3, 1\)"),
        ({"value": [[1], [2]]}, r"Received: query \(2, 2\), key \(3, 2\), value \(2, 1\)"),
    ],
    ids=["dot-dq-ne-dk", "value-rows-ne-key-rows"],
)
def test_shape_errors_report_the_shapes_given(overrides, match):
    with pytest.raises(ValueError, match=match):
        compute_attention(**{"query": Q2, "key": K3, "value": V3, **overrides})


@pytest.mark.parametrize("params", [[1, 2], 5], ids=["list", "int"])
def test_params_must_be_a_mapping(params):
    with pytest.raises(ValueError, match=r"`params`"):
        compute_attention(Q2, K3, V3, score="general", params=params)


@pytest.mark.parametrize(
    ("query", "w"),
    [(Q2, 1e300), ([[1e15, 0], [0, 1e15]], 1e30)],
    ids=["W-overflows-float32", "scores-overflow"],
)
def test_huge_params_are_rejected_or_give_finite_weights(query, w):
    try:
        result = compute_attention(query, K3, V3, score="general", params={"W": np.full((2, 2), w)})
    except ValueError:
        return
    assert np.isfinite(result.weights).all()


def test_dot_scores_of_the_largest_allowed_inputs_stay_finite():
    # compute_attention skips the overflow check for dot scores: |q·k| <= D * MAX_ABS_VALUE**2,
    # and no row has more than MAX_ARRAY_CELLS features: 2.7e38 < float32's 3.4e38 (pinned in
    # test_limits). Here 4096 features of the largest magnitude, past the pages' 1024.
    from attnviz.core.limits import MAX_ABS_VALUE

    big = np.full((2, 4096), MAX_ABS_VALUE)
    result = compute_attention(big, big, np.ones((2, 1)), scale=False)
    assert np.isfinite(result.scores).all()
    assert result.raw_scores[0, 0] == pytest.approx(4096 * MAX_ABS_VALUE**2, rel=1e-5)


# --- real models' sizes: any number of tokens and features, up to memory ----------------------


def _float64_attention(q, k, v, causal=False):
    """Scaled dot-product attention in float64 numpy, the reference."""
    scores = q @ k.T / np.sqrt(q.shape[1])  # (T, D) x (D, S) -> (T, S)
    if causal:
        scores = np.where(np.tri(*scores.shape, dtype=bool), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights, weights @ v  # (T, S), (T, Dv)


@pytest.mark.parametrize(("t", "s"), [(5000, 7), (7, 5000)], ids=["queries", "keys"])
def test_more_tokens_than_a_page_takes_equal_float64_numpy(t, s):
    # 5000 queries or keys: past the pages' 4096 (APP_MAX_TOKENS), far within memory
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(t, 2)), rng.normal(size=(s, 2)), rng.normal(size=(s, 3))
    result = compute_attention(q, k, v, causal=True)
    weights, output = _float64_attention(q, k, v, causal=True)
    assert result.weights.shape == (t, s)
    np.testing.assert_allclose(result.weights, weights, atol=1e-6)
    np.testing.assert_allclose(result.output, output, atol=1e-5)


def test_more_features_than_a_page_takes_equal_float64_numpy():
    rng = np.random.default_rng(6)
    q, k, v = (rng.normal(size=(3, 2048)) for _ in range(3))  # 2048 > the pages' 1024
    result = compute_attention(q, k, v)
    weights, output = _float64_attention(q, k, v)
    np.testing.assert_allclose(result.weights, weights, atol=1e-5)
    np.testing.assert_allclose(result.output, output, atol=1e-4)
    assert result.d_k == 2048 and result.scale_factor == pytest.approx(2048**-0.5)


def test_an_input_too_large_for_memory_is_named_before_anything_is_allocated():
    from attnviz.core.attention import _check_shapes

    wide = (1, 2, 2**28 + 1)  # one row more than 1 GiB of float32 holds
    with pytest.raises(ValueError, match=re.escape(
        "Too large to hold in memory: `query` (sequences × tokens × features) would have 1 × 2 × "
        "268,435,457 = 536,870,914 numbers; the limit is 268,435,456 per array (1 GiB of "
        "float32). Use fewer or shorter sequences, or fewer features."
    )):  # fmt: skip
        _check_shapes(wide, (1, 2, 2**28 + 1), (1, 2, 1), same_qk_width=True)


# --- the compiled dot-product path --------------------------------------------------------------


@pytest.mark.parametrize("mask_value", ["-inf", "-1e9"])
@pytest.mark.parametrize("scale", [True, False])
def test_compiled_dot_path_equals_the_eager_layers_for_any_size(scale, mask_value):
    # one graph per (scale, masked, mask value) serves every size: no retracing as sizes change
    rng = np.random.default_rng(7)
    graphs = []
    for t, s, d in [(3, 5, 2), (17, 9, 7), (64, 64, 64)]:
        q, k, v = (
            rng.standard_normal((1, n, w)).astype(np.float32) for n, w in ((t, d), (s, d), (s, 3))
        )
        result = compute_attention(q, k, v, causal=True, scale=scale, mask_value=mask_value)
        layer = make_score_layer("dot", d, d, scale=scale, params={})
        scores = layer(q, k)  # eager, static shapes
        masked, weights, output = attention_stages(scores, result.mask, v, mask_value)
        np.testing.assert_allclose(result.scores, np.asarray(scores), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(result.weights, np.asarray(weights), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(result.output, np.asarray(output), rtol=1e-5, atol=1e-6)
        graphs.append(dict(attention_module._COMPILED))
    assert (scale, True, mask_value) in graphs[0]
    assert all(g == graphs[0] for g in graphs)  # the same graph objects served every size


# --- the kept layers of the learned scores ------------------------------------------------------


def _learned_problem(seed: int, kind: str, t: int = 4, s: int = 5, dq: int = 3, dk: int = 2):
    """Q, K, V and freshly drawn weights for a `kind` ("general", "concat") problem."""
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(t, dq)), rng.normal(size=(s, dk)), rng.normal(size=(s, 2))
    shapes = {"general": {"W": (dq, dk)}, "concat": {"W_q": (dq, 3), "W_k": (dk, 3), "v": (3,)}}
    params = {name: rng.normal(size=shape) for name, shape in shapes[kind].items()}
    return q, k, v, params


@pytest.mark.parametrize("kind", ["general", "concat"])
def test_learned_scores_use_each_call_s_weights_on_a_kept_layer(kind):
    # the same kind and shapes reuse one layer: each call must still score with its own weights
    problems = [_learned_problem(seed, kind) for seed in (1, 2, 1, 3, 2)]
    layers = []
    for q, k, v, params in problems:
        result = compute_attention(q, k, v, score=kind, causal=True, params=params)
        expected = reference_attention(q, k, v, score=kind, scale=True, causal=True, params=params)
        _assert_matches_reference(result, expected)
        key = attention_module._learned_key(kind, True, q.shape[-1], k.shape[-1], params)
        layers.append(attention_module._LEARNED_LAYERS[key])
    assert all(layer is layers[0] for layer in layers)  # one layer served the five calls


def test_kept_learned_layers_are_bounded_and_evicted_layers_are_rebuilt():
    limit = attention_module._LEARNED_LAYERS_KEPT
    problems = [
        _learned_problem(0, "general", dq=dq, dk=dk)
        for dq in (1, 2, 3, 4, 5)
        for dk in (1, 2, 3, 4)
    ]
    for q, k, v, params in problems + problems[:3]:  # 20 shapes, then the first three again
        result = compute_attention(q, k, v, score="general", params=params)
        expected = reference_attention(q, k, v, score="general", scale=True, params=params)
        _assert_matches_reference(result, expected)
        assert len(attention_module._LEARNED_LAYERS) <= limit


def test_threads_scoring_with_different_weights_get_their_own_results():
    problems = [_learned_problem(seed, kind) for seed in range(6) for kind in ("general", "concat")]
    kinds = ["general", "concat"] * 6

    def run(i: int) -> np.ndarray:
        q, k, v, params = problems[i % len(problems)]
        return compute_attention(q, k, v, score=kinds[i % len(kinds)], params=params).output

    alone = [run(i) for i in range(len(problems))]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        together = list(pool.map(run, range(len(problems) * 4)))
    for i, output in enumerate(together):
        np.testing.assert_array_equal(output, alone[i % len(problems)])


# --- settings= or the keywords (AttentionSettings declares them once) -------------------------


def test_a_settings_object_gives_what_its_keywords_give():
    from attnviz.core.settings import AttentionSettings

    rules = {"score": "general", "scale": False, "causal": True, "window": 1, "seed": 3}
    by_keywords = compute_attention(LAB_Q, LAB_K, LAB_V, **rules)
    settings = AttentionSettings(**rules)
    by_settings = compute_attention(LAB_Q, LAB_K, LAB_V, settings=settings)
    np.testing.assert_array_equal(by_settings.weights, by_keywords.weights)
    assert by_settings.settings is settings and by_keywords.settings == settings


def test_settings_and_keywords_together_are_refused():
    from attnviz.core.settings import AttentionSettings

    with pytest.raises(ValueError, match=re.escape(
        "`compute_attention` takes `settings=` or the attention keywords, not both. Received "
        "`settings` and `causal`."
    )):  # fmt: skip
        compute_attention(LAB_Q, LAB_K, LAB_V, settings=AttentionSettings(), causal=True)


def test_an_unknown_keyword_names_every_attention_keyword():
    with pytest.raises(TypeError, match=re.escape(
        "`compute_attention` got an unknown keyword `casual`. Its attention keywords are: "
        "score, scale, causal, window, mask_value, seed, sinks, documents, prefix, chunk, "
        "position, rope_theta, alibi_heads, alibi_head (the fields of AttentionSettings"
    )):  # fmt: skip
        compute_attention(LAB_Q, LAB_K, LAB_V, casual=True)
