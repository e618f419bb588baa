"""The maths every check runs: attnviz's own `compute_attention`, imported when a check first
runs (it loads TensorFlow), so that listing the exercises stays cheap."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

CACHED = 256  # results kept: an exercise's check, reveal and explanation ask for the same ones


def attend(query: Any, key: Any, value: Any, **settings: Any):
    """`core.attention.compute_attention(query, key, value, **settings)`: an `AttentionResult`
    (scores, mask, weights, output, ...), its arrays read-only. The same numbers and settings
    asked again (a check, then its reveal and its explanation, on each run of the exercise) are
    answered from a cache; settings that cannot be hashed (learned weights in `params`) are
    computed each time."""
    arrays = tuple(np.asarray(x) for x in (query, key, value))
    try:
        return _attend_cached(
            tuple((a.tobytes(), a.shape, a.dtype.str) for a in arrays),
            tuple(sorted((name, _hashable(v)) for name, v in settings.items())),
        )
    except TypeError:  # an argument that cannot be a key
        from attnviz.core.attention import compute_attention

        return compute_attention(*arrays, **settings)


def _hashable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return ("array", value.tobytes(), value.shape, value.dtype.str)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    hash(value)  # TypeError for what cannot be a key
    return value


@functools.lru_cache(maxsize=CACHED)
def _attend_cached(arrays: tuple, settings: tuple):
    from attnviz.core.attention import compute_attention

    q, k, v = (np.frombuffer(data, dtype=dtype).reshape(shape) for data, shape, dtype in arrays)
    return compute_attention(q, k, v, **{name: _unhashed(value) for name, value in settings})


def _unhashed(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 4 and value[0] == "array":
        return np.frombuffer(value[1], dtype=value[3]).reshape(value[2])
    if (
        isinstance(value, tuple)
        and value
        and all(isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str) for v in value)
    ):
        return {k: _unhashed(v) for k, v in value}
    return value


def solve_scores(key: np.ndarray, gaps: dict[tuple[int, int], float]) -> np.ndarray:
    """A query `(D,)` whose dot scores with the rows of `key` `(S, D)` differ as `gaps` says:
    `{(a, b): g}` asks score(a) − score(b) = g. The least-squares solution (exact when the
    differences of the keys are independent)."""
    rows = np.array([key[a] - key[b] for a, b in gaps], dtype=np.float64)  # (G, D)
    targets = np.array(list(gaps.values()), dtype=np.float64)  # (G,)
    solution, *_ = np.linalg.lstsq(rows, targets, rcond=None)
    return solution
