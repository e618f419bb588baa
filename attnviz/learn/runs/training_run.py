"""A training run as a session sees it: what the app's Train button starts and its page watches.

`TrainingRun.start(task, network, training)` returns at once; the page reads `run.snapshot()` as
often as it likes (every epoch's report, the state, the model once done, and while it waits its
place in the queue and when it should start) and `run.stop()` stops watching it, keeping the
best epoch so far. Plain Python: no Streamlit here, so the same object works in a test or a
notebook.

Identical runs are one run: a press is keyed by everything that determines its result
(`run_key`), and a press whose key already waits or trains joins that run (it sees the epochs so
far at once, then live), while a key that finished before is served from the store at once
(`store`: this process's, or Redis shared by every replica, by `ATTNVIZ_REDIS_URL`). The
distinct runs wait in one queue, first come first served, and the process's worker
(`worker`) trains them one at a time: `keras.utils.set_random_seed` is process-wide. A
Stop ends the run for the one who pressed it; the others keep watching to the end, and when the
last watcher stops, the training itself stops after its epoch.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnviz.core.kept import Kept
from attnviz.learn.configs import (
    LM_TRAINING,
    LMConfig,
    NetworkConfig,
    TrainConfig,
    TransformerConfig,
)
from attnviz.learn.language.tasks import LMTask
from attnviz.learn.language.training import LMEpochReport
from attnviz.learn.runs.codec import Job, dumps, loads
from attnviz.learn.runs.from_env import store_from_env
from attnviz.learn.runs.key import run_key
from attnviz.learn.runs.models import kept
from attnviz.learn.runs.store import (
    ENDED,
    GONE,
    MEMORY,
    STATES,
    TRAINING_SLOTS,
    MemoryRunStore,
    Plan,
    Progress,
    RunStatus,
    RunStore,
    starts_in,
)
from attnviz.learn.runs.worker import busy, ensure_worker, register_fit
from attnviz.learn.translation.training import EpochReport

__all__ = ["QUEUE", "STATES", "TRAINING_SLOTS", "Progress", "RunSnapshot", "TrainingQueue",
           "TrainingRun", "starts_in", "training_active"]  # fmt: skip

TrainingQueue = MemoryRunStore  # the one-server store's former name
QUEUE = MEMORY  # this process's store when there is no Redis (a test may set its `clock`)
JOIN_POLL = 0.05  # seconds between looks while `join` waits
DECODED_REPORTS = 128  # reports `decoded_report` keeps: a few runs' epochs
_DECODED = Kept(DECODED_REPORTS)  # encoded report -> the report


@dataclass(frozen=True)
class RunSnapshot:
    """What a run has done so far, as one session sees it."""

    state: str  # one of STATES
    reports: tuple[EpochReport | LMEpochReport, ...]  # epoch 0 (untrained) first, then one
    # per finished epoch (`LMEpochReport`s for a language model)
    epochs: int  # the epoch cap
    model: Any = None  # the trained model once state is "done" or "stopped"
    error: str = ""  # why it failed, for the page
    seconds: float = 0.0  # since the run started training (0 while waiting; once it ended, to
    # its last epoch's report)
    place: int = 0  # while waiting: 1 = next to start, 2 = the one after, ...; else 0
    starts_in: float | None = None  # while waiting: estimated seconds until it starts (None:
    # not known yet, until the training run has finished an epoch)
    others: int = 0  # other sessions watching the same run
    source: str = "new"  # "new": this press queued it; "shared": it joined a waiting or
    # training run; "finished": the run had finished before (served from the store)


@dataclass
class TrainingRun:
    """One session's view of a shared run of `train`, `train_transformer` or `train_lm` (use
    `start`)."""

    task: str | LMTask  # what to train on (an LMTask or a name of `LM_TASKS` for an LMConfig)
    network: NetworkConfig | TransformerConfig | LMConfig  # the model: a TransformerConfig
    # trains a TransformerTranslator, an LMConfig a LanguageModel, a NetworkConfig a
    # Seq2SeqAttention
    training: TrainConfig  # epochs, pairs (or sequences per epoch), batches, seed
    store: RunStore = field(default_factory=store_from_env)  # where the run is shared
    fit: Callable[..., Any] | None = None  # what trains (None: by the network's config)
    key: str = ""  # the run's key (`run_key`)
    run_id: str = ""  # the run's id in the store
    source: str = "new"  # how this press got its run (`RunSnapshot.source`)
    watcher: str = field(default_factory=lambda: secrets.token_hex(8))  # this session's mark
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _state: str = "waiting"
    _reports: list[EpochReport | LMEpochReport] = field(default_factory=list)
    _status: RunStatus | None = None  # the store's last answer
    _model: Any = None
    _best: bytes | None = None  # the best-so-far weights kept at Stop, until the model is built
    _error: str = ""
    _left: bool = False  # True once this session stopped watching

    @classmethod
    def start(
        cls,
        task: str | LMTask,
        network: NetworkConfig | TransformerConfig | LMConfig | None = None,
        training: TrainConfig | None = None,
        *,
        store: RunStore | None = None,
        queue: RunStore | None = None,
        fit: Callable[..., Any] | None = None,
    ) -> TrainingRun:
        """Watch the run of `train(task, network, training)` (`train_transformer` for a
        TransformerConfig, `train_lm` for an LMConfig, whose training defaults to
        `LM_TRAINING`; `fit` instead, if given): the one waiting or training with the same key,
        the finished one, or a new one at the end of the queue of `store` (default:
        `store_from_env()`; `queue` is its former name). Bad arguments end the run in the
        "failed" state, with the message, for every session watching it."""
        network = network or NetworkConfig()
        default = LM_TRAINING if isinstance(network, LMConfig) else TrainConfig()
        run = cls(task, network, training or default, store or queue or store_from_env(), fit)
        try:
            trainer = "" if fit is None else register_fit(fit)
            run.key = run_key(task, network, run.training, trainer)
            job = dumps(Job(task, network, run.training, trainer))
            plan = Plan.of(run.training)
            joined = run.store.submit(run.key, job, run.watcher, plan)
        except (ValueError, AttributeError, TypeError, ConnectionError) as err:
            run._state, run._error, run._left = "failed", f"{type(err).__name__}: {err}", True
            return run
        run.run_id, run.source = joined.run_id, joined.source
        if joined.source != "finished":
            ensure_worker(run.store)  # this process trains its share of the queue
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
        """True once `stop` was called (this session no longer watches)."""
        return self._left

    def stop(self) -> None:
        """Stop watching: this session keeps the reports so far and the best epoch's weights;
        the others watching the run keep watching. The last watcher's Stop ends the run (a
        waiting run leaves the queue; a training run stops after its epoch)."""
        with self._lock:
            if self._left or self._state in ENDED:
                return
            try:
                status = self.store.leave(self.run_id, self.watcher, since=len(self._reports))
            except ConnectionError as err:
                self._error = str(err)
                return
            self._take(status)
            self._left = True
            if self._state not in ENDED:  # else it ended meanwhile: that end stands
                self._state, self._best = "stopped", status.best

    def join(self, timeout: float | None = None) -> RunSnapshot:
        """Wait until the run has ended for this session (or `timeout` seconds); return the
        snapshot."""
        deadline = None if timeout is None else time.monotonic() + timeout
        snapshot = self.snapshot()
        while snapshot.state not in ENDED and (deadline is None or time.monotonic() < deadline):
            time.sleep(JOIN_POLL)
            snapshot = self.snapshot()
        return snapshot

    @property
    def running(self) -> bool:
        """True while the run is waiting or training (for this session)."""
        return self.snapshot().state in ("waiting", "training")

    def snapshot(self) -> RunSnapshot:
        """The run now: the store is read for what is new (reports are decoded once each)."""
        with self._lock:
            if not self._left and self._state not in ENDED:
                try:
                    self._take(self.store.status(self.run_id, len(self._reports), self.watcher))
                except ConnectionError as err:
                    self._error = str(err)  # said while the store is away; the run goes on
            if self._state in ("done", "stopped") and self._model is None:
                self._model = self._built()
            status = self._status or RunStatus(self._state, (), 0)
            live = self._state in ("waiting", "training")
            return RunSnapshot(
                self._state, tuple(self._reports), self.training.epochs, self._model,
                self._error, status.seconds if live else self._trained_seconds(),
                status.place if self._state == "waiting" else 0,
                status.starts_in if self._state == "waiting" else None,
                max(0, status.watchers - (0 if self._left else 1)) if live else 0,
                self.source,
            )  # fmt: skip

    def _trained_seconds(self) -> float:
        """Seconds an ended run trained: to its last epoch's report (0 before any)."""
        return self._reports[-1].seconds if self._reports else 0.0

    def _take(self, status: RunStatus) -> None:
        """Add the new reports of `status` and take its state."""
        for data in status.reports:
            report = decoded_report(data)
            if report.epoch == len(self._reports):  # each epoch once, in order
                self._reports.append(report)
        self._status = status
        if status.state == GONE:
            self._state = "failed"
            self._error = (
                "This run is no longer in the store (a finished run is kept while there is room; "
                "a stopped or failed one for a few minutes). Press Train again."
            )
        else:
            self._state, self._error = status.state, status.error

    def _built(self) -> Any:
        """The model: the final weights of a done run, or the best-so-far weights at Stop."""
        if self._state == "done":  # one model object per run in this process
            return kept(self.store, self.run_id, self._final_model)
        if self._best is None:
            return None  # stopped before its first report
        weights = loads(self._best)
        model = model_from(self.task, self.network, weights, None)
        model.stats = _stats_so_far(model, self.training, self._reports)
        self._best = None
        return model

    def _final_model(self) -> Any:
        """The done run's model, rebuilt from its final weights (None: a test's stand-in
        trained nothing to keep)."""
        data = self.store.final(self.run_id)
        if data is None:
            return None
        final = loads(data)
        return model_from(self.task, self.network, final["weights"], final["stats"])


