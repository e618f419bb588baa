"""Fixtures for the tests that need Redis (a class shared by replicas, issue #42).

- `redis_server` (session): one Debian `redis-server` per test process, started as
  `python -m deploy.run --redis` starts it (`deploy.redis`: loopback, a temporary folder,
  append-only); `redis_url` (session) is its address, as the replicas get it in
  `ATTNVIZ_REDIS_URL`; `redis_db` (each test) empties database 0 first (FLUSHDB) and gives the
  same address. A test that makes the app use Redis sets the variable itself
  (`monkeypatch.setenv(REDIS_URL_ENV, redis_db)`).
- `cluster_with_redis` (module): the end-to-end set-up of a class: Redis and 2 attnviz replicas
  behind nginx, started as `python -m deploy.run --redis --replicas 2` starts them, with ways to
  kill a replica and to restart Redis (`ClusterWithRedis`).

Without redis-server (or nginx, for the cluster) the tests that use them are skipped with a
hint, except under CI=true or ATTNVIZ_REQUIRE_REDIS=1, where that is a failure (as the browser
tests do without Chromium).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from attnviz.ui.frame.server_config import WARM_UP_ENV
from deploy import cluster, redis, run, servers

REQUIRE_REDIS_ENV = "ATTNVIZ_REQUIRE_REDIS"
REDIS_URL_ENV = redis.REDIS_URL_ENV


def _required() -> bool:
    """True where a missing Redis or nginx must fail the tests (CI, or asked for)."""
    in_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    return in_ci or os.environ.get(REQUIRE_REDIS_ENV) == "1"


def _skip_or_fail(reason: str) -> None:
    if _required():
        message = f"{reason} (CI=true or {REQUIRE_REDIS_ENV}=1: this test must run)"
        pytest.fail(message, pytrace=False)
    pytest.skip(f"{reason} to run the tests that need Redis")


@pytest.fixture(scope="session")
def redis_server() -> Iterator[redis.Redis]:
    """A redis-server for this test process (`deploy.redis.Redis`), stopped at the end. A test
    that restarts it (`restart`) must leave it running."""
    if reason := redis.redis_missing():
        _skip_or_fail(reason)
    server = redis.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: redis.Redis) -> str:
    """The session's Redis address (`redis://:<password>@127.0.0.1:<port>/0`), as every replica
    gets it in ATTNVIZ_REDIS_URL; open it with `redis.Redis.from_url`. Started again first if
    a test before this one stopped it (its data kept)."""
    if not redis_server.running():
        redis_server.start_again()
    return redis_server.url


@pytest.fixture
def redis_db(redis_server: redis.Redis) -> str:
    """The session's Redis address, its database 0 emptied (FLUSHDB) before the test."""
    if not redis_server.running():  # a test before this one stopped it
        redis_server.start_again()
    with redis_server.client() as client:
        client.flushdb()
    return redis_server.url


@dataclass
class ClusterWithRedis:
    """Redis and attnviz replicas behind nginx, as `python -m deploy.run --redis` runs them."""

    running: cluster.Cluster  # the replicas ("r1", "r2") and nginx in front of them
    store: redis.Redis  # its address is in every replica's ATTNVIZ_REDIS_URL

    @property
    def url(self) -> str:
        """Where the users go: nginx's address."""
        return self.running.url

    @property
    def replicas(self) -> list[servers.Server]:
        """The replicas, "r1" first."""
        return self.running.replicas

    def cookie_for(self, name: str) -> dict[str, str]:
        """The cookie that sends a browser to replica `name` ("r1", "r2"), for Playwright's
        `context.add_cookies([...])` before the page opens: nginx keeps a visitor on the
        replica its cookie names while that replica is up (`deploy.nginx_config`), so a test
        places each student where it wants. The response header `X-Attnviz-Replica`
        (`cluster.HEADER`) says which replica answered."""
        self.running.replica(name)  # an unknown name fails here
        return {"name": cluster.COOKIE, "value": name, "url": self.url}

    def kill_replica(self, name: str) -> None:
        """Kill replica `name` ("r1", "r2") at once (SIGKILL, a crash); nginx sends its users'
        requests to the other replica."""
        self.running.replica(name).kill()

    def restart_replica(self, name: str) -> servers.Server:
        """Start replica `name` again on its port, with the same Redis address."""
        return self.running.restart(name)

    def restart_redis(self, crash: bool = True) -> None:
        """Kill (or, `crash=False`, stop cleanly) Redis and start it again on the same port and
        data; returns once it answers. The replicas keep their address (clients reconnect)."""
        self.store.restart(crash=crash)


@pytest.fixture(scope="module")
def cluster_with_redis() -> Iterator[ClusterWithRedis]:
    """Redis and 2 attnviz replicas behind nginx (`ClusterWithRedis`), stopped at the end.

    The replicas run without the warm-up (`ATTNVIZ_WARM_UP=0`), as in the deploy test. A browser
    test that uses it takes its tabs from `tabs` (which puts it in the browser tests' group)."""
    for reason in (redis.redis_missing(), cluster.nginx_missing()):
        if reason:
            _skip_or_fail(reason)
    store = redis.start()
    env = {**run.replica_env(store), WARM_UP_ENV: "0"}  # also for a replica started again
    try:
        running = cluster.start(2, env=env)
    except BaseException:
        store.stop()
        raise
    try:
        yield ClusterWithRedis(running, store)
    finally:
        running.stop()
        store.stop()
