"""Where training runs are shared: one run per key (`run_key`), watched by every session that
pressed Train with its settings, trained once, its reports and weights published for all.

A `RunStore` holds the queue of distinct runs waiting to be trained and each run's published
state: its state, its epoch reports (encoded by `codec`, index = epoch), its best-so-far
weights, its final weights, the error of a failed run, and its watchers. Two stores share the
interface, as the class's stores do: `MemoryRunStore`, this process's (one server: today's one
queue, first come first served, with the sharing), and `redis_store.RedisRunStore`, shared by
every replica pointing at one Redis (`ATTNVIZ_REDIS_URL`); `from_env` picks.

Finished runs are kept, least recently used first out, up to `FINISHED_MB` MB in all, and served
at once to a new press of the same key. A stopped or failed run is not the key's result: the
next press trains it again (its watchers still read how it ended).

The workers (`worker`) take runs from the queue (`take`), publish each epoch (`publish`,
which skips an epoch already there: a run restarted from the start on another replica repeats
none) and end them (`finish`); the sessions' handles (`runs.TrainingRun`) `submit`, read
(`status`, `final`) and `leave`.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

STATES = ("waiting", "training", "done", "stopped", "failed")  # a run's states
ENDED = ("done", "stopped", "failed")
GONE = "gone"  # the state of a run the store no longer holds (evicted, expired)
SOURCES = ("new", "shared", "finished")  # how a press got its run: it queued it, it joined a
# waiting or training run, or the run had finished before (served from the store)
FINISHED_MB = 64.0  # finished runs kept, MB in all: their reports and final weights (measured
# 2026-11-28 at the pages' defaults: a seq2seq translator ~0.2 MB, a Transformer ~1.4 MB, a
# language model up to ~4 MB, the stories model's 30 probes): 16 runs or more
ENDED_KEEP = 600.0  # seconds a stopped or failed run stays readable for its watchers
DEAD_AFTER = 30.0  # seconds a taken run's queue entry may idle before another replica takes it
HEARTBEAT = 5.0  # seconds between a training replica's claims of its entry (idle back to 0)
WATCHING_FRESH = 70.0  # seconds since its last look that a watcher still counts as watching:
# a page looks at each epoch and at least every 10 s, a browser's hidden tab may look only once
# a minute; a closed tab stops counting after this (it stays a member of the run until it ends)
TRAINING_SLOTS = 1  # trainings running at once in one process (set_random_seed is global)


@dataclass(frozen=True)
class Plan:
    """What the estimates need of a run before it trains."""

    epochs: int  # the epoch cap
    n_pairs: int  # training pairs (or sequences) of one epoch
    time_limit: float  # seconds of training at most

    @classmethod
    def of(cls, training: Any) -> Plan:
        """The plan of a `TrainConfig`."""
        return cls(training.epochs, training.n_pairs, float(training.time_limit))


@dataclass(frozen=True)
class Joined:
    """What a Train press got: its run's id and how (`SOURCES`)."""

    run_id: str
    source: str


@dataclass(frozen=True)
class RunStatus:
    """A run as the store has it now, for one watcher."""

    state: str  # one of STATES, or GONE
    reports: tuple[bytes, ...]  # the encoded reports from the `since` asked for on
    watchers: int  # sessions watching it, seen looking within `WATCHING_FRESH` seconds
    error: str = ""  # why it failed
    seconds: float = 0.0  # since it started training (0 while waiting)
    place: int = 0  # while waiting: 1 = next to start, ...; else 0
    starts_in: float | None = None  # while waiting: estimated seconds until it starts
    best: bytes | None = None  # (`leave` only) the best-so-far weights, encoded
    best_epoch: int = -1  # (`leave` only) the epoch of `best`


@dataclass(frozen=True)
class RunMark:
    """What a watching page shows of a run changes when this does: its state, how many epochs
    are published, its place in the queue (a cheap read: no reports, no estimate)."""

    state: str  # one of STATES, or GONE
    reports: int = 0  # epoch reports published (epoch 0 included)
    place: int = 0  # while waiting: 1 = next to start, ...; else 0


@dataclass(frozen=True)
class Taken:
    """A run a worker took from the queue."""

    run_id: str
    job: bytes  # the encoded `codec.Job`
    entry: str  # its queue entry (a Redis stream id; the run id in memory)
    state: str  # "training": train it; "stopped": nobody watches it any more, only end it


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

    @classmethod
    def of(cls, plan: Plan, reports: int, setup: float, last: float, elapsed: float) -> Progress:
        """From a run's plan, its count of reports, the seconds of its first and last report
        and the seconds since it started training."""
        done = max(0, reports - 1)
        setup = setup if reports else elapsed
        mean = (last - setup) / done if done else None
        since = elapsed - (last if reports else 0.0)
        left = plan.time_limit - elapsed
        return cls(done, plan.epochs, setup, mean, max(0.0, since), left, plan.n_pairs)


