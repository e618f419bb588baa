"""Tests for learn/train_all.py: its command line and stopping rule (no training here)."""

import pytest

from attnviz.learn.language.tasks import COPY_SHAPES
from attnviz.learn.train_all import BAR, LM_BAR, _line, _missed, _parse, _stop_when_perfect


def test_every_task_and_score_by_default():
    models = _parse([]).models
    assert len(models) == 13 and models[0] == ("dates", "dot")
    assert models[-4:-2] == [("dates", "transformer"), ("reverse", "transformer")]
    assert models[-2:] == [("induction", "lm"), ("text", "lm")]
    assert _parse(["--only", "induction/lm"]).models == [("induction", "lm")]
    assert _parse(["--only", "reverse/concat, dates/general"]).models == [
        ("reverse", "concat"),
        ("dates", "general"),
    ]


def test_unknown_models_are_refused(capsys):
    with pytest.raises(SystemExit):
        _parse(["--only", "dates/cosine"])
    assert "unknown task/score" in capsys.readouterr().err


class _Report:
    def __init__(self, epoch: int, exact: float) -> None:
        self.epoch, self.val_exact_match = epoch, exact


@pytest.mark.parametrize(
    ("epoch", "exact", "stop"),
    [(0, 1.0, False), (1, 0.998, False), (2, 1.0, True)],
    ids=["untrained", "almost", "perfect"],
)
def test_stops_once_every_validation_pair_is_exact(epoch, exact, stop):
    assert _stop_when_perfect(_Report(epoch, exact)) is stop


def test_the_shipping_bar():
    assert BAR == {"exact_match": 0.99, "alignment": 0.9}


def test_the_language_models_bar():
    assert {name for name, _, _ in LM_BAR["induction"]} == {
        "in_context_accuracy", "previous_token", "induction", "ablated_in_context_accuracy",
    }  # fmt: skip
    row = {
        "task": "induction",
        "score": "lm",
        "in_context_accuracy": 0.99,
        "previous_token": 0.91,
        "induction": 0.99,
        "ablated_in_context_accuracy": 0.03,
    }
    assert not _missed(row)
    assert _missed({**row, "ablated_in_context_accuracy": 0.6})  # another head still copies
    assert _missed({**row, "previous_token": 0.7})
    assert _missed({"task": "text", "score": "lm", "unigram_gain": -0.1})
    assert _missed({"task": "dates", "score": "dot", "exact_match": 1.0, "alignment": 0.5})


def test_the_induction_model_must_copy_in_every_shape():
    # the average over fresh sequences can pass while one shape (a repeat early in a short
    # text) fails: each of COPY_SHAPES has the bar
    row = {
        "task": "induction", "score": "lm", "loss": 0.5, "unigram_loss": 3.0, "accuracy": 0.6,
        "in_context_accuracy": 0.99, "previous_token": 0.91, "previous_token_head": [0, 1],
        "induction": 0.99, "induction_head": [1, 0], "ablated_in_context_accuracy": 0.03,
        "epochs": 3, "best_epoch": 3, "seconds": 1.0, "parameters": 10,
        "copy_shapes": dict.fromkeys(COPY_SHAPES, 0.99),
    }  # fmt: skip
    assert not _missed(row)
    early = "starts early in a short text"
    worse = {**row, "copy_shapes": {**row["copy_shapes"], early: 0.06}}
    assert _missed(worse)
    assert f"worst copy shape: {early} 0.0600" in _line(worse)
