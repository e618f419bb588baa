"""The process's trainer: a daemon thread per `RunStore` (started by the first Train press) that
takes the next run from the store's queue, trains it, and publishes each epoch's report, the
best-so-far weights and the end, for every session watching the run, on any replica.

One training at a time per process: `keras.utils.set_random_seed` is process-wide (and on two
cores a second run would only halve both), so attnviz's own trainers hold `_ONE_AT_A_TIME`.
A run is trained by `train`, `train_transformer` or `train_lm` by its network's config, or by
a `fit` a test injected (`register_fit`: only this process's workers can run it).
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from attnviz.learn.configs import LMConfig, TransformerConfig
from attnviz.learn.language.training import train_lm
from attnviz.learn.runs.codec import Job, dumps, loads
from attnviz.learn.runs.models import keep
from attnviz.learn.runs.store import RunStore, Taken
from attnviz.learn.translation.training import train, train_transformer

TAKE_WAIT = 1.0  # seconds a worker waits on the queue before looking again
_TRAINERS = {TransformerConfig: train_transformer, LMConfig: train_lm}  # else `train`
_FITS: dict[str, Callable[..., Any]] = {}  # injected trainers, by token (this process only)
_ONE_AT_A_TIME = threading.Lock()  # attnviz's trainers: one at a time in the process
_WORKERS: dict[int, Worker] = {}  # by id(store); each worker keeps its store alive
_STARTING = threading.Lock()
_log = logging.getLogger(__name__)


class _LetGoError(Exception):
    """The worker was killed, or another replica took its run over: leave the run as it is."""


def register_fit(fit: Callable[..., Any]) -> str:
    """A token naming `fit` (called as `train` is) in a run's key and job; this process's
    workers train such a run with it."""
    name = getattr(fit, "__qualname__", type(fit).__name__)
    token = f"fit:{getattr(fit, '__module__', '')}.{name}:{hash(fit):x}"
    _FITS[token] = fit
    return token


def ensure_worker(store: RunStore) -> Worker:
    """This process's worker on `store`, started on the first call."""
    with _STARTING:
        worker = _WORKERS.get(id(store))
        if worker is None or not worker.alive:
            worker = _WORKERS[id(store)] = Worker(store)
            worker.start()
        return worker


def stop_worker(store: RunStore, timeout: float | None = 30.0) -> None:
    """Stop this process's worker on `store` (a test's end, a shutdown), as `Worker.kill`."""
    with _STARTING:
        worker = _WORKERS.pop(id(store), None)
    if worker is not None:
        worker.kill(timeout=timeout)


def busy() -> bool:
    """True while a worker of this process trains."""
    return any(w.busy for w in list(_WORKERS.values()))


