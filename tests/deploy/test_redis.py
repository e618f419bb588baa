"""deploy/redis.py: Debian's redis-server on loopback, from its own folder, append-only: it
answers, keeps every acknowledged write across a clean restart and a crash, refuses clients
without its password, and leaves nothing running once stopped. Also the Redis fixtures'
skip-or-fail rule (tests/redis_support.py)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
import redis as redis_client
import redis_support
from redis.backoff import NoBackoff
from redis.retry import Retry

from deploy import redis, servers


@pytest.fixture
def store():
    """A Redis of the test's own (the tests below restart and stop it)."""
    if reason := redis.redis_missing():
        redis_support._skip_or_fail(reason)
    started = redis.start()
    try:
        yield started
    finally:
        started.stop()


def _open_files(pid: int) -> list[Path]:
    """The regular files process `pid` holds open, but its stdin, stdout and stderr."""
    fds = Path(f"/proc/{pid}/fd")
    targets = [Path(os.readlink(fd)) for fd in fds.iterdir() if int(fd.name) > 2]
    return [t for t in targets if t.is_absolute() and t.exists() and t.is_file()]


@pytest.mark.slow
def test_it_listens_on_loopback_with_a_password_and_appends_every_write(store):
    assert store.ping() and store.running()
    assert store.url == f"redis://:{store.password}@127.0.0.1:{store.port}/0"
    assert len(store.password) >= 22  # 16 random bytes, URL-safe base64
    with store.client() as client:
        settings = {
            key: client.config_get(key)[key]
            for key in ("bind", "protected-mode", "appendonly", "appendfsync", "save", "dir")
        }
    assert settings == {
        "bind": "127.0.0.1", "protected-mode": "yes", "appendonly": "yes",
        "appendfsync": "always", "save": "", "dir": str(store.folder),
    }  # fmt: skip
    assert oct(store.folder.stat().st_mode & 0o777) == "0o700"
    assert oct((store.folder / "redis.conf").stat().st_mode & 0o777) == "0o600"
    once = Retry(NoBackoff(), retries=0)  # the client's default retries an error for 4 s
    anonymous = redis_client.Redis(host="127.0.0.1", port=store.port, retry=once)
    with pytest.raises(redis_client.AuthenticationError):
        anonymous.ping()


@pytest.mark.slow
def test_it_writes_only_in_its_folder(store):
    with store.client() as client:
        for i in range(20):
            client.set(f"answer:{i}", i)
    held = _open_files(store.server.process.pid)
    assert held and all(store.folder in path.parents for path in held), held
    assert Path(os.readlink(f"/proc/{store.server.process.pid}/cwd")) == store.folder
    written = {p.relative_to(store.folder).parts[0] for p in store.folder.rglob("*")}
    assert written == {"redis.conf", "redis.log", "appendonlydir"}


@pytest.mark.slow
@pytest.mark.parametrize("crash", [False, True], ids=["clean-restart", "killed"])
def test_an_acknowledged_write_survives_a_restart(store, crash):
    with store.client() as client:
        client.hset("class:ABC:answers", mapping={"ada": "k2", "bo": "k1"})
        assert client.incr("class:ABC:count") == 1  # acknowledged
    port, old_pid = store.port, store.server.process.pid
    store.restart(crash=crash)
    assert (store.port, store.running()) == (port, True) and store.server.process.pid != old_pid
    with store.client() as client:
        assert client.hgetall("class:ABC:answers") == {b"ada": b"k2", b"bo": b"k1"}
        assert client.get("class:ABC:count") == b"1"


@pytest.mark.slow
def test_stop_leaves_no_process_and_no_folder(store):
    process, folder = store.server.process, store.folder
    store.shutdown()
    assert process.returncode == 0  # SIGTERM: Redis's own clean shutdown
    assert not store.ping() and folder.exists()  # its data kept, for `start_again`
    store.start_again()
    pid = store.server.process.pid
    store.stop()
    assert store.server.process.poll() is not None and not Path(f"/proc/{pid}").exists()
    assert not folder.exists()
    assert store.server not in servers._RUNNING  # nothing left for the clean-up at exit
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", store.port), timeout=2):
        pass


@pytest.mark.slow
def test_start_again_refuses_a_running_server(store):
    with pytest.raises(RuntimeError, match="still running"):
        store.start_again()


@pytest.mark.slow
def test_a_server_that_cannot_start_fails_with_its_log():
    if reason := redis.redis_missing():
        redis_support._skip_or_fail(reason)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        with pytest.raises(RuntimeError, match="did not answer PING(.|\n)*already in use"):
            redis.start(port=taken.getsockname()[1])


def test_a_missing_redis_server_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(redis, "REDIS_SERVER", "/nonexistent/redis-server")
    with pytest.raises(RuntimeError, match=r"/nonexistent/redis-server.*apt-get install redis-"):
        redis.start()


@pytest.mark.parametrize(
    ("env", "outcome"),
    [
        ({}, pytest.skip.Exception),
        ({"CI": "true"}, pytest.fail.Exception),
        ({"ATTNVIZ_REQUIRE_REDIS": "1"}, pytest.fail.Exception),
    ],
)
def test_without_redis_the_fixtures_skip_except_where_required(monkeypatch, env, outcome):
    monkeypatch.setattr(redis, "REDIS_SERVER", "/nonexistent/redis-server")
    for name in ("CI", "ATTNVIZ_REQUIRE_REDIS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(outcome, match="apt-get install redis-server"):
        redis_support._skip_or_fail(redis.redis_missing())


@pytest.mark.slow
def test_redis_db_starts_each_test_with_an_empty_database(redis_server, request):
    with redis_server.client() as client:
        client.set("left:by:another:test", 1)
        url = request.getfixturevalue("redis_db")
        assert url == request.getfixturevalue("redis_url") == redis_server.url
        assert client.dbsize() == 0
