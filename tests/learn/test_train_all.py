"""Tests for learn/train_all.py: its command line and stopping rule (no training here)."""

import pytest

from attnviz.learn.train_all import BAR, _parse, _stop_when_perfect


def test_every_task_and_score_by_default():
    models = _parse([]).models
    assert len(models) == 11 and models[0] == ("dates", "dot")
    assert models[-2:] == [("dates", "transformer"), ("reverse", "transformer")]
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
