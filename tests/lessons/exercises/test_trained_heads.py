"""Lesson 10's exercises on the shipped dates Transformer, their answers recomputed here from the
model's teacher-forced cross-attention (another run than the greedy one the exercises read)
and Learn's own alignment metric (`metrics.head_alignment_scores`), and counted by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnviz.learn.translation.metrics import head_alignment_scores
from attnviz.learn.translation.tasks import known_alignment, make_pairs
from attnviz.lessons.exercises import trained_heads
from attnviz.lessons.exercises.learned import DIGIT_ROWS, char_label
from attnviz.lessons.exercises.trained_heads import ALIGNMENT_SCORE, BEST_HEAD, WHERE

pytestmark = pytest.mark.slow  # loads the shipped Transformer

SEEDS = (0, 1, 7)


@pytest.fixture(scope="module")
def model():
    return trained_heads.trained_model()  # the one the exercises use, loaded once


def _teacher_forced(model, source: str, target: str) -> np.ndarray:
    """`(L, H, T, S)` cross weights with the true date fed to the decoder, cropped."""
    cross = model.teacher_forced_cross([(source, target)])[0]  # (L, H, T_max, S_max)
    return cross[:, :, : len(target) + 1, : len(source)].astype(np.float64)


def _by_hand(cross: np.ndarray, source: str, target: str) -> np.ndarray:
    """`(L, H)`: share of the 8 digit rows whose largest weight is inside their span."""
    spans = known_alignment("dates", source, target)
    hits = [
        [[spans[r][0] <= cross[a, b, r].argmax() < spans[r][1] for r in DIGIT_ROWS]
         for b in range(cross.shape[1])]
        for a in range(cross.shape[0])
    ]  # fmt: skip
    return np.mean(hits, axis=-1)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_best_head_is_learns_own_alignment_metric(model, seed):
    variant = BEST_HEAD.make(seed)
    source, target = variant.data["source"], variant.data["target"]
    assert model.translate(source).output == target
    scores = head_alignment_scores(model, [(source, target)])  # (L, H), teacher-forced
    np.testing.assert_allclose(_by_hand(_teacher_forced(model, source, target), source, target),
                               scores)  # fmt: skip
    reveal = BEST_HEAD.reveal(variant, BEST_HEAD.solution(variant))
    np.testing.assert_allclose(reveal.matrix, scores)  # the greedy run agrees
    for k, option in enumerate(variant.answer.options):
        layer, head = divmod(k, scores.shape[1])
        assert BEST_HEAD.check(variant, option).solved == (scores[layer, head] == scores.max())


def test_a_tie_for_the_best_head_accepts_every_tied_head(model):
    pairs = make_pairs("dates", 40, 2026)
    outputs = [t.output for t in model.translate_batch([s for s, _ in pairs])]
    for (source, target), output in zip(pairs, outputs, strict=True):
        scores = head_alignment_scores(model, [(source, target)])
        tied = np.flatnonzero(scores.ravel() == scores.max())
        if output == target and len(tied) > 1:
            break
    else:
        pytest.fail("no date of 40 has two best-aligned heads")
    variant = dataclasses.replace(BEST_HEAD.make(0), data={"source": source, "target": target})
    for k, option in enumerate(variant.answer.options):
        verdict = BEST_HEAD.check(variant, option)
        assert verdict.solved == (k in tied)
        assert ("too)" in verdict.message) == (k in tied)


@pytest.mark.parametrize("seed", SEEDS)
def test_where_the_head_looks_is_its_teacher_forced_argmax(model, seed):
    variant = WHERE.make(seed)
    source, target, row = variant.data["source"], variant.data["target"], variant.data["row"]
    layer, head = variant.data["head"]
    row_weights = _teacher_forced(model, source, target)[layer, head, row]  # (S,)
    top = int(np.argmax(row_weights))
    assert np.sort(row_weights)[-1] - np.sort(row_weights)[-2] >= trained_heads.MARGIN - 1e-3
    assert WHERE.solution(variant) == char_label(top, source[top])
    for column, option in enumerate(variant.answer.options):
        assert WHERE.check(variant, option).solved == (column == top)
    span = known_alignment("dates", source, target)[row]
    inside = [j for j in range(*span) if j != top]
    if inside:  # the right part, not its brightest character
        told = WHERE.check(variant, variant.answer.options[inside[0]]).message
        assert told.startswith("The right part")


@pytest.mark.parametrize("seed", SEEDS)
def test_the_alignment_score_counted_by_hand(model, seed):
    variant = ALIGNMENT_SCORE.make(seed)
    source, target = variant.data["source"], variant.data["target"]
    layer, head = variant.data["head"]
    cross = _teacher_forced(model, source, target)
    np.testing.assert_allclose(variant.shown[0][1], cross[layer, head], atol=1e-5)
    hits = round(_by_hand(cross, source, target)[layer, head] * 8)
    assert 0 < hits < 8  # a head that is right for some digits only
    assert ALIGNMENT_SCORE.check(variant, str(hits / 8)).solved
    assert "divide by 8" in ALIGNMENT_SCORE.check(variant, str(hits)).message
    told = ALIGNMENT_SCORE.check(variant, str(hits / 10)).message
    assert "You divided by 10" in told
    assert not ALIGNMENT_SCORE.check(variant, str((hits + 1) / 8)).solved
