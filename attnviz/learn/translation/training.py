"""Train a `Seq2SeqAttention` or `TransformerTranslator` with `fit`, reporting every epoch.

Shape letters: N pairs, S source positions, T decoder steps, V target ids.

`train` draws the pairs, builds the model from the seed, and runs one `fit` (teacher forcing,
cross-entropy on the target characters and the end token; padding weighs 0). A Keras callback
adapter turns each epoch into an `EpochReport`: loss and accuracy from Keras, greedy validation
accuracy, and the probe example's decoded output and attention, also once before training
(epoch 0: the attention is still close to uniform). The user callback returning True stops
training after that epoch; the epoch cap and the time limit stop it too (the time limit within
one batch). At the end the model gets the weights of its best epoch by validation accuracy.

Same seed, same arguments -> the same weights (if the time limit does not cut training short).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import keras

from attnviz.core.checks import describe
from attnviz.learn.compiling import compile_trainer
from attnviz.learn.configs import (
    TRANSFORMER_TRAINING,
    NetworkConfig,
    TrainConfig,
    TransformerConfig,
)
from attnviz.learn.global_seed import set_global_seed
from attnviz.learn.translation.metrics import alignment_score, char_accuracy
from attnviz.learn.translation.model import Seq2SeqAttention, Translation
from attnviz.learn.translation.tasks import draw_pairs, get_task, make_pairs
from attnviz.learn.translation.transformer_translator import TransformerTranslator
from attnviz.learn.translation.vocab import Vocabulary
from attnviz.learn.twins import twin_of


@dataclass(frozen=True)
class EpochReport:
    """What one epoch did; epoch 0 is the untrained model, before the first step."""

    epoch: int  # 0 before training, then 1, 2, ...
    loss: float | None  # mean training cross-entropy of the epoch (None at epoch 0)
    char_accuracy: float | None  # teacher-forced training accuracy per character (None at 0)
    val_char_accuracy: float  # greedy validation characters right (see `metrics.char_accuracy`)
    val_exact_match: float  # share of validation pairs decoded exactly
    seconds: float  # seconds since training started (model built, before epoch 0)
    probe: Translation  # the probe source's greedy translation and attention weights
    best: bool  # whether this epoch has the best validation accuracy so far


@dataclass(frozen=True)
class TrainingStats:
    """A trained model's record, kept on the model and saved beside shipped weights."""

    task: str  # the task name
    score: str  # "dot", "general" or "concat"
    scale: bool  # scores divided by sqrt(D)
    seed: int  # the training seed
    epochs_run: int  # epochs trained: the cap, or fewer if stopped (0: stopped at epoch 0)
    best_epoch: int  # the epoch whose weights the model kept
    train_seconds: float  # seconds from building the model to the end of training
    n_pairs: int  # training pairs
    val_char_accuracy: float  # of the kept weights, on the validation pairs
    val_exact_match: float  # of the kept weights, on the validation pairs
    val_alignment: float  # alignment score of the kept weights, on the validation pairs
    parameters: int  # trained numbers in the model
    history: tuple[tuple[float, ...], ...] = field(default=())  # one row per report (below)

    # history rows: (epoch, loss, char accuracy, val char accuracy, val exact match, seconds);
    # epoch 0 (before training) has NaN loss and accuracy.


Callback = Callable[[EpochReport], object]  # returns True to stop after this epoch
WeightsCallback = Callable[[list], object]  # given a best epoch's weights (`get_weights`)
Translator = Seq2SeqAttention | TransformerTranslator  # what `train` and `train_transformer` make


