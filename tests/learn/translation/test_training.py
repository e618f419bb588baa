"""Tests for learn/translation/training.py: a short CI run, its per-epoch reports, determinism,
stopping."""

import time
from dataclasses import replace

import keras
import numpy as np
import pytest

from attnviz.learn import train
from attnviz.learn.configs import NetworkConfig, TrainConfig, TransformerConfig
from attnviz.learn.translation.model import Seq2SeqAttention
from attnviz.learn.translation.tasks import get_task
from attnviz.learn.translation.training import _Reporter, train_transformer

pytestmark = pytest.mark.slow  # trains

# A small model on a few hundred pairs: ~12k parameters, 2 epochs, ~6 s on 2 cores.
CI_NETWORK = NetworkConfig("dot", units=16, embed_dim=16, attention_units=32)
CI_TRAINING = TrainConfig(2, n_pairs=800, val_pairs=100, batch_size=16, learning_rate=0.01, seed=7,
                          time_limit=900.0)  # two epochs on a busy test machine too  # fmt: skip
TINY = NetworkConfig(units=4, embed_dim=4, attention_units=4)
TINY_TRAINING = TrainConfig(n_pairs=64, val_pairs=16, batch_size=16)


@pytest.fixture(scope="module")
def ci_run():
    reports = []
    model = train("dates", CI_NETWORK, CI_TRAINING, callback=reports.append)
    return model, reports


def test_a_short_run_beats_the_floor(ci_run):
    model, reports = ci_run
    assert reports[0].val_char_accuracy < 0.2  # untrained: noise
    assert model.stats.val_char_accuracy >= 0.6  # 0.739 on the machine that wrote this
    assert reports[-1].loss < reports[1].loss


def test_the_callback_sees_every_epoch_with_the_probe_attention(ci_run):
    model, reports = ci_run
    assert [r.epoch for r in reports] == [0, 1, 2]  # 0 = before the first step
    assert reports[0].loss is None and reports[0].char_accuracy is None
    assert all(r.loss > 0 and 0 <= r.char_accuracy <= 1 for r in reports[1:])
    assert [r.seconds for r in reports] == sorted(r.seconds for r in reports)
    probe = get_task("dates").example[0]  # "Sunday, 22 November 2026", 24 characters
    for report in reports:
        assert report.probe.source == probe
        assert report.probe.weights.shape == (len(report.probe.output), 24)
        np.testing.assert_allclose(report.probe.weights.sum(axis=1), 1.0, atol=1e-5)
    first = reports[0].probe.weights
    assert np.abs(first - 1 / 24).max() < 0.005  # epoch 0: uniform noise
    assert reports[-1].probe.weights.max() > 0.3  # after training: it looks somewhere


def test_the_model_keeps_its_best_epoch_and_its_stats(ci_run):
    model, reports = ci_run
    best = max(reports, key=lambda r: (r.val_char_accuracy, r.val_exact_match))
    stats = model.stats
    assert stats.best_epoch == best.epoch and stats.epochs_run == 2
    assert stats.val_char_accuracy == best.val_char_accuracy
    assert stats.parameters == model.parameter_count == 11_806
    assert len(stats.history) == 3 and np.isnan(stats.history[0][1])
    assert 0 <= stats.val_alignment <= 1 and stats.train_seconds >= reports[-1].seconds


