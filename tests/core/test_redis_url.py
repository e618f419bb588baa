"""Tests for core/redis_url.py: the address from the environment, and a client whose calls wait
for a free connection when more arrive at once than its pool holds."""

from __future__ import annotations

import threading

from attnviz.core import redis_url
from attnviz.core.redis_url import REDIS_URL_VAR, redis_client, redis_url_from_env


def test_the_address_is_read_stripped_and_blank_means_none(monkeypatch):
    monkeypatch.delenv(REDIS_URL_VAR, raising=False)
    assert redis_url_from_env() == ""
    monkeypatch.setenv(REDIS_URL_VAR, "   ")
    assert redis_url_from_env() == ""
    monkeypatch.setenv(REDIS_URL_VAR, " redis://127.0.0.1:6390/0 \n")
    assert redis_url_from_env() == "redis://127.0.0.1:6390/0"


def test_more_calls_at_once_than_connections_wait_instead_of_failing(monkeypatch, redis_db):
    # 3 connections and 12 calls that each hold one for 0.2 s: redis-py's default pool raises
    # "Too many connections" for the 4th; this one makes it wait its turn
    monkeypatch.setattr(redis_url, "CONNECTIONS", 3)
    client = redis_client(redis_db, text=True)
    failures, results = [], []

    def call(i: int) -> None:
        try:
            results.append(client.blpop([f"test:nothing:{i}"], timeout=0.2))
        except Exception as err:  # noqa: BLE001 - collected and asserted below
            failures.append(err)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == [] and results == [None] * 12
    assert client.connection_pool.max_connections == 3
    assert client.set("test:text", "é") and client.get("test:text") == "é"  # str, decoded
    assert redis_client(redis_db, text=False).get("test:text") == "é".encode()