def starts_in(
    training: list[Progress], ahead: list[Any], slots: int = TRAINING_SLOTS
) -> float | None:
    """Estimated seconds until a waiting run starts: the `training` runs end, then the runs
    `ahead` of it in the queue (`Plan`s or `TrainConfig`s) run, each in the first slot to free
    up.

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


class RunStore(Protocol):
    """The shared runs (see the module docstring). Every method is safe from any thread."""

    heartbeat: float  # seconds between a training worker's `keep_alive` calls

    def submit(self, key: str, job: bytes, watcher: str, plan: Plan) -> Joined:
        """A Train press: join the run of `key` if one waits or trains, get the finished one
        if kept, else queue a new run (atomic: many presses of one key queue one run)."""

    def status(self, run_id: str, since: int = 0, watcher: str = "") -> RunStatus:
        """The run now, its reports from epoch `since` on; `watcher` (one of the run's) is seen
        looking now."""

    def mark(self, run_id: str) -> RunMark:
        """The run's `RunMark` now (what a server's watch of its pages reads)."""

    def leave(self, run_id: str, watcher: str, since: int = 0) -> RunStatus:
        """`watcher` stops watching; the status with the best-so-far weights, read at the same
        moment. The last watcher's leaving ends a waiting run and stops a training one after
        its epoch."""

    def final(self, run_id: str) -> bytes | None:
        """A done run's final weights and record (`{"weights", "stats"}`, encoded), or None."""

    def take(self, timeout: float) -> Taken | None:
        """The next run to train (None after `timeout` seconds without one)."""

    def keep_alive(self, taken: Taken) -> None:
        """The worker training `taken` is alive (keeps other replicas from taking it over)."""

    def publish(self, taken: Taken, epoch: int, report: bytes, seconds: float,
                best: bytes | None = None) -> int:  # fmt: skip
        """Add epoch `epoch`'s report (and the best-so-far weights if it is the best) unless
        that epoch is already there; returns how many sessions have not left it (0: stop
        training), looking or not."""

    def finish(self, taken: Taken, state: str, final: bytes | None, error: str = "") -> None:
        """End the run ("done", "stopped" or "failed") and let its queue entry go."""

    def replicas(self) -> int:
        """Workers alive on this queue (the slots of the estimates)."""


@dataclass
class _Run:
    """One run in a `MemoryRunStore` (changed under the store's lock)."""

    run_id: str
    key: str
    job: bytes
    plan: Plan
    watchers: dict[str, float]  # the sessions that have not left it -> the clock at their
    # last look
    state: str = "waiting"
    reports: list[bytes] = field(default_factory=list)
    error: str = ""
    best: bytes | None = None
    best_epoch: int = -1
    final: bytes | None = None
    started: float | None = None  # the store's clock when it started training
    setup: float = 0.0  # seconds of its epoch-0 report
    last: float = 0.0  # seconds of its last report
    ended: float = 0.0  # the store's clock when it ended

    def size(self) -> int:
        """Bytes it keeps."""
        return sum(map(len, self.reports)) + len(self.best or b"") + len(self.final or b"")


