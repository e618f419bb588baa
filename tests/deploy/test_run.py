"""`python -m deploy.run --redis`: Redis first, its address in every replica's environment
(ATTNVIZ_REDIS_URL), also of a replica started again; nothing added without --redis.

The fast tests replace the processes by stand-ins that record how they were started; the slow
one starts Redis, 2 replicas and nginx as the command does (`cluster_with_redis`, the set-up of
the class's end-to-end test) and reads each replica's environment from /proc.
"""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from redis_support import ClusterWithRedis

from deploy import cluster, redis, run, servers

URL = "redis://:secret@127.0.0.1:6390/0"


@dataclass
class FakeStore:
    """Stands for `deploy.redis.Redis`: records being stopped and started again."""

    url: str = URL
    port: int = 6390
    stopped: bool = False
    started_again: int = 0
    deaths: list[bool] = field(default_factory=list)  # what `server.died()` answers, in turn

    @property
    def server(self) -> FakeStore:
        return self

    def died(self) -> bool:
        return self.deaths.pop(0) if self.deaths else False

    def stop(self) -> None:
        self.stopped = True

    def start_again(self) -> FakeStore:
        self.started_again += 1
        return self


@dataclass
class FakeServer:
    """Stands for a `deploy.servers.Server`: its name, address and added environment."""

    name: str
    url: str
    env: dict[str, str]
    stopped: bool = False

    def kill(self) -> None:
        self.stopped = True

    def stop(self) -> None:
        self.stopped = True

    def died(self) -> bool:
        return False


@pytest.fixture
def started(monkeypatch) -> list[FakeServer]:
    """Every process `deploy.cluster` starts, in order, none of them real."""
    launched: list[FakeServer] = []

    def start(app: str, port: int | None = None, env: dict | None = None) -> FakeServer:
        launched.append(FakeServer(app, f"http://127.0.0.1:{port or 9000 + len(launched)}", env))
        return launched[-1]

    def spawn(name: str, command: list, cwd: Path, url: str, env: dict) -> FakeServer:
        launched.append(FakeServer(name, url, env))
        return launched[-1]

    monkeypatch.setattr(servers, "start", start)
    monkeypatch.setattr(servers, "spawn", spawn)
    monkeypatch.setattr(servers, "wait_healthy", lambda server: server)
    monkeypatch.setattr(cluster, "nginx_missing", lambda: None)
    return launched


def test_redis_gives_its_address_to_every_replica(monkeypatch, capsys):
    store, calls = FakeStore(), []
    monkeypatch.setattr(redis, "start", lambda: store)

    def start_cluster(replicas: int, **options) -> None:
        calls.append((replicas, options))
        raise KeyboardInterrupt  # Ctrl-C while the replicas start

    monkeypatch.setattr(cluster, "start", start_cluster)
    assert run.main(["--redis", "--replicas", "3"]) == 0
    assert calls == [(3, {"host": "127.0.0.1", "port": 8080, "env": {"ATTNVIZ_REDIS_URL": URL}})]
    assert store.stopped  # Ctrl-C stops Redis too
    assert "starting Redis, 3 replicas and nginx" in capsys.readouterr().out


def test_without_redis_nothing_is_added(monkeypatch):
    calls = []
    monkeypatch.setattr(redis, "start", lambda: pytest.fail("Redis started without --redis"))

    def start_cluster(replicas: int, **options) -> None:
        calls.append(options["env"])
        raise KeyboardInterrupt

    monkeypatch.setattr(cluster, "start", start_cluster)
    assert run.main([]) == 0
    assert calls == [{}]


def test_a_missing_redis_server_stops_the_command_with_the_hint(monkeypatch, capsys):
    monkeypatch.setattr(redis, "REDIS_SERVER", "/nonexistent/redis-server")
    monkeypatch.setattr(cluster, "start", lambda *a, **k: pytest.fail("started without Redis"))
    assert run.main(["--redis"]) == 1
    assert "apt-get install redis-server" in capsys.readouterr().err


def test_help_says_a_class_needs_redis_with_several_replicas(capsys):
    with pytest.raises(SystemExit):
        run.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "ATTNVIZ_REDIS_URL" in help_text
    assert "a class needs --redis with more than one replica" in help_text


def test_the_cluster_gives_the_environment_to_every_replica_and_to_one_started_again(
    started, monkeypatch
):
    for name in cluster.TF_THREADS:
        monkeypatch.delenv(name, raising=False)
    running = cluster.start(2, env={"ATTNVIZ_REDIS_URL": URL})
    try:
        first, second, nginx = started
        assert (first.name, second.name, nginx.name) == ("attnviz", "attnviz", "nginx")
        share = cluster.replica_env(2)  # TensorFlow's threads: each replica its share of the cores
        for replica in (first, second):
            assert replica.env["ATTNVIZ_REDIS_URL"] == URL
            assert "STREAMLIT_SERVER_COOKIE_SECRET" in replica.env  # still shared
            assert {name: replica.env[name] for name in cluster.TF_THREADS} == share
        assert "ATTNVIZ_REDIS_URL" not in nginx.env
        again = running.restart("r1")
        assert first.stopped and again is started[3] and again.url == first.url
        assert again.env == first.env
    finally:
        running.stop()
    assert not running.prefix.exists()


def test_the_command_starts_redis_again_when_it_dies(monkeypatch, started):
    store = FakeStore(deaths=[True, False])
    running = cluster.start(1)
    ticks = iter(range(3))

    def sleep(seconds: float) -> None:
        if next(ticks) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(run.time, "sleep", sleep)
    try:
        with pytest.raises(KeyboardInterrupt):
            run._watch(running, store)
    finally:
        running.stop()
    assert store.started_again == 1


def _environment(server: servers.Server) -> dict[str, str]:
    """The environment the process of `server` was started with (/proc/<pid>/environ)."""
    raw = Path(f"/proc/{server.process.pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)


def _served_by(shared: ClusterWithRedis, replica: str) -> str:
    """Which replica answers a health check sent with the cookie that names `replica`."""
    cookie = shared.cookie_for(replica)
    request = urllib.request.Request(
        f"{cookie['url']}/_stcore/health", headers={"Cookie": f"{cookie['name']}={replica}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.read().decode().strip() == "ok"
        return response.headers[cluster.HEADER]


@pytest.mark.slow
def test_replicas_behind_nginx_share_one_redis(cluster_with_redis: ClusterWithRedis):
    shared = cluster_with_redis
    assert len(shared.replicas) == 2
    assert (_served_by(shared, "r1"), _served_by(shared, "r2")) == ("r1", "r2")
    for replica in shared.replicas:
        assert _environment(replica)["ATTNVIZ_REDIS_URL"] == shared.store.url
    shared.kill_replica("r1")
    assert _served_by(shared, "r1") == "r2"  # r1's visitors go to r2 meanwhile
    again = shared.restart_replica("r1")
    assert _environment(again)["ATTNVIZ_REDIS_URL"] == shared.store.url
    assert _environment(again)["ATTNVIZ_WARM_UP"] == "0"
    with shared.store.client() as client:
        client.set("class:XYZ", "kept")
    shared.restart_redis(crash=True)
    with shared.store.client() as client:
        assert client.get("class:XYZ") == b"kept"


def test_the_replicas_are_given_the_variable_attnviz_reads():
    from attnviz.classroom import from_env

    assert run.replica_env(FakeStore()) == {from_env.REDIS_URL_VAR: URL}
