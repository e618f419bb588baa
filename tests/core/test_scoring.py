"""Tests for attnviz.core.scoring: the score layers, their weights and their Keras serialisation.

Shape letters: B batch, T queries, S keys, Dq/Dk query/key features, U concat units.
"""

import math

import keras
import numpy as np
import pytest
from reference import raw_scores

import attnviz.core.scoring
from attnviz import compute_attention
from attnviz.core.scoring import (
    AttentionScore,
    ConcatScore,
    DotScore,
    GeneralScore,
    draw_param,
    make_score_layer,
    resolve_params,
)

TANH1, TANH2 = math.tanh(1.0), math.tanh(2.0)  # 0.761594..., 0.964028...


def _scores(layer, query, key) -> np.ndarray:
    """Run a score layer on `(T, D)` inputs and return `(T, S)` numpy scores."""
    q = np.asarray(query, dtype=np.float32)[None]  # (1, T, Dq)
    k = np.asarray(key, dtype=np.float32)[None]  # (1, S, Dk)
    return np.asarray(layer(q, k))[0]


def _concat(w_q, w_k, v, b=None, scale=False) -> ConcatScore:
    layer = ConcatScore(units=len(v), use_bias=b is not None, scale=scale)
    layer.build((None, None, len(w_q)), (None, None, len(w_k)))
    layer.W_q.assign(np.asarray(w_q, np.float32))
    layer.W_k.assign(np.asarray(w_k, np.float32))
    layer.v.assign(np.asarray(v, np.float32))
    if b is not None:
        layer.b.assign(np.asarray(b, np.float32))
    return layer


# --- pinned tiny examples ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scale", "expected"),
    # q = [1, 2]; k0 = [3, 4] -> 3 + 8 = 11; k1 = [1, 0] -> 1. Scaled: 11/√2, 1/√2.
    [(False, [[11.0, 1.0]]), (True, [[7.7781746, 0.7071068]])],
    ids=["unscaled", "scaled"],
)
def test_dot_score_pinned(scale, expected):
    scores = _scores(DotScore(scale=scale), [[1, 2]], [[3, 4], [1, 0]])
    np.testing.assert_allclose(scores, expected, rtol=1e-6)


def test_general_score_with_identity_equals_dot():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    general = GeneralScore(scale=True)
    general.build((None, None, 3), (None, None, 3))
    general.W.assign(np.eye(3, dtype=np.float32))
    np.testing.assert_allclose(
        _scores(general, q, k), _scores(DotScore(scale=True), q, k), rtol=1e-6, atol=1e-6
    )


@pytest.mark.parametrize(
    ("scale", "expected"),
    # q W = [1, 2] [[1, 0, 1], [0, 1, 0]] = [1, 2, 1]; · k0 [1, 1, 1] = 4; · k1 [0, 0, 2] = 2.
    # Scaling divides by √Dk = √3 (key features, not query features): 4/√3, 2/√3.
    [(False, [[4.0, 2.0]]), (True, [[2.3094011, 1.1547005]])],
    ids=["unscaled", "scaled-by-sqrt-dk"],
)
def test_general_score_pinned_with_dq_not_dk(scale, expected):
    general = GeneralScore(scale=scale)
    general.build((None, None, 2), (None, None, 3))
    general.W.assign(np.array([[1, 0, 1], [0, 1, 0]], np.float32))
    scores = _scores(general, [[1, 2]], [[1, 1, 1], [0, 0, 2]])
    np.testing.assert_allclose(scores, expected, rtol=1e-6)