class MemoryRunStore:
    """The runs of one server process (see the module docstring): one queue, first come first
    served, trained by this process's worker."""

    heartbeat = HEARTBEAT

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, finished_mb: float = FINISHED_MB,
        slots: int = TRAINING_SLOTS, watching_fresh: float = WATCHING_FRESH,
    ) -> None:  # fmt: skip
        self.clock = clock  # seconds, for the runs' progress (a test passes its own)
        self.finished_bytes = int(finished_mb * 2**20)  # finished runs kept, bytes in all
        self.slots = slots
        self.watching_fresh = watching_fresh  # seconds a watcher's look keeps it counted
        self._lock = threading.Condition()  # guards everything below; wakes `take`
        self._runs: dict[str, _Run] = {}
        self._current: dict[str, str] = {}  # key -> its run waiting, training or done
        self._queue: deque[str] = deque()  # run ids waiting, first in line first
        self._finished: OrderedDict[str, int] = OrderedDict()  # run id -> bytes, oldest use first
        self._ids = itertools.count(1)

    def submit(self, key: str, job: bytes, watcher: str, plan: Plan) -> Joined:
        with self._lock:
            self._forget_ended()
            run = self._runs.get(self._current.get(key, ""))
            if run is not None and run.state in ("waiting", "training"):
                run.watchers[watcher] = self.clock()
                return Joined(run.run_id, "shared")
            if run is not None and run.state == "done":
                self._finished.move_to_end(run.run_id)  # used: last out
                return Joined(run.run_id, "finished")
            run = _Run(str(next(self._ids)), key, job, plan, {watcher: self.clock()})
            self._runs[run.run_id] = run
            self._current[key] = run.run_id
            self._queue.append(run.run_id)
            self._lock.notify_all()
            return Joined(run.run_id, "new")

    def status(self, run_id: str, since: int = 0, watcher: str = "") -> RunStatus:
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return RunStatus(GONE, (), 0)
            if watcher in run.watchers:
                run.watchers[watcher] = self.clock()
            return self._status(run, since)

    def mark(self, run_id: str) -> RunMark:
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return RunMark(GONE)
            waiting = run.state == "waiting" and run.run_id in self._queue
            place = self._queue.index(run.run_id) + 1 if waiting else 0
            return RunMark(run.state, len(run.reports), place)

    def _status(self, run: _Run, since: int) -> RunStatus:
        now = self.clock()
        seconds = 0.0 if run.started is None else now - run.started
        place, starts = 0, None
        if run.state == "waiting" and run.run_id in self._queue:
            place = self._queue.index(run.run_id) + 1
            ahead = [self._runs[r].plan for r in list(self._queue)[: place - 1]]
            runs = self._runs.values()
            training = [self._progress(r, now) for r in runs if r.state == "training"]
            starts = starts_in(training, ahead, self.slots)
        looking = sum(now - seen <= self.watching_fresh for seen in run.watchers.values())
        return RunStatus(run.state, tuple(run.reports[since:]), looking, run.error, seconds,
                         place, starts)  # fmt: skip

    @staticmethod
    def _progress(run: _Run, now: float) -> Progress:
        elapsed = now - (run.started if run.started is not None else now)
        return Progress.of(run.plan, len(run.reports), run.setup, run.last, elapsed)

    def leave(self, run_id: str, watcher: str, since: int = 0) -> RunStatus:
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return RunStatus(GONE, (), 0)
            run.watchers.pop(watcher, None)
            if not run.watchers and run.state == "waiting":
                self._queue.remove(run.run_id)
                self._end(run, "stopped")
                self._lock.notify_all()
            status = self._status(run, since)
            return RunStatus(status.state, status.reports, status.watchers, status.error,
                             status.seconds, best=run.best, best_epoch=run.best_epoch)  # fmt: skip

    def final(self, run_id: str) -> bytes | None:
        with self._lock:
            run = self._runs.get(run_id)
            return None if run is None else run.final

    def take(self, timeout: float) -> Taken | None:
        with self._lock:
            if not self._lock.wait_for(lambda: self._queue, timeout):
                return None
            run = self._runs[self._queue.popleft()]
            run.state, run.started = "training", self.clock()
            return Taken(run.run_id, run.job, run.run_id, "training")

    def keep_alive(self, taken: Taken) -> None:
        """Nothing to do: no other replica takes this process's runs."""

    def publish(self, taken: Taken, epoch: int, report: bytes, seconds: float,
                best: bytes | None = None) -> int:  # fmt: skip
        with self._lock:
            run = self._runs[taken.run_id]
            if epoch == len(run.reports):
                run.reports.append(report)
                run.last = seconds
                run.setup = seconds if epoch == 0 else run.setup
                if best is not None:
                    run.best, run.best_epoch = best, epoch
            return len(run.watchers)

    def finish(self, taken: Taken, state: str, final: bytes | None, error: str = "") -> None:
        with self._lock:
            run = self._runs[taken.run_id]
            run.final, run.error = final, error
            self._end(run, state)
            if state == "done":
                run.best = None  # the final weights are the best epoch's
                self._finished[run.run_id] = run.size()
                self._evict()
            self._lock.notify_all()

    def _end(self, run: _Run, state: str) -> None:
        run.state, run.ended = state, self.clock()
        if state != "done" and self._current.get(run.key) == run.run_id:
            del self._current[run.key]  # not the key's result: the next press trains again

    def _evict(self) -> None:
        """Drop the least recently used finished runs beyond `finished_bytes` (the newest stays)."""
        while sum(self._finished.values()) > self.finished_bytes and len(self._finished) > 1:
            run_id, _ = self._finished.popitem(last=False)
            run = self._runs.pop(run_id)
            if self._current.get(run.key) == run_id:
                del self._current[run.key]

    def _forget_ended(self) -> None:
        """Drop the stopped and failed runs ended more than `ENDED_KEEP` seconds ago."""
        now = self.clock()
        for run_id, run in list(self._runs.items()):
            if run.state in ("stopped", "failed") and now - run.ended > ENDED_KEEP:
                del self._runs[run_id]

    def replicas(self) -> int:
        return self.slots

    def training(self) -> bool:
        """True while some run of this store trains."""
        with self._lock:
            return any(r.state == "training" for r in self._runs.values())


MEMORY = MemoryRunStore()  # this process's store when there is no Redis (`from_env`)