class _Reporter(keras.callbacks.Callback):
    """The Keras callback adapter: time limit per batch, `EpochReport` and best weights per
    epoch. Its batch hook only reads the clock, so Keras may run it asynchronously."""

    async_safe = True  # on_train_batch_end only sets `stop_training`: safe off the main thread

    def __init__(self, translator: Translator, val, probe: str, callback, limit: float,
                 on_best=None):  # fmt: skip
        super().__init__()
        self.on_best = on_best  # called with the weights of each best-so-far epoch
        self.translator = translator
        self.val = val  # (sources, targets) of the validation pairs
        self.probe = probe
        self.callback = callback
        self.start = time.perf_counter()
        self.deadline = self.start + limit
        self.best_key: tuple[float, float] = (-1.0, -1.0)
        self.best_weights = None
        self.best_epoch = 0
        self.reports: list[EpochReport] = []
        self.stop = False  # the user callback asked to stop

    def report(self, epoch: int, logs: dict | None) -> EpochReport:
        """Evaluate the current weights, keep them if best, and tell the user callback."""
        sources, targets = self.val
        translations = self.translator.translate_batch([self.probe, *sources])
        outputs = [t.output for t in translations[1:]]
        key = (
            char_accuracy(outputs, targets),
            sum(o == t for o, t in zip(outputs, targets, strict=True)) / len(targets),
        )
        best = key > self.best_key
        if best:
            self.best_key, self.best_epoch = key, epoch
            self.best_weights = self.translator.get_weights()
            if self.on_best is not None:
                self.on_best(self.best_weights)
        logs = logs or {}
        report = EpochReport(
            epoch=epoch,
            loss=float(logs["loss"]) if "loss" in logs else None,
            char_accuracy=float(logs["accuracy"]) if "accuracy" in logs else None,
            val_char_accuracy=key[0],
            val_exact_match=key[1],
            seconds=time.perf_counter() - self.start,
            probe=translations[0],
            best=best,
        )
        self.reports.append(report)
        if self.callback is not None and self.callback(report) is True:
            self.stop = True
        return report

    def on_train_batch_end(self, batch, logs=None):
        if time.perf_counter() > self.deadline:
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        self.report(epoch + 1, logs)
        if self.stop or time.perf_counter() > self.deadline:
            self.model.stop_training = True


def train(
    task: str,
    network: NetworkConfig | None = None,
    training: TrainConfig | None = None,
    *,
    callback: Callback | None = None,
    probe: str | None = None,
    on_best: WeightsCallback | None = None,
) -> Seq2SeqAttention:
    """Train a seq2seq translator with attention on `task` and return it.

    Args:
        task: one of `TASKS`.
        network: the network's score and sizes (`NetworkConfig`; None: its defaults).
        training: epochs, pairs, batches, step size, time limit and seed (`TrainConfig`; None:
            its defaults); the seed draws the pairs, the initial weights and the shuffling.
        callback: called with an `EpochReport` before training (epoch 0) and after every
            epoch; returning True stops training after that epoch.
        probe: the source whose translation and attention every report shows (default: the
            task's example).
        on_best: called with the model's weights (`get_weights`) each time an epoch is the best
            so far, before `callback` gets that epoch's report (a shared run publishes them).

    Returns:
        The trained `Seq2SeqAttention`, holding the weights of its best validation epoch and
        its `TrainingStats` in `.stats`.

    Raises:
        ValueError: for an unknown task, configs of the wrong kind, or a bad probe.
    """
    get_task(task)
    network = _checked(network, NetworkConfig, "network")
    training = _checked(training, TrainConfig, "training")
    return _built_and_fit(
        lambda: Seq2SeqAttention(task, network, training.seed),
        task, training, callback, probe, on_best,
    )  # fmt: skip


def train_transformer(
    task: str,
    network: TransformerConfig | None = None,
    training: TrainConfig | None = None,
    *,
    callback: Callback | None = None,
    probe: str | None = None,
    on_best: WeightsCallback | None = None,
) -> TransformerTranslator:
    """Train a small encoder–decoder `TransformerTranslator` on `task` and return it.

    The same loop, reports, stopping and best-epoch rule as `train`; the score is always the
    scaled dot product. `network` is a `TransformerConfig`, and `training` defaults to
    `TRANSFORMER_TRAINING`; the other arguments are `train`'s.

    Returns:
        The trained `TransformerTranslator` with its `TrainingStats` in `.stats` (whose
        `val_alignment` is its best cross-attention head's alignment score).

    Raises:
        ValueError: for an unknown task, configs of the wrong kind, or a bad probe.
    """
    get_task(task)
    network = _checked(network, TransformerConfig, "network")
    training = _checked(training or TRANSFORMER_TRAINING, TrainConfig, "training")
    return _built_and_fit(
        lambda: TransformerTranslator(task, network, training.seed),
        task, training, callback, probe, on_best,
    )  # fmt: skip