def decoded_report(data: bytes) -> EpochReport | LMEpochReport:
    """`codec.loads(data)`, decoded once per process for every session watching the run (its
    reports are the same bytes for all); the last `DECODED_REPORTS` are kept. Do not change
    the report's arrays."""
    return _DECODED.get(data, lambda: loads(data))


def model_from(task: str | LMTask, network: Any, weights: list, stats: Any) -> Any:
    """The model of `network` for `task`, rebuilt in code and given `weights` (no reseeding)
    and its record `stats`."""
    from attnviz.learn.language.model import LanguageModel
    from attnviz.learn.translation.model import Seq2SeqAttention
    from attnviz.learn.translation.transformer_translator import TransformerTranslator

    kind = {TransformerConfig: TransformerTranslator, LMConfig: LanguageModel}
    model = kind.get(type(network), Seq2SeqAttention)(task, network, seed=None)
    model.set_weights(weights)
    model.stats = stats
    return model


def _stats_so_far(model: Any, training: TrainConfig, reports: list) -> Any:
    """The record of `model` holding the best weights of `reports` (as `train` writes it at
    its end, had it ended after the last of them)."""
    seconds = reports[-1].seconds
    if isinstance(reports[-1], LMEpochReport):
        from attnviz.learn.language.training import lm_stats

        return lm_stats(model, training, reports, seconds)
    from attnviz.learn.translation.tasks import draw_pairs
    from attnviz.learn.translation.training import training_stats

    val = draw_pairs(model.task.name, training.val_pairs, f"{training.seed}:validation")
    return training_stats(model, training, reports, val, seconds)


def training_active() -> bool:
    """True while some run in this process is training."""
    return busy()