@pytest.mark.parametrize(
    ("b", "scale", "expected"),
    [
        # W_q = W_k = I, v = [2, 1], q = [1, 0]; k0 = [0, 1] -> tanh([1, 1]) · v = 3 tanh 1;
        # k1 = [1, 1] -> tanh([2, 1]) · v = 2 tanh 2 + tanh 1.
        (None, False, [[3 * TANH1, 2 * TANH2 + TANH1]]),
        # b = [0, -1] cancels the second unit: 2 tanh 1 and 2 tanh 2.
        ([0.0, -1.0], False, [[2 * TANH1, 2 * TANH2]]),
        # scaled: divided by √Dk = √2.
        (None, True, [[3 * TANH1 / math.sqrt(2), (2 * TANH2 + TANH1) / math.sqrt(2)]]),
    ],
    ids=["no-bias", "bias", "scaled"],
)
def test_concat_score_pinned(b, scale, expected):
    layer = _concat(np.eye(2), np.eye(2), [2.0, 1.0], b=b, scale=scale)
    scores = _scores(layer, [[1, 0]], [[0, 1], [1, 1]])
    np.testing.assert_allclose(scores, expected, rtol=1e-6)


def test_concat_score_with_random_weights_matches_float64_reference():
    rng = np.random.default_rng(4)
    q, k = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))  # Dq = 2, Dk = 3
    params = {
        "W_q": rng.normal(size=(2, 5)),  # U = 5
        "W_k": rng.normal(size=(3, 5)),
        "v": rng.normal(size=5),
        "b": rng.normal(size=5),
    }
    layer = _concat(params["W_q"], params["W_k"], params["v"], b=params["b"])
    expected = raw_scores(q[None], k[None], "concat", params)[0]
    np.testing.assert_allclose(_scores(layer, q, k), expected, rtol=1e-5, atol=1e-5)


def test_score_layers_keep_the_batch_axis():
    rng = np.random.default_rng(5)
    q, k = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))  # (B, T, D), (B, S, D)
    for layer in (DotScore(), GeneralScore(), ConcatScore(units=3, use_bias=True)):
        assert tuple(layer(q, k).shape) == (2, 3, 5), type(layer).__name__


def test_base_score_layer_needs_a_subclass():
    with pytest.raises(NotImplementedError):
        AttentionScore()(np.ones((1, 1, 1)), np.ones((1, 1, 1)))


# --- concat blocking -----------------------------------------------------------------------------


@pytest.mark.parametrize("cells", [1, 48, 10**9], ids=["one-query-per-block", "uneven", "one"])
def test_concat_blocking_gives_the_unblocked_scores(monkeypatch, cells):
    rng = np.random.default_rng(6)
    q, k = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 3, 2))  # (B, T=5, Dq), (B, S=3, Dk)
    layer = _concat(rng.normal(size=(3, 4)), rng.normal(size=(2, 4)), rng.normal(size=4))
    unblocked = np.asarray(layer(q, k))
    # B·S·U = 24 floats per query row: 48 cells score 2 queries per block (blocks 2, 2, 1).
    monkeypatch.setattr(attnviz.core.scoring, "CONCAT_BLOCK_CELLS", cells)
    blocked = np.asarray(layer(q, k))
    assert blocked.shape == (2, 5, 3)
    np.testing.assert_allclose(blocked, unblocked, rtol=1e-6, atol=1e-7)


