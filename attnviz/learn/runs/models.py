"""The trained models of this process's finished runs, one object per run: every session that
watched a run (or is served it from the store) on this server gets the same model, as the pages
share the shipped models, instead of each rebuilding it from the weights (and tracing its
functions again on its first use). The worker that trained a run here hands over its model;
another replica's run is rebuilt from its final weights once. The last `KEPT` runs' models are
kept; the sessions hold theirs as long as they like.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attnviz.core.kept import Kept

KEPT = 8  # models of finished runs kept in this process, the most recently used
_MODELS = Kept(KEPT)  # (id(store), run id) -> model


def keep(store: object, run_id: str, model: Any) -> None:
    """Keep `model`, the trained model of `run_id` in `store`."""
    _MODELS.put((id(store), run_id), model)


def kept(store: object, run_id: str, build: Callable[[], Any]) -> Any:
    """The model of `run_id` in `store`: the one kept, else `build()` (kept if not None)."""
    return _MODELS.get((id(store), run_id), build)
