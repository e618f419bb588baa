"""Tests for heads/calls: the one trace type (`AttentionCall`, `AttentionCalls`), pure numpy."""

import numpy as np
import pytest

from attnviz.core.checks import read_only
from attnviz.heads.calls import AttentionCall, AttentionCalls, frozen_labels


def _weights(b: int, h: int, t: int, s: int, causal: bool = False) -> np.ndarray:
    """Uniform weights over the allowed keys, `(B, H, T, S)`."""
    allowed = np.tri(t, s, dtype=bool) if causal else np.ones((t, s), dtype=bool)
    w = allowed / allowed.sum(axis=-1, keepdims=True)
    return read_only(np.broadcast_to(w, (b, h, t, s)).astype(np.float32))


def _run() -> AttentionCalls:
    """Two layers of an encoder-decoder's decoder: causal self-attention (3 × 3), cross (3 × 2)."""
    rows = frozen_labels([["a", "b", "c"]])
    calls = []
    for layer in range(2):
        calls.append(AttentionCall(
            key=f"l{layer}/self", kind="self", way="causal", layer=layer,
            weights=_weights(1, 2, 3, 3, causal=True), mask=np.tri(3, dtype=bool)[None],
            row_labels=rows, col_labels=rows,
        ))  # fmt: skip
        calls.append(AttentionCall(
            key=f"l{layer}/cross", kind="cross", way="cross", layer=layer,
            weights=_weights(1, 2, 3, 2), row_labels=rows,
        ))  # fmt: skip
    return AttentionCalls(tuple(calls))


def test_calls_group_by_way_and_stack_like_layers_with_their_grey_cells():
    run = _run()
    assert run.groups() == {"causal": ("l0/self", "l1/self"), "cross": ("l0/cross", "l1/cross")}
    assert run.at("cross", 1).key == "l1/cross" and run.at("self", 0).key == "l0/self"
    stack = run.layer_stack("causal")
    assert stack.keys == ("l0/self", "l1/self") and stack.weights.shape == (2, 2, 3, 3)
    upper = np.triu(np.ones((3, 3), dtype=bool), k=1)  # masked, and weight exactly 0
    np.testing.assert_array_equal(stack.blocked, np.broadcast_to(upper, (2, 2, 3, 3)))
    assert run.layer_stack("cross").blocked is None  # unmasked: nothing grey
    assert run.layer_stack("self").keys == stack.keys  # a way's kind picks the same calls
    assert len(run) == 4 and [c.key for c in run] == list(run.keys())


def test_labels_are_each_sequence_s_tokens_else_positions():
    run = _run()
    assert run.at("causal", 0).labels() == (("a", "b", "c"), ("a", "b", "c"))
    assert run.at("cross", 0).labels() == (("a", "b", "c"), ("0", "1"))  # keys not known


def test_a_call_says_what_is_wrong():
    w = _weights(1, 1, 2, 2)
    with pytest.raises(ValueError, match="kind"):
        AttentionCall(key="x", kind="encoder", weights=w)
    with pytest.raises(ValueError, match="'cross' call is a cross call"):
        AttentionCall(key="x", kind="self", way="cross", weights=w)
    with pytest.raises(ValueError, match=r"\(B, H, T, S\).*weights\[None\]"):
        AttentionCall(key="x", kind="self", weights=w[0])
    with pytest.raises(KeyError, match="No 'cross' attention call at layer 2"):
        _run().at("cross", 2)
    with pytest.raises(ValueError, match="No attention call matches kind='unknown'"):
        _run().layer_stack("unknown")


def test_summaries_and_rollout_read_a_traces_stack_as_its_weights():
    from attnviz.heads.rollout import attention_rollout
    from attnviz.heads.summaries import head_summaries

    stack = _run().layer_stack("causal")  # (L, H, T, S) = (2, 2, 3, 3)
    assert head_summaries(stack) == head_summaries(stack.weights)
    assert [(s.layer, s.head) for s in head_summaries(stack)] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    by_hand = np.eye(3)  # α = 0.5: Â = (Ā + I) / 2 per layer, rows already sum to 1
    for layer in range(2):
        by_hand = (stack.weights[layer].mean(axis=0) + np.eye(3)) / 2 @ by_hand
    np.testing.assert_allclose(attention_rollout(stack).rollout, by_hand, atol=1e-6)
