"""A training run in the background: what the app's Train button starts and its page watches.

`TrainingRun.start(task, network, training)` runs `train` in a thread and returns at once; the
page reads `run.snapshot()` as often as it likes (every epoch's report, the state, the model once
done) and `run.stop()` asks training to end after the current epoch (the best epoch's weights
are kept).
Plain Python: no Streamlit here, so the same object works in a test or a notebook.

One training at a time per server (`TRAINING_SLOTS`): on two cores a second concurrent run
would only halve both, and `keras.utils.set_random_seed` is process-wide, so a run waits for the
slot (its state says "waiting") instead of racing another for the seed. The other sessions'
ordinary clicks never wait for it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from attnviz.learn.configs import (
    LM_TRAINING,
    LMConfig,
    NetworkConfig,
    TrainConfig,
    TransformerConfig,
)
from attnviz.learn.lm_tasks import LMTask
from attnviz.learn.lm_training import LMEpochReport, train_lm
from attnviz.learn.training import EpochReport, train, train_transformer

TRAINING_SLOTS = threading.BoundedSemaphore(1)  # trainings running at once in this process
_ACTIVE = threading.Event()  # set while some run trains (clear_session must wait for it)
STATES = ("waiting", "training", "done", "stopped", "failed")
_TRAINERS = {TransformerConfig: train_transformer, LMConfig: train_lm}  # else `train`


@dataclass(frozen=True)
class RunSnapshot:
    """What a run has done so far, copied out under its lock."""

    state: str  # one of STATES
    reports: tuple[EpochReport | LMEpochReport, ...]  # epoch 0 (untrained) first, then one per
    # finished epoch (`LMEpochReport`s for a language model)
    epochs: int  # the epoch cap
    model: Any = None  # the trained model once state is "done" or "stopped"
    error: str = ""  # why it failed, for the page
    seconds: float = 0.0  # since the run started training (0 while waiting)


@dataclass
class TrainingRun:
    """One call of `train`, `train_transformer` or `train_lm` in a background thread (use
    `start`)."""

    task: str | LMTask  # what to train on (an LMTask or a name of `LM_TASKS` for an LMConfig)
    network: NetworkConfig | TransformerConfig | LMConfig  # the model: a TransformerConfig
    # trains a TransformerTranslator, an LMConfig a LanguageModel, a NetworkConfig a
    # Seq2SeqAttention
    training: TrainConfig  # epochs, pairs (or sequences per epoch), batches, seed
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _state: str = "waiting"
    _reports: list[EpochReport | LMEpochReport] = field(default_factory=list)
    _model: Any = None
    _error: str = ""
    _started: float = 0.0
    _thread: threading.Thread | None = None

    @classmethod
    def start(
        cls,
        task: str | LMTask,
        network: NetworkConfig | TransformerConfig | LMConfig | None = None,
        training: TrainConfig | None = None,
    ) -> TrainingRun:
        """Start `train(task, network, training)` (`train_transformer` for a TransformerConfig,
        `train_lm` for an LMConfig, whose training defaults to `LM_TRAINING`) in a daemon
        thread; it first waits for a free slot. Bad arguments end the run in the "failed"
        state, with the message."""
        network = network or NetworkConfig()
        default = LM_TRAINING if isinstance(network, LMConfig) else TrainConfig()
        run = cls(task, network, training or default)
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

    def stop(self) -> None:
        """Ask training to end after the current epoch (or not to start, if still waiting)."""
        self._stop.set()

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
            seconds = time.perf_counter() - self._started if self._started else 0.0
            return RunSnapshot(
                self._state,
                tuple(self._reports),
                self.training.epochs,
                self._model,
                self._error,
                seconds,
            )

    def _on_epoch(self, report: EpochReport | LMEpochReport) -> bool:
        with self._lock:
            self._reports.append(report)
        return self._stop.is_set()  # True: train stops after this epoch

    def _work(self) -> None:
        with TRAINING_SLOTS:
            if self._stop.is_set():
                self._finish("stopped", None, "")
                return
            with self._lock:
                self._state, self._started = "training", time.perf_counter()
            _ACTIVE.set()
            try:
                fit = _TRAINERS.get(type(self.network), train)
                model = fit(self.task, self.network, self.training, callback=self._on_epoch)
            except Exception as err:  # noqa: BLE001 - the page shows it; the server stays up
                self._finish("failed", None, f"{type(err).__name__}: {err}")
            else:
                self._finish("stopped" if self._stop.is_set() else "done", model, "")
            finally:
                _ACTIVE.clear()

    def _finish(self, state: str, model: Any, error: str) -> None:
        with self._lock:
            self._state, self._model, self._error = state, model, error


def training_active() -> bool:
    """True while some run in this process is training."""
    return _ACTIVE.is_set()
