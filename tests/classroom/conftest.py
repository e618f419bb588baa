"""The classroom tests' stores: every behaviour runs against both `MemoryStore` and
`RedisStore` (on the test process's redis-server, `redis_url`; each test under its own key
prefix, so tests never see each other's classes)."""

from __future__ import annotations

import secrets

import pytest

from attnviz.classroom.store import ClassStore, MemoryStore


@pytest.fixture(params=["memory", "redis"])
def store(request: pytest.FixtureRequest) -> ClassStore:
    """A fresh store of each kind."""
    if request.param == "memory":
        return MemoryStore()
    from attnviz.classroom.redis_store import RedisStore

    url = request.getfixturevalue("redis_url")
    return RedisStore.from_url(url, prefix=f"test:{secrets.token_hex(6)}:")
