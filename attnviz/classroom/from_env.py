"""The store this server's classes live in: Redis at `ATTNVIZ_REDIS_URL` when it is set (every
replica pointing at it shares the classes), else this process's own `MemoryStore` (one server,
e.g. `streamlit run app.py` on a laptop)."""

from __future__ import annotations

import functools

from attnviz.classroom.redis_store import RedisStore
from attnviz.classroom.store import ClassStore, MemoryStore
from attnviz.core.redis_url import REDIS_URL_VAR, redis_url_from_env

__all__ = ["REDIS_URL_VAR", "store_from_env"]  # REDIS_URL_VAR: `attnviz.core.redis_url`'s
_MEMORY = MemoryStore()  # the one in-process store of this server


def store_from_env() -> ClassStore:
    """The store classes live in: Redis at `ATTNVIZ_REDIS_URL` when it is set (several servers
    share it), else this process's `MemoryStore`."""
    url = redis_url_from_env()
    return _redis_store(url) if url else _MEMORY


@functools.cache
def _redis_store(url: str) -> ClassStore:
    """One `RedisStore` (one connection pool) per URL, for the process."""
    return RedisStore.from_url(url)
