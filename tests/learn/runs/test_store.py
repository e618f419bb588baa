"""The two run stores behave alike: one run per key however many press at once, finished runs
served at once and evicted least recently used first by size, epochs published once each (a run
restarted from the start repeats none), the last watcher's leaving ends a run, stopped and
failed runs not kept as their key's result, the place in the queue. Redis only: a consumer
that stops claiming its entry has its run taken over by another, one that claims keeps it."""

from __future__ import annotations

import threading
import time

import pytest

from attnviz.learn.runs.store import Plan

PLAN = Plan(epochs=3, n_pairs=100, time_limit=60.0)


def _taken(store, timeout: float = 5.0):
    taken = store.take(timeout)
    assert taken is not None and taken.state == "training"
    return taken


def _trained(store, key: str, epochs: int = 2, final: bytes = b"final", size: int = 10):
    """Submit `key`, train it (one report of `size` bytes an epoch) and finish it as done."""
    joined = store.submit(key, b"job:" + key.encode(), "w-" + key, PLAN)
    taken = _taken(store)
    assert taken.run_id == joined.run_id and taken.job == b"job:" + key.encode()
    for epoch in range(epochs + 1):
        store.publish(taken, epoch, bytes([epoch]) * size, float(epoch))
    store.finish(taken, "done", final)
    return joined


