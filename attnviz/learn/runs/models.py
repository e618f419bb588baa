"""The trained models of this process's finished runs, one object per run: every session that
watched a run (or is served it from the store) on this server gets the same model, as the pages
share the shipped models, instead of each rebuilding it from the weights (and tracing its
functions again on its first use). The worker that trained a run here hands over its model;
another replica's run is rebuilt from its final weights once. The last `KEPT` runs' models are
kept; the sessions hold theirs as long as they like.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

KEPT = 8  # models of finished runs kept in this process, the most recently used
_MODELS: OrderedDict[tuple[int, str], Any] = OrderedDict()  # (id(store), run id) -> model
_LOCK = threading.Lock()


def keep(store: object, run_id: str, model: Any) -> None:
    """Keep `model`, the trained model of `run_id` in `store`."""
    with _LOCK:
        _MODELS[id(store), run_id] = model
        _MODELS.move_to_end((id(store), run_id))
        while len(_MODELS) > KEPT:
            _MODELS.popitem(last=False)


def kept(store: object, run_id: str, build: Callable[[], Any]) -> Any:
    """The model of `run_id` in `store`: the one kept, else `build()` (kept if not None)."""
    with _LOCK:
        model = _MODELS.get((id(store), run_id))
        if model is not None:
            _MODELS.move_to_end((id(store), run_id))
            return model
    model = build()  # outside the lock: building takes a while; two builds at once are alike
    if model is not None:
        keep(store, run_id, model)
    return model