def _checked(config: object, kind: type, name: str):
    """`config`, or `kind()` for None; a config of another kind is a ValueError."""
    if config is None:
        return kind()
    if not isinstance(config, kind):
        raise ValueError(
            f"`{name}` must be a {kind.__name__}. Received: {describe(config)}. "
            f"Build one with {kind.__name__}(...) (see attnviz.learn.configs)."
        )
    return config


def _built_and_fit(
    build, task: str, settings: TrainConfig, callback, probe, on_best=None
) -> Translator:
    """Check the callback and the probe, then build the model (the clock starts here) and
    fit it."""
    if callback is not None and not callable(callback):
        raise ValueError(f"`callback` must be a function or None. Received: {describe(callback)}.")
    spec = get_task(task)
    probe = Vocabulary.of(spec).check_source(spec.example[0] if probe is None else probe, "probe")
    start = time.perf_counter()
    return _fit(build(), settings, probe, callback, start, on_best)


def training_arrays(model: Translator, pairs) -> tuple[list, object, object]:
    """`([sources (N, S), decoder inputs (N, T)], targets (N, T), weights (N, T))` for `fit`."""
    sources = model.vocab.encode_sources([s for s, _ in pairs])  # (N, S)
    dec_in, dec_out, weights = model.vocab.encode_targets([t for _, t in pairs])  # (N, T) each
    return [sources, dec_in], dec_out, weights


def compile_for_training(model: Translator, learning_rate: float) -> keras.Model:
    """Compile the model's Keras trainer (`learn.compiling.compile_trainer`): Adam, cross-entropy on
    logits, accuracy weighted as the loss is (padding weighs 0).

    No XLA (`jit_compile=False`): compiling the GRU loops costs more than it saves on a run
    of a few epochs on CPU.
    """
    return compile_trainer(model.trainer, learning_rate, weighted=True, jit_compile=False)


def _fit(
    model: Translator, settings: TrainConfig, probe: str, callback, start: float, on_best=None
) -> Translator:
    task = model.task.name
    x, y, weights = training_arrays(model, make_pairs(task, settings.n_pairs, settings.seed))
    val = draw_pairs(task, settings.val_pairs, f"{settings.seed}:validation")

    def make() -> Translator:  # a twin: its weights are given before it trains
        return type(model)(task, model.config, seed=None)

    def compile_(made: Translator) -> keras.Model:
        return compile_for_training(made, settings.learning_rate)

    key = (type(model), task, model.config, settings.learning_rate)
    with twin_of(model, key, make, compile_) as twin:  # trains as `model` would (`learn.twins`)
        reporter = _Reporter(twin, tuple(zip(*val, strict=True)), probe, callback,
                             settings.time_limit, on_best)  # fmt: skip
        reporter.start, reporter.deadline = start, start + settings.time_limit
        reporter.report(0, None)
        if not reporter.stop:
            set_global_seed(settings.seed)  # the shuffling, whatever building drew
            twin.trainer.fit(
                x, y, sample_weight=weights, batch_size=settings.batch_size,
                epochs=settings.epochs, shuffle=True, verbose=0, callbacks=[reporter],
            )  # fmt: skip
        twin.set_weights(reporter.best_weights)
        seconds = time.perf_counter() - start
        stats = training_stats(twin, settings, reporter.reports, val, seconds)
    model.set_weights(reporter.best_weights)
    model.stats = stats
    return model


def training_stats(
    model, settings: TrainConfig, reports: Sequence[EpochReport], val, seconds: float
) -> TrainingStats:
    """The record of `model`, trained by `settings` and holding the weights of the last epoch
    of `reports` marked best (as `train` keeps them), validated on `val` (sources, targets)."""
    best = [r for r in reports if r.best][-1]
    history = tuple(
        (
            r.epoch,
            math.nan if r.loss is None else r.loss,
            math.nan if r.char_accuracy is None else r.char_accuracy,
            r.val_char_accuracy,
            r.val_exact_match,
            r.seconds,
        )
        for r in reports
    )
    return TrainingStats(
        task=model.task.name,
        score=model.config.score,
        scale=model.config.scale,
        seed=settings.seed,
        epochs_run=reports[-1].epoch,
        best_epoch=best.epoch,
        train_seconds=seconds,
        n_pairs=settings.n_pairs,
        val_char_accuracy=best.val_char_accuracy,
        val_exact_match=best.val_exact_match,
        val_alignment=alignment_score(model, val),
        parameters=model.parameter_count,
        history=history,
    )
