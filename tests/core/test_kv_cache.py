"""Tests for attnviz.core.kv_cache: token-by-token decoding with a KV cache equals full causal
attention (single head, grouped heads, RoPE, ALiBi, windows, sinks, chunks, documents), and the
cache's rows and bytes are what they should be."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_support import examples
from reference import reference_alibi, reference_attention, reference_rope

from attnviz import compute_attention
from attnviz.core.kv_cache import decode_with_cache
from attnviz.transformer.multihead import compute_multihead

RNG = np.random.default_rng(23)
TOL = {"rtol": 1e-6, "atol": 1e-6}
Q, K, V = RNG.normal(size=(9, 4)), RNG.normal(size=(9, 4)), RNG.normal(size=(9, 3))
RULES = {
    "causal": {},
    "window+sinks": {"window": 2, "sinks": 1},
    "chunk": {"chunk": 4},
    "documents": {"documents": (3, 4, 2)},
}
POSITIONS = {
    "none": {},
    "rope": {"position": "rope", "rope_theta": 20.0},
    "alibi": {"position": "alibi", "alibi_heads": 4, "alibi_head": 1},
}


@pytest.mark.parametrize("position", POSITIONS.values(), ids=list(POSITIONS))
@pytest.mark.parametrize("rules", RULES.values(), ids=list(RULES))
def test_steps_assemble_into_full_causal_attention(rules, position):
    decoded = decode_with_cache(Q, K, V, **rules, **position)
    full = compute_attention(Q, K, V, causal=True, **rules, **position)
    np.testing.assert_array_equal(decoded.visible, full.mask)
    np.testing.assert_allclose(decoded.weights[0], full.weights, **TOL)
    np.testing.assert_allclose(decoded.outputs[0], full.output, **TOL)
    assert (decoded.weights[0][~full.mask] == 0).all()  # never seen: exactly zero
    np.testing.assert_allclose(decoded.weights.sum(axis=-1), 1, atol=1e-6)


def test_steps_equal_the_float64_reference_with_rope_and_alibi():
    rope = decode_with_cache(Q, K, V, position="rope", rope_theta=20.0, window=3)
    q_rot, k_rot = reference_rope(Q, range(9), 20.0), reference_rope(K, range(9), 20.0)
    expected = reference_attention(q_rot, k_rot, V, causal=True, window=3)
    np.testing.assert_allclose(rope.weights[0], expected.weights, **TOL)
    np.testing.assert_allclose(rope.keys[0], k_rot, atol=1e-6)  # each key at its own position
    alibi = decode_with_cache(Q, K, V, position="alibi", alibi_heads=1)
    expected = reference_attention(Q, K, V, causal=True, bias=reference_alibi(2.0**-8, 9, 9))
    np.testing.assert_allclose(alibi.weights[0], expected.weights, **TOL)
    np.testing.assert_allclose(alibi.alibi_slopes, [2.0**-8])


@pytest.mark.parametrize("position", ["none", "rope", "alibi"])
@pytest.mark.parametrize("num_kv_heads", [4, 2, 1], ids=["mha", "gqa", "mqa"])
def test_grouped_heads_decode_to_compute_multihead(num_kv_heads, position):
    x = RNG.normal(size=(7, 8))
    heads = compute_multihead(
        x, x, x, num_heads=4, num_kv_heads=num_kv_heads, causal=True, window=3, sinks=1,
        position=position,
    )  # fmt: skip
    decoded = decode_with_cache(
        heads.query_heads, heads.shared_key_heads, heads.shared_value_heads, window=3, sinks=1,
        position=position,
    )  # fmt: skip
    np.testing.assert_allclose(decoded.weights, heads.weights, **TOL)
    np.testing.assert_allclose(decoded.outputs, heads.head_outputs, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(decoded.kv_head_of, heads.kv_head_of)


@pytest.mark.parametrize("position", ["none", "alibi"])
@pytest.mark.parametrize(("num_heads", "num_kv_heads"), [(32, 8), (64, 8), (128, 16)])
def test_as_many_heads_as_real_models_decode_to_compute_multihead(
    num_heads, num_kv_heads, position
):
    x = RNG.normal(size=(5, 6))  # D = 6, not divisible by H; Dk = 4, Dv = 2: H·Dk != D
    heads = compute_multihead(
        x, x, x, num_heads=num_heads, num_kv_heads=num_kv_heads, d_k=4, d_v=2, causal=True,
        position=position,
    )  # fmt: skip
    decoded = decode_with_cache(
        heads.query_heads, heads.shared_key_heads, heads.shared_value_heads, position=position
    )
    np.testing.assert_allclose(decoded.weights, heads.weights, **TOL)
    np.testing.assert_allclose(decoded.outputs, heads.head_outputs, rtol=1e-5, atol=1e-6)
    assert decoded.weights.shape == (num_heads, 5, 5)


def test_cache_rows_and_bytes_grow_by_one_token_a_step():
    # H = 4 query heads, G = 2 K/V heads, Dk = 3, Dv = 5: a token adds 2·(3 + 5)·4 = 64 bytes
    q, k, v = RNG.normal(size=(4, 4, 3)), RNG.normal(size=(2, 4, 3)), RNG.normal(size=(2, 4, 5))
    decoded = decode_with_cache(q, k, v)
    np.testing.assert_array_equal(decoded.cache_rows, [1, 2, 3, 4])
    np.testing.assert_array_equal(decoded.cache_bytes, [64, 128, 192, 256])
    np.testing.assert_array_equal(decoded.mha_cache_bytes, [128, 256, 384, 512])
    np.testing.assert_array_equal(decoded.kept_bytes, decoded.cache_bytes)  # nothing to drop


def test_a_rolling_cache_keeps_the_window_and_the_sinks():
    decoded = decode_with_cache(Q[:5], K[:5], V[:5], window=1, sinks=1)
    # step 3 sees keys 0 (sink), 2 and 3; step 4 sees 0, 3 and 4
    np.testing.assert_array_equal(decoded.kept_rows, [1, 2, 3, 3, 3])
    np.testing.assert_array_equal(decoded.step(4).visible, [True, False, False, True, True])
    chunked = decode_with_cache(Q[:5], K[:5], V[:5], chunk=2)
    np.testing.assert_array_equal(chunked.kept_rows, [1, 2, 1, 2, 1])


def test_one_step_is_the_new_query_against_the_cache_so_far():
    decoded = decode_with_cache(Q, K, V, position="rope")
    step = decoded.step(3)
    assert step.keys.shape == (1, 4, 4) and step.values.shape == (1, 4, 3)
    assert step.query.shape == (1, 4) and step.weights.shape == step.scores.shape == (1, 4)
    np.testing.assert_allclose(step.query[0], reference_rope(Q, range(9), 1e4)[3], atol=1e-6)
    scores = step.keys[0] @ step.query[0] / 2  # (t+1, Dk) x (Dk,) / sqrt(4)
    np.testing.assert_allclose(step.scores[0], scores, atol=1e-6)
    np.testing.assert_allclose(step.output[0], step.weights[0] @ V[:4], atol=1e-6)
    assert step.cache_bytes == 4 * (4 + 3) * 4
    assert not step.weights.flags.writeable


ERRORS = {
    "rows-differ": ((Q, K[:5], V[:5]), {}, r"the same number of tokens \(rows\)\. Received: "
                   r"query \(9, 4\), key \(5, 4\), value \(5, 3\)\."),
    "kv-heads": ((np.ones((4, 3, 2)), np.ones((3, 3, 2)), np.ones((3, 3, 2))), {},
                 r"dividing the 4 query heads"),
    "rope-odd": ((np.ones((3, 3)), np.ones((3, 3)), np.ones((3, 1))), {"position": "rope"},
                 r'\(Dq == Dk, an even number for position="rope"\)'),
    "ranks": ((np.ones((2, 3, 2)), np.ones((3, 2)), np.ones((3, 2))), {},
              r"must all be 2-D \(one head: tokens × features\) or all 3-D"),
    "sinks-beyond": ((Q, K, V), {"sinks": 10}, r"`sinks` asks for 10 sink tokens, but the "
                     r"sequence has only 9 keys"),
    "chunk-0": ((Q, K, V), {"chunk": 0}, r"`chunk` must be 1 or more"),
    "too-many-cells": ((np.ones((32768, 91, 1)), np.ones((1, 91, 1)), np.ones((1, 91, 1))), {},
                       r"Too many attention cells: 32,768 heads × 91 tokens × 91 cached tokens = "
                       r"271,351,808; the limit is 268,435,456 \(the memory limit: each stage is "
                       r"one array of float32\)\. Decode fewer heads or fewer tokens\."),
    "theta": ((Q, K, V), {"position": "rope", "rope_theta": -1}, r"`rope_theta` \(the RoPE base"),
}  # fmt: skip


@pytest.mark.parametrize(("inputs", "kwargs", "match"), ERRORS.values(), ids=list(ERRORS))
def test_bad_inputs_are_explained(inputs, kwargs, match):
    with pytest.raises(ValueError, match=match):
        decode_with_cache(*inputs, **kwargs)


def test_a_step_out_of_range_is_explained():
    with pytest.raises(ValueError, match=r"`t` must be a step from 0 to 8\. Received 9\."):
        decode_with_cache(Q, K, V).step(9)


@st.composite
def _sequences(draw):
    """A random sequence of 1-8 tokens, 1-2 heads per K/V head, rules and a position scheme."""
    t, kv, group = draw(st.integers(1, 8)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    q = rng.normal(size=(kv * group, t, 4))
    k, v = rng.normal(size=(kv, t, 4)), rng.normal(size=(kv, t, 3))
    cuts = sorted(draw(st.sets(st.integers(1, t - 1), max_size=3))) if t > 1 else []
    rules = {
        "window": draw(st.none() | st.integers(0, 3)),
        "sinks": draw(st.none() | st.integers(0, t)),
        "chunk": draw(st.none() | st.integers(1, 4)),
        "documents": draw(st.none() | st.just(list(np.diff([0, *cuts, t])))),
        "position": draw(st.sampled_from(["none", "rope", "alibi"])),
    }
    return q, k, v, rules


@settings(max_examples=examples(100), deadline=None)
@given(_sequences())
def test_random_sequences_decode_to_causal_multihead_rows(sequence):
    q, k, v, rules = sequence
    decoded = decode_with_cache(q, k, v, **rules)
    groups = q.shape[0] // k.shape[0]
    for h in range(q.shape[0]):
        g = h // groups
        full = compute_attention(
            q[h], k[g], v[g], causal=True, alibi_heads=q.shape[0], alibi_head=h, **rules
        )
        np.testing.assert_allclose(decoded.weights[h], full.weights, **TOL)
        np.testing.assert_allclose(decoded.outputs[h], full.output, rtol=1e-5, atol=1e-6)


# --- settings= or the keywords; real models' sizes ---------------------------------------------


def test_a_settings_object_gives_what_its_keywords_give():
    from attnviz.core.settings import AttentionSettings

    rules = {"window": 2, "sinks": 1, "position": "rope", "rope_theta": 20.0}
    by_keywords = decode_with_cache(Q, K, V, **rules)
    decoding = AttentionSettings(causal=True, **rules)
    by_settings = decode_with_cache(Q, K, V, settings=decoding)
    np.testing.assert_array_equal(by_settings.weights, by_keywords.weights)
    assert by_settings.settings == by_keywords.settings == decoding
    # an explorer's settings: its mask value and seed do not change decoding (replaced)
    other = AttentionSettings(causal=True, mask_value="-1e9", seed=4, **rules)
    np.testing.assert_array_equal(decode_with_cache(Q, K, V, settings=other).weights,
                                  by_keywords.weights)  # fmt: skip


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"causal": False}, r"`decode_with_cache` computes with causal=True only: "
         r"`settings.causal` must be True\. Received: False\. Use "
         r"dataclasses.replace\(settings, causal=True\)\."),
        ({"causal": True, "prefix": 2}, r"computes with prefix=None only"),
        ({"causal": True, "score": "concat"}, r"computes with score='dot' only"),
    ],
    ids=["not-causal", "prefix", "concat"],
)  # fmt: skip
def test_settings_decoding_cannot_follow_are_refused(settings, message):
    from attnviz.core.settings import AttentionSettings

    with pytest.raises(ValueError, match=message):
        decode_with_cache(Q, K, V, settings=AttentionSettings(**settings))


def test_keywords_decoding_sets_itself_are_unknown_and_named():
    with pytest.raises(TypeError, match=r"`decode_with_cache` got an unknown keyword `causal`\. "
                       r"Its attention keywords are: scale, window, sinks, documents, chunk, "
                       r"position, rope_theta, alibi_heads, alibi_head; it sets causal=True "
                       r"itself"):  # fmt: skip
        decode_with_cache(Q, K, V, causal=True)


def test_more_tokens_and_features_than_a_page_takes():
    rng = np.random.default_rng(9)
    q, k, v = (rng.normal(size=(4100, 1)) for _ in range(3))
    decoded = decode_with_cache(q, k, v, window=3)  # 4100 tokens: past a page's 4096
    for t in (4096, 4099):  # row t sees keys t - 3 … t, in float64 numpy
        seen = slice(t - 3, t + 1)
        scores = (k[seen] @ q[t]) / 1.0  # (4, 1) x (1,) -> (4,); sqrt(Dk) = 1
        weights = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
        np.testing.assert_allclose(decoded.weights[0, t, seen], weights, rtol=1e-5)
        np.testing.assert_allclose(decoded.outputs[0, t], weights @ v[seen], rtol=1e-5, atol=1e-6)
        assert decoded.weights[0, t, : t - 3].sum() == 0
    assert decoded.cache_rows[-1] == 4100
    wide = [rng.normal(size=(3, 2048)) for _ in range(3)]  # 2048 features: past a page's 1024
    full = compute_attention(*wide, causal=True)
    np.testing.assert_allclose(decode_with_cache(*wide).weights[0], full.weights, atol=1e-6)
