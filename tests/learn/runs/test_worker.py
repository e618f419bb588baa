"""Tests for learn/runs/worker.py: two replicas' workers on one Redis queue (two consumers, in this
process) take the distinct runs as each is free, and a replica that dies mid-run has its run
taken over and finished by the other, its watchers seeing it finish. Trained by a stand-in."""

from __future__ import annotations

import time

from run_fakes import ScriptedTraining

from attnviz.learn.configs import NetworkConfig, TrainConfig
from attnviz.learn.runs import TrainingRun
from attnviz.learn.runs.store import MemoryRunStore
from attnviz.learn.runs.worker import busy, ensure_worker, stop_worker

TINY = NetworkConfig(units=8, embed_dim=8, attention_units=8)


def _press(store, fake, seed: int = 0) -> TrainingRun:
    return TrainingRun.start("dates", TINY, TrainConfig(3, seed=seed), store=store, fit=fake.fit)


def _wait(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_runs_queued_are_taken_by_whichever_replica_is_free(redis_replicas):
    one, two = redis_replicas(), redis_replicas()
    workers = {ensure_worker(one).ident, ensure_worker(two).ident}
    fakes = [ScriptedTraining(hold_after=0) for _ in range(3)]
    try:
        first = _press(one, fakes[0])  # every press on replica one
        assert fakes[0].held.wait(30)
        second = _press(one, fakes[1], seed=1)
        assert fakes[1].held.wait(30)  # the other replica took it: both train at once
        assert {fakes[0].threads[0], fakes[1].threads[0]} == workers
        third = _press(one, fakes[2], seed=2)
        time.sleep(0.3)
        assert third.snapshot().state == "waiting" and third.snapshot().place == 1
        assert one.replicas() == two.replicas() == 2  # the estimate's slots
        fakes[1].release.set()  # the second ends: its replica takes the third
        assert fakes[2].held.wait(30) and fakes[2].threads == fakes[1].threads
    finally:
        for fake in fakes:
            fake.release.set()
    assert [run.join(timeout=30).state for run in (first, second, third)] == ["done"] * 3


def test_a_replica_that_dies_mid_run_has_its_run_finished_by_another(redis_replicas):
    one, two = redis_replicas(), redis_replicas()
    fake = ScriptedTraining(hold_after=1)
    on_one = _press(one, fake)
    assert fake.held.wait(30)  # replica one trains it, after epoch 1
    on_two = _press(two, fake)  # a student on the other replica joins it
    assert on_two.source == "shared" and [r.epoch for r in on_two.snapshot().reports] == [0, 1]
    dying = ensure_worker(one)
    dying.kill(timeout=None)  # the replica dies: no more claims, no end published
    fake.release.set()  # (its trainer returns at its next report without publishing it)
    dying.kill()
    assert not dying.alive and on_one.snapshot().state == "training"
    ensure_worker(two)  # the live replica takes the run over once its entry has idled
    for run in (on_two, on_one):  # on_one: its student reconnected, reading the same run
        snapshot = run.join(timeout=30)
        assert snapshot.state == "done" and [r.epoch for r in snapshot.reports] == [0, 1, 2, 3]
    assert fake.calls == 2  # trained again from the start, each epoch published once
    assert len(one.status(on_one.run_id).reports) == 4


def test_the_worker_starts_with_the_first_press_and_is_busy_only_while_it_trains(run_stores):
    store = MemoryRunStore()
    run_stores.append(store)
    fake = ScriptedTraining(hold_after=0)
    run = _press(store, fake)
    assert fake.held.wait(30) and busy()
    fake.release.set()
    assert run.join(timeout=30).state == "done"
    _wait(lambda: not busy())
    stop_worker(store)  # (a test's end): the next press starts another
    assert _press(store, fake, seed=1).join(timeout=30).state == "done" and fake.calls == 2
