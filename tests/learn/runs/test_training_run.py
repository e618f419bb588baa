"""Tests for learn/runs/training_run.py: a session's view of a shared training run, watched and
stopped from outside: identical presses share one run, a Stop ends it for the one who pressed
it, the last watcher's Stop ends the training, a failure reaches every watcher, on both stores."""

import threading
import time

import numpy as np
import pytest
from run_fakes import ScriptedTraining

from attnviz.core.kept import Kept
from attnviz.learn import runs
from attnviz.learn.configs import (
    LM_TRAINING,
    LMConfig,
    NetworkConfig,
    TrainConfig,
    TransformerConfig,
)
from attnviz.learn.runs import Progress, TrainingQueue, TrainingRun, model_from, starts_in
from attnviz.learn.runs.codec import loads
from attnviz.learn.runs.store import MemoryRunStore
from attnviz.learn.translation.training import EpochReport, train
from attnviz.learn.translation.transformer_translator import TransformerTranslation

TINY = NetworkConfig(units=8, embed_dim=8, attention_units=8)


def _pairs(epochs: int, seed: int = 0) -> TrainConfig:
    """A few pairs in one batch an epoch: these tests check how a run reports, stops and hands
    over its model, not what the model learns, and building (tracing) the model costs far
    more than its steps."""
    return TrainConfig(epochs, n_pairs=32, val_pairs=8, batch_size=32, seed=seed)


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
    run = TrainingRun.start("reverse", small, _pairs(1, seed=3))
    assert run.transformer
    snapshot = run.join(timeout=120)
    assert snapshot.state == "done", snapshot.error
    assert [r.epoch for r in snapshot.reports] == [0, 1]
    assert isinstance(snapshot.reports[-1].probe, TransformerTranslation)  # through the store
    assert snapshot.model.translate("abc").cross.shape[:2] == (1, 2)  # one layer, two heads


@pytest.mark.slow  # trains
def test_stop_keeps_the_best_epoch_so_far_and_the_training_ends_after_its_epoch():
    epoch_1, pressed, ended, bests, seen = threading.Event(), threading.Event(), [], [], []

    def watched_train(task, network, training, callback, on_best):  # holds after epoch 1
        def best(weights):
            bests.append([w.copy() for w in weights])
            on_best(weights)

        def report(epoch_report):
            stop = callback(epoch_report)
            if epoch_report.epoch == 1:  # epoch 2 starts only once Stop was pressed
                seen.append(len(bests))
                epoch_1.set()
                assert pressed.wait(120)
            return stop

        ended.append(train(task, network, training, callback=report, on_best=best))
        return ended[-1]

    store = MemoryRunStore()
    run = TrainingRun.start("reverse", TINY, _pairs(50, seed=4), store=store, fit=watched_train)
    assert epoch_1.wait(120)
    run.stop()  # the page's Stop button, from another thread, before epoch 2 trains
    snapshot = run.snapshot()  # at once: this session has stopped watching
    pressed.set()
    assert snapshot.state == "stopped" and not run.running
    assert [r.epoch for r in snapshot.reports] == [0, 1]  # what it had seen
    assert snapshot.model is not None and snapshot.model.stats.epochs_run == 1
    best = max(snapshot.reports, key=lambda r: (r.val_char_accuracy, r.val_exact_match))
    assert snapshot.model.stats.best_epoch == best.epoch
    assert snapshot.model.translate("abc").weights.shape[1] == 3
    # nobody watches any more: the training itself stopped after epoch 2, not at the cap
    assert _ended(store, run.run_id).state == "stopped"
    assert ended[0].stats.epochs_run == 2
    for mine, kept in zip(snapshot.model.get_weights(), bests[seen[0] - 1], strict=True):
        np.testing.assert_array_equal(mine, kept)  # the best weights up to epoch 1


def _ended(store, run_id: str, timeout: float = 120.0):
    """The store's status of `run_id` once it has ended."""
    deadline = time.monotonic() + timeout
    while (status := store.status(run_id)).state not in ("done", "stopped", "failed"):
        assert time.monotonic() < deadline, status
        time.sleep(0.05)
    return status


@pytest.mark.slow  # trains
def test_a_language_model_run_reports_every_head_s_scores():
    # One layer of two heads: (L, H) = (1, 2) still tells layers from heads, and XLA compiles
    # a smaller train step (the compile, not the step, is what this run costs)
    small = LMConfig(layers=1, heads=2, d_model=8, d_ff=0)
    run = TrainingRun.start("induction", small, _pairs(1, seed=3))
    assert run.language_model and not run.transformer
    snapshot = run.join(timeout=120)
    assert snapshot.state == "done", snapshot.error
    assert [r.epoch for r in snapshot.reports] == [0, 1]
    assert all(r.induction.shape == (1, 2) for r in snapshot.reports)  # (L, H), per epoch
    assert snapshot.model.forward("abcab").weights.shape == (1, 2, 6, 6)


