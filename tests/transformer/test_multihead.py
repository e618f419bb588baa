"""Tests for multihead: every head against Keras's MultiHeadAttention and float64 numpy."""

import keras
import numpy as np
import pytest
from reference import reference_alibi, reference_attention, reference_rope

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
    pytest.param({"num_heads": 0}, r"`num_heads` must be 1 or more\. Received: 0\.", id="h0"),
    pytest.param(
        {"num_heads": 2**28 + 1},
        r"`num_heads` is too large: every head scores at least one attention cell and the limit "
        r"is 268,435,456 cells \(the memory the weights take\)\. Received: 268,435,457\.",
        id="h_past_memory",
    ),
    pytest.param({"num_heads": 2.0}, r"`num_heads` must be a whole number", id="h_float"),
    pytest.param(
        {"num_heads": 3},
        r"d_model must be divisible by `num_heads` when `d_k` or `d_v` is not given.*Received: "
        r"d_model=8 \(columns of `query`\), num_heads=3\. Allowed num_heads for d_model=8: 1, 2, "
        r"4, 8; or give `d_k` and `d_v` \(any head size",
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
            "d_k": 2**28 + 1,
            "d_v": 4,
            "query": np.ones((3, 16)),
            "key": np.ones((3, 16)),
            "value": np.ones((3, 16)),
        },
        r"`d_k` is too large to hold in memory: no array holds more than 268,435,456 numbers "
        r"\(1 GiB of float32\), so no more features than that\. Received: 268,435,457\.",
        id="d_k_past_memory",
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
            "query": np.ones((12000, 2)),
            "key": np.ones((12000, 2)),
            "value": np.ones((12000, 2)),
        },
        r"^Too many attention cells: 1 sequence × 2 heads × 12,000 queries × 12,000 keys = "
        r"288,000,000; the limit is 268,435,456 \(the memory limit[^)]*\)\. Use fewer heads",
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


# --- grouped K/V heads (GQA, MQA), positions and the new mask rules -----------------------------


def _keras_gqa(params, num_heads, num_kv_heads, head_dim, d_model):
    """Keras's GroupQueryAttention (no biases) holding our weights in its own layout."""
    layer = keras.layers.GroupQueryAttention(
        head_dim=head_dim,
        num_query_heads=num_heads,
        num_key_value_heads=num_kv_heads,
        use_bias=False,
        flash_attention=False,
    )
    layer.build((None, None, d_model), (None, None, d_model))
    layer._query_dense.kernel.assign(params["W_Q"].transpose(1, 0, 2))  # (H, D, Dk) -> (D, H, Dk)
    layer._key_dense.kernel.assign(params["W_K"].transpose(1, 0, 2))  # (G, D, Dk) -> (D, G, Dk)
    layer._value_dense.kernel.assign(params["W_V"].transpose(1, 0, 2))  # (D, G, Dv)
    layer._output_dense.kernel.assign(params["W_O"].reshape(num_heads, head_dim, d_model))
    return layer


@pytest.mark.parametrize(
    "masks",
    [{}, {"causal": True}, {"key_padding_mask": [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]},
     {"causal": True, "window": 1, "sinks": 1}, {"documents": (2, 3)}],
    ids=["no_mask", "causal", "padding", "sliding_window_with_sink", "documents"],
)  # fmt: skip
@pytest.mark.parametrize(
    ("num_heads", "num_kv_heads", "d_model"),
    [(4, 4, 8), (4, 2, 8), (4, 1, 8), (6, 3, 12), (6, 2, 6)],
    ids=["mha", "gqa_4q_2kv", "mqa", "gqa_6q_3kv", "gqa_6q_2kv_d1"],
)
def test_grouped_heads_match_keras_group_query_attention(num_heads, num_kv_heads, d_model, masks):
    query = RNG.standard_normal((2, 5, d_model))
    source = RNG.standard_normal((2, 5, d_model))
    ours = compute_multihead(
        query, source, source, num_heads=num_heads, num_kv_heads=num_kv_heads, seed=4, **masks
    )
    layer = _keras_gqa(ours.params, num_heads, num_kv_heads, ours.d_k, d_model)
    out, weights = layer(
        query, source, source, attention_mask=ours.mask, return_attention_scores=True
    )  # (B, T, D), (B, H, T, S)
    np.testing.assert_allclose(ours.weights, np.asarray(weights), atol=1e-6)
    np.testing.assert_allclose(ours.output, np.asarray(out), atol=1e-5)
    assert ours.num_kv_heads == num_kv_heads
    assert ours.params["W_K"].shape == (num_kv_heads, d_model, ours.d_k)
    assert ours.shared_key_heads.shape == (2, num_kv_heads, 5, ours.d_k)


