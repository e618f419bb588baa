"""The store a server uses: Redis when ATTNVIZ_REDIS_URL is set, else one store per process."""

from __future__ import annotations

from attnviz.classroom import from_env
from attnviz.classroom.from_env import store_from_env
from attnviz.classroom.redis_store import RedisStore
from attnviz.classroom.store import MemoryStore


def test_store_from_env(monkeypatch, redis_url):
    monkeypatch.delenv(from_env.REDIS_URL_VAR, raising=False)
    assert store_from_env() is store_from_env()
    assert isinstance(store_from_env(), MemoryStore)
    monkeypatch.setenv(from_env.REDIS_URL_VAR, redis_url)
    assert isinstance(store_from_env(), RedisStore) and store_from_env() is store_from_env()