def test_a_language_model_trains_by_lm_training_unless_told():
    queue, ahead = TrainingQueue(), FakeTraining()
    first = TrainingRun.start("dates", TINY, TrainConfig(5), queue=queue, fit=ahead.fit)
    assert ahead.started.wait(30)  # it holds the slot: the language model waits
    run = TrainingRun.start("induction", LMConfig(), queue=queue)
    assert run.training == LM_TRAINING and run.snapshot().state == "waiting"
    assert run.language_model and not first.language_model
    run.stop()
    ahead.release.set()
    assert run.join(timeout=30).state == "stopped" and first.join(timeout=30).state == "done"


@pytest.mark.slow  # trains
def test_a_failed_run_says_why_and_frees_the_slot():
    queue = TrainingQueue()
    run = TrainingRun.start("no such task", queue=queue)
    snapshot = run.join(timeout=30)
    assert snapshot.state == "failed"
    assert "ValueError" in snapshot.error and "no such task" in snapshot.error
    assert not queue.training()
    fake = FakeTraining()
    after = TrainingRun.start("reverse", TINY, _pairs(1), queue=queue, fit=fake.fit)
    assert fake.started.wait(30)  # the slot is free again: the next run trains at once
    fake.release.set()
    assert after.join(timeout=30).state == "done"


