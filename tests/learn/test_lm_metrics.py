"""Tests for learn/lm_metrics.py: induction targets and head scores on hand-made weights, the
evaluation and the ablation table, and the shipped induction checkpoint's claims on fresh
sequences (a seed training never used)."""

import math

import numpy as np
import pytest

from attnviz.learn.language_model import Ablation
from attnviz.learn.lm_metrics import (
    ABLATION_METRICS,
    ablation_table,
    evaluate_lm,
    induction_scores,
    induction_targets,
    previous_token_scores,
    unigram_loss,
)
from attnviz.learn.lm_tasks import make_sequences
from attnviz.learn.pretrained import load_lm

pytestmark = pytest.mark.slow  # runs the shipped language models

FRESH_SEED = 8_675_309  # fresh sequences: neither training's nor validation's stream


@pytest.fixture(scope="module")
def shipped():
    return load_lm("induction")


@pytest.fixture(scope="module")
def table(shipped):
    return ablation_table(shipped, make_sequences("induction", 512, FRESH_SEED))


def test_induction_targets_point_after_the_last_earlier_occurrence():
    #          <s>  a  b  c  a  b  b  d  a
    ids = np.array([[0, 1, 2, 3, 1, 2, 2, 4, 1]])
    # a at 4: seen at 1 -> 2; b at 5: seen at 2 -> 3; b at 6: seen at 5 only just before, and
    # at 2 -> 3; a at 8: last seen at 4 -> 5.
    assert induction_targets(ids).tolist() == [[-1, -1, -1, -1, 2, 3, 3, -1, 5]]


def test_head_scores_on_hand_made_weights():
    ids = np.array([[0, 1, 2, 1, 2]])  # <s> a b a b: rows 3 and 4 have targets 2 and 3
    previous = np.eye(5, k=-1)
    previous[0, 0] = 1.0  # row 0 can only look at itself
    spread = np.tril(np.ones((5, 5))) / np.arange(1, 6)[:, None]  # uniform over the past
    weights = np.stack([previous, spread])[None, None]  # (N=1, L=1, H=2, 5, 5)
    np.testing.assert_allclose(
        previous_token_scores(weights), [[1.0, (1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 4]]
    )
    # the previous-token head: row 3 looks at 2 (its target), row 4 at 3 (its target)
    np.testing.assert_allclose(induction_scores(weights, ids), [[1.0, (1 / 4 + 1 / 5) / 2]])
    none = induction_scores(weights, np.array([[0, 1, 2, 3, 4]]))
    assert np.isnan(none).all()  # no token repeats: no row to average


def test_the_unigram_floor():
    assert unigram_loss("induction") == pytest.approx(math.log(26), abs=0.01)  # letters even
    assert unigram_loss("text") == pytest.approx(3.0086, abs=1e-4)  # 4.34 bits a character


def test_the_shipped_model_copies_the_second_run(table):
    base = table.baseline
    assert base.in_context_accuracy >= 0.95  # on the repeated half of 512 fresh sequences
    assert base.in_context_positions == sum(r - 1 for r in _runs(FRESH_SEED))
    assert base.loss < unigram_loss("induction") - 1.0  # the second half costs almost nothing


def _runs(seed: int) -> list[int]:
    ids = make_sequences("induction", 512, seed)[:, 1:]
    return [next(r for r in range(16, 0, -1) if (x[-r:] == x[-2 * r : -r]).all()) for x in ids]


def test_the_shipped_model_has_a_previous_token_head_and_an_induction_head(table):
    base = table.baseline
    assert base.previous_token[0].max() >= 0.8  # a layer-0 head looks at the previous token
    assert base.induction[1].max() >= 0.8  # a layer-1 head looks after the earlier occurrence


def test_switching_the_induction_head_off_breaks_copying(table):
    layer, head = 1, int(np.argmax(table.baseline.induction[1]))
    assert table.in_context_accuracy[layer, head] < 0.5
    previous = int(np.argmax(table.baseline.previous_token[0]))  # and its previous-token head
    assert table.in_context_accuracy[0, previous] < 0.5


def test_switching_a_head_outside_the_circuit_off_barely_matters(shipped, table):
    # The circuit, read from where each head looks: the previous-token head, a head that looks
    # at the current token itself (switching it off breaks copying too) and the induction
    # head. Any other head, picked at random, barely matters.
    weights = shipped.run(make_sequences("induction", 64, FRESH_SEED)[:, :-1]).weights
    current = np.diagonal(weights, axis1=-2, axis2=-1).mean(axis=(0, 3))  # (L, H) on j = i
    base = table.baseline
    circuit = (base.previous_token >= 0.5) | (base.induction >= 0.5) | (current >= 0.5)
    assert circuit.sum() == 3 and table.in_context_accuracy[circuit].max() < 0.5
    others = np.argwhere(~circuit)  # (5, 2)
    layer, head = others[np.random.default_rng(1).integers(len(others))]
    ids = make_sequences("induction", 256, FRESH_SEED + 1)
    off = evaluate_lm(shipped, ids, Ablation(((int(layer), int(head)),)))
    assert off.in_context_accuracy >= evaluate_lm(shipped, ids).in_context_accuracy - 0.05
    assert table.in_context_accuracy[~circuit].min() > 0.8  # none of them costs 20 points


def test_the_table_has_a_row_and_a_heatmap_row_per_head(table):
    rows = table.rows()
    assert [(r["layer"], r["head"]) for r in rows] == [(a, b) for a in range(2) for b in range(4)]
    names, matrix = table.matrix()
    assert names == tuple(ABLATION_METRICS) and matrix.shape == (8, 4)
    first = rows[5]  # layer 1, head 1
    assert first["loss"] == matrix[5, 0] == table.loss[1, 1]
    assert first["loss_change"] == pytest.approx(table.loss[1, 1] - table.baseline.loss)
    assert table.mode == "zero" and not table.loss.flags.writeable


def test_mean_ablation_of_the_induction_head_breaks_copying_too(shipped, table):
    head = int(np.argmax(table.baseline.induction[1]))
    ids = make_sequences("induction", 128, FRESH_SEED)
    off = evaluate_lm(shipped, ids, Ablation(((1, head),), "mean"))
    assert off.in_context_accuracy < 0.5 and off.ablation.mode == "mean"


def test_bad_sequences_are_refused(shipped):
    with pytest.raises(ValueError, match=r"\(N, T \+ 1\) sequences of at least 2 tokens"):
        evaluate_lm(shipped, np.zeros((3,), int))
    with pytest.raises(ValueError, match="`mode` must be one of"):
        ablation_table(shipped, make_sequences("induction", 2, 0), mode="noise")