# Real models' sizes: many query heads on fewer K/V heads, with a head size independent of the
# width (Keras's `head_dim`), so that H·Dk != D and D need not be divisible by H.
REAL_SIZES = [  # (H, G, Dk, D)
    pytest.param(32, 8, 4, 48, id="32q_8kv_dk4_width48"),  # 48 % 32 != 0, H·Dk = 128
    pytest.param(40, 8, 3, 50, id="40q_8kv_dk3_width50"),  # 40 heads, as Llama 2 13B
    pytest.param(64, 16, 32, 24, id="64q_16kv_dk32_width24"),  # H·Dk = 2048 > 1024 features
    pytest.param(128, 8, 2, 12, id="128q_8kv_dk2_width12"),  # Llama 3.1 405B's 128 heads
    pytest.param(32, 8, 2, 4096, id="32q_8kv_dk2_width4096"),  # Llama 3 8B's width, > 1024
]


@pytest.mark.parametrize(("num_heads", "num_kv_heads", "head_dim", "d_model"), REAL_SIZES)
def test_many_heads_and_free_head_sizes_match_keras_group_query_attention(
    num_heads, num_kv_heads, head_dim, d_model
):
    query = RNG.standard_normal((2, 4, d_model))
    source = RNG.standard_normal((2, 4, d_model))
    ours = compute_multihead(
        query, source, source, num_heads=num_heads, num_kv_heads=num_kv_heads, d_k=head_dim,
        d_v=head_dim, causal=True, key_padding_mask=[[1, 1, 1, 0], [1, 1, 1, 1]], seed=3,
    )  # fmt: skip
    layer = _keras_gqa(ours.params, num_heads, num_kv_heads, head_dim, d_model)
    out, weights = layer(
        query, source, source, attention_mask=ours.mask, return_attention_scores=True
    )  # (B, T, D), (B, H, T, S)
    assert ours.weights.shape == (2, num_heads, 4, 4) and ours.output.shape == (2, 4, d_model)
    # float32 projections summing D products: the rounding grows with the width (1e-6 at 4096)
    np.testing.assert_allclose(ours.weights, np.asarray(weights), rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(ours.output, np.asarray(out), rtol=1e-5, atol=1e-5)
    assert ours.concat.shape == (2, 4, num_heads * head_dim)
    assert ours.costs.param_count == d_model * head_dim * (2 * num_heads + 2 * num_kv_heads)


def test_a_width_not_divisible_by_the_heads_matches_keras_multihead_attention():
    x = RNG.standard_normal((2, 3, 10))  # D = 10 with 4 heads of Dk = 3, Dv = 5
    ours = compute_multihead(x, x, x, num_heads=4, d_k=3, d_v=5, causal=True, seed=8)
    out, weights = _keras_mha(ours.params, 4, 3, 5, 10)(
        x, x, attention_mask=ours.mask, return_attention_scores=True
    )
    np.testing.assert_allclose(ours.weights, np.asarray(weights), atol=1e-6)
    np.testing.assert_allclose(ours.output, np.asarray(out), atol=1e-5)


def test_the_weights_of_the_largest_models_are_within_the_memory_limit():
    from attnviz.transformer.multihead import _check_head_sizes

    # Llama 3.1 405B: D = 16384, 128 query heads on 8 K/V heads of 128 features (W_Q: 2**28)
    assert _check_head_sizes(16384, 128, 128, 128, 8) == (128, 128)
    with pytest.raises(ValueError, match=r"the weight W_O \(heads × D × size\) would have 128 × "
                       r"16,384 × 129 = 270,532,608 numbers; the limit is 268,435,456 per array "
                       r"\(1 GiB of float32\)\. Use fewer heads"):  # fmt: skip
        _check_head_sizes(16384, 128, 128, 129, 8)


def test_the_projected_heads_are_kept_within_the_memory_limit():
    x = np.ones((1, 40, 1))  # 8192 heads × 40 × 40 cells fit; their queries do not
    with pytest.raises(ValueError, match=r"the heads \(sequences × heads × tokens × features\) "
                       r"would have 1 × 8,192 × 40 × 1,024 = 335,544,320 numbers"):  # fmt: skip
        compute_multihead(x, x, x, num_heads=8192, d_k=1024, d_v=1024)


def test_query_heads_of_a_group_read_the_same_keys_and_values():
    x = RNG.standard_normal((5, 8))
    result = compute_multihead(x, x, x, num_heads=4, num_kv_heads=2)
    np.testing.assert_array_equal(result.kv_head_of, [0, 0, 1, 1])
    for h, g in enumerate(result.kv_head_of):
        np.testing.assert_array_equal(result.key_heads[h], result.shared_key_heads[g])
        np.testing.assert_array_equal(result.value_heads[h], result.shared_value_heads[g])
    assert not result.kv_head_of.flags.writeable


def test_as_many_kv_heads_as_heads_is_plain_multihead_attention():
    x = RNG.standard_normal((2, 5, 8))
    plain = compute_multihead(x, x, x, num_heads=4, causal=True, seed=2)
    same = compute_multihead(x, x, x, num_heads=4, num_kv_heads=4, causal=True, seed=2)
    for name in ("weights", "output", "key_heads", "value_heads"):
        np.testing.assert_array_equal(getattr(same, name), getattr(plain, name))
    np.testing.assert_array_equal(plain.shared_key_heads, plain.key_heads)
    np.testing.assert_array_equal(plain.kv_head_of, np.arange(4))


def test_drawn_kv_weights_are_the_first_head_of_each_group():
    x = RNG.standard_normal((3, 8))
    full = compute_multihead(x, x, x, num_heads=4, seed=9).params
    grouped = compute_multihead(x, x, x, num_heads=4, num_kv_heads=2, seed=9).params
    np.testing.assert_array_equal(grouped["W_Q"], full["W_Q"])
    np.testing.assert_array_equal(grouped["W_O"], full["W_O"])
    for name in ("W_K", "W_V"):
        np.testing.assert_array_equal(grouped[name], full[name][[0, 2]])


@pytest.mark.parametrize(
    ("num_kv_heads", "params", "cache"),
    [(4, 64 + 64 + 64 + 64, 64), (2, 64 + 32 + 32 + 64, 32), (1, 64 + 16 + 16 + 64, 16)],
    ids=["mha", "gqa", "mqa"],
)
def test_parameter_count_and_kv_cache_bytes_per_token(num_kv_heads, params, cache):
    # D = 8, H = 4, Dk = Dv = 2: W_Q 8·4·2 = 64, W_K and W_V 8·G·2 each, W_O 4·2·8 = 64;
    # the cache holds G·(Dk + Dv) float32 numbers per token: G·4·4 bytes
    x = RNG.standard_normal((3, 8))
    costs = compute_multihead(x, x, x, num_heads=4, num_kv_heads=num_kv_heads).costs
    assert costs.param_count == params
    assert costs.kv_cache_bytes_per_token == cache
    assert costs.mha_kv_cache_bytes_per_token == 64
    assert (costs.num_heads, costs.num_kv_heads) == (4, num_kv_heads)


def _reference_heads(result, query, source, *, rotate=False, theta=1e4, biases=None, **kwargs):
    """Each head's float64 reference from the weights the result used (K/V head h // (H/G))."""
    p = {name: w.astype(np.float64) for name, w in result.params.items()}
    t, s = query.shape[-2], source.shape[-2]
    heads = []
    for h, g in enumerate(result.kv_head_of):
        q, k = query @ p["W_Q"][h], source @ p["W_K"][g]
        if rotate:
            q, k = reference_rope(q, range(t), theta), reference_rope(k, range(s), theta)
        bias = None if biases is None else biases[h]
        heads.append(reference_attention(q, k, source @ p["W_V"][g], bias=bias, **kwargs))
    return heads


def test_rope_rotates_every_head_as_the_reference_does():
    x = RNG.standard_normal((6, 8))
    result = compute_multihead(
        x, x, x, num_heads=2, num_kv_heads=1, causal=True, position="rope", rope_theta=50.0
    )
    for h, ref in enumerate(_reference_heads(result, x, x, rotate=True, theta=50.0, causal=True)):
        np.testing.assert_allclose(result.weights[h], ref.weights, atol=1e-6)
        np.testing.assert_allclose(result.scores[h], ref.scores, atol=1e-5)
    np.testing.assert_allclose(
        result.rotated_query_heads[1], reference_rope(result.query_heads[1], range(6), 50.0),
        atol=1e-5,
    )  # fmt: skip
    assert result.rotated_key_heads.shape == (2, 6, 4) and result.position_bias is None


def test_alibi_gives_each_head_its_own_slope():
    x = RNG.standard_normal((5, 8))
    result = compute_multihead(x, x, x, num_heads=4, causal=True, position="alibi")
    np.testing.assert_allclose(result.alibi_slopes, [1 / 4, 1 / 16, 1 / 64, 1 / 256])
    for h in range(4):
        np.testing.assert_allclose(
            result.position_bias[h], reference_alibi(result.alibi_slopes[h], 5, 5), atol=1e-7
        )
    refs = _reference_heads(result, x, x, biases=result.position_bias, causal=True)
    for h, ref in enumerate(refs):
        np.testing.assert_allclose(result.weights[h], ref.weights, atol=1e-6)
        np.testing.assert_allclose(result.masked_scores[h], ref.masked_scores, atol=1e-5)
    assert result.settings.alibi_heads == 4


def test_new_mask_rules_reach_every_head():
    x = RNG.standard_normal((6, 4))
    result = compute_multihead(x, x, x, num_heads=2, prefix=2, documents=(4, 2), chunk=3)
    single = compute_attention(x, x, x, prefix=2, documents=(4, 2), chunk=3)
    np.testing.assert_array_equal(result.mask, single.mask)
    assert (result.weights[:, ~result.mask] == 0).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_heads": 4, "num_kv_heads": 3}, r"`num_kv_heads` must divide `num_heads`, so that "
         r"every K/V head serves the same number of query heads\. Received: num_heads=4, "
         r"num_kv_heads=3\. Allowed for 4 heads: 1, 2, 4 \(1 = multi-query, 4 = multi-head\)\."),
        ({"num_heads": 2, "num_kv_heads": 0}, r"`num_kv_heads` must be from 1 to 2\. Received: 0"),
        ({"num_heads": 4, "d_k": 3, "position": "rope"}, r"the features per head \(d_k\) must be "
         r"even\. Received: d_k=3\."),
        ({"num_heads": 2, "sinks": 9}, r"`sinks` asks for 9 sink tokens"),
    ],
    ids=["kv_heads_not_dividing", "kv_heads_zero", "rope_odd_head", "sinks_beyond"],
)  # fmt: skip
def test_bad_head_and_position_values_are_explained(kwargs, message):
    x = RNG.standard_normal((4, 8))
    with pytest.raises(ValueError, match=message):
        compute_multihead(x, x, x, **kwargs)


