"""Tests for learn/language/metrics.py: induction targets and head scores on hand-made weights, the
evaluation and the ablation table, and the shipped induction checkpoint's claims on fresh
sequences (a seed training never used)."""

import math

import numpy as np
import pytest

from attnviz.learn.language.metrics import (
    ABLATION_METRICS,
    ablation_table,
    copyable,
    evaluate_lm,
    induction_scores,
    induction_targets,
    previous_token_scores,
    unigram_loss,
)
from attnviz.learn.language.model import Ablation
from attnviz.learn.language.tasks import COPY_SHAPES, make_sequences, shape_sequences
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


def test_in_context_positions_are_where_copying_gives_the_next_token():
    #          <s>  a  b  c  a  b  d  a  b
    ids = np.array([[0, 1, 2, 3, 1, 2, 4, 1, 2]])
    # a at 4 -> its target 2 holds b, and b comes next: in context; b at 5 -> c would be
    # copied, d comes: not; a at 7 -> target 5 holds b, b comes: in context.
    inputs, following = ids[:, :-1], ids[:, 1:]
    assert induction_targets(inputs).tolist() == [[-1, -1, -1, -1, 2, 3, -1, 5]]
    assert copyable(inputs, following).tolist() == [[0, 0, 0, 0, 1, 0, 0, 1]]


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
    assert unigram_loss("text") == pytest.approx(3.0422, abs=1e-4)  # 4.39 bits a character


def test_the_shipped_model_copies_the_repeats_of_fresh_sequences(table):
    base = table.baseline
    assert base.in_context_accuracy >= 0.95  # on every copy of 512 fresh sequences
    ids = make_sequences("induction", 512, FRESH_SEED)
    assert base.in_context_positions == copyable(ids[:, :-1], ids[:, 1:]).sum()
    assert base.loss < unigram_loss("induction") - 1.0  # the copies cost almost nothing


@pytest.mark.parametrize("shape", list(COPY_SHAPES))
def test_the_shipped_model_copies_wherever_the_repeat_is(shipped, shape):
    # 200 fresh texts of one shape: the accuracy on the tokens copying predicts, computed
    # from the model's own logits here (argmax against the true next id).
    ids = shape_sequences(shape, 200, FRESH_SEED)  # (N, length + 1)
    inputs, following = ids[:, :-1], ids[:, 1:]
    logits = shipped.run(inputs).logits  # (N, length, V)
    where = copyable(inputs, following)
    right = logits.argmax(axis=-1) == following
    assert where.sum() >= 3 * len(ids) and right[where].mean() >= 0.95
    assert evaluate_lm(shipped, ids).in_context_accuracy == pytest.approx(right[where].mean())


def test_qwertzuiop_repeated_early_is_copied(shipped):
    text = "qwertzuiopqwertzu"  # the run starts the text; 17 letters of the 31 trained on
    forward = shipped.forward(text)
    copies = "".join(forward.predicted[11:17])  # after q, w, e, r, t, z of the copy
    assert copies == "wertzu"


def test_the_shipped_model_has_a_previous_token_head_and_an_induction_head(table):
    base = table.baseline
    assert base.previous_token[0].max() >= 0.8  # a layer-0 head looks at the previous token
    assert base.induction[1].max() >= 0.8  # a layer-1 head looks after the earlier occurrence


def test_switching_the_induction_head_off_breaks_copying(table):
    layer, head = 1, int(np.argmax(table.baseline.induction[1]))
    assert table.in_context_accuracy[layer, head] < 0.5
    previous = int(np.argmax(table.baseline.previous_token[0]))  # and its previous-token head
    assert table.in_context_accuracy[0, previous] < 0.5


def test_switching_a_head_outside_the_circuit_off_costs_little(shipped, table):
    # The circuit, read from where each head looks: the best previous-token head, the layer-0
    # head that looks most at the current token itself (switching it off breaks copying too)
    # and the best induction head. Any other head costs at most 15 points of in-context
    # accuracy (head (0, 3), which also looks at the current token a little, costs the most).
    weights = shipped.run(make_sequences("induction", 64, FRESH_SEED)[:, :-1]).weights
    current = np.diagonal(weights, axis1=-2, axis2=-1).mean(axis=(0, 3))  # (L, H) on j = i
    base = table.baseline
    circuit = np.zeros((2, 4), bool)
    circuit[0, np.argmax(base.previous_token[0])] = circuit[1, np.argmax(base.induction[1])] = True
    circuit[0, np.argmax(np.where(circuit[0], -1.0, current[0]))] = True
    assert circuit.sum() == 3 and table.in_context_accuracy[circuit].max() < 0.5
    others = np.argwhere(~circuit)  # (5, 2)
    layer, head = others[np.random.default_rng(1).integers(len(others))]
    ids = make_sequences("induction", 256, FRESH_SEED + 1)
    off = evaluate_lm(shipped, ids, Ablation(((int(layer), int(head)),)))
    assert off.in_context_accuracy >= evaluate_lm(shipped, ids).in_context_accuracy - 0.15
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
