"""Train a `LanguageModel` with `fit` on fresh sequences every epoch, reporting every epoch.

Shape letters: N sequences per epoch, T tokens read, L layers, H heads.

`train_lm` builds the model from the seed and, epoch by epoch, draws N fresh sequences
(`tasks.draw_sequences`, stream `"{seed}:epoch{e}"`) and fits one epoch on them (next-token
cross-entropy on every position, XLA-compiled once). After every epoch, and once before
training (epoch 0), an `LMEpochReport` holds the epoch's loss and accuracy, the validation
loss, accuracy and in-context accuracy, every head's previous-token and induction score on the
validation sequences, and the probe text's forward pass (its head grid): the phase change shows
in the loss and in the scores at the same epoch. The user callback returning True stops
training after that epoch; the epoch cap and the time limit (checked after every batch) stop it
too. The model keeps the weights of its best epoch by validation loss.

Same seed, same arguments -> the same weights (if the time limit does not cut training short).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import keras
import numpy as np

from attnviz.core.checks import describe
from attnviz.learn.compiling import compile_trainer
from attnviz.learn.configs import LM_TRAINING, LMConfig, TrainConfig
from attnviz.learn.global_seed import set_global_seed
from attnviz.learn.language.metrics import LMEvaluation, evaluate_lm
from attnviz.learn.language.model import LanguageModel, LMForward
from attnviz.learn.language.tasks import LMTask, draw_sequences, get_lm_task
from attnviz.learn.twins import twin_of


@dataclass(frozen=True)
class LMEpochReport:
    """What one epoch did; epoch 0 is the untrained model, before the first step."""

    epoch: int  # 0 before training, then 1, 2, ...
    loss: float | None  # mean training cross-entropy of the epoch, nats (None at epoch 0)
    accuracy: float | None  # training next-token accuracy of the epoch (None at epoch 0)
    validation: LMEvaluation  # loss, accuracies and every head's scores on the validation set
    seconds: float  # seconds since training started (model built, before epoch 0)
    probe: LMForward  # the probe text's forward pass: its (L, H, T, T) head grid
    best: bool  # whether this epoch has the lowest validation loss so far

    @property
    def previous_token(self) -> np.ndarray:
        """`(L, H)` every head's previous-token score on the validation sequences."""
        return self.validation.previous_token

    @property
    def induction(self) -> np.ndarray:
        """`(L, H)` every head's induction score on the validation sequences."""
        return self.validation.induction


@dataclass(frozen=True)
class LMStats:
    """A trained language model's record, kept on the model and saved beside shipped weights."""

    task: str  # the task name
    seed: int  # the training seed
    epochs_run: int  # epochs trained: the cap, or fewer if stopped (0: stopped at epoch 0)
    best_epoch: int  # the epoch whose weights the model kept
    train_seconds: float  # seconds from building the model to the end of training
    sequences: int  # training sequences per epoch (fresh every epoch)
    val_loss: float  # of the kept weights, on the validation sequences (nats per token)
    val_accuracy: float  # of the kept weights: next-token accuracy over every position
    val_in_context_accuracy: float  # of the kept weights: over the in-context positions
    parameters: int  # trained numbers in the model
    history: tuple[tuple[float, ...], ...] = field(default=())  # one row per report (below)
    head_scores: tuple[tuple[float, ...], ...] = field(default=())  # one row per report: every
    # head's previous-token score (layer by layer, L·H), then every head's induction score

    # history rows: (epoch, loss, accuracy, val loss, val accuracy, val in-context accuracy,
    # best previous-token score, best induction score, seconds); epoch 0 has NaN loss and
    # accuracy.


LMCallback = Callable[[LMEpochReport], object]  # returns True to stop after this epoch


