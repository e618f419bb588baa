"""Tests for learn/language/model.py: the forward pass and its heads, the trace that recomputes
every head from its inputs, ablation in the graph, the views that read its weights (head
summaries, rollout, one head in the explorer), threads, and bad input.

Uses the shipped induction checkpoint and small untrained models."""

from concurrent.futures import ThreadPoolExecutor

import keras
import numpy as np
import pytest

from attnviz.core.attention import compute_attention
from attnviz.heads.rollout import attention_rollout
from attnviz.heads.summaries import head_summaries
from attnviz.learn.configs import LMConfig
from attnviz.learn.language.model import Ablation, LanguageModel
from attnviz.learn.language.tasks import get_lm_task, make_sequences
from attnviz.learn.pretrained import load_lm

pytestmark = pytest.mark.slow  # builds and runs language models

EXAMPLE = get_lm_task("induction").example  # 3 letters, a run of 9, 2 letters, the run again
CONFIGS = {
    "rope-pre": LMConfig(),
    "alibi-post-gqa": LMConfig(position="alibi", norm="post", kv_heads=2),
    "none-mqa-attention-only": LMConfig(position="none", kv_heads=1, d_ff=0, layers=3),
}


@pytest.fixture(scope="module")
def shipped():
    return load_lm("induction")


@pytest.fixture(scope="module", params=list(CONFIGS), ids=list(CONFIGS))
def untrained(request):
    return LanguageModel("induction", CONFIGS[request.param], seed=3)


