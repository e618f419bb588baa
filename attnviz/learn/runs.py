"""A training run in the background: what the app's Train button starts and its page watches, and
the queue of runs waiting for the server's training slot.

`TrainingRun.start(task, network, training)` runs `train` in a thread and returns at once; the
page reads `run.snapshot()` as often as it likes (every epoch's report, the state, the model once
done, and while it waits its place in the queue and when it should start) and `run.stop()` asks
training to end after the current epoch (the best epoch's weights are kept).
Plain Python: no Streamlit here, so the same object works in a test or a notebook.

One training at a time per server (`TRAINING_SLOTS`): on two cores a second concurrent run
would only halve both, and `keras.utils.set_random_seed` is process-wide, so a run waits in
`QUEUE`, first come first served (its state says "waiting"), instead of racing another for the
seed. The other sessions' ordinary clicks never wait for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnviz.learn.configs import (
    LM_TRAINING,
    LMConfig,
    NetworkConfig,
    TrainConfig,
    TransformerConfig,
)
from attnviz.learn.language.tasks import LMTask
from attnviz.learn.language.training import LMEpochReport, train_lm
from attnviz.learn.translation.training import EpochReport, train, train_transformer

TRAINING_SLOTS = 1  # trainings running at once in this process
STATES = ("waiting", "training", "done", "stopped", "failed")
_TRAINERS = {TransformerConfig: train_transformer, LMConfig: train_lm}  # else `train`


@dataclass(frozen=True)
class Progress:
    """How far a training run has come, for estimating when the runs behind it start."""

    epochs_done: int  # finished epochs (not counting epoch 0, the untrained report)
    epochs: int  # the epoch cap
    setup_seconds: float  # from the start to the epoch-0 report (building, first evaluation)
    epoch_seconds: float | None  # mean seconds per finished epoch; None before the first
    since_report: float  # seconds since its last report (or since it started)
    time_left: float  # seconds left of its time limit
    n_pairs: int  # training pairs of one epoch


def starts_in(
    training: list[Progress], ahead: list[TrainConfig], slots: int = TRAINING_SLOTS
) -> float | None:
    """Estimated seconds until a waiting run starts: the `training` runs end, then the runs
    `ahead` of it in the queue run, each in the first slot to free up.

    A training run ends after its epochs left at its mean epoch time, or at its time limit if
    sooner. A run ahead is assumed to build as fast and to train at the same seconds per pair
    as the first training run: its epoch cap × its pairs, within its own time limit. None while
    a training run has no finished epoch (nothing to estimate from yet).
    """
    if any(p.epoch_seconds is None for p in training):
        return None
    free = [_seconds_left(p) for p in training]  # when each busy slot frees up
    free = sorted(free + [0.0] * max(0, slots - len(free)))  # (idle slots are free now)
    per_pair = training[0].epoch_seconds / training[0].n_pairs if training else 0.0
    setup = training[0].setup_seconds if training else 0.0
    for plan in ahead:
        took = min(setup + plan.epochs * plan.n_pairs * per_pair, plan.time_limit)
        free = sorted([free[0] + took, *free[1:]])
    return free[0]


def _seconds_left(progress: Progress) -> float:
    epochs_left = max(0, progress.epochs - progress.epochs_done)
    left = epochs_left * progress.epoch_seconds - progress.since_report
    return max(0.0, min(left, progress.time_left))


class TrainingQueue:
    """The runs training and the runs waiting for a slot, first come first served."""

    def __init__(self, slots: int = TRAINING_SLOTS, clock: Callable[[], float] = time.monotonic):
        self.slots = slots  # runs that may train at once
        self.clock = clock  # seconds, for the runs' progress (a test passes its own)
        self._turns = threading.Condition()  # guards the two lists; wakes waiting runs
        self._training: list[TrainingRun] = []  # in the order they started
        self._waiting: list[TrainingRun] = []  # first in line first

    def join(self, run: TrainingRun) -> None:
        """Put `run` at the end of the line."""
        with self._turns:
            self._waiting.append(run)

    def wait_turn(self, run: TrainingRun) -> bool:
        """Block until `run` is first in line and a slot is free (True: it now trains), or it
        was stopped while waiting (False: it left the line)."""
        with self._turns:
            while not run.stop_requested:
                if self._waiting[0] is run and len(self._training) < self.slots:
                    self._waiting.pop(0)
                    self._training.append(run)
                    self._turns.notify_all()
                    return True
                self._turns.wait()
            self._waiting.remove(run)
            self._turns.notify_all()  # the runs behind move up
            return False

    def leave(self, run: TrainingRun) -> None:
        """`run` ended: free its slot (or its place in line)."""
        with self._turns:
            for line in (self._training, self._waiting):
                if run in line:
                    line.remove(run)
            self._turns.notify_all()

    def wake(self) -> None:
        """Let waiting runs look again (one of them was asked to stop)."""
        with self._turns:
            self._turns.notify_all()

    def training(self) -> bool:
        """True while some run trains."""
        with self._turns:
            return bool(self._training)

    def place(self, run: TrainingRun) -> tuple[int, float | None]:
        """`run`'s place in line (1 = next to start; 0 if it is not waiting) and the estimated
        seconds until it starts (`starts_in`; None if not known)."""
        with self._turns:
            if run not in self._waiting:
                return 0, None
            place = self._waiting.index(run) + 1
            training, ahead = list(self._training), self._waiting[: place - 1]
        progress = [r.progress() for r in training]  # outside the lock: each takes its own
        return place, starts_in(progress, [r.training for r in ahead], self.slots)


QUEUE = TrainingQueue()  # the server's one queue


@dataclass(frozen=True)
class RunSnapshot:
    """What a run has done so far, copied out under its lock."""

    state: str  # one of STATES
    reports: tuple[EpochReport | LMEpochReport, ...]  # epoch 0 (untrained) first, then one
    # per finished epoch (`LMEpochReport`s for a language model)
    epochs: int  # the epoch cap
    model: Any = None  # the trained model once state is "done" or "stopped"
    error: str = ""  # why it failed, for the page
    seconds: float = 0.0  # since the run started training (0 while waiting)
    place: int = 0  # while waiting: 1 = next to start, 2 = the one after, ...; else 0
    starts_in: float | None = None  # while waiting: estimated seconds until it starts (None:
    # not known yet, until the training run has finished an epoch)


@dataclass
class TrainingRun:
    """One call of `train`, `train_transformer` or `train_lm` in a background thread (use
    `start`)."""

    task: str | LMTask  # what to train on (an LMTask or a name of `LM_TASKS` for an LMConfig)
    network: NetworkConfig | TransformerConfig | LMConfig  # the model: a TransformerConfig
    # trains a TransformerTranslator, an LMConfig a LanguageModel, a NetworkConfig a
    # Seq2SeqAttention
    training: TrainConfig  # epochs, pairs (or sequences per epoch), batches, seed
    queue: TrainingQueue = field(default_factory=lambda: QUEUE)  # where it waits for a slot
    fit: Callable[..., Any] | None = None  # what trains (None: by the network's config)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _state: str = "waiting"
    _reports: list[EpochReport | LMEpochReport] = field(default_factory=list)
    _model: Any = None
    _error: str = ""
    _started: float | None = None  # the queue's clock when it started training
    _thread: threading.Thread | None = None

    @classmethod
    def start(
        cls,
        task: str | LMTask,
        network: NetworkConfig | TransformerConfig | LMConfig | None = None,
        training: TrainConfig | None = None,
        *,
        queue: TrainingQueue | None = None,
        fit: Callable[..., Any] | None = None,
    ) -> TrainingRun:
        """Start `train(task, network, training)` (`train_transformer` for a TransformerConfig,
        `train_lm` for an LMConfig, whose training defaults to `LM_TRAINING`; `fit` instead, if
        given) in a daemon thread, at the end of `queue`'s line (default: the server's
        `QUEUE`); it trains when its turn comes. Bad arguments end the run in the "failed"
        state, with the message."""
        network = network or NetworkConfig()
        default = LM_TRAINING if isinstance(network, LMConfig) else TrainConfig()
        run = cls(task, network, training or default, queue or QUEUE, fit)
        run.queue.join(run)  # in line before `start` returns: its place is known at once
        run._thread = threading.Thread(target=run._work, name="attnviz-train", daemon=True)
        run._thread.start()
        return run

    @property
    def transformer(self) -> bool:
        """True if the run trains a `TransformerTranslator`."""
        return isinstance(self.network, TransformerConfig)

    @property
    def language_model(self) -> bool:
        """True if the run trains a `LanguageModel` (its reports are `LMEpochReport`s)."""
        return isinstance(self.network, LMConfig)

    @property
    def stop_requested(self) -> bool:
        """True once `stop` was called."""
        return self._stop.is_set()

    def stop(self) -> None:
        """Ask training to end after the current epoch (or not to start, if still waiting)."""
        self._stop.set()
        self.queue.wake()

    def join(self, timeout: float | None = None) -> RunSnapshot:
        """Wait for the thread to end (or `timeout` seconds); return the snapshot."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.snapshot()

    @property
    def running(self) -> bool:
        """True while the run is waiting or training."""
        return self.snapshot().state in ("waiting", "training")

    def snapshot(self) -> RunSnapshot:
        with self._lock:
            seconds = 0.0 if self._started is None else self.queue.clock() - self._started
            state, reports, model, error = (
                self._state, tuple(self._reports), self._model, self._error
            )  # fmt: skip
        place, starts = self.queue.place(self) if state == "waiting" else (0, None)
        return RunSnapshot(
            state, reports, self.training.epochs, model, error, seconds, place, starts
        )

    def progress(self) -> Progress:
        """How far it has come (for the estimates of the runs waiting behind it)."""
        with self._lock:
            now, reports = self.queue.clock(), list(self._reports)
            elapsed = 0.0 if self._started is None else now - self._started
        done = max(0, len(reports) - 1)
        setup = reports[0].seconds if reports else elapsed
        mean = (reports[-1].seconds - setup) / done if done else None
        since = elapsed - (reports[-1].seconds if reports else 0.0)
        left = self.training.time_limit - elapsed
        return Progress(done, self.training.epochs, setup, mean, max(0.0, since), left,
                        self.training.n_pairs)  # fmt: skip

    def _on_epoch(self, report: EpochReport | LMEpochReport) -> bool:
        with self._lock:
            self._reports.append(report)
        return self._stop.is_set()  # True: train stops after this epoch

    def _work(self) -> None:
        if not self.queue.wait_turn(self):
            self._finish("stopped", None, "")
            return
        with self._lock:
            self._state, self._started = "training", self.queue.clock()
        try:
            fit = self.fit or _TRAINERS.get(type(self.network), train)
            model = fit(self.task, self.network, self.training, callback=self._on_epoch)
        except Exception as err:  # noqa: BLE001 - the page shows it; the server stays up
            self._finish("failed", None, f"{type(err).__name__}: {err}")
        else:
            self._finish("stopped" if self._stop.is_set() else "done", model, "")
        finally:
            self.queue.leave(self)

    def _finish(self, state: str, model: Any, error: str) -> None:
        with self._lock:
            self._state, self._model, self._error = state, model, error


def training_active() -> bool:
    """True while some run in this process is training."""
    return QUEUE.training()
