"""Things a process builds once and shares between its sessions and threads: `Kept`, a bounded,
thread-safe map from a key to what was built for it, the least recently used dropped first.

The app's watchers of one training run, the phones of one class, the sessions that open one
finished run: each would otherwise build the same figure, decode the same report or rebuild the
same model. Building happens outside the lock (two threads may build one new thing at once;
both results are alike, and one is kept).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from attnviz.core.checks import check_int


class Kept:
    """At most `size` things, by key, the least recently used dropped first (see module doc)."""

    def __init__(self, size: int) -> None:
        self.size = check_int(size, "size", low=1)
        self._lock = threading.Lock()
        self._things: OrderedDict[Hashable, Any] = OrderedDict()  # oldest use first

    def __len__(self) -> int:
        with self._lock:
            return len(self._things)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._things

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """What is kept under `key`, else `build()` (kept unless it is None). A key that cannot
        be hashed is built each time and not kept."""
        try:
            hash(key)
        except TypeError:
            return build()
        with self._lock:
            if key in self._things:
                self._things.move_to_end(key)
                return self._things[key]
        thing = build()
        if thing is not None:
            self.put(key, thing)
        return thing

    def put(self, key: Hashable, thing: Any) -> None:
        """Keep `thing` under `key` (the most recently used)."""
        with self._lock:
            self._things[key] = thing
            self._things.move_to_end(key)
            while len(self._things) > self.size:
                self._things.popitem(last=False)
