"""Tests for learn/runs.py: training in a background thread, watched and stopped from outside."""

import threading

import pytest

from attnviz.learn import runs
from attnviz.learn.configs import (
    LM_TRAINING,
    LMConfig,
    NetworkConfig,
    TrainConfig,
    TransformerConfig,
)
from attnviz.learn.runs import TrainingRun

TINY = NetworkConfig(units=8, embed_dim=8, attention_units=8)


def _pairs(epochs: int, seed: int = 0) -> TrainConfig:
    return TrainConfig(epochs, n_pairs=200, val_pairs=50, seed=seed)


@pytest.mark.slow  # trains
def test_a_run_reports_every_epoch_and_ends_with_its_model():
    run = TrainingRun.start("reverse", TINY, _pairs(2, seed=3))
    snapshot = run.join(timeout=120)
    assert snapshot.state == "done", snapshot.error
    assert [r.epoch for r in snapshot.reports] == [0, 1, 2]  # 0 = before training
    assert snapshot.model is not None and not run.running
    assert snapshot.model.translate("abc").weights.shape[1] == 3
    assert not runs.training_active()


@pytest.mark.slow  # trains
def test_a_transformer_run_trains_the_transformer():
    small = TransformerConfig(layers=1, heads=2, d_model=8, d_ff=8)
    run = TrainingRun.start("reverse", small, TrainConfig(1, n_pairs=200, val_pairs=20, seed=3))
    assert run.transformer
    snapshot = run.join(timeout=120)
    assert snapshot.state == "done", snapshot.error
    assert [r.epoch for r in snapshot.reports] == [0, 1]
    assert snapshot.model.translate("abc").cross.shape[:2] == (1, 2)  # one layer, two heads


@pytest.mark.slow  # trains
def test_stop_ends_after_the_current_epoch_and_keeps_the_best_model():
    epoch_1 = threading.Event()
    runs.TRAINING_SLOTS.acquire()  # the run waits for the slot while it is being watched
    try:
        run = TrainingRun.start("reverse", TINY, _pairs(50, seed=4))
        report_epoch = run._on_epoch

        def watched(report):  # the run's own epoch callback, which also says "epoch 1 done"
            stop = report_epoch(report)
            if report.epoch >= 1:
                epoch_1.set()
            return stop

        run._on_epoch = watched
    finally:
        runs.TRAINING_SLOTS.release()
    assert epoch_1.wait(120)
    run.stop()  # the page's Stop button, from another thread
    snapshot = run.join(timeout=120)
    assert snapshot.state == "stopped"
    assert 2 <= len(snapshot.reports) < 51 and snapshot.model is not None
    best = max(snapshot.reports, key=lambda r: (r.val_char_accuracy, r.val_exact_match))
    assert snapshot.model.stats.best_epoch == best.epoch


@pytest.mark.slow  # trains
def test_a_language_model_run_reports_every_head_s_scores():
    small = LMConfig(d_model=16, heads=2, d_ff=0)
    run = TrainingRun.start("induction", small, TrainConfig(1, n_pairs=128, val_pairs=32, seed=3))
    assert run.language_model and not run.transformer
    snapshot = run.join(timeout=120)
    assert snapshot.state == "done", snapshot.error
    assert [r.epoch for r in snapshot.reports] == [0, 1]
    assert snapshot.reports[-1].induction.shape == (2, 2)  # (L, H), per epoch
    assert snapshot.model.forward("abcab").weights.shape == (2, 2, 6, 6)


def test_a_language_model_trains_by_lm_training_unless_told():
    runs.TRAINING_SLOTS.acquire()
    try:
        run = TrainingRun.start("induction", LMConfig())
        assert run.training == LM_TRAINING and run.snapshot().state == "waiting"
        run.stop()
    finally:
        runs.TRAINING_SLOTS.release()
    assert run.join(timeout=30).state == "stopped"


def test_a_failed_run_says_why_and_frees_the_slot():
    run = TrainingRun.start("no such task")
    snapshot = run.join(timeout=30)
    assert snapshot.state == "failed"
    assert "ValueError" in snapshot.error and "no such task" in snapshot.error
    assert runs.TRAINING_SLOTS.acquire(timeout=1)  # the slot is free again
    runs.TRAINING_SLOTS.release()


def test_runs_wait_for_the_one_training_slot():
    runs.TRAINING_SLOTS.acquire()
    try:
        run = TrainingRun.start("reverse", TINY, _pairs(1))
        assert run.snapshot().state == "waiting"
        run.stop()  # stopped while waiting: it never trains
    finally:
        runs.TRAINING_SLOTS.release()
    assert run.join(timeout=30).state == "stopped"
