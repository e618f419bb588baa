"""How often one session may answer: at most a few times a second, as a person does. Kept in the
process (a session's websocket stays on one server), so a check costs no round trip to a store.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

MAX_EVENTS = 3  # answers a session may send ...
PER_SECONDS = 1.0  # ... within this many seconds
MAX_SESSIONS = 100_000  # sessions remembered before the quiet ones are forgotten


class RateLimit:
    """At most `max_events` events per key in any `per_seconds`; thread-safe."""

    def __init__(
        self,
        max_events: int = MAX_EVENTS,
        per_seconds: float = PER_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_events < 1 or per_seconds <= 0:
            raise ValueError(
                f"A rate limit needs at least 1 event per a positive time; received "
                f"{max_events} per {per_seconds} s."
            )
        self.max_events, self.per_seconds = max_events, per_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._times: dict[str, deque[float]] = {}

    def allow(self, key: str) -> bool:
        """Whether `key` may act now (then it is counted); False when it acted `max_events`
        times within the last `per_seconds`."""
        now = self._clock()
        with self._lock:
            if len(self._times) > MAX_SESSIONS:
                self._forget_quiet(now)
            times = self._times.setdefault(key, deque())
            while times and now - times[0] >= self.per_seconds:
                times.popleft()
            if len(times) >= self.max_events:
                return False
            times.append(now)
            return True

    def _forget_quiet(self, now: float) -> None:
        """Drop the keys that have not acted within `per_seconds`. Under the lock."""
        quiet = [k for k, t in self._times.items() if not t or now - t[-1] >= self.per_seconds]
        for key in quiet:
            del self._times[key]
