"""The store this server's classes live in: Redis at `ATTNVIZ_REDIS_URL` when it is set (every
replica pointing at it shares the classes), else this process's own `MemoryStore` (one server,
e.g. `streamlit run app.py` on a laptop)."""

from __future__ import annotations

import functools
import os

from attnviz.classroom.redis_store import RedisStore
from attnviz.classroom.store import ClassStore, MemoryStore

REDIS_URL_VAR = "ATTNVIZ_REDIS_URL"  # `deploy.redis.REDIS_URL_ENV`: where Redis is
_MEMORY = MemoryStore()  # the one in-process store of this server


def store_from_env() -> ClassStore:
    """The store classes live in: Redis at `ATTNVIZ_REDIS_URL` when it is set (several servers
    share it), else this process's `MemoryStore`."""
    url = os.environ.get(REDIS_URL_VAR, "").strip()
    return _redis_store(url) if url else _MEMORY


@functools.cache
def _redis_store(url: str) -> ClassStore:
    """One `RedisStore` (one connection pool) per URL, for the process."""
    return RedisStore.from_url(url)