class Worker:
    """Takes runs from `store`'s queue and trains them, one at a time, in a daemon thread."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.busy = False  # True while it trains
        self._killed = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Worker:
        """Start its thread."""
        self._thread = threading.Thread(target=self._loop, name="attnviz-trainer", daemon=True)
        self._thread.start()
        return self

    @property
    def alive(self) -> bool:
        """True while its thread runs."""
        return self._thread is not None and self._thread.is_alive() and not self._killed.is_set()

    @property
    def ident(self) -> int | None:
        """Its thread's identifier (`threading.get_ident()` inside it)."""
        return None if self._thread is None else self._thread.ident

    def kill(self, timeout: float | None = 30.0) -> None:
        """Stop at once, as a replica that dies: the run it trains is neither finished nor
        acknowledged (another replica takes it over; its trainer stops at its next report).
        Waits up to `timeout` seconds for its thread to end (None: does not wait)."""
        self._killed.set()
        if self._thread is not None and timeout is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._killed.is_set():
            try:
                taken = self.store.take(TAKE_WAIT)
            except Exception:  # noqa: BLE001 - the store is down: look again in a moment
                _log.warning("The training runs' store did not answer", exc_info=True)
                self._killed.wait(TAKE_WAIT)
                continue
            if taken is None or self._killed.is_set():
                continue
            if taken.state != "training":  # nobody watches it any more
                self._finish(taken, "stopped", None, "")
                continue
            self._train(taken)

    def _train(self, taken: Taken) -> None:
        """Train `taken`, its claim kept fresh meanwhile, and publish its end."""
        ended, lost = threading.Event(), threading.Event()
        beat = threading.Thread(target=self._keep_alive, args=(taken, ended, lost), daemon=True)
        self.busy = True
        beat.start()
        try:
            stopped, model = self._fit(taken, lost)
            end = ("stopped" if stopped else "done", _final(model), "")
            if not stopped and end[1] is not None:
                keep(self.store, taken.run_id, model)  # this process's sessions share it
        except _LetGoError:
            return  # a dead replica publishes nothing more
        except Exception as err:  # noqa: BLE001 - every watcher reads why; the worker goes on
            end = ("failed", None, f"{type(err).__name__}: {err}")
        finally:
            ended.set()
            self.busy = False  # before the end is published: who sees it sees the process idle
        self._finish(taken, *end)

    def _fit(self, taken: Taken, lost: threading.Event) -> tuple[bool, Any]:
        """Run the job's trainer; (whether it was stopped for lack of watchers, the model)."""
        job = loads(taken.job)
        if not isinstance(job, Job):
            raise ValueError(f"A queued run must hold a Job. Received: {type(job).__name__}.")
        fit, own = _trainer(job)
        best: list[bytes] = []  # the newest best-so-far weights, encoded, until their report
        stopped = [False]

        def on_best(weights: list[np.ndarray]) -> None:
            best[:] = [dumps([np.asarray(w) for w in weights])]

        def on_epoch(report: Any) -> bool:
            if self._killed.is_set() or lost.is_set():
                raise _LetGoError
            weights = best.pop() if report.best and best else None
            watchers = self.store.publish(taken, report.epoch, dumps(report), report.seconds,
                                          weights)  # fmt: skip
            stopped[0] = watchers == 0
            return stopped[0]  # True: stop after this epoch

        extra = {"on_best": on_best} if _takes_on_best(fit) else {}
        with _ONE_AT_A_TIME if own else contextlib.nullcontext():
            model = fit(job.task, job.network, job.training, callback=on_epoch, **extra)
        return stopped[0], model

    def _keep_alive(self, taken: Taken, ended: threading.Event, lost: threading.Event) -> None:
        while not ended.wait(self.store.heartbeat) and not self._killed.is_set():
            try:
                if self.store.keep_alive(taken) is False:
                    lost.set()  # another replica took it over: it trains it
                    return
            except Exception:  # noqa: BLE001 - a missed beat; the next one may get through
                _log.warning("Could not renew a training run's claim", exc_info=True)

    def _finish(self, taken: Taken, state: str, final: bytes | None, error: str) -> None:
        try:
            self.store.finish(taken, state, final, error)
        except Exception:  # noqa: BLE001 - unacknowledged: a live replica takes it again
            _log.warning("Could not publish a training run's end", exc_info=True)


def _trainer(job: Job) -> tuple[Callable[..., Any], bool]:
    """The function that trains `job`, and whether it is attnviz's own."""
    if not job.trainer:
        return _TRAINERS.get(type(job.network), train), True
    fit = _FITS.get(job.trainer)
    if fit is None:
        raise ValueError(
            f"This run is trained by a function given in another process ({job.trainer}); "
            "only attnviz's own trainers run on every replica."
        )
    return fit, False


def _takes_on_best(fit: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(fit).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "on_best" or p.kind is p.VAR_KEYWORD for p in parameters)


def _final(model: Any) -> bytes | None:
    """A trained model's weights and record, encoded (None for a test's stand-in without
    weights)."""
    if model is None or not hasattr(model, "get_weights"):
        return None
    weights = [np.asarray(w) for w in model.get_weights()]
    return dumps({"weights": weights, "stats": getattr(model, "stats", None)})