def test_concat_blocking_inside_compute_attention(monkeypatch):
    rng = np.random.default_rng(7)
    q, k, v = rng.normal(size=(6, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    whole = compute_attention(q, k, v, score="concat", causal=True, seed=3)
    monkeypatch.setattr(attnviz.core.scoring, "CONCAT_BLOCK_CELLS", 8)  # 1 query per block
    blocked = compute_attention(q, k, v, score="concat", causal=True, seed=3)
    np.testing.assert_allclose(blocked.scores, whole.scores, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(blocked.output, whole.output, rtol=1e-6, atol=1e-7)


# --- draw_param ----------------------------------------------------------------------------------


def test_draw_param_is_reproducible_per_seed_and_name():
    first = draw_param("W", (3, 4), seed=11)
    assert first.dtype == np.float32 and first.shape == (3, 4)
    np.testing.assert_array_equal(first, draw_param("W", (3, 4), seed=11))
    assert not np.array_equal(first, draw_param("W", (3, 4), seed=12))
    assert not np.array_equal(draw_param("W_q", (3, 4), 11), draw_param("W_k", (3, 4), 11))


@pytest.mark.parametrize(
    ("name", "shape", "limit"),
    [("W", (3, 5), math.sqrt(6 / 8)), ("W_q", (2, 4), 1.0), ("v", (5,), 1.0)],
    ids=["W", "W_q", "v"],
)
def test_draw_param_is_glorot_uniform(name, shape, limit):
    # Glorot-uniform: U(-l, l) with l = sqrt(6 / (fan_in + fan_out)); a vector has fan_out 1.
    values = draw_param(name, shape, seed=0)
    assert values.shape == shape
    assert np.all(np.abs(values) <= limit)
    assert np.abs(values).max() > 0


def test_draw_param_bias_starts_at_zero():
    bias = draw_param("b", (4,), seed=9)
    assert bias.dtype == np.float32
    np.testing.assert_array_equal(bias, np.zeros(4))


# --- resolve_params ------------------------------------------------------------------------------


def test_resolve_params_dot_needs_no_weights():
    assert resolve_params("dot", 3, 3, None, seed=0) == {}


def test_resolve_params_draws_missing_weights_from_the_seed():
    used = resolve_params("general", 2, 3, None, seed=4)
    assert set(used) == {"W"}
    np.testing.assert_array_equal(used["W"], draw_param("W", (2, 3), 4))


def test_resolve_params_concat_defaults_to_dk_units_and_no_bias():
    used = resolve_params("concat", 2, 3, {}, seed=1)
    assert {name: w.shape for name, w in used.items()} == {
        "W_q": (2, 3),
        "W_k": (3, 3),
        "v": (3,),
    }


@pytest.mark.parametrize(
    "given",
    [{"W_q": np.ones((2, 5))}, {"W_k": np.ones((3, 5))}, {"v": np.ones(5)}, {"b": np.ones(5)}],
    ids=["from-W_q", "from-W_k", "from-v", "from-b"],
)
def test_resolve_params_concat_takes_units_from_a_given_weight(given):
    used = resolve_params("concat", 2, 3, given, seed=1)
    assert used["W_q"].shape == (2, 5) and used["W_k"].shape == (3, 5) and used["v"].shape == (5,)
    assert ("b" in used) == ("b" in given)


def test_resolve_params_keeps_given_weights_and_leaves_the_others_unchanged():
    drawn = resolve_params("concat", 2, 2, None, seed=8)
    w_q = np.arange(4.0).reshape(2, 2)
    used = resolve_params("concat", 2, 2, {"W_q": w_q}, seed=8)
    assert used["W_q"].dtype == np.float32
    np.testing.assert_array_equal(used["W_q"], w_q)
    np.testing.assert_array_equal(used["W_k"], drawn["W_k"])
    np.testing.assert_array_equal(used["v"], drawn["v"])


def test_resolve_params_does_not_alias_the_callers_array():
    w = np.ones((2, 2), dtype=np.float32)
    used = resolve_params("general", 2, 2, {"W": w}, seed=0)
    assert not np.shares_memory(used["W"], w)


@pytest.mark.parametrize(
    ("kind", "given", "match"),
    [
        ("dot", {"W": np.eye(2)}, r'score="dot" does not use: W\. Allowed: none\.'),
        ("general", {"W_q": np.eye(2)}, r'score="general" does not use: W_q\. Allowed: W\.'),
        ("concat", {"W": np.eye(2), "x": 1}, r"does not use: W, x\. Allowed: W_q, W_k, v, b\."),
        ("general", {"W": np.ones((3, 2))}, r"`params\['W'\]` must have shape \(2, 2\)\. "),
        ("general", {"W": np.ones(4)}, r"Received shape \(4,\)"),
        ("concat", {"W_q": np.ones((2, 3)), "v": np.ones(4)}, r"`params\['v'\]` must have shape"),
        (
            "general",
            {"W": [[1, np.nan], [0, 1]]},
            r"`params\['W'\]` holds a non-finite number "
            r"\(nan\) at index \(0, 1\)",
        ),
        (
            "general",
            {"W": [[1, np.inf], [0, 1]]},
            r"`params\['W'\]` holds a non-finite number "
            r"\(inf\) at index \(0, 1\)",
        ),
        ("general", {"W": [["a", "b"], ["c", "d"]]}, r"`params\['W'\]` must hold numbers only"),
        ("general", {"W": [[1, 2], [3]]}, r"`params\['W'\]` could not be read as a matrix"),
    ],
    ids=[
        "dot-with-W",
        "general-unknown",
        "concat-two-unknown",
        "wrong-shape",
        "wrong-rank",
        "units-disagree",
        "nan",
        "inf",
        "text",
        "ragged",
    ],
)
def test_resolve_params_errors(kind, given, match):
    with pytest.raises(ValueError, match=match):
        resolve_params(kind, 2, 2, given, seed=0)


def test_resolve_params_rejects_weights_that_overflow_float32():
    with pytest.raises(ValueError, match=r"`params\['W'\]`"):
        resolve_params("general", 2, 2, {"W": np.full((2, 2), 1e300)}, seed=0)


# --- make_score_layer and Keras serialisation ----------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "cls"),
    [("dot", DotScore), ("general", GeneralScore), ("concat", ConcatScore)],
    ids=["dot", "general", "concat"],
)
def test_make_score_layer_sets_the_given_weights(kind, cls):
    params = resolve_params(kind, 2, 2, None, seed=2)
    layer = make_score_layer(kind, 2, 2, scale=False, params=params)
    assert type(layer) is cls and layer.scale is False
    assert {w.name: w.numpy().tolist() for w in layer.weights} == {
        name: w.tolist() for name, w in params.items()
    }


def test_make_score_layer_adds_the_bias_only_when_given():
    params = resolve_params("concat", 2, 2, {"b": [0.5, -0.5]}, seed=2)
    layer = make_score_layer("concat", 2, 2, scale=True, params=params)
    assert layer.use_bias and layer.units == 2
    np.testing.assert_array_equal(layer.b.numpy(), [0.5, -0.5])


def test_make_score_layer_rejects_unknown_kinds():
    with pytest.raises(ValueError, match=r'`score` must be one of "dot", "general", "concat"'):
        make_score_layer("cosine", 2, 2, scale=True, params={})


LAYERS = [
    pytest.param(lambda: DotScore(scale=False), id="dot"),
    pytest.param(lambda: GeneralScore(scale=True, name="luong"), id="general"),
    pytest.param(lambda: ConcatScore(units=3, use_bias=True, scale=False), id="concat-bias"),
    pytest.param(lambda: ConcatScore(units=2), id="concat"),
]


@pytest.mark.parametrize("make", LAYERS)
def test_score_layer_config_round_trip(make):
    layer = make()
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    assert clone.scale == layer.scale
    if isinstance(layer, ConcatScore):
        assert (clone.units, clone.use_bias) == (layer.units, layer.use_bias)


@pytest.mark.parametrize("make", LAYERS)
def test_score_layer_keras_serialisation_round_trip(make):
    layer = make()
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(1, 2, 3)), rng.normal(size=(1, 4, 3))
    expected = np.asarray(layer(q, k))
    serialised = keras.saving.serialize_keras_object(layer)
    assert serialised["registered_name"] == f"attnviz>{type(layer).__name__}"
    clone = keras.saving.deserialize_keras_object(serialised)
    assert type(clone) is type(layer) and clone.get_config() == layer.get_config()
    assert clone.built  # Keras rebuilds it from the recorded query/key shapes
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(np.asarray(clone(q, k)), expected, rtol=1e-6)
