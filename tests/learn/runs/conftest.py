"""The run stores the training-run tests use: every behaviour of a store runs against both
`MemoryRunStore` and `RedisRunStore` (on the test process's redis-server, `redis_url`; each test
under its own key prefix, so tests never see each other's runs), as the class's tests do."""

from __future__ import annotations

import secrets

import pytest

from attnviz.learn.runs.store import MemoryRunStore, RunStore

FAST_DEATH = 0.4  # seconds an entry idles before another consumer takes it, in the tests
FAST_BEAT = 0.1  # seconds between a training consumer's claims, in the tests


def redis_run_store(url: str, prefix: str, **options):
    """A `RedisRunStore` on `url` under `prefix`, quick to notice a dead consumer."""
    from attnviz.learn.runs.redis_store import RedisRunStore

    options = {"dead_after": FAST_DEATH, "heartbeat": FAST_BEAT, "place_fresh": 0.0, **options}
    return RedisRunStore.from_url(url, prefix=prefix, **options)


@pytest.fixture
def run_stores():
    """Keeps the stores a test makes, and stops this process's workers on them at its end."""
    from attnviz.learn.runs.worker import stop_worker

    made: list[RunStore] = []
    yield made
    for store in made:
        stop_worker(store, timeout=None)  # its thread ends at its next look at the queue


@pytest.fixture(params=["memory", "redis"])
def run_store(request: pytest.FixtureRequest, run_stores) -> RunStore:
    """A fresh run store of each kind."""
    if request.param == "memory":
        run_stores.append(MemoryRunStore())
    else:
        url = request.getfixturevalue("redis_url")
        run_stores.append(redis_run_store(url, f"test:{secrets.token_hex(6)}:"))
    return run_stores[-1]


@pytest.fixture
def redis_replicas(redis_url: str, run_stores):
    """Make stores on one Redis prefix, as replicas are: `redis_replicas(**options)`."""
    prefix = f"test:{secrets.token_hex(6)}:"

    def replica(**options):
        run_stores.append(redis_run_store(redis_url, prefix, **options))
        return run_stores[-1]

    return replica


@pytest.fixture(scope="session")
def shared_tiny_run():
    """ONE tiny real training, watched by two sessions that pressed Train with the same settings
    (a fresh in-process store): the tests of sharing, stopping and the codec read it. Its
    `calls` counts the trainings started, `originals` holds the reports as `train` made them."""
    from types import SimpleNamespace

    from attnviz.learn.configs import NetworkConfig, TrainConfig
    from attnviz.learn.runs import TrainingRun
    from attnviz.learn.translation.training import train

    calls, reports = [], []  # per training started: its settings, its reports

    def counted(task, network, training, callback, on_best=None):
        calls.append((task, network, training))
        made = []
        reports.append(made)

        def kept(report):
            made.append(report)
            return callback(report)

        return train(task, network, training, callback=kept, on_best=on_best)

    tiny = NetworkConfig(units=8, embed_dim=8, attention_units=8)
    training = TrainConfig(2, n_pairs=32, val_pairs=8, batch_size=32, seed=3)
    store = MemoryRunStore()
    first = TrainingRun.start("reverse", tiny, training, store=store, fit=counted)
    second = TrainingRun.start("reverse", tiny, training, store=store, fit=counted)
    snapshots = (first.join(timeout=180), second.join(timeout=180))
    originals = reports[0]  # the shared run's (a later test may train others with `counted`)
    return SimpleNamespace(
        store=store, runs=(first, second), snapshots=snapshots, calls=calls,
        originals=originals, network=tiny, training=training, fit=counted,
    )  # fmt: skip
