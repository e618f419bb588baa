"""Weights made to differ: each head's weight measured in float64 numpy, not by the module."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.inputs.text import encode_sentences
from attnviz.transformer.made_heads import (
    PLACES,
    code_gap,
    head_places,
    made_for_way,
    made_params,
    place_shares,
    position_codes,
    said,
)
from attnviz.transformer.way_attention import compute_way

LESSON_SOURCE = "Le chat est assis sur le tapis .\nIl dort ."  # lesson 7's sentences
TARGET = "The cat sits on the mat .\nIt sleeps ."


def _numpy_weights(xq, xk, w_q, w_k, key_real, causal=False):
    """`(T, S)` softmax(x_q W_Q (x_k W_K)ᵀ / √Dk) over the real (and causal) keys, float64."""
    scores = (xq @ w_q.astype(np.float64)) @ (xk @ w_k.astype(np.float64)).T
    scores /= math.sqrt(w_q.shape[1])
    allowed = np.broadcast_to(key_real, scores.shape).copy()
    if causal:
        allowed &= np.tril(np.ones(scores.shape, dtype=bool))
    scores = np.where(allowed, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _share(w, targets):
    """The mean weight of each row on its target key, over rows whose target is a key."""
    taken = [w[i, j] for i, j in enumerate(targets) if 0 <= j < w.shape[1]]
    return float(np.mean(taken))


def test_each_of_four_heads_looks_in_its_place_measured_in_numpy():
    enc = encode_sentences(LESSON_SOURCE, d_model=16, d_k=16, seed=0)
    made = made_params(enc.inputs, enc.inputs, num_heads=4, query_mask=enc.padding_mask,
                       key_mask=enc.padding_mask)  # fmt: skip
    assert [p.name for p in made.places] == [
        "the previous token", "itself", "the first token", "the next token"
    ]  # fmt: skip
    assert made.exact and made.tokens == 11  # 8 + 3 real tokens, fewer than d_model = 16
    for b, n in enumerate(enc.lengths):
        x = enc.inputs[b]
        for h, offset in enumerate((-1, 0, None, 1)):
            w = _numpy_weights(x, x, made.params["W_Q"][h], made.params["W_K"][0],
                               enc.padding_mask[b])  # fmt: skip
            targets = [0] * n if offset is None else [i + offset for i in range(n)]
            assert _share(w[:n, :n], targets) >= 0.9, (b, h)


def test_the_heads_differ_where_random_heads_do_not():
    enc = encode_sentences(LESSON_SOURCE, d_model=16, d_k=16, seed=0)
    made = made_params(enc.inputs, enc.inputs, num_heads=4, query_mask=enc.padding_mask,
                       key_mask=enc.padding_mask)  # fmt: skip
    kwargs = dict(num_heads=4, source_padding_mask=enc.padding_mask, seed=0)
    built = compute_way("bidirectional", enc.inputs, None, params=made.params, **kwargs)
    drawn = compute_way("bidirectional", enc.inputs, None, **kwargs)
    real = (enc.padding_mask, enc.padding_mask)  # the real keys and queries
    shares = place_shares(built.weights, built.mask, made.places, *real)
    assert np.all(shares >= 0.9)
    assert np.all(place_shares(drawn.weights, drawn.mask, made.places, *real) < 0.5)
    # the page's numbers are compute_way's: head 0's share, pooled over both sentences in numpy
    taken = []
    for b, n in enumerate(enc.lengths):
        x = enc.inputs[b]
        w = _numpy_weights(x, x, made.params["W_Q"][0], made.params["W_K"][0],
                           enc.padding_mask[b])  # fmt: skip
        np.testing.assert_allclose(built.weights[b, 0], w, atol=1e-4)
        taken += [w[i, i - 1] for i in range(1, n)]
    assert shares[0] == pytest.approx(np.mean(taken), abs=1e-4)


@pytest.mark.parametrize("way", ["causal", "cross"])
def test_made_for_the_way_picks_its_sides(way):
    src = encode_sentences(LESSON_SOURCE, d_model=16, d_k=16, seed=0)
    tgt = encode_sentences(TARGET, d_model=16, d_k=16, seed=0)
    masks = dict(source_padding_mask=src.padding_mask, target_padding_mask=tgt.padding_mask)
    made = made_for_way(way, src.inputs, tgt.inputs, num_heads=4, **masks)
    result = compute_way(way, src.inputs, tgt.inputs, num_heads=4, params=made.params, **masks)
    keys = src if way == "cross" else tgt
    shares = place_shares(result.weights, result.mask, made.places, keys.padding_mask,
                          tgt.padding_mask)  # fmt: skip
    n_q, n_k = tgt.lengths[0], keys.lengths[0]
    x_q, x_k = tgt.inputs[0], keys.inputs[0]
    w = _numpy_weights(x_q, x_k, made.params["W_Q"][1], made.params["W_K"][0],
                       keys.padding_mask[0], causal=way == "causal")  # fmt: skip
    assert _share(w[:n_q, :n_k], range(n_q)) >= 0.9  # head 1: itself (same position)
    if way == "causal":
        assert math.isnan(shares[3])  # the next token is always hidden
        assert "hidden by the mask" in said(made, shares)
    else:
        assert shares[3] >= 0.9


def test_more_tokens_than_d_model_cannot_be_exact_and_the_page_says_so():
    text = "a b c d e f g h\ni j k l m n o p\nq r s t u v w x"  # 24 real tokens, d_model 16
    enc = encode_sentences(text, d_model=16, d_k=16, seed=0)
    made = made_params(enc.inputs, enc.inputs, num_heads=4)
    assert not made.exact and made.tokens == 24
    words = said(made, [0.5, 0.5, 0.5, 0.5])
    assert "With 24 tokens and d_model = 16" in words and "at least 24" in words


def test_the_code_gap_is_worked_by_hand():
    # one pair: code(p) = (cos(2πp/P), sin(2πp/P)); the nearest rival is one step away
    assert code_gap(2, 12) == pytest.approx(1 - math.cos(2 * math.pi / 12))
    # two pairs: cos(x) + cos(2x) at its largest for p ≠ 0 is at one step
    x = 2 * math.pi / 10
    assert code_gap(4, 10) == pytest.approx(2 - math.cos(x) - math.cos(2 * x))
    codes = position_codes([0, 3], 3, 8)  # an odd Dk: a last feature of 0
    np.testing.assert_allclose(codes[1], [math.cos(3 * math.pi / 4), math.sin(3 * math.pi / 4), 0])


def test_places_cycle_and_shared_key_heads_share_w_k():
    assert head_places(9)[7:] == PLACES[:2]
    assert [p.name for p in head_places(2, ["itself", "the last token"])] == [
        "itself", "the last token"
    ]  # fmt: skip
    with pytest.raises(ValueError, match="must be one of 'the previous token'"):
        head_places(2, ["sideways"])
    x = encode_sentences("a b c d", d_model=8, d_k=8, seed=1).inputs
    made = made_params(x, x, num_heads=4, num_kv_heads=2)
    assert made.params["W_Q"].shape == (4, 8, 2) and made.params["W_K"].shape == (2, 8, 2)
    np.testing.assert_array_equal(made.params["W_K"][0], made.params["W_K"][1])


def test_one_feature_per_head_is_refused_with_the_reason():
    x = np.ones((3, 4))
    with pytest.raises(ValueError, match="at least 2 .* Received d_model=4 and 4 heads"):
        made_params(x, x, num_heads=4)
    with pytest.raises(ValueError, match="same number of sentences and of features"):
        made_params(x, np.ones((3, 5)), num_heads=2)
