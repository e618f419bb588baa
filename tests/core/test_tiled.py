"""Tests for attnviz.core.tiled: the online softmax tile by tile gives compute_attention's weights
and output for every mask, position scheme and tile shape; its running state is pinned by hand
and checked against its definition after every step."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_support import examples

from attnviz import compute_attention
from attnviz.core.tiled import tiled_attention

RNG = np.random.default_rng(41)
Q, K, V = RNG.normal(size=(7, 4)), RNG.normal(size=(9, 4)), RNG.normal(size=(9, 3))
T, F = True, False
MASKS = {
    "none": {},
    "causal": {"causal": True},
    "padding": {"key_padding_mask": [F, T, T, F, T, T, T, T, F]},
    "causal+padding (row 0 sees nothing)": {"causal": True, "key_padding_mask": [F] + [T] * 8},
    "window": {"window": 1},
    "sinks+window": {"causal": True, "window": 2, "sinks": 2},
    "documents": {"documents": (3, 4, 2), "causal": True},
    "prefix": {"prefix": 3},
    "chunk": {"chunk": 4, "causal": True},
}
TILES = {"one-query-tile": {"key_tile": 2}, "4x3": {"key_tile": 3, "query_tile": 4},
         "1x1": {"key_tile": 1, "query_tile": 1}, "wider-than-S": {"key_tile": 20}}  # fmt: skip


@pytest.mark.parametrize("mask_value", ["-inf", "-1e9"])
@pytest.mark.parametrize("tiles", TILES.values(), ids=list(TILES))
@pytest.mark.parametrize("masks", MASKS.values(), ids=list(MASKS))
def test_tiles_give_the_plain_weights_and_output(masks, tiles, mask_value):
    tiled = tiled_attention(Q, K, V, mask_value=mask_value, **tiles, **masks)
    plain = compute_attention(Q, K, V, mask_value=mask_value, **masks)
    np.testing.assert_array_equal(tiled.mask, plain.mask)
    np.testing.assert_allclose(tiled.weights, plain.weights, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tiled.output, plain.output, rtol=1e-6, atol=1e-6)
    if mask_value == "-inf":
        assert (tiled.weights[~plain.mask] == 0).all()


@pytest.mark.parametrize(
    "position",
    [{"position": "rope", "rope_theta": 30.0}, {"position": "alibi", "alibi_heads": 2},
     {"position": "alibi", "alibi_heads": 40, "alibi_head": 39}],  # 40: more than a page draws
    ids=["rope", "alibi", "alibi_head_39_of_40"],
)  # fmt: skip
@pytest.mark.parametrize("masks", [{}, {"causal": True, "window": 3}], ids=["none", "local"])
def test_tiles_with_positions_give_the_plain_numbers(position, masks):
    tiled = tiled_attention(Q, K, V, key_tile=4, query_tile=3, **position, **masks)
    plain = compute_attention(Q, K, V, **position, **masks)
    np.testing.assert_allclose(tiled.weights, plain.weights, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tiled.output, plain.output, rtol=1e-6, atol=1e-6)


def test_two_tiles_pinned_by_hand():
    # one query, keys scoring 1 then 3, values 10 then 20, one key per tile, no scaling
    tiled = tiled_attention([[1.0]], [[1.0], [3.0]], [[10.0], [20.0]], key_tile=1, scale=False)
    first, second = tiled.steps
    assert (first.max_before[0], first.max_after[0]) == (-math.inf, 1.0)
    assert (first.sum_after[0], first.acc_after[0, 0], first.output_so_far[0, 0]) == (1, 10, 10)
    # the second tile raises m from 1 to 3: the old sum and output are scaled by e^(1 - 3)
    assert second.max_after[0] == 3.0
    assert second.rescale[0] == pytest.approx(math.exp(-2))
    assert second.sum_after[0] == pytest.approx(1 + math.exp(-2))
    assert second.acc_after[0, 0] == pytest.approx(10 * math.exp(-2) + 20)
    assert second.output_so_far[0, 0] == pytest.approx(
        (10 * math.exp(-2) + 20) / (1 + math.exp(-2))
    )
    np.testing.assert_allclose(tiled.weights, [[0.119203, 0.880797]], atol=1e-6)
    np.testing.assert_allclose(tiled.output, [[18.807971]], atol=1e-5)


def test_running_state_after_every_step_matches_its_definition():
    tiled = tiled_attention(Q, K, V, key_tile=2, query_tile=3, causal=True, window=3, sinks=1)
    plain = compute_attention(Q, K, V, causal=True, window=3, sinks=1)
    logits = np.asarray(plain.masked_scores, np.float64)  # (T, S)
    for step in tiled.steps:
        rows, seen = slice(*step.rows), slice(0, step.cols[1])  # keys of the tiles so far
        expected_max = logits[rows, seen].max(axis=1)
        np.testing.assert_allclose(step.max_after, expected_max, atol=1e-6)
        exps = np.exp(
            logits[rows, seen] - np.where(np.isfinite(expected_max), expected_max, 0)[:, None]
        )
        np.testing.assert_allclose(step.sum_after, exps.sum(axis=1), rtol=1e-6)
        np.testing.assert_allclose(step.acc_after, exps @ V[seen], rtol=1e-5, atol=1e-6)
    lasts = [s for s in tiled.steps if s.key_tile == tiled.num_key_tiles - 1]
    np.testing.assert_allclose(np.concatenate([s.output_so_far for s in lasts]), tiled.output)


def test_a_row_that_sees_nothing_gets_zeros_with_minus_inf_and_uniform_with_minus_1e9():
    padding = [F, F, T]
    minus_inf = tiled_attention(
        Q[:2], K[:3], V[:3], key_tile=1, causal=True, key_padding_mask=padding
    )
    np.testing.assert_array_equal(minus_inf.weights[:2], 0)
    np.testing.assert_array_equal(minus_inf.output[:2], 0)
    assert minus_inf.row_sum[0] == 0 and minus_inf.row_max[0] == -np.inf
    minus_1e9 = tiled_attention(
        Q[:2], K[:3], V[:3], key_tile=1, causal=True, key_padding_mask=padding, mask_value="-1e9"
    )
    np.testing.assert_allclose(minus_1e9.weights, 1 / 3, atol=1e-6)


def test_causal_tiles_above_the_diagonal_are_skipped_and_change_nothing():
    tiled = tiled_attention(Q[:6], K[:6], V[:6], key_tile=2, query_tile=2, causal=True)
    skipped = {(s.query_tile, s.key_tile) for s in tiled.steps if s.skipped}
    assert skipped == {(0, 1), (0, 2), (1, 2)}
    for step in tiled.steps:
        if step.skipped:
            np.testing.assert_array_equal(step.max_after, step.max_before)
            np.testing.assert_array_equal(step.sum_after, step.sum_before)
            np.testing.assert_array_equal(step.probs, 0)


def test_steps_run_query_tile_by_query_tile_and_memory_is_counted():
    tiled = tiled_attention(
        np.ones((8, 4)), np.ones((8, 4)), np.ones((8, 2)), key_tile=2, query_tile=4
    )
    assert [(s.query_tile, s.key_tile) for s in tiled.steps[:5]] == [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (1, 0),
    ]
    assert (tiled.num_query_tiles, tiled.num_key_tiles, len(tiled.steps)) == (2, 4, 8)
    assert tiled.steps[-1].rows == (4, 8) and tiled.steps[-1].cols == (6, 8)
    # full: 8·8 floats; tile: 4·2; one step: the tile's 8, Q tile 4·4, K and V tiles 2·(4 + 2),
    # m, l and acc 4·(2 + 2)
    assert tiled.memory.full_matrix_bytes == 256
    assert tiled.memory.tile_matrix_bytes == 32
    assert tiled.memory.working_set_bytes == (8 + 16 + 12 + 16) * 4
    assert not tiled.weights.flags.writeable and not tiled.steps[0].logits.flags.writeable


ERRORS = {
    "key-tile-0": ({"key_tile": 0}, r"`key_tile` must be 1 or more: a tile holds at least one "
                   r"row\. Received: 0\."),
    "query-tile-0": ({"key_tile": 2, "query_tile": 0}, r"`query_tile` must be 1 or more"),
    "key-tile-text": ({"key_tile": "8"}, r"`key_tile` must be a whole number\. Received: '8'\."),
    "sinks-beyond": ({"key_tile": 2, "sinks": 10}, r"`sinks` asks for 10 sink tokens"),
    "rope-odd": ({"key_tile": 2, "position": "rope"}, r"rotates query and key features in pairs: "
                 r"D must be even\. Received D = 3\."),
}  # fmt: skip


@pytest.mark.parametrize(("kwargs", "match"), ERRORS.values(), ids=list(ERRORS))
def test_bad_values_are_explained(kwargs, match):
    d3 = np.ones((9, 3))
    q, k = (d3, d3) if kwargs.get("position") == "rope" else (Q, K)
    with pytest.raises(ValueError, match=match):
        tiled_attention(q, k, V, **kwargs)


def test_too_many_steps_and_mismatched_shapes_are_explained():
    big = np.ones((4096, 2))
    with pytest.raises(
        ValueError, match=r"into 16,777,216 steps; the limit is 4,096\. Use larger tiles\."
    ):
        tiled_attention(big, big, big, key_tile=1, query_tile=1)
    with pytest.raises(ValueError, match=r"Received: query \(7, 4\), key \(9, 4\), value \(8, 3\)"):
        tiled_attention(Q, K, V[:8], key_tile=2)


@st.composite
def _problems(draw):
    """Random small problems: sizes, tiles, mask rules, positions and the mask value."""
    t, s = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(t, 4)), rng.normal(size=(s, 4)), rng.normal(size=(s, 2))
    rules = {
        "causal": draw(st.booleans()),
        "window": draw(st.none() | st.integers(0, 3)),
        "sinks": draw(st.none() | st.integers(0, s)),
        "chunk": draw(st.none() | st.integers(1, 4)),
        "prefix": draw(st.none() | st.integers(0, s)),
        "key_padding_mask": draw(st.none() | st.lists(st.booleans(), min_size=s, max_size=s)),
        "mask_value": draw(st.sampled_from(["-inf", "-1e9"])),
        "position": draw(st.sampled_from(["none", "rope", "alibi"])),
    }
    tiles = {"key_tile": draw(st.integers(1, 8)), "query_tile": draw(st.none() | st.integers(1, 8))}
    return q, k, v, rules, tiles


@settings(max_examples=examples(150), deadline=None)
@given(_problems())
def test_random_problems_tile_to_the_plain_numbers(problem):
    q, k, v, rules, tiles = problem
    tiled = tiled_attention(q, k, v, **tiles, **rules)
    plain = compute_attention(q, k, v, **rules)
    np.testing.assert_array_equal(tiled.mask, plain.mask)
    np.testing.assert_allclose(tiled.weights, plain.weights, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tiled.output, plain.output, rtol=1e-6, atol=1e-6)


# --- settings= or the keywords; real models' sizes ---------------------------------------------


def test_a_settings_object_gives_what_its_keywords_give():
    from attnviz.core.settings import AttentionSettings

    rules = {"causal": True, "window": 2, "sinks": 1, "position": "alibi", "alibi_head": 3}
    by_keywords = tiled_attention(Q, K, V, key_tile=3, **rules)
    by_settings = tiled_attention(Q, K, V, key_tile=3, settings=AttentionSettings(**rules))
    np.testing.assert_array_equal(by_settings.weights, by_keywords.weights)
    assert by_settings.settings == by_keywords.settings == AttentionSettings(**rules)
    with pytest.raises(ValueError, match=r"takes `settings=` or the attention keywords, not both"):
        tiled_attention(Q, K, V, key_tile=3, settings=AttentionSettings(), causal=True)
    with pytest.raises(ValueError, match=r"`tiled_attention` computes with score='dot' only"):
        tiled_attention(Q, K, V, key_tile=3, settings=AttentionSettings(score="general"))
    with pytest.raises(TypeError, match=r"unknown keyword `score`\..*it sets score='dot'"):
        tiled_attention(Q, K, V, key_tile=3, score="dot")


@pytest.mark.parametrize(("t", "s", "d"), [(3, 5000, 2), (3, 4, 2048)], ids=["keys", "features"])
def test_more_tokens_and_features_than_a_page_takes(t, s, d):
    rng = np.random.default_rng(8)
    q, k, v = rng.normal(size=(t, d)), rng.normal(size=(s, d)), rng.normal(size=(s, 2))
    tiled = tiled_attention(q, k, v, key_tile=-(-s // 2), causal=True)  # two key tiles
    plain = compute_attention(q, k, v, causal=True)
    np.testing.assert_allclose(tiled.weights, plain.weights, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(tiled.output, plain.output, rtol=1e-5, atol=1e-5)
    assert tiled.num_key_tiles == 2


def test_what_the_steps_record_stops_at_the_memory_limit():
    # 4096 steps each keeping a 4096-query tile's (Tq, Dv) running output: 2**34 numbers
    q, k = np.ones((4096, 1)), np.ones((4096, 1))
    with pytest.raises(ValueError, match=r"Too large to record: 4,096 steps of 4096 queries × 1 "
                       r"keys \(and 8 value features\) would keep .* numbers; the limit is "
                       r"268,435,456 \(1 GiB of float32\)\."):  # fmt: skip
        tiled_attention(q, k, np.ones((4096, 8)), key_tile=1)