@dataclass(frozen=True)
class LMCurves:
    """A run's per-epoch numbers stacked for plotting, one row per report (epoch 0 first): the
    phase change shows in the losses and the heads' scores at the same row."""

    epochs: np.ndarray  # (E,) int, the epoch of each row
    loss: np.ndarray  # (E,) training loss (NaN at epoch 0)
    val_loss: np.ndarray  # (E,) validation loss
    val_in_context_accuracy: np.ndarray  # (E,)
    previous_token: np.ndarray  # (E, L, H) every head's previous-token score
    induction: np.ndarray  # (E, L, H) every head's induction score

    @classmethod
    def of(cls, reports: Sequence[LMEpochReport]) -> LMCurves:
        """The curves of `reports` (e.g. `RunSnapshot.reports` of a language-model run)."""
        if not reports:
            raise ValueError("`reports` is empty: there is no epoch to plot yet.")
        return cls(
            epochs=np.array([r.epoch for r in reports]),
            loss=np.array([math.nan if r.loss is None else r.loss for r in reports]),
            val_loss=np.array([r.validation.loss for r in reports]),
            val_in_context_accuracy=np.array([r.validation.in_context_accuracy for r in reports]),
            previous_token=np.stack([r.previous_token for r in reports]),
            induction=np.stack([r.induction for r in reports]),
        )

    @classmethod
    def of_stats(cls, stats: LMStats, layers: int, heads: int) -> LMCurves:
        """The curves of a trained model's record (a shipped one's, say): its history rows and,
        when recorded, every head's scores (else NaN: only the losses and accuracy draw)."""
        if not stats.history:
            raise ValueError("This model's record has no history: there is no epoch to plot.")
        rows = np.array(stats.history, dtype=float)  # (E, 9), see LMStats
        e, n = len(rows), layers * heads
        scores = np.full((e, 2 * n), np.nan)
        if stats.head_scores:
            scores = np.array(stats.head_scores, dtype=float)
            if scores.shape != (e, 2 * n):
                raise ValueError(
                    f"The record's head scores are {scores.shape}; a model of {layers} layers × "
                    f"{heads} heads over {e} epochs has ({e}, {2 * n})."
                )
        return cls(
            epochs=rows[:, 0].astype(int),
            loss=rows[:, 1],
            val_loss=rows[:, 3],
            val_in_context_accuracy=rows[:, 5],
            previous_token=scores[:, :n].reshape(e, layers, heads),
            induction=scores[:, n:].reshape(e, layers, heads),
        )


class _LMReporter(keras.callbacks.Callback):
    """Time limit per batch; an `LMEpochReport` and the best weights per epoch."""

    async_safe = True  # on_train_batch_end only sets `stop_training`: safe off the main thread

    def __init__(self, model: LanguageModel, val, probe: str, callback, start, limit, on_best=None):
        super().__init__()
        self.on_best = on_best  # called with the weights of each best-so-far epoch
        self.lm = model
        self.val = val  # (N, T + 1) validation ids
        self.probe = probe
        self.callback = callback
        self.start = start
        self.deadline = start + limit
        self.best_loss = math.inf
        self.best_weights = None
        self.best_epoch = 0
        self.reports: list[LMEpochReport] = []
        self.stop = False  # the user callback asked to stop

    def report(self, epoch: int, logs: dict | None) -> LMEpochReport:
        """Evaluate the current weights, keep them if best, and tell the user callback."""
        validation = evaluate_lm(self.lm, self.val)
        best = validation.loss < self.best_loss
        if best:
            self.best_loss, self.best_epoch = validation.loss, epoch
            self.best_weights = self.lm.get_weights()
            if self.on_best is not None:
                self.on_best(self.best_weights)
        logs = logs or {}
        report = LMEpochReport(
            epoch=epoch,
            loss=float(logs["loss"]) if "loss" in logs else None,
            accuracy=float(logs["accuracy"]) if "accuracy" in logs else None,
            validation=validation,
            seconds=time.perf_counter() - self.start,
            probe=self.lm.forward(self.probe),
            best=best,
        )
        self.reports.append(report)
        if self.callback is not None and self.callback(report) is True:
            self.stop = True
        return report

    @property
    def out_of_time(self) -> bool:
        return time.perf_counter() > self.deadline

    def on_train_batch_end(self, batch, logs=None):
        if self.out_of_time:
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        self.report(epoch + 1, logs)


def compile_lm(model: LanguageModel, learning_rate: float) -> keras.Model:
    """Compile the model's Keras trainer (`learn.compiling.compile_trainer`): Adam, cross-entropy on
    logits, accuracy, XLA."""
    return compile_trainer(model.trainer, learning_rate, weighted=False, jit_compile=True)


def epoch_sequences(task: LMTask, training: TrainConfig, epoch: int) -> np.ndarray:
    """`(N, T + 1)` the fresh training sequences of `epoch` (from 1)."""
    return draw_sequences(task, training.n_pairs, f"{training.seed}:epoch{epoch}", "train")