def test_same_seed_same_weights(ci_run):
    model, reports = ci_run
    again = []
    twin = train("dates", CI_NETWORK, CI_TRAINING, callback=again.append)
    for a, b in zip(model.get_weights(), twin.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert [r.loss for r in again] == [r.loss for r in reports]
    assert [r.probe.output for r in again] == [r.probe.output for r in reports]


def test_a_trained_model_survives_clear_session(ci_run):
    model, _ = ci_run
    before = model.translate("22 nov 2026")
    for _ in range(3):
        keras.backend.clear_session()
    after = model.translate("22 nov 2026")
    assert after.output == before.output
    np.testing.assert_array_equal(after.weights, before.weights)


@pytest.fixture(scope="module")
def tiny_model():
    return Seq2SeqAttention("reverse", NetworkConfig(units=4, embed_dim=4, attention_units=4))


@pytest.fixture
def adapter(tiny_model):
    """The Keras callback adapter on a tiny untrained model, outside `fit`."""
    model = tiny_model
    stops = []
    reporter = _Reporter(model, (("abc", "xy1"), ("cba", "1yx")), "abc", stops.append, 60.0)
    reporter.set_model(model.networks.trainer)
    model.networks.trainer.stop_training = False
    return reporter, stops


def test_the_adapter_stops_when_the_callback_returns_true(adapter):
    reporter, seen = adapter
    reporter.callback = lambda report: seen.append(report) or report.epoch == 2
    reporter.on_epoch_end(0, {"loss": 2.0, "accuracy": 0.5})  # Keras's epoch 0 is our epoch 1
    assert not reporter.model.stop_training and seen[-1].epoch == 1
    assert seen[-1].loss == 2.0 and seen[-1].probe.weights.shape[1] == 3
    reporter.on_epoch_end(1, {"loss": 1.0, "accuracy": 0.7})
    assert reporter.model.stop_training and seen[-1].epoch == 2


def test_the_adapter_stops_within_a_batch_of_the_time_limit(adapter):
    reporter, _ = adapter
    reporter.on_train_batch_end(0)
    assert not reporter.model.stop_training
    reporter.deadline = time.perf_counter() - 1  # the time is up
    reporter.on_train_batch_end(1)
    assert reporter.model.stop_training


def test_the_adapter_keeps_the_best_weights(adapter):
    reporter, _ = adapter
    first = reporter.report(0, None)
    assert first.best and reporter.best_epoch == 0 and reporter.best_weights is not None
    again = reporter.report(1, None)  # same weights, same accuracy: not better
    assert not again.best and reporter.best_epoch == 0


def test_returning_true_at_epoch_zero_never_trains():
    model = train("reverse", TINY, replace(TINY_TRAINING, epochs=20), callback=lambda r: True)
    assert model.stats.epochs_run == 0 and model.stats.best_epoch == 0


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: train("french"), '`task` must be one of "dates", "reverse", "german_numbers"'),
        (lambda: NetworkConfig("cosine"), '`score` must be one of "dot", "general", "concat"'),
        (lambda: TrainConfig(epochs=0), "`epochs` must be from 1 to 200. Received: 0"),
        (lambda: TrainConfig(n_pairs=10**7), "`n_pairs` must be from 1 to 200000"),
        (lambda: TrainConfig(learning_rate=0), "`learning_rate` must be above 0.0 and at most 1.0"),
        (lambda: TrainConfig(time_limit=float("nan")), "`time_limit` must be above 0.0"),
        (lambda: TrainConfig(time_limit="60"), "`time_limit` must be a number. Received: '60'"),
        (lambda: NetworkConfig(scale=1), "`scale` must be True or False"),
        (lambda: NetworkConfig(units=0), "`units` must be from 1 to 256"),
        (lambda: train("dates", callback="print"), "`callback` must be a function or None"),
        (lambda: train("dates", probe="22 nov 2026!"),
         r"`probe` holds characters the dates task does not know: '!'"),
        (lambda: TrainConfig(seed=-3), "`seed` must be from 0 to 4294967295"),
        (lambda: train("dates", TrainConfig()), "`network` must be a NetworkConfig"),
        (lambda: train("dates", NetworkConfig(), NetworkConfig()), "`training` must be a"),
        (lambda: train_transformer("dates", NetworkConfig()), "must be a TransformerConfig"),
    ],
    ids=["task", "score", "epochs", "pairs", "rate", "nan", "text", "scale", "units",
         "callback", "probe", "seed", "network-kind", "training-kind", "transformer-kind"],
)  # fmt: skip
def test_bad_arguments_raise_before_training(call, match):
    with pytest.raises(ValueError, match=match):
        call()


SMALL_TRANSFORMER = TransformerConfig(layers=1, heads=2, d_model=16, d_ff=16)
SMALL_TRAINING = TrainConfig(
    2, n_pairs=400, val_pairs=40, batch_size=32, learning_rate=0.005, seed=5
)


def test_a_transformer_trains_with_the_same_loop_reports_and_determinism():
    reports = []
    model = train_transformer("reverse", SMALL_TRANSFORMER, SMALL_TRAINING, callback=reports.append)
    assert [r.epoch for r in reports] == [0, 1, 2]
    assert reports[-1].loss < 3.0 and reports[0].loss is None
    probe = reports[-1].probe
    assert probe.source == get_task("reverse").example[0] and probe.cross.shape[:2] == (1, 2)
    stats = model.stats
    assert (stats.score, stats.scale, stats.epochs_run) == ("dot", True, 2)
    assert 0.0 <= stats.val_alignment <= 1.0 and stats.parameters == model.parameter_count
    again = train_transformer("reverse", SMALL_TRANSFORMER, SMALL_TRAINING)
    for a, b in zip(model.get_weights(), again.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_bad_transformer_sizes_raise_before_training():
    with pytest.raises(ValueError, match="divisible by `heads`"):
        train_transformer("dates", TransformerConfig(heads=3))
    with pytest.raises(ValueError, match="`probe`"):
        train_transformer("dates", probe="§")
