"""Tests for multihead: every head against Keras's MultiHeadAttention and float64 numpy."""

import keras
import numpy as np
import pytest
from reference import reference_attention

from attnviz.core.attention import compute_attention
from attnviz.inputs.text import encode_sentences
from attnviz.transformer.multihead import compute_multihead

RNG = np.random.default_rng(7)


def _keras_mha(params, num_heads, d_k, d_v, d_model):
    """A Keras MultiHeadAttention (no biases) holding our weights in its own layout."""
    layer = keras.layers.MultiHeadAttention(
        num_heads=num_heads, key_dim=d_k, value_dim=d_v, use_bias=False
    )
    layer.build((None, None, d_model), (None, None, d_model))
    layer.query_dense.kernel.assign(params["W_Q"].transpose(1, 0, 2))  # (H, D, Dk) -> (D, H, Dk)
    layer.key_dense.kernel.assign(params["W_K"].transpose(1, 0, 2))
    layer.value_dense.kernel.assign(params["W_V"].transpose(1, 0, 2))  # (D, H, Dv)
    layer.output_dense.kernel.assign(params["W_O"].reshape(num_heads, d_v, d_model))  # (H, Dv, D)
    return layer


KERAS_CASES = [
    pytest.param({}, "-inf", id="no_mask"),
    pytest.param({"causal": True}, "-inf", id="causal"),
    pytest.param({"key_padding_mask": [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]}, "-inf", id="padding"),
    pytest.param(
        {"causal": True, "key_padding_mask": [[0, 1, 1, 1, 1], [1, 1, 0, 1, 1]]},
        "-inf",  # query 0 of sequence 0 has no allowed key: Keras 3 zeros it, as "-inf" does
        id="causal_padding_fully_masked_row",
    ),
    pytest.param({"window": 1}, "-inf", id="window"),
]


@pytest.mark.parametrize(("masks", "mask_value"), KERAS_CASES)
@pytest.mark.parametrize(
    ("d_model", "num_heads", "d_k", "d_v"),
    [(8, 2, None, None), (6, 3, 4, 5), (12, 4, 3, 3)],
    ids=["8d_2h", "6d_3h_dk4_dv5", "12d_4h"],
)
def test_every_head_matches_keras_multihead_attention(
    masks, mask_value, d_model, num_heads, d_k, d_v
):
    query = RNG.standard_normal((2, 5, d_model))
    source = RNG.standard_normal((2, 5, d_model))
    ours = compute_multihead(
        query, source, source, num_heads=num_heads, d_k=d_k, d_v=d_v, mask_value=mask_value,
        seed=3, **masks,
    )  # fmt: skip
    layer = _keras_mha(ours.params, num_heads, ours.d_k, ours.d_v, d_model)
    out, weights = layer(
        query, source, source, attention_mask=ours.mask, return_attention_scores=True
    )  # (B, T, D), (B, H, T, S)
    weights = np.asarray(weights)
    assert weights.shape == ours.weights.shape == (2, num_heads, 5, 5)
    for h in range(num_heads):
        np.testing.assert_allclose(
            ours.weights[:, h], weights[:, h], atol=1e-6, err_msg=f"head {h}"
        )
    np.testing.assert_allclose(ours.output, np.asarray(out), atol=1e-5)


def test_keras_zeros_fully_masked_rows_where_minus_1e9_gives_uniform_rows():
    # Keras 3's masked Softmax adds -1e9 but then zeros the masked cells, so a row with no
    # allowed key is all zeros, like our "-inf"; our "-1e9" (the tutorials' arithmetic) is uniform.
    x = RNG.standard_normal((1, 3, 4))
    padding = [[0, 0, 1]]
    kwargs = {"num_heads": 2, "causal": True, "key_padding_mask": padding, "seed": 1}
    tutorial = compute_multihead(x, x, x, mask_value="-1e9", **kwargs)
    layer = _keras_mha(tutorial.params, 2, 2, 2, 4)
    _, weights = layer(x, x, x, attention_mask=tutorial.mask, return_attention_scores=True)
    weights = np.asarray(weights)  # (B, H, T, S); queries 0 and 1 see no key
    np.testing.assert_array_equal(weights[0, :, :2], 0.0)
    np.testing.assert_allclose(tutorial.weights[0, :, :2], 1 / 3, atol=1e-6)
    np.testing.assert_allclose(tutorial.weights[0, :, 2], weights[0, :, 2], atol=1e-6)


