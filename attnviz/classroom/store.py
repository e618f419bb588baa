"""Where classes live: the `ClassStore` interface and the in-process `MemoryStore`; the
`RedisStore` (`redis_store`) serves the same interface from Redis, for several servers
(`from_env.store_from_env` picks one).

A class is four kinds of record, all text, all gone when the class expires (12 hours, or the
`ttl` given at `create`):

- the class: a few fields (its lesson, its question, whether revealed...) and `version`, a
  counter every `update` moves on (a student's page polls it: one small read);
- its members: member id -> nickname;
- its answers to question n: member id -> the answer as text (one per member: a new answer
  replaces the old one).

Writes to an expired or unknown class change nothing and say so (False, None). A store that
cannot be reached raises `errors.StoreDownError`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

VERSION = "version"  # the class field every update moves on
EXPIRES = "expires"  # the class field: when it expires, in epoch milliseconds


class ClassStore(Protocol):
    """The records of every class (see the module docstring)."""

    def create(self, code: str, fields: Mapping[str, str], ttl: float) -> bool:
        """Make class `code` with `fields`, expiring in `ttl` seconds; False if it exists."""
        ...

    def read(self, code: str) -> dict[str, str] | None:
        """The class's fields, or None (unknown or expired)."""
        ...

    def update(self, code: str, changes: Mapping[str, str]) -> dict[str, str] | None:
        """Apply `changes` and move `version` on, at once; the fields after, or None."""
        ...

    def add_member(self, code: str, member: str, nickname: str) -> bool:
        """Note `member` (again: its nickname replaced); False if the class is gone."""
        ...

    def members(self, code: str) -> dict[str, str]:
        """Member id -> nickname."""
        ...

    def is_member(self, code: str, member: str) -> bool:
        """Whether `member` joined class `code` (a live one)."""
        ...

    def put_answer(self, code: str, question: int, member: str, answer: str) -> bool:
        """`member`'s answer to question `question`, replacing theirs; False if gone."""
        ...

    def answers(self, code: str, question: int) -> dict[str, str]:
        """Member id -> answer, for question `question`."""
        ...


@dataclass
class _Class:
    """One class in memory."""

    fields: dict[str, str]
    expires_at: float  # epoch seconds
    members: dict[str, str] = field(default_factory=dict)
    answers: dict[int, dict[str, str]] = field(default_factory=dict)


class MemoryStore:
    """Classes in this process's memory, for one server (`streamlit run app.py`); thread-safe
    (each session's script runs in its own thread). `clock` gives epoch seconds (tests move it
    on to see a class expire)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._classes: dict[str, _Class] = {}

    def _live(self, code: str) -> _Class | None:
        """The class `code` if it has not expired (an expired one is dropped). Under the lock."""
        found = self._classes.get(code)
        if found is not None and self._clock() >= found.expires_at:
            del self._classes[code]
            return None
        return found

    def create(self, code: str, fields: Mapping[str, str], ttl: float) -> bool:
        with self._lock:
            if self._live(code) is not None:
                return False
            expires_at = self._clock() + ttl
            record = {**fields, VERSION: "1", EXPIRES: str(int(expires_at * 1000))}
            self._classes[code] = _Class(record, expires_at)
            return True

    def read(self, code: str) -> dict[str, str] | None:
        with self._lock:
            found = self._live(code)
            return None if found is None else dict(found.fields)

    def update(self, code: str, changes: Mapping[str, str]) -> dict[str, str] | None:
        with self._lock:
            found = self._live(code)
            if found is None:
                return None
            found.fields.update(changes)
            found.fields[VERSION] = str(int(found.fields[VERSION]) + 1)
            return dict(found.fields)

    def add_member(self, code: str, member: str, nickname: str) -> bool:
        with self._lock:
            found = self._live(code)
            if found is not None:
                found.members[member] = nickname
            return found is not None

    def members(self, code: str) -> dict[str, str]:
        with self._lock:
            found = self._live(code)
            return {} if found is None else dict(found.members)

    def is_member(self, code: str, member: str) -> bool:
        with self._lock:
            found = self._live(code)
            return found is not None and member in found.members

    def put_answer(self, code: str, question: int, member: str, answer: str) -> bool:
        with self._lock:
            found = self._live(code)
            if found is not None:
                found.answers.setdefault(question, {})[member] = answer
            return found is not None

    def answers(self, code: str, question: int) -> dict[str, str]:
        with self._lock:
            found = self._live(code)
            return {} if found is None else dict(found.answers.get(question, {}))