def test_presses_of_one_key_queue_one_run(run_store):
    sources = []

    def press(i: int) -> None:
        sources.append(run_store.submit("k", b"job", f"w{i}", PLAN))

    threads = [threading.Thread(target=press, args=(i,)) for i in range(200)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(j.source for j in sources) == ["new"] + ["shared"] * 199
    assert len({j.run_id for j in sources}) == 1
    assert run_store.status(sources[0].run_id).watchers == 200
    _taken(run_store)
    assert run_store.take(0.05) is None  # one entry in the queue, not 200
    assert run_store.submit("other", b"job", "w", PLAN).source == "new"  # another key: its own


def test_a_finished_run_is_served_at_once_with_every_report(run_store):
    first = _trained(run_store, "k", epochs=2)
    again = run_store.submit("k", b"job:k", "late", PLAN)
    assert again == type(again)(first.run_id, "finished")
    status = run_store.status(again.run_id)
    assert status.state == "done" and status.reports == (b"\0" * 10, b"\1" * 10, b"\2" * 10)
    assert run_store.status(again.run_id, since=2).reports == (b"\2" * 10,)  # only what is new
    assert run_store.final(again.run_id) == b"final"
    assert run_store.take(0.05) is None  # nothing trains again


def test_each_epoch_is_published_once_and_the_best_weights_with_it(run_store):
    joined = run_store.submit("k", b"job", "w", PLAN)
    taken = _taken(run_store)
    assert run_store.publish(taken, 0, b"e0", 1.0, best=b"best0") == 1  # one watcher
    run_store.publish(taken, 1, b"e1", 2.0)
    # the run restarted from the start (another replica): the epochs there are not repeated
    for epoch, data in enumerate((b"again0", b"again1", b"e2")):
        run_store.publish(taken, epoch, data, 3.0 + epoch, best=b"best" + data)
    run_store.publish(taken, 5, b"e5", 9.0)  # not the next epoch: refused
    assert run_store.status(joined.run_id).reports == (b"e0", b"e1", b"e2")
    left = run_store.leave(joined.run_id, "w")
    assert (left.best, left.best_epoch) == (b"beste2", 2)


def test_the_last_watcher_leaving_stops_the_training(run_store):
    joined = run_store.submit("k", b"job", "a", PLAN)
    run_store.submit("k", b"job", "b", PLAN)
    taken = _taken(run_store)
    assert run_store.publish(taken, 0, b"e0", 1.0, best=b"w0") == 2
    left = run_store.leave(joined.run_id, "a", since=0)
    assert left.state == "training" and left.reports == (b"e0",) and left.best == b"w0"
    assert left.watchers == 1
    assert run_store.publish(taken, 1, b"e1", 2.0) == 1  # b still watches: go on
    run_store.leave(joined.run_id, "b")
    assert run_store.publish(taken, 2, b"e2", 3.0) == 0  # nobody watches: stop after it
    run_store.finish(taken, "stopped", None)
    assert run_store.status(joined.run_id).state == "stopped"  # readable a while
    assert run_store.submit("k", b"job", "c", PLAN).source == "new"  # not the key's result


def test_a_watcher_that_stops_looking_stops_counting_but_keeps_the_run_going(run_store):
    # a closed tab: its page no longer looks at the run; it is not counted among those
    # watching, but only a Stop takes it out of the run (the training goes on for it)
    run_store.watching_fresh = 0.3
    joined = run_store.submit("k", b"job", "open", PLAN)
    run_store.submit("k", b"job", "closed", PLAN)
    assert run_store.status(joined.run_id, watcher="open").watchers == 2
    time.sleep(0.2)
    run_store.status(joined.run_id, watcher="open")
    time.sleep(0.2)  # "closed" last looked 0.4 s ago, "open" 0.2 s ago
    assert run_store.status(joined.run_id, watcher="open").watchers == 1
    assert run_store.status(joined.run_id, watcher="closed").watchers == 2  # it looks again
    run_store.status(joined.run_id, watcher="stranger")  # not a watcher: not counted
    assert run_store.status(joined.run_id).watchers == 2
    taken = _taken(run_store)
    time.sleep(0.4)  # neither looks: nobody counted, both still in the run
    assert run_store.status(joined.run_id).watchers == 0
    assert run_store.publish(taken, 0, b"e0", 1.0) == 2
    assert run_store.leave(joined.run_id, "open").watchers == 0  # "closed" has not looked
    assert run_store.publish(taken, 1, b"e1", 2.0) == 1


def test_a_waiting_run_nobody_watches_leaves_the_queue(run_store):
    joined = run_store.submit("k", b"job", "a", PLAN)
    assert run_store.leave(joined.run_id, "a").state == "stopped"
    taken = run_store.take(0.05)  # memory drops it at once; Redis hands it out to be ended
    assert taken is None or taken.state == "stopped"
    if taken is not None:
        run_store.finish(taken, "stopped", None)
    assert run_store.take(0.05) is None
    again = run_store.submit("k", b"job", "b", PLAN)
    assert again.source == "new" and again.run_id != joined.run_id


def test_a_failed_run_says_why_and_is_not_kept(run_store):
    joined = run_store.submit("k", b"job", "a", PLAN)
    run_store.submit("k", b"job", "b", PLAN)
    run_store.finish(_taken(run_store), "failed", None, "ValueError: no such task")
    status = run_store.status(joined.run_id)
    assert (status.state, status.error) == ("failed", "ValueError: no such task")
    assert run_store.submit("k", b"job", "c", PLAN).source == "new"  # tried again


def test_finished_runs_are_evicted_least_recently_used_first_by_size(run_store):
    # each finished run keeps 3 reports of 100 bytes and 100 bytes of weights: 400 bytes;
    # room for 1,000 bytes: two runs
    run_store.finished_bytes = 1_000
    a = _trained(run_store, "a", final=b"f" * 100, size=100)
    _trained(run_store, "b", final=b"f" * 100, size=100)
    time.sleep(0.01)  # Redis orders by the millisecond of last use: a's use comes after b's end
    assert run_store.submit("a", b"job", "x", PLAN) == type(a)(a.run_id, "finished")  # a used
    time.sleep(0.01)
    _trained(run_store, "c", final=b"f" * 100, size=100)  # 1,200 bytes: b, least recent, goes
    assert run_store.submit("a", b"job", "y", PLAN).source == "finished"
    assert run_store.submit("c", b"job", "y", PLAN).source == "finished"
    assert run_store.submit("b", b"job", "y", PLAN).source == "new"  # trains again


def test_waiting_runs_know_their_place(run_store):
    first = run_store.submit("a", b"job", "w", PLAN)
    second = run_store.submit("b", b"job", "w", PLAN)
    third = run_store.submit("c", b"job", "w", Plan(2, 50, 60.0))
    assert run_store.status(first.run_id).place == 1
    taken = _taken(run_store)
    assert taken.run_id == first.run_id and run_store.status(first.run_id).place == 0
    assert [run_store.status(r.run_id).place for r in (second, third)] == [1, 2]
    assert run_store.status(second.run_id).starts_in is None  # no finished epoch yet
    run_store.publish(taken, 0, b"e0", 2.0)
    run_store.publish(taken, 1, b"e1", 12.0)  # 2 s setup, then 10 s an epoch of 100 pairs
    # the first ends 2 epochs × 10 s after its last report, then the second: 2 s setup + 3
    # epochs × 100 pairs at 0.1 s a pair
    assert run_store.status(third.run_id).starts_in == pytest.approx(20.0 + 32.0, abs=0.5)
    assert run_store.status(second.run_id).starts_in == pytest.approx(20.0, abs=0.5)


def test_a_silent_consumer_s_run_is_taken_over_and_a_beating_one_keeps_it(redis_replicas):
    alive, dead = redis_replicas(), redis_replicas()
    joined = dead.submit("k", b"job", "w", PLAN)
    taken = _taken(dead)
    for _ in range(6):  # 0.6 s, beyond dead_after (0.4 s), claiming every 0.1 s
        time.sleep(0.1)
        assert dead.keep_alive(taken)
    assert alive.take(0.05) is None  # it beats: still its run
    time.sleep(0.6)  # no claims: dead
    again = _taken(alive)
    assert (again.run_id, again.job) == (joined.run_id, b"job")
    assert alive.replicas() == 1  # the silent one no longer counts as a replica
    names = {c["name"] for c in alive._redis.xinfo_consumers(alive.prefix + "queue", "trainers")}  # noqa: SLF001
    assert names == {dead.consumer.encode(), alive.consumer.encode()}  # it held the entry
    assert not dead.keep_alive(taken)  # the first consumer learns its run was taken over
    alive.finish(again, "done", b"final")
    assert dead.status(joined.run_id).state == "done"


def test_a_queue_redis_lost_is_made_again(redis_replicas):
    store = redis_replicas()
    store.submit("a", b"job", "w", PLAN)
    store._redis.delete(store.prefix + "queue")  # noqa: SLF001 - Redis lost its data
    assert store.take(0.05) is None  # no group: it is made again on the next look
    joined = store.submit("b", b"job", "w", PLAN)
    assert _taken(store).run_id == joined.run_id


def test_a_waiting_run_s_watchers_on_one_replica_share_one_look_at_the_queue(redis_replicas):
    store = redis_replicas(place_fresh=60.0)
    store.submit("a", b"job", "w", PLAN)
    waiting = store.submit("b", b"job", "w", PLAN)
    assert store.status(waiting.run_id).place == 2
    _taken(store)  # the queue moved on, but the place looked up a moment ago still serves
    assert store.status(waiting.run_id).place == 2
    assert redis_replicas().status(waiting.run_id).place == 1  # another replica looks itself


def test_idle_replicas_count_and_dead_ones_leave_the_group(redis_replicas):
    # Redis 7.0 lists a consumer only once it has read an entry: replicas that look at an
    # empty queue are alive too, and the estimates count them as free slots
    one, two, three = redis_replicas(), redis_replicas(), redis_replicas()
    assert one.replicas() == 1 and one.take(0.01) is None  # not seen before its first look
    assert two.take(0.01) is None and three.take(0.01) is None
    assert one.replicas() == 3
    joined = three.submit("k", b"job", "w", PLAN)
    taken = _taken(three)
    assert taken.run_id == joined.run_id  # three is now a consumer of the group
    queue = one.prefix + "queue"
    consumers = {c["name"] for c in one._redis.xinfo_consumers(queue, "trainers")}  # noqa: SLF001
    assert consumers == {three.consumer.encode()}
    three.finish(taken, "done", b"final")
    time.sleep(0.5)  # beyond dead_after (0.4 s): two and three died, one looks
    assert one.take(0.01) is None and one.replicas() == 1
    assert one._redis.xinfo_consumers(queue, "trainers") == []  # noqa: SLF001 - three went


def test_a_run_s_mark_says_its_state_epochs_and_place(run_store):
    from attnviz.learn.runs.store import GONE, RunMark

    first = run_store.submit("a", b"job", "w", PLAN)
    second = run_store.submit("b", b"job", "w", PLAN)
    assert run_store.mark(second.run_id) == RunMark("waiting", 0, 2)
    taken = _taken(run_store)
    run_store.publish(taken, 0, b"e0", 1.0)
    assert run_store.mark(first.run_id) == RunMark("training", 1, 0)
    assert run_store.mark(second.run_id) == RunMark("waiting", 0, 1)  # next to start
    run_store.finish(taken, "done", b"final")
    assert run_store.mark(first.run_id) == RunMark("done", 1, 0)
    assert run_store.mark("404") == RunMark(GONE)
