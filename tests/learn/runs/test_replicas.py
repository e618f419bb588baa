"""Training runs over 2 replicas behind nginx that share one Redis (issue #43), end to end: real
attnviz servers (`cluster_with_redis`), Learn pages spoken to over their websockets as a browser
speaks (`bench.pages.StreamlitSession`: the page's own URL fields and its Train button, no
browser: nothing here is about drawing), Redis read for who trains what.

- Two distinct runs pressed on replica r1 while r2 is idle: r2's trainer takes one from the
  shared queue, r1 trains the other, both pages on r1 see their run finish with a model (the
  one r2 trained crossed over through Redis).
- The replica that trains a run killed (SIGKILL) mid-run: the other takes the run over once its
  claim idles past `dead_after` and trains it again from the start; the dead replica's watcher
  opens a new session through nginx with its page's URL, as a browser's reconnect does, lands
  on the live replica, finds its run again (the URL names it) and sees it finish, as does the
  watcher that stayed on the live replica.

It lives beside `test_training_run.py` (the runs on one process) because it checks the
same `TrainingRun` and run store across processes; the page only drives them. The smallest
runs the page offers (500 pairs, reverse): the point is who trains, not how well.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlencode

import pytest
from redis_support import ClusterWithRedis

from attnviz.learn.runs.redis_store import GROUP, PREFIX
from attnviz.learn.runs.store import DEAD_AFTER
from bench.pages import StreamlitSession

pytestmark = pytest.mark.slow  # starts servers, trains models

LEARN = {"learn_model": "Train", "task": "reverse", "learn_pairs": "500"}  # the fewest pairs
OPEN_S = 120  # most time a page's run may take (a replica's first Learn page imports TensorFlow)
TRAIN_S = 420  # most time a run may take to finish, a take-over included (a failure bound,
# for a loaded CI machine)
POLL_S = 0.5  # how often a watching page asks for a run, as its progress fragment does


async def _learn_page(base: str, seed: int, epochs: int, query: str = "") -> StreamlitSession:
    """A new visitor of the Learn page at `base` (a replica, or nginx), on the training panel
    with these settings (or the URL `query` of a page it reconnects), after its first run."""
    query = query or urlencode({**LEARN, "seed": seed, "learn_epochs": epochs})
    page = await StreamlitSession.open(base, query, OPEN_S, "learn")
    await page.rerun([], OPEN_S)
    return page


async def _press_train(page: StreamlitSession) -> list[str]:
    """Press the page's Train button; what the page then shows."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    _, messages = await page.rerun(
        [WidgetState(id=page.widgets["Train"], trigger_value=True)], OPEN_S
    )
    return _texts(messages)


def _texts(messages: list) -> list[str]:
    """The texts a run showed: markdown, captions, alerts, the progress bar's words."""
    shown = []
    for msg in messages:
        if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            kind = element.WhichOneof("type")
            if kind in ("markdown", "alert"):
                shown.append(getattr(element, kind).body)
            elif kind == "progress":
                shown.append(element.progress.text)
    return shown


async def _until_trained(page: StreamlitSession, epochs: int) -> list[str]:
    """Ask for the page's run until its progress says it trained (`TRAIN_S` at most); what the
    page then shows."""
    deadline = time.monotonic() + TRAIN_S
    while time.monotonic() < deadline:
        _, messages = await page.rerun([], OPEN_S)
        texts = _texts(messages)
        assert not [t for t in texts if t.startswith("Training failed")], texts
        if f"Trained {epochs} epoch" in " ".join(texts):
            return texts
        await asyncio.sleep(POLL_S)
    raise AssertionError(f"no 'Trained {epochs} epoch…' within {TRAIN_S} s: {texts}")


class Queue:
    """The runs' shared queue and runs in Redis, as the replicas' stores keep them."""

    def __init__(self, shared: ClusterWithRedis) -> None:
        self.shared = shared

    def trainer(self, consumer: bytes | str) -> str:
        """The replica ("r1", "r2") whose trainer is `consumer` ("host:pid:n")."""
        pid = int((consumer.decode() if isinstance(consumer, bytes) else consumer).split(":")[1])
        pids = {s.process.pid: f"r{i + 1}" for i, s in enumerate(self.shared.replicas)}
        return pids.get(pid, f"pid {pid}")

    def trainers_waiting(self) -> int:
        """How many trainers wait on the queue now (a blocking read of the stream: Redis lists
        a trainer among the group's consumers only once it has read an entry)."""
        with self.shared.store.client() as client:
            return sum(c["cmd"] == "xreadgroup" for c in client.client_list())

    def training(self) -> dict[str, tuple[str, int]]:
        """Run id -> (the replica whose trainer holds it, its reports so far), for the runs
        being trained now."""
        with self.shared.store.client() as client:
            held = {
                p["message_id"]: p["consumer"]
                for p in client.xpending_range(f"{PREFIX}queue", GROUP, "-", "+", 50)
            }
            found = {}
            for run_id in client.smembers(f"{PREFIX}training"):
                run = f"{PREFIX}run:{run_id.decode()}"
                entry = client.hget(run, "entry")
                if entry in held:
                    found[run_id.decode()] = (
                        self.trainer(held[entry]),
                        client.llen(f"{run}:reports"),
                    )
        return found

    def states(self) -> dict[str, str]:
        """Run id -> its state, for every run in the store."""
        with self.shared.store.client() as client:
            ids = [
                k.decode().split(":")[-1]
                for k in client.keys(f"{PREFIX}run:*")
                if not k.decode().endswith((":reports", ":watchers", ":seen"))
            ]
            return {i: client.hget(f"{PREFIX}run:{i}", "state").decode() for i in ids}


