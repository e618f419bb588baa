"""The run store a server uses: Redis when ATTNVIZ_REDIS_URL is set (the class's variable), else
this process's one `MemoryRunStore`."""

from __future__ import annotations

import redis

from attnviz.classroom import from_env
from attnviz.core.redis_url import REDIS_URL_VAR
from attnviz.learn.runs.from_env import store_from_env
from attnviz.learn.runs.redis_store import PREFIX, RedisRunStore
from attnviz.learn.runs.store import MEMORY, Plan


def test_store_from_env(monkeypatch, redis_url):
    assert from_env.REDIS_URL_VAR == REDIS_URL_VAR == "ATTNVIZ_REDIS_URL"  # one variable
    monkeypatch.setenv(REDIS_URL_VAR, "  ")
    assert store_from_env() is MEMORY
    monkeypatch.setenv(REDIS_URL_VAR, redis_url)
    store = store_from_env()
    assert isinstance(store, RedisRunStore) and store_from_env() is store
    assert store.prefix == PREFIX
    assert store.submit("k", b"job", "w", Plan(1, 1, 1.0)).source == "new"
    assert store.take(1.0).job == b"job"
    with redis.Redis.from_url(redis_url) as client:  # leave the app's keys as they were
        client.delete(*client.keys(PREFIX + "*"))
