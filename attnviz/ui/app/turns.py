"""One page run at a time per server, first come first served (`PAGE_TURNS`, taken by the shell
around each run of the page script).

Streamlit runs each session's script in a thread of its own. When a lecture hall clicks at
once, a server has dozens of runs in progress, and Python's interpreter lock shares it among
them in 5 ms slices: every run then lasts as long as all of them together, and the thread that
sends the finished runs to the browsers waits its slice among them too. Taking turns, each run
has the interpreter nearly to itself and ends in its own CPU time; the others wait in the order
they came. Measured on one core with the load benchmark's students (`bench/load_bench.py`):
the slowest runs near the core's capacity end several times sooner.

A run that has had the turn for `hold_s` (loading a model, a very large heatmap) lets the next
one start beside it, so that no run waits behind a long one for more than that.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

HOLD_S = 0.5  # most seconds a run keeps the others waiting (far above a click's run: ~20-50 ms)


class Turns:
    """Runs take turns, first come first served: `with turns.turn(): ...` waits until every run
    that came before has ended or has had its turn for `hold_s` seconds."""

    def __init__(self, hold_s: float = HOLD_S) -> None:
        if not hold_s > 0:
            raise ValueError(f"hold_s must be a positive number of seconds. Received: {hold_s!r}.")
        self.hold_s = hold_s
        self._lock = threading.Lock()
        self._waiting: deque[threading.Condition] = deque()  # first in line first
        self._holder: threading.Condition | None = None  # the run whose turn it is, if any
        self._since = 0.0  # when the holder took its turn (time.monotonic)

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Wait for this run's turn, hold it while the block runs (however it ends: a rerun or
        a stop raises through here), then give it to the next in line."""
        me = threading.Condition(self._lock)
        with self._lock:
            self._waiting.append(me)
            try:
                while not self._may_take(me):
                    me.wait(self._time_left() if self._waiting[0] is me else None)
            except BaseException:  # a waiter that gives up leaves the line, not a gap in it
                self._waiting.remove(me)
                self._wake_first()
                raise
            self._waiting.popleft()
            self._holder, self._since = me, time.monotonic()
            self._wake_first()  # the next in line starts counting the holder's time
        try:
            yield
        finally:
            with self._lock:
                if self._holder is me:  # not overtaken after `hold_s`
                    self._holder = None
                    self._wake_first()

    def held(self) -> bool:
        """Whether a run holds the turn now."""
        with self._lock:
            return self._holder is not None

    def waiting(self) -> int:
        """How many runs are waiting for their turn now."""
        with self._lock:
            return len(self._waiting)

    def _may_take(self, me: threading.Condition) -> bool:
        return self._waiting[0] is me and (self._holder is None or self._time_left() <= 0)

    def _time_left(self) -> float:
        """Seconds until the holder's turn has lasted `hold_s`."""
        return self._since + self.hold_s - time.monotonic()

    def _wake_first(self) -> None:
        if self._waiting:
            self._waiting[0].notify()


PAGE_TURNS = Turns()  # this server's page runs (the shell's `main` takes a turn for each)