class Clock:
    """The queue's clock, moved by hand."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _report(epoch: int, seconds: float) -> EpochReport:
    return EpochReport(epoch, None, None, 0.0, 0.0, seconds, None, False)


class FakeTraining:
    """Stands in for `train`: reports the epochs it is given at once, then holds the slot until
    released."""

    def __init__(self, report_seconds: tuple[float, ...] = ()) -> None:
        self.report_seconds = report_seconds  # seconds of epoch 0, 1, ... since the start
        self.started = threading.Event()  # set once it trains
        self.release = threading.Event()  # set by the test: training ends

    def fit(self, task, network, training, callback):
        for epoch, seconds in enumerate(self.report_seconds):
            callback(_report(epoch, seconds))
        self.started.set()
        assert self.release.wait(60)
        return "model"


@pytest.fixture
def line():
    """A queue on a hand-moved clock, a run training in it (epochs 0 and 1 reported: setup 2 s,
    10 s an epoch, cap 5, 10,000 pairs) and a way to add waiting runs; every run is released
    at the end."""
    clock = Clock(100.0)
    queue = TrainingQueue(clock=clock)
    fakes = [FakeTraining((2.0, 12.0))]
    first = TrainingRun.start("dates", TINY, TrainConfig(5), queue=queue, fit=fakes[0].fit)
    assert fakes[0].started.wait(30)

    def waiting(epochs: int, n_pairs: int = 10_000, time_limit: float = 120.0) -> TrainingRun:
        fakes.append(FakeTraining())
        training = TrainConfig(epochs, n_pairs=n_pairs, time_limit=time_limit)
        return TrainingRun.start("dates", TINY, training, queue=queue, fit=fakes[-1].fit)

    yield clock, queue, first, waiting, fakes
    for fake in fakes:
        fake.release.set()


def test_waiting_runs_know_their_place_and_when_they_start(line):
    clock, queue, first, waiting, _ = line
    second, third = waiting(3), waiting(4, n_pairs=5_000)
    clock.now = 113.0  # 13 s into the first run: 1 s after its epoch 1
    assert first.snapshot().state == "training" and first.snapshot().place == 0
    # first: 4 epochs left × 10 s, less the 1 s since its last report -> 39 s
    assert (second.snapshot().place, second.snapshot().starts_in) == (1, 39.0)
    # then second: 2 s setup + 3 epochs × 10 s -> 32 s more
    assert (third.snapshot().place, third.snapshot().starts_in) == (2, 71.0)
    assert second.snapshot().state == third.snapshot().state == "waiting"


def test_a_stopped_waiting_run_leaves_and_the_ones_behind_move_up(line):
    clock, queue, first, waiting, fakes = line
    second, third = waiting(3), waiting(4)
    clock.now = 113.0
    second.stop()  # its student pressed Stop while it waited
    assert second.join(timeout=30).state == "stopped" and not fakes[1].started.is_set()
    assert (third.snapshot().place, third.snapshot().starts_in) == (1, 39.0)
    fakes[0].release.set()  # the first run ends: the third trains
    assert first.join(timeout=30).state == "done"
    assert fakes[2].started.wait(30) and queue.training()
    assert third.snapshot().state == "training" and third.snapshot().place == 0


def test_no_estimate_before_the_training_run_finishes_an_epoch():
    clock = Clock(0.0)
    queue = TrainingQueue(clock=clock)
    fake = FakeTraining((2.0,))  # epoch 0 only
    first = TrainingRun.start("dates", TINY, TrainConfig(5), queue=queue, fit=fake.fit)
    try:
        assert fake.started.wait(30)
        second = TrainingRun.start("dates", TINY, TrainConfig(5, seed=1), queue=queue,
                                   fit=fake.fit)  # fmt: skip
        assert (second.snapshot().place, second.snapshot().starts_in) == (1, None)
        second.stop()
        assert second.join(timeout=30).state == "stopped"
    finally:
        fake.release.set()
    assert first.join(timeout=30).state == "done"


def _progress(done=1, epochs=5, setup=2.0, epoch=10.0, since=0.0, left=100.0, pairs=1000):
    return Progress(done, epochs, setup, epoch, since, left, pairs)


@pytest.mark.parametrize(
    ("training", "ahead", "slots", "expected"),
    [
        ([_progress()], [], 1, 40.0),  # 4 epochs left × 10 s
        ([_progress(since=5.0)], [], 1, 35.0),  # 5 s into the next epoch
        ([_progress(left=12.0)], [], 1, 12.0),  # its time limit ends it sooner
        ([_progress(done=5)], [], 1, 0.0),  # every epoch done: ending now
        ([_progress()], [TrainConfig(3, n_pairs=1000)], 1, 72.0),  # + 2 s setup + 3 × 10 s
        ([_progress()], [TrainConfig(3, n_pairs=500)], 1, 57.0),  # half the pairs: 5 s epochs
        ([_progress()], [TrainConfig(30, n_pairs=1000, time_limit=60.0)], 1, 100.0),  # capped
        ([], [TrainConfig(3, n_pairs=1000)], 1, 0.0),  # nothing training: no rate, starts now
        ([_progress()], [], 2, 0.0),  # a second slot is free
        ([_progress(), _progress(done=3)], [TrainConfig(1, n_pairs=1000)], 2, 32.0),  # 20 + 12
        ([_progress(epoch=None)], [], 1, None),  # no epoch finished yet
    ],
    ids=["epochs-left", "mid-epoch", "time-limit", "last-epoch", "one-ahead", "fewer-pairs",
         "ahead-capped", "idle", "free-slot", "two-slots", "no-epoch-yet"],
)  # fmt: skip
def test_starts_in(training, ahead, slots, expected):
    assert starts_in(training, ahead, slots) == expected


# --- shared runs -----------------------------------------------------------------------------


def _start(store, fake, seed: int = 0, epochs: int = 3) -> TrainingRun:
    return TrainingRun.start("dates", TINY, TrainConfig(epochs, seed=seed), store=store,
                             fit=fake.fit)  # fmt: skip


def test_presses_with_the_same_settings_share_one_run_and_another_seed_gets_its_own(run_store):
    fake = ScriptedTraining(hold_after=1)
    first, second = _start(run_store, fake), _start(run_store, fake)
    third = _start(run_store, fake, seed=1)
    assert (first.source, second.source, third.source) == ("new", "shared", "new")
    assert first.run_id == second.run_id != third.run_id and first.key == second.key != third.key
    try:
        assert fake.held.wait(30)
        late = _start(run_store, fake)  # joins mid-run: the epochs so far at once
        assert late.source == "shared" and [r.epoch for r in late.snapshot().reports] == [0, 1]
        assert late.snapshot().others == 2 and first.snapshot().others == 2
        waiting = third.snapshot()
        assert (waiting.state, waiting.place, waiting.others) == ("waiting", 1, 0)
        # a page that stops looking (a closed tab) stops counting among the others
        run_store.watching_fresh = 0.3
        time.sleep(0.4)
        assert first.snapshot().others == 0  # second and late have not looked for 0.4 s
        assert late.snapshot().others == 1  # first just looked
    finally:
        fake.release.set()
    snapshots = [run.join(timeout=30) for run in (first, second, late, third)]
    assert [s.state for s in snapshots] == ["done"] * 4
    assert all([r.epoch for r in s.reports] == [0, 1, 2, 3] for s in snapshots)
    assert fake.calls == 2  # one training per distinct key
    served = _start(run_store, fake)  # the same settings once more: from the store, at once
    snapshot = served.snapshot()
    assert (served.source, snapshot.state, snapshot.source) == ("finished", "done", "finished")
    assert [r.epoch for r in snapshot.reports] == [0, 1, 2, 3] and fake.calls == 2
    # "Trained 3 epochs in 3 s": an ended run's seconds are its last epoch's (the fake's
    # `seconds` = the epoch), for the one who watched and the one served from the store alike
    assert snapshots[0].seconds == snapshot.seconds == 3.0


def test_sessions_watching_one_run_decode_each_report_once_in_the_process(run_store, monkeypatch):

    from attnviz.learn.runs import training_run

    decoded: list[int] = []  # the epochs decoded

    def counted(data: bytes):
        report = loads(data)
        decoded.append(report.epoch)
        return report

    monkeypatch.setattr(training_run, "loads", counted)
    monkeypatch.setattr(training_run, "_DECODED", Kept(training_run.DECODED_REPORTS))
    fake = ScriptedTraining(hold_after=1)
    watchers = [_start(run_store, fake) for _ in range(3)]
    try:
        assert fake.held.wait(30)
        snapshots = [watcher.snapshot() for watcher in watchers]
        assert all([r.epoch for r in s.reports] == [0, 1] for s in snapshots)
        assert sorted(decoded) == [0, 1]  # once for the three sessions
        assert snapshots[0].reports[1] is snapshots[2].reports[1]
    finally:
        fake.release.set()
    ended = [watcher.join(timeout=30) for watcher in watchers]
    assert all([r.epoch for r in s.reports] == [0, 1, 2, 3] for s in ended)
    assert sorted(decoded) == [0, 1, 2, 3]


def test_a_stop_ends_the_run_for_the_one_who_pressed_it(run_store):
    fake = ScriptedTraining(hold_after=1)
    first, second = _start(run_store, fake), _start(run_store, fake)
    try:
        assert fake.held.wait(30)
        first.stop()  # the others keep watching theirs to the end
        stopped = first.snapshot()
        assert (stopped.state, [r.epoch for r in stopped.reports]) == ("stopped", [0, 1])
        assert second.snapshot().state == "training" and second.snapshot().others == 0
    finally:
        fake.release.set()
    assert [r.epoch for r in second.join(timeout=30).reports] == [0, 1, 2, 3]
    assert second.snapshot().state == "done" and fake.stopped_after is None
    assert first.snapshot() == stopped  # it no longer follows the run


def test_the_last_watcher_s_stop_stops_the_training_and_is_not_kept(run_store):
    fake = ScriptedTraining(hold_after=1)
    first, second = _start(run_store, fake, epochs=5), _start(run_store, fake, epochs=5)
    try:
        assert fake.held.wait(30)
        first.stop()
        second.stop()
    finally:
        fake.release.set()
    assert _ended(run_store, first.run_id).state == "stopped"
    assert fake.stopped_after == 2  # after the epoch it was training, not at the cap
    again = _start(run_store, fake, epochs=5)  # a stopped run is not the key's result
    assert again.source == "new" and again.join(timeout=30).state == "done"
    assert fake.calls == 2


def test_a_failed_run_tells_every_watcher_why(run_store):
    fake = ScriptedTraining(error=ValueError("the task's pairs ran out"))
    first, second = _start(run_store, fake), _start(run_store, fake)
    for run in (first, second):
        snapshot = run.join(timeout=30)
        assert snapshot.state == "failed"
        assert snapshot.error == "ValueError: the task's pairs ran out"
        assert [r.epoch for r in snapshot.reports] == [0]
    assert _start(run_store, fake).source == "new"  # a failed run is tried again


@pytest.mark.slow  # reads the shared tiny training
def test_two_sessions_pressing_train_alike_get_one_real_run(shared_tiny_run):
    first, second = shared_tiny_run.snapshots
    assert len(shared_tiny_run.calls) == 1  # one training started
    assert [r.source for r in shared_tiny_run.runs] == ["new", "shared"]
    assert first.state == second.state == "done"
    assert [r.epoch for r in first.reports] == [r.epoch for r in second.reports] == [0, 1, 2]
    for mine, theirs in zip(first.reports, second.reports, strict=True):
        np.testing.assert_array_equal(mine.probe.weights, theirs.probe.weights)
    assert first.model is second.model  # one model object per run in this process
    # another replica rebuilds it from the final weights in the store: the same weights
    final = loads(shared_tiny_run.store.final(shared_tiny_run.runs[1].run_id))
    rebuilt = model_from("reverse", shared_tiny_run.network, final["weights"], final["stats"])
    for mine, theirs in zip(first.model.get_weights(), rebuilt.get_weights(), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    assert repr(rebuilt.stats) == repr(first.model.stats)  # (NaN in its history: by text)
    assert first.model.stats.epochs_run == 2
    assert first.model.translate("abc").output == rebuilt.translate("abc").output
    other = TrainingRun.start("reverse", shared_tiny_run.network, TrainConfig(
        2, n_pairs=32, val_pairs=8, batch_size=32, seed=4), store=shared_tiny_run.store,
        fit=shared_tiny_run.fit)  # fmt: skip
    assert other.source == "new" and other.run_id != shared_tiny_run.runs[0].run_id
    other.stop()  # its only watcher: it leaves the queue, or stops after its epoch
    assert _ended(shared_tiny_run.store, other.run_id).state == "stopped"