def test_the_forward_pass_has_every_head_and_a_prediction_per_position(untrained):
    f = untrained.forward("abcab")
    layers = untrained.config.layers
    assert f.tokens == ("<s>", *"abcab") and len(f.predicted) == 6
    assert f.weights.shape == (layers, 4, 6, 6) and f.probabilities.shape == (6, 27)
    assert (np.triu(f.weights, k=1) == 0).all()  # causal: exactly zero on the future
    np.testing.assert_allclose(f.weights.sum(axis=-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(f.probabilities.sum(axis=-1), 1.0, atol=1e-6)
    assert (f.probabilities[:, 0] == 0).all() and "<s>" not in f.predicted  # never predicted
    assert not f.weights.flags.writeable


def test_the_trace_recomputes_every_head_from_its_inputs_and_kernels(untrained):
    trace = untrained.trace(EXAMPLE)
    c = untrained.config
    assert sorted(trace.results) == [("causal", layer) for layer in range(c.layers)]
    assert trace.inputs.shape == (c.layers, len(EXAMPLE) + 1, 32)  # (L, T, D)
    for layer in range(c.layers):
        result = trace.results[("causal", layer)]
        np.testing.assert_allclose(result.weights[0], trace.forward.weights[layer], atol=1e-5)
        assert result.settings.causal and result.settings.position == c.position
        assert result.num_kv_heads == c.num_kv_heads and result.d_k == 8


def test_the_trace_s_attention_is_every_layer_s_causal_call_with_its_tokens(untrained):
    trace = untrained.trace(EXAMPLE)
    c, tokens = untrained.config, trace.forward.tokens
    t = len(tokens)
    assert trace.attention.keys() == tuple(f"block_{i}/attention" for i in range(c.layers))
    assert trace.attention.groups() == {"causal": trace.attention.keys()}
    for layer, call in enumerate(trace.attention):
        result = trace.results[("causal", layer)]
        assert (call.kind, call.way, call.layer) == ("self", "causal", layer)
        np.testing.assert_array_equal(call.weights[0], trace.forward.weights[layer])
        assert (call.mask[0] == np.tri(t, dtype=bool)).all() and call.labels() == (tokens, tokens)
        rotated = c.position == "rope"  # Q and K as multiplied: after RoPE, if any
        q = result.rotated_query_heads if rotated else result.query_heads
        assert call.query_heads is q and call.value_heads is result.value_heads
        assert call.query_heads.shape == (1, c.heads, t, 8)
    stack = trace.attention.layer_stack("causal")  # masked cells exactly 0: drawn grey
    np.testing.assert_array_equal(
        stack.blocked, np.broadcast_to(np.triu(np.ones((t, t)), 1) == 1, stack.weights.shape)
    )


def test_the_shipped_model_s_heads_recompute_and_open_in_the_explorer(shipped):
    # "Open this head in the explorer": the head's own Q, K, V with RoPE give its weights.
    trace = shipped.trace(EXAMPLE)
    for layer in range(2):
        result = trace.results[("causal", layer)]
        np.testing.assert_allclose(result.weights[0], trace.forward.weights[layer], atol=1e-5)
        for head in range(4):
            one = compute_attention(
                result.query_heads[0, head], result.key_heads[0, head],
                result.value_heads[0, head], causal=True, position="rope",
                rope_theta=result.settings.rope_theta,
            )  # fmt: skip
            np.testing.assert_allclose(one.weights, trace.forward.weights[layer, head], atol=1e-5)


def test_head_summaries_and_rollout_read_the_weights_as_the_transformer_s(shipped):
    weights = shipped.forward(EXAMPLE).weights  # (L, H, T, T)
    summaries = head_summaries(weights)
    assert len(summaries) == 8 and (summaries[0].layer, summaries[-1].head) == (0, 3)
    best = max(s.previous for s in summaries if s.layer == 0)  # the previous-token head
    assert best > 0.8
    rollout = attention_rollout(weights).rollout
    assert rollout.shape == (24, 24) and (np.triu(rollout, k=1) == 0).all()


def test_the_shipped_model_completes_the_repeated_run(shipped):
    f = shipped.forward(EXAMPLE)
    # EXAMPLE: 3 letters, a run of 9 (EXAMPLE[3:12]), 2 letters, then the run again
    # (positions 15 to 23 after <s>). Each letter of the copy predicts the one that followed
    # it before: the copy's next letter, and after the last one the first of the 2 letters.
    assert EXAMPLE[14:] == EXAMPLE[3:12]
    assert "".join(f.predicted[15:]) == EXAMPLE[15:] + EXAMPLE[12]


def test_ablation_switches_heads_off_inside_the_same_function(shipped):
    ids = make_sequences("induction", 4, seed=11)[:, :-1]
    intact = shipped.run(ids)
    zero = shipped.run(ids, Ablation(((1, 2),)))
    mean = shipped.run(ids, Ablation(((1, 2),), "mean"))
    np.testing.assert_array_equal(zero.heads[:, 1, 2], 0.0)
    means = shipped.head_means()  # (L, H, Dk)
    assert means.shape == (2, 4, 8)
    np.testing.assert_allclose(mean.heads[:, 1, 2], np.broadcast_to(means[1, 2], (4, 32, 8)))
    np.testing.assert_array_equal(zero.weights[:, 0], intact.weights[:, 0])  # layer 0 untouched
    np.testing.assert_array_equal(zero.heads[:, 1, :2], intact.heads[:, 1, :2])
    assert not np.allclose(zero.logits, intact.logits)


def test_threads_share_one_model(shipped):
    # One shipped model serves every session of a server: forward passes run at once.
    texts = [EXAMPLE, EXAMPLE[:20], "abcabc", "zyxwvzyxwv"]
    alone = {t: shipped.forward(t).weights for t in texts}

    def work(worker: int) -> int:
        wrong = 0
        for i in range(20):
            text = texts[(worker + i) % len(texts)]
            wrong += not np.array_equal(shipped.forward(text).weights, alone[text])
        return wrong

    with ThreadPoolExecutor(4) as pool:
        assert sum(pool.map(work, range(4))) == 0


def test_the_model_survives_keras_clear_session(shipped):
    before = shipped.forward(EXAMPLE)
    keras.backend.clear_session()  # what Streamlit does after every script run
    after = shipped.forward(EXAMPLE)
    np.testing.assert_array_equal(after.weights, before.weights)
    assert after.predicted == before.predicted


def test_layer_params_are_the_layer_s_kernels_in_compute_multihead_layout(shipped):
    params = shipped.layer_params(1)
    assert {k: v.shape for k, v in params.items()} == {
        "W_Q": (4, 32, 8), "W_K": (4, 32, 8), "W_V": (4, 32, 8), "W_O": (32, 32),
    }  # fmt: skip
    assert shipped.parameter_count == shipped.stats.parameters


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m: m.forward("ab#"), "does not know: '#'"),
        (lambda m: m.forward(""), "is empty"),
        (lambda m: m.forward("ab", Ablation(((2, 0),))), r"\(layer, head\) from \(0, 0\) to"),
        (lambda m: m.forward("ab", ablation="head 1"), "`ablation` must be an Ablation"),
        (lambda m: m.run(np.array([[0, 1, 99]])), "token ids from 0 to 26"),
        (lambda m: m.run(np.zeros((1, 600), int)), "T at most 512"),
        (lambda m: m.run([0, 1, 2]), r"non-empty \(N, T\) array"),
        (lambda m: m.layer_params(2), "`layer` must be from 0 to 1"),
        (lambda m: Ablation(((0, 1),), "noise"), '`mode` must be one of "zero", "mean"'),
        (lambda m: Ablation((0, 1)), r"list of \(layer, head\) pairs"),
        (lambda m: Ablation(5), r"list of \(layer, head\) pairs"),
        (lambda m: Ablation([(0, 1.5)]), "`head` must be a whole number"),
        (lambda m: LanguageModel("induction", {"heads": 2}), "must be an LMConfig"),
        (lambda m: LanguageModel("dates", LMConfig()), '`task` must be one of "induction"'),
    ],
    ids=[
        "unknown-character", "empty", "no-such-head", "not-an-ablation", "id-too-large",
        "too-long", "not-2d", "no-such-layer", "mode", "not-pairs", "not-a-list", "fraction",
        "not-a-config", "task",
    ],
)  # fmt: skip
def test_bad_arguments_say_what_is_wrong(shipped, call, match):
    with pytest.raises(ValueError, match=match):
        call(shipped)