def test_unbatched_inputs_match_keras_and_drop_the_batch_axis():
    query, source = RNG.standard_normal((3, 4)), RNG.standard_normal((6, 4))
    ours = compute_multihead(
        query, source, source, num_heads=2, key_padding_mask=[1, 1, 1, 1, 0, 0]
    )
    layer = _keras_mha(ours.params, 2, 2, 2, 4)
    out, weights = layer(
        query[None], source[None], source[None], attention_mask=ours.mask[None],
        return_attention_scores=True,
    )  # fmt: skip
    assert ours.weights.shape == (2, 3, 6) and ours.mask.shape == (3, 6)
    assert ours.output.shape == (3, 4) and ours.concat.shape == (3, 4)
    np.testing.assert_allclose(ours.weights, np.asarray(weights)[0], atol=1e-6)
    np.testing.assert_allclose(ours.output, np.asarray(out)[0], atol=1e-5)


def test_tiny_case_matches_a_float64_numpy_reference():
    query, source = RNG.standard_normal((1, 3, 4)), RNG.standard_normal((1, 4, 4))
    padding = [[1, 1, 1, 0]]
    ours = compute_multihead(
        query, source, source, num_heads=2, causal=True, key_padding_mask=padding, seed=5
    )
    p = {name: w.astype(np.float64) for name, w in ours.params.items()}
    heads = [
        reference_attention(
            query @ p["W_Q"][h],
            source @ p["W_K"][h],
            source @ p["W_V"][h],
            causal=True,
            padding=np.array(padding, bool),
        )  # fmt: skip
        for h in range(2)
    ]
    concat = np.concatenate([ref.output for ref in heads], axis=-1)  # (B, T, H·Dv)
    for h, ref in enumerate(heads):
        np.testing.assert_allclose(ours.weights[:, h], ref.weights, atol=1e-6)
        np.testing.assert_allclose(ours.scores[:, h], ref.scores, atol=1e-5)
    np.testing.assert_allclose(ours.concat, concat, atol=1e-5)
    np.testing.assert_allclose(ours.output, concat @ p["W_O"], atol=1e-5)


def test_hand_computed_two_heads():
    # Head h reads feature h; with Dk = 1 the scale is 1. Head 0: scores [1, 0] -> softmax
    # [0.731, 0.269]; head 1: scores [0, 0] -> [0.5, 0.5]. W_O = identity passes concat through.
    params = {
        "W_Q": [[[1], [0]], [[0], [1]]],  # (H=2, D=2, Dk=1)
        "W_K": [[[1], [0]], [[0], [1]]],
        "W_V": [[[1], [0]], [[0], [1]]],
        "W_O": np.eye(2),
    }
    source = [[1.0, 0.0], [0.0, 1.0]]
    result = compute_multihead([[1.0, 0.0]], source, source, num_heads=2, params=params)
    np.testing.assert_allclose(result.weights, [[[0.731, 0.269]], [[0.5, 0.5]]], atol=1e-3)
    np.testing.assert_allclose(result.head_average, [[0.6155, 0.3845]], atol=1e-3)
    np.testing.assert_allclose(result.head_outputs, [[[0.731]], [[0.5]]], atol=1e-3)
    np.testing.assert_allclose(result.output, [[0.731, 0.5]], atol=1e-3)


def test_one_head_equals_single_head_attention_on_projected_inputs():
    query, source = RNG.standard_normal((2, 4, 6)), RNG.standard_normal((2, 5, 6))
    result = compute_multihead(query, source, source, num_heads=1, causal=True, seed=9)
    p = result.params
    single = compute_attention(
        query @ p["W_Q"][0], source @ p["W_K"][0], source @ p["W_V"][0], causal=True
    )
    np.testing.assert_allclose(result.weights[:, 0], single.weights, atol=1e-6)
    np.testing.assert_allclose(result.head_outputs[:, 0], single.output, atol=1e-5)
    np.testing.assert_allclose(result.output, single.output @ p["W_O"], atol=1e-5)
    np.testing.assert_array_equal(result.mask, single.mask)


def test_one_head_uses_the_projections_of_encode_sentences():
    encoded = encode_sentences(["the cat sat"], d_model=8, d_k=8, seed=4)
    result = compute_multihead(encoded.inputs, encoded.inputs, encoded.inputs, num_heads=1, seed=4)
    np.testing.assert_allclose(result.query_heads[:, 0], encoded.query, atol=1e-5)
    np.testing.assert_allclose(result.value_heads[:, 0], encoded.value, atol=1e-5)


