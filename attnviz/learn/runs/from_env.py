"""The store this server's training runs are shared in: Redis at `ATTNVIZ_REDIS_URL` when it is
set (every replica pointing at it shares one queue and every run), else this process's own
`MemoryRunStore` (one server, e.g. `streamlit run app.py` on a laptop), as the class's store is
chosen (`attnviz.classroom.from_env`)."""

from __future__ import annotations

import functools

from attnviz.core.redis_url import redis_url_from_env
from attnviz.learn.runs.redis_store import RedisRunStore
from attnviz.learn.runs.store import MEMORY, RunStore


def store_from_env() -> RunStore:
    """The store runs are shared in: Redis at `ATTNVIZ_REDIS_URL` when it is set, else this
    process's `MEMORY`."""
    url = redis_url_from_env()
    return _redis_store(url) if url else MEMORY


@functools.cache
def _redis_store(url: str) -> RunStore:
    """One `RedisRunStore` (one connection pool, one consumer name) per URL, for the process."""
    return RedisRunStore.from_url(url)
