"""Lesson 12's exercises on the shipped induction language model, their answers recomputed here
by hand from the model's raw run: induction scores read off the weights in numpy (and against
the language model's own metric), in-context accuracy with a head off counted from the
logits, the next letter from the last row of logits."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.learn.language.metrics import induction_scores
from attnviz.learn.language.model import Ablation
from attnviz.learn.language.tasks import make_sequences
from attnviz.lessons.exercises import induction
from attnviz.lessons.exercises.induction import BREAK_COPYING, NEXT_LETTER, WHICH_HEAD

pytestmark = pytest.mark.slow  # loads the shipped language model

SEEDS = (0, 1, 7)


@pytest.fixture(scope="module")
def model():
    return induction.trained_model()  # the one the exercises use, loaded once


def _induction_by_hand(weights: np.ndarray, tokens: list) -> np.ndarray:
    """`(L, H)`: mean weight from each token that came before (not just before) on the token
    after its last earlier occurrence."""
    picked = []
    for i, token in enumerate(tokens):
        earlier = [j for j in range(i - 1) if tokens[j] == token]
        if earlier:
            picked.append(weights[:, :, i, earlier[-1] + 1])  # (L, H)
    return np.mean(picked, axis=0)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_induction_head_has_the_largest_score_by_hand(model, seed):
    variant = WHICH_HEAD.make(seed)
    ids = model.task.encode(variant.data["text"])  # (T,)
    weights = model.run(ids[None]).weights[0].astype(np.float64)  # (L, H, T, T)
    scores = _induction_by_hand(weights, list(ids))
    np.testing.assert_allclose(scores, induction_scores(weights[None], ids[None]), atol=1e-6)
    layer, head = np.unravel_index(int(np.argmax(scores)), scores.shape)
    assert WHICH_HEAD.solution(variant) == f"layer {layer} · head {head}"
    assert layer == 1  # the induction head reads the marks layer 0 wrote
    previous = np.diagonal(weights, offset=-1, axis1=-2, axis2=-1).mean(axis=-1)  # (L, H)
    pl, ph = np.unravel_index(int(np.argmax(previous)), previous.shape)
    told = WHICH_HEAD.check(variant, f"layer {pl} · head {ph}")
    assert not told.solved and "previous-token head" in told.message
    np.testing.assert_allclose(WHICH_HEAD.reveal(variant, None).matrix, scores, atol=1e-5)


def _in_context_accuracy(model, ids: np.ndarray, ablation) -> float:
    """The share of in-context positions (the token after the last earlier occurrence of the
    current token is the next one) whose largest logit is the next token."""
    inputs, following = ids[:, :-1], ids[:, 1:]  # (N, T) each
    predicted = model.run(inputs, ablation).logits.argmax(axis=-1)  # (N, T)
    right = []
    for x, y, guess in zip(inputs, following, predicted, strict=True):
        for i in range(len(x)):
            earlier = [j for j in range(i - 1) if x[j] == x[i]]
            if earlier and x[earlier[-1] + 1] == y[i]:
                right.append(guess[i] == y[i])
    return float(np.mean(right))


def test_switching_off_any_head_that_breaks_copying_solves_it(model):
    variant = BREAK_COPYING.make(0)
    ids = make_sequences("induction", induction.SCORED_SEQUENCES, variant.data["sequences"])
    bar, c = variant.data["bar"], model.config
    assert _in_context_accuracy(model, ids, None) == pytest.approx(variant.data["intact"])
    broke = []
    for layer in range(c.layers):
        for head in range(c.heads):
            off = _in_context_accuracy(model, ids, Ablation(((layer, head),), "zero"))
            verdict = BREAK_COPYING.check(variant, {"layer": layer, "head": head})
            assert verdict.solved == (off < bar), (layer, head, off)
            assert f"**{off:.0%}**" in verdict.message
            broke += [(layer, head)] if off < bar else []
    assert (1, 0) in broke and (0, 2) in broke  # the induction and previous-token heads
    assert set(BREAK_COPYING.reveal(variant, None).right) == set(broke)
    start = {c.name: c.default for c in variant.answer.controls}
    assert not BREAK_COPYING.check(variant, start).solved  # the controls start unsolved
    assert BREAK_COPYING.check(variant, {"layer": 1.0, "head": 0.0}).solved  # whole floats


def test_how_close_a_harmless_head_is(model):
    variant = BREAK_COPYING.make(1)
    start = {c.name: c.default for c in variant.answer.controls}
    verdict = BREAK_COPYING.check(variant, start)
    assert 0.0 <= verdict.close < 0.2
    assert BREAK_COPYING.check(variant, BREAK_COPYING.solution(variant)).close == 1.0


@pytest.mark.parametrize("seed", SEEDS)
def test_the_next_letter_is_the_last_logits_argmax_and_a_copy(model, seed):
    variant = NEXT_LETTER.make(seed)
    text = variant.data["text"]
    logits = model.run(model.task.encode(text)[None]).logits[0, -1]  # (V,)
    logits[0] = -np.inf  # <s> is never next
    predicted = model.task.labels[int(np.argmax(logits))]
    assert NEXT_LETTER.solution(variant) == predicted
    copied = text[text[:-1].rfind(text[-1]) + 1]  # the letter after the last's earlier place
    assert predicted == copied  # the shipped model copies
    assert copied in variant.answer.options and text[-1] in variant.answer.options
    assert len(set(variant.answer.options)) == induction.LETTERS
    for option in variant.answer.options:
        assert NEXT_LETTER.check(variant, option).solved == (option == predicted)


def test_the_usual_mistakes_about_the_next_letter_are_named(model):
    variant = NEXT_LETTER.make(1)
    text = variant.data["text"]
    assert "repeats the last letter" in NEXT_LETTER.check(variant, text[-1]).message
    before = text[text[:-1].rfind(text[-1]) - 1]
    if before in variant.answer.options:
        assert "letter *before*" in NEXT_LETTER.check(variant, before).message
    unseen = next(o for o in variant.answer.options if o not in text)
    assert "never came in the text" in NEXT_LETTER.check(variant, unseen).message