# --- settings= or the keywords; more features than a page takes --------------------------------


def test_a_settings_object_gives_what_its_keywords_give():
    from attnviz.core.settings import AttentionSettings

    x = RNG.standard_normal((5, 8))
    rules = {"causal": True, "window": 2, "position": "alibi", "seed": 4}
    by_keywords = compute_multihead(x, x, x, num_heads=4, **rules)
    # an explorer's one-head ALiBi choice is replaced: every head takes its own slope
    given = AttentionSettings(alibi_heads=8, alibi_head=5, **rules)
    by_settings = compute_multihead(x, x, x, num_heads=4, settings=given)
    np.testing.assert_array_equal(by_settings.weights, by_keywords.weights)
    assert by_settings.settings == by_keywords.settings == AttentionSettings(alibi_heads=4, **rules)
    with pytest.raises(ValueError, match=r"`compute_multihead` computes with score='dot' only"):
        compute_multihead(x, x, x, num_heads=4, settings=AttentionSettings(score="general"))
    with pytest.raises(TypeError, match=r"unknown keyword `alibi_head`\..*it sets alibi_head=0"):
        compute_multihead(x, x, x, num_heads=4, alibi_head=1)
    with pytest.raises(ValueError, match=r"not both\. Received `settings` and `causal`"):
        compute_multihead(x, x, x, num_heads=4, settings=given, causal=True)


def test_a_head_wider_than_a_page_takes_equals_float64_numpy():
    x = RNG.standard_normal((3, 8))  # heads of 2048 features (a page's limit is 1024)
    result = compute_multihead(x, x, x, num_heads=2, d_k=2048, d_v=2048, seed=2)
    w_q, w_k, w_v, w_o = (result.params[n].astype(np.float64) for n in ("W_Q", "W_K", "W_V", "W_O"))
    # (3, D) x (H, D, Dk) -> (H, 3, Dk); values likewise
    q, k, v = (np.einsum("td,hdk->htk", x, w) for w in (w_q, w_k, w_v))
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(2048)  # (H, 3, 3)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    concat = (weights @ v).transpose(1, 0, 2).reshape(3, 2 * 2048)  # (3, H·Dv)
    assert result.d_k == 2048
    np.testing.assert_allclose(result.weights, weights, atol=1e-5)
    np.testing.assert_allclose(result.output, concat @ w_o, rtol=1e-4, atol=1e-4)