def _wait(what: str, check, timeout: float = TRAIN_S, every: float = 0.1):
    """`check()`'s first truthy answer, asked every `every` s for at most `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if answer := check():
            return answer
        time.sleep(every)
    raise AssertionError(f"{what}: not within {timeout} s")


def test_replicas_share_one_queue_and_finish_the_run_of_one_that_died(
    cluster_with_redis: ClusterWithRedis,
):
    shared = cluster_with_redis
    queue = Queue(shared)
    r1 = shared.replicas[0].url
    # both trainers wait on the one queue (each replica starts its own, Train pressed or not)
    _wait(
        "both replicas' trainers on the queue",
        lambda: queue.trainers_waiting() == 2,
        timeout=OPEN_S,
    )
    _in_a_loop_of_its_own(_two_runs_pressed_on_one_replica(r1, queue))
    _in_a_loop_of_its_own(_a_replica_dies_while_it_trains(shared, r1, queue))


def _in_a_loop_of_its_own(coroutine) -> None:
    """Run `coroutine` in a thread's own event loop (a browser test's may be running here)."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coroutine).result()


async def _two_runs_pressed_on_one_replica(r1: str, queue: Queue) -> None:
    """Two distinct runs pressed on r1 while r2 is idle: one trains on each."""
    pages = [await _learn_page(r1, seed, epochs=1) for seed in (1, 2)]
    trained_by: dict[str, set[str]] = {}

    def note() -> bool:
        for run_id, (replica, _) in queue.training().items():
            trained_by.setdefault(run_id, set()).add(replica)
        return len(trained_by) == 2

    for page in pages:
        await _press_train(page)
    _wait("both runs training", note)
    assert sorted(r for who in trained_by.values() for r in who) == ["r1", "r2"], trained_by
    for page in pages:  # each page on r1 sees its run finish, its model translating
        shown = await _until_trained(page, 1)
        assert any(t.startswith("**Output:** `") for t in shown), shown
        await page.close()
    assert set(queue.states().values()) == {"done"}


async def _a_replica_dies_while_it_trains(shared: ClusterWithRedis, r1: str, queue: Queue) -> None:
    """The replica that trains a run killed mid-run: the other trains it again; a watcher on the
    dead replica reconnects through nginx, one on the live replica stays, and both see it
    finish. (Either replica may take the run from the one queue: one watcher on each.)"""
    epochs = 8
    urls = {"r1": r1, "r2": shared.replicas[1].url}
    watchers = {name: await _learn_page(url, seed=3, epochs=epochs) for name, url in urls.items()}
    for page in watchers.values():  # the second press joins the first's run
        await _press_train(page)
    named = [parse_qs(page.query).get("learn_run") for page in watchers.values()]  # in the URL
    assert named[0] and named[0] == named[1], named

    def mid_run() -> tuple[str, str] | None:  # (run, the replica training it) past epoch 1
        return next(
            ((i, who) for i, (who, reports) in queue.training().items() if reports >= 2), None
        )

    run_id, dying = _wait("a replica training the run past its first epoch", mid_run, every=0.05)
    living = "r2" if dying == "r1" else "r1"
    link = watchers[dying].query  # what the dead replica's browser's address bar holds
    shared.kill_replica(dying)
    assert queue.states()[run_id] == "training"  # it died before it could finish
    await watchers[dying].close()
    # its page reconnects: a new session, through nginx, with its URL (nginx: the live replica)
    again = [watchers[living], await _learn_page(shared.url, 3, epochs, query=link)]
    taken = _wait(
        f"{living} taking the run over",
        lambda: queue.training().get(run_id, ("",))[0] == living,
        timeout=DEAD_AFTER + TRAIN_S,
    )
    assert taken
    for page in again:
        shown = await _until_trained(page, epochs)
        assert any(t.startswith("**Output:** `") for t in shown), shown
        await page.close()
    assert queue.states()[run_id] == "done"