def train_lm(
    task: str | LMTask,
    network: LMConfig | None = None,
    training: TrainConfig | None = None,
    *,
    callback: LMCallback | None = None,
    probe: str | None = None,
    on_best: Callable[[list], object] | None = None,
) -> LanguageModel:
    """Train a causal Transformer language model on `task` and return it.

    Args:
        task: one of `LM_TASKS` ("induction", "text"), or an `LMTask` (`induction_task(...)`).
        network: the sizes (`LMConfig`; None: its defaults).
        training: epochs, sequences per epoch (`n_pairs`, fresh every epoch), validation
            sequences (`val_pairs`), batch size, step size, time limit and seed (`TrainConfig`;
            None: `LM_TRAINING`).
        callback: called with an `LMEpochReport` before training (epoch 0) and after every
            epoch; returning True stops training after that epoch.
        probe: the text whose forward pass every report shows (default: the task's example).
        on_best: called with the model's weights (`get_weights`) each time an epoch is the best
            so far, before `callback` gets that epoch's report (a shared run publishes them).

    Returns:
        The trained `LanguageModel`, holding the weights of its best validation epoch and its
        `LMStats` in `.stats`.

    Raises:
        ValueError: for an unknown task, configs of the wrong kind, or a bad probe.
    """
    spec = get_lm_task(task)
    network = _checked(network or LMConfig(), LMConfig, "network", "an")
    training = _checked(training or LM_TRAINING, TrainConfig, "training", "a")
    if callback is not None and not callable(callback):
        raise ValueError(f"`callback` must be a function or None. Received: {describe(callback)}.")
    probe = spec.example if probe is None else probe
    spec.encode(probe, "probe")
    start = time.perf_counter()
    model = LanguageModel(spec, network, training.seed)
    val = draw_sequences(spec, training.val_pairs, f"{training.seed}:validation", "validation")

    def make() -> LanguageModel:  # a twin: its weights are given before it trains
        return LanguageModel(spec, network, seed=None)

    def compile_(made: LanguageModel) -> keras.Model:
        return compile_lm(made, training.learning_rate)

    key = (LanguageModel, spec, network, training.learning_rate)
    with twin_of(model, key, make, compile_) as twin:  # trains as `model` would (`learn.twins`)
        reporter = _LMReporter(twin, val, probe, callback, start, training.time_limit, on_best)
        reporter.report(0, None)
        set_global_seed(training.seed)  # whatever building drew
        epoch = 0
        while not (reporter.stop or reporter.out_of_time) and epoch < training.epochs:
            ids = epoch_sequences(spec, training, epoch + 1)  # (N, T + 1)
            twin.trainer.fit(
                ids[:, :-1], ids[:, 1:], batch_size=training.batch_size, epochs=epoch + 1,
                initial_epoch=epoch, shuffle=False, verbose=0, callbacks=[reporter],
            )  # fmt: skip
            epoch += 1
        twin.set_weights(reporter.best_weights)
        stats = lm_stats(twin, training, reporter.reports, time.perf_counter() - start)
    model.set_weights(reporter.best_weights)
    model.stats = stats
    return model


def _checked(config: object, kind: type, name: str, article: str):
    if not isinstance(config, kind):
        raise ValueError(
            f"`{name}` must be {article} {kind.__name__}. Received: {describe(config)}. "
            f"Build one with {kind.__name__}(...) (see attnviz.learn.configs)."
        )
    return config


def lm_stats(
    model: LanguageModel, training: TrainConfig, reports: Sequence[LMEpochReport], seconds: float
) -> LMStats:
    """The record of `model`, trained by `training` and holding the weights of the last epoch of
    `reports` marked best (as `train_lm` keeps them)."""
    best = [r for r in reports if r.best][-1]
    history = tuple(
        (
            r.epoch,
            math.nan if r.loss is None else r.loss,
            math.nan if r.accuracy is None else r.accuracy,
            r.validation.loss,
            r.validation.accuracy,
            r.validation.in_context_accuracy,
            float(np.nanmax(r.previous_token)),
            float(np.nanmax(r.induction)) if np.isfinite(r.induction).any() else math.nan,
            r.seconds,
        )
        for r in reports
    )
    return LMStats(
        task=model.task.name,
        seed=training.seed,
        epochs_run=reports[-1].epoch,
        best_epoch=best.epoch,
        train_seconds=seconds,
        sequences=training.n_pairs,
        val_loss=best.validation.loss,
        val_accuracy=best.validation.accuracy,
        val_in_context_accuracy=best.validation.in_context_accuracy,
        parameters=model.parameter_count,
        history=history,
        head_scores=tuple(
            tuple(float(x) for x in (*r.previous_token.ravel(), *r.induction.ravel()))
            for r in reports
        ),
    )
