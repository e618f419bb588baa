"""Tests for inputs/attend.py: B, the second setting of the explorer's Compare view, is one change
away from A; one call computes A, and B while comparing, checked against float64 numpy."""

import dataclasses

import numpy as np
import pytest

from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.core.settings import AttentionSettings
from attnviz.inputs.attend import COMPARISONS, any_mask, attend, other_scores, other_settings
from attnviz.inputs.problem import Problem

RNG = np.random.default_rng(7)
Q, K, V = (RNG.normal(size=shape).astype(np.float32) for shape in [(4, 3), (5, 3), (5, 2)])
LABELS = (tuple("abcd"),), (tuple("vwxyz"),)
PADDING = np.array([True, True, True, True, False])


def _problem(query=Q, padding=PADDING) -> Problem:
    return Problem(query, K, V, *LABELS, padding)


def _softmax(logits):
    logits = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=-1, keepdims=True)


def _expected(scale: bool, causal: bool, padding: bool) -> np.ndarray:
    scores = Q.astype(np.float64) @ K.T.astype(np.float64)
    if scale:
        scores = scores / np.sqrt(3)
    allowed = np.ones((4, 5), bool)
    if causal:
        allowed &= np.arange(5)[None, :] <= np.arange(4)[:, None]
    if padding:
        allowed &= PADDING[None, :]
    return _softmax(np.where(allowed, scores, -np.inf))


def test_a_alone_when_not_comparing():
    attended = attend(_problem(), AttentionSettings(causal=True), True)
    np.testing.assert_allclose(attended.result.weights, _expected(True, True, True), atol=1e-6)
    assert attended.padding_used is True
    assert attended.other is None and attended.other_result is None


def test_a_pages_cell_limit_is_checked_before_computing():
    # the explorer passes limits.APP_SCORE_CELLS; 4 queries × 5 keys is 20 cells
    with pytest.raises(ValueError, match=r"^Too many attention cells: 1 sequence × 4 queries × 5 "
                       r"keys = 20; the limit is 19 \(this page's\)\. Use fewer or shorter "
                       r"sequences here, or compute_attention in Python\.$"):  # fmt: skip
        attend(_problem(), AttentionSettings(), False, max_cells=19)
    assert attend(_problem(), AttentionSettings(), False, max_cells=20).result.weights.shape == (
        4,
        5,
    )


def test_padding_is_used_only_when_asked_and_some_key_is_padding():
    assert attend(_problem(), AttentionSettings(), False).padding_used is False
    assert attend(_problem(padding=None), AttentionSettings(), True).padding_used is False
    nothing_padded = np.ones(5, bool)  # one sentence, or sentences of one length
    assert attend(_problem(padding=nothing_padded), AttentionSettings(), True).padding_used is False


def test_b_scaled_the_other_way():
    attended = attend(_problem(), AttentionSettings(), True, "scale")
    np.testing.assert_allclose(attended.result.weights, _expected(True, False, True), atol=1e-6)
    np.testing.assert_allclose(
        attended.other_result.weights, _expected(False, False, True), atol=1e-6
    )
    assert attended.other.label == "unscaled"


def test_b_without_masks_drops_the_padding_too():
    attended = attend(_problem(), AttentionSettings(causal=True, window=1), True, "mask")
    assert attended.other.label == "no masks"
    np.testing.assert_allclose(
        attended.other_result.weights, _expected(True, False, False), atol=1e-6
    )


def test_b_that_does_not_fit_keeps_a_and_says_why():
    wide = RNG.normal(size=(4, 6)).astype(np.float32)  # Dq 6 != Dk 3: dot cannot score
    attended = attend(_problem(query=wide), AttentionSettings(score="general"), False, "score")
    assert attended.other.settings.score == "dot"
    assert attended.other_result is None
    assert "Dq" in attended.other_error or "dot" in attended.other_error
    assert np.isfinite(attended.result.weights).all()


def test_a_that_does_not_fit_raises_a_helpful_error():
    wide = RNG.normal(size=(4, 6)).astype(np.float32)
    with pytest.raises(ValueError, match="dot"):
        attend(_problem(query=wide), AttentionSettings(), False)


TODAY = AttentionSettings(causal=True, window=2, sinks=1, chunk=3, documents=(4, 2))


def _changed(a: AttentionSettings, b: AttentionSettings) -> set[str]:
    return {k for k, v in dataclasses.asdict(a).items() if dataclasses.asdict(b)[k] != v}


@pytest.mark.parametrize("scale", [True, False])
def test_scaling_flips_and_nothing_else_changes(scale):
    a = AttentionSettings(scale=scale, causal=True)
    other = other_settings("scale", a, True, masked=True, score=None)
    assert other.settings.scale is not scale
    assert _changed(a, other.settings) == {"scale"}
    assert other.use_padding is True
    assert other.label == ("unscaled" if scale else "scaled by 1/√Dk")


@pytest.mark.parametrize(("value", "flipped"), [("-inf", "-1e9"), ("-1e9", "-inf")])
def test_the_masked_logit_flips(value, flipped):
    other = other_settings("mask_value", AttentionSettings(mask_value=value), False, True, None)
    assert other.settings.mask_value == flipped
    assert other.label == f"masked logits {flipped}"


def test_another_score_is_never_a_s_own():
    for score in SCORE_KINDS:
        a = AttentionSettings(score=score)
        kinds = other_scores(a)
        assert score not in kinds and len(kinds) == len(SCORE_KINDS) - 1
        assert other_settings("score", a, False, False, None).settings.score == kinds[0]
        # a chosen score that is A's own (A changed since) falls back to the first other one
        assert other_settings("score", a, False, False, score).settings.score == kinds[0]
        assert other_settings("score", a, False, False, kinds[-1]).settings.score == kinds[-1]


def test_no_masks_turns_every_mask_rule_off_and_the_padding_too():
    other = other_settings("mask", TODAY, True, masked=True, score=None)
    off = other.settings
    assert (off.causal, off.window, off.sinks, off.chunk, off.documents, off.prefix) == (
        False, None, None, None, None, None,
    )  # fmt: skip
    assert off.mask_spec.allowed(np.arange(6), np.arange(6)).all()
    assert other.use_padding is False and other.label == "no masks"
    prefix = other_settings("mask", AttentionSettings(prefix=2), False, True, None)
    assert prefix.settings.prefix is None and prefix.settings.causal is False


def test_with_nothing_blocked_the_comparison_shows_a_causal_mask():
    other = other_settings("mask", AttentionSettings(), True, masked=False, score=None)
    assert other.settings.causal is True and other.label == "causal mask"
    assert other.use_padding is True


def test_an_unknown_comparison_says_which_exist():
    with pytest.raises(ValueError, match="what") as err:
        other_settings("colour", AttentionSettings(), False, False, None)
    for key in COMPARISONS:
        assert key in str(err.value)


def test_any_mask_sees_every_rule_but_not_the_padding():
    assert not any_mask(AttentionSettings())
    for rule in [dict(causal=True), dict(window=0), dict(sinks=1), dict(chunk=2),
                 dict(documents=(2, 2)), dict(prefix=1)]:  # fmt: skip
        assert any_mask(AttentionSettings(**rule)), rule
