"""Tests for deploy/cluster.py that start nothing: each replica's environment. (A running
cluster behind nginx: tests/project/test_deploy.py.)"""

import pytest

from deploy.cluster import TF_THREADS, replica_env

INTRA, INTER = TF_THREADS


@pytest.fixture(autouse=True)
def _no_threads_set(monkeypatch):
    for name in TF_THREADS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("replicas", "cores", "share"),
    [(2, 2, "1"), (1, 8, "8"), (2, 8, "4"), (3, 8, "2"), (3, 2, "1")],
)
def test_each_replica_s_tensorflow_gets_its_share_of_the_cores(replicas, cores, share):
    # two replicas on two cores each sized their pools for both: four threads on two cores
    env = replica_env(replicas, {"ATTNVIZ_REDIS_URL": "redis://x"}, cores=cores)
    assert env == {INTRA: share, INTER: share, "ATTNVIZ_REDIS_URL": "redis://x"}


def test_a_thread_count_the_caller_sets_is_left_to_it(monkeypatch):
    assert replica_env(2, {INTRA: "4"}, cores=2) == {INTRA: "4", INTER: "1"}
    monkeypatch.setenv(INTER, "3")  # the replicas inherit this process's environment
    assert replica_env(2, cores=2) == {INTRA: "1"}


def test_the_default_share_is_of_the_cores_this_process_may_use():
    import os

    cores = len(os.sched_getaffinity(0))
    assert replica_env(1) == dict.fromkeys(TF_THREADS, str(cores))
