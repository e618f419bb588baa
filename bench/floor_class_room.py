"""The room of the class load's floor app (`floor_class.py`): its step in Redis, and the phones
that show it, shared by the server's page runs and its watch (one module, imported by both)."""

from __future__ import annotations

import functools
import os
import threading

import redis

KEY = "floor:step"  # the room's step, in Redis
WATCH_SECONDS = 0.5  # as attnviz's servers read their classes (attnviz.ui.classroom.watch)
_LOCK = threading.Lock()
_SHOWN: dict[str, tuple[int, str]] = {}  # session id -> (step its phone shows, fragment id)


@functools.cache
def _redis() -> redis.Redis:
    return redis.Redis.from_url(os.environ["ATTNVIZ_REDIS_URL"], decode_responses=True)


def step() -> int:
    """The room's step now."""
    return int(_redis().get(KEY) or 0)


def move() -> None:
    """The teacher moves the room on."""
    _redis().incr(KEY)


def shows(session: str, shown: int, fragment: str) -> None:
    """Session `session`'s phone shows step `shown`, drawn by its fragment `fragment`."""
    with _LOCK:
        _SHOWN[session] = (shown, fragment)


def behind(now: int) -> dict[str, str]:
    """Session id -> fragment id, for the phones that show another step than `now`."""
    with _LOCK:
        return {s: f for s, (shown, f) in _SHOWN.items() if shown != now}


def drop(session: str) -> None:
    """A session that is gone."""
    with _LOCK:
        _SHOWN.pop(session, None)