def test_invariants_head_average_rows_and_masked_zeros():
    query = RNG.standard_normal((2, 4, 8))
    padding = [[1, 1, 1, 0], [0, 1, 1, 1]]
    result = compute_multihead(
        query, query, query, num_heads=4, causal=True, key_padding_mask=padding
    )
    np.testing.assert_allclose(result.head_average, result.weights.mean(axis=1), atol=1e-7)
    assert np.all(result.weights[np.broadcast_to(~result.mask[:, None], result.weights.shape)] == 0)
    row_sums = result.weights.sum(axis=-1)  # (B, H, T)
    expected = np.broadcast_to(~result.fully_masked[:, None], row_sums.shape).astype(float)
    np.testing.assert_allclose(row_sums, expected, atol=1e-6)  # 1, or 0 for query 0 of row 1
    assert result.fully_masked.tolist() == [[False] * 4, [True, False, False, False]]
    assert result.concat.shape == (2, 4, 8) and result.output.shape == (2, 4, 8)
    assert result.weights.dtype == np.float32 and not result.weights.flags.writeable


def test_weights_are_reproducible_and_given_ones_are_kept():
    x = RNG.standard_normal((3, 8))
    first, again = (compute_multihead(x, x, x, num_heads=2, seed=1) for _ in range(2))
    other = compute_multihead(x, x, x, num_heads=2, seed=2)
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        np.testing.assert_array_equal(first.params[name], again.params[name])
        assert not np.array_equal(first.params[name], other.params[name])
    w_o = np.eye(8)
    mixed = compute_multihead(x, x, x, num_heads=2, seed=1, params={"W_O": w_o})
    np.testing.assert_array_equal(mixed.params["W_Q"], first.params["W_Q"])
    np.testing.assert_array_equal(mixed.params["W_O"], w_o)
    np.testing.assert_allclose(mixed.output, mixed.concat, atol=1e-7)


X8 = np.ones((3, 8))
ERROR_CASES = [
    pytest.param({"num_heads": 0}, r"`num_heads` must be from 1 to 16\. Received: 0\.", id="h0"),
    pytest.param({"num_heads": 17}, r"`num_heads` must be from 1 to 16\. Received: 17", id="h17"),
    pytest.param({"num_heads": 2.0}, r"`num_heads` must be a whole number", id="h_float"),
    pytest.param(
        {"num_heads": 3},
        r"d_model must be divisible by `num_heads`.*Received: d_model=8 \(columns of `query`\), "
        r"num_heads=3\. Allowed num_heads for d_model=8: 1, 2, 4, 8\.",
        id="not_divisible",
    ),
    pytest.param(
        {"num_heads": 2, "key": np.ones((3, 6))},
        r"same number of columns \(d_model\).*query 8, key 6, value 8\.",
        id="key_columns",
    ),
    pytest.param(
        {
            "num_heads": 16,
            "d_k": 65,
            "query": np.ones((3, 16)),
            "key": np.ones((3, 16)),
            "value": np.ones((3, 16)),
        },
        r"`d_k` is too large: 16 heads × 65 = 1040 .*limit is 1024.*at most 64 per head",
        id="d_k_too_large",
    ),
    pytest.param(
        {"num_heads": 2, "d_v": 0}, r"`d_v` must be 1 or more\. Received: 0\.", id="d_v_0"
    ),
    pytest.param(
        {"num_heads": 2, "params": {"W": np.eye(8)}},
        r"`params` has weights that multi-head attention does not use: W\. "
        r"Allowed: W_Q, W_K, W_V, W_O\.",
        id="unknown_param",
    ),
    pytest.param(
        {"num_heads": 2, "params": {"W_Q": np.ones((8, 8))}},
        r"`params\['W_Q'\]` must have shape \(2, 8, 4\)\. Received shape \(8, 8\)\.",
        id="param_shape",
    ),
    pytest.param(
        {
            "num_heads": 2,
            "query": np.ones((4096, 2)),
            "key": np.ones((4096, 2)),
            "value": np.ones((4096, 2)),
        },
        r"Too many attention cells: 1 sequences × 2 heads × 4096 queries × 4096 keys",
        id="too_many_cells",
    ),  # fmt: skip
    pytest.param(
        {"num_heads": 2, "mask_value": "0"}, r"`mask_value` must be one of", id="mask_value"
    ),
]


@pytest.mark.parametrize(("kwargs", "message"), ERROR_CASES)
def test_invalid_input_is_rejected_with_a_helpful_message(kwargs, message):
    kwargs, arrays = dict(kwargs), {"query": X8, "key": X8, "value": X8}
    arrays.update({k: kwargs.pop(k) for k in list(kwargs) if k in arrays})
    with pytest.raises(ValueError, match=message):
        compute_multihead(**arrays, **kwargs)
