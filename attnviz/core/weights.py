"""Learned weights given by a user: checked by name and shape, the missing ones drawn.

One resolver serves the score layers (`W`, `W_q`, `W_k`, `v`, `b`) and multi-head attention
(`W_Q`, `W_K`, `W_V`, `W_O`): the same messages for unknown names, shapes and bad numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from attnviz.core.checks import check_finite, describe, numeric_array


def check_weight_names(
    params: Mapping[str, Any] | None, allowed: tuple[str, ...] | None, owner: str
) -> dict[str, Any]:
    """`params` as a dict, after checking it is a mapping whose names are all `allowed`
    (`allowed=None` skips the names)."""
    if params is not None and not isinstance(params, Mapping):
        raise ValueError(
            '`params` must be a dict of weights by name, e.g. {"W": [[...]]}. '
            f"Received: {describe(params)}."
        )
    given = dict(params or {})
    unknown = sorted(set(given) - set(allowed)) if allowed is not None else []
    if unknown:
        raise ValueError(
            f"`params` has weights that {owner} does not use: {', '.join(unknown)}. "
            f"Allowed: {', '.join(allowed) or 'none'}."
        )
    return given


def check_param(value: Any, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """One given weight as float32, checked: numbers, exactly `shape`, finite and bounded."""
    label = f"params['{name}']"
    array = numeric_array(value, label)
    if array.shape != shape:
        raise ValueError(f"`{label}` must have shape {shape}. Received shape {array.shape}.")
    return check_finite(array.astype(np.float64), label).astype(np.float32)


def resolve_weights(
    params: Mapping[str, Any] | None,
    shapes: Mapping[str, tuple[int, ...]],
    draw: Callable[[], Mapping[str, np.ndarray]],
    owner: str,
    optional: tuple[str, ...] = (),
) -> dict[str, np.ndarray]:
    """The weights to use: the given ones checked, the missing ones from `draw()`.

    Args:
        params: the user's weights by name, or None.
        shapes: every weight's name and shape.
        draw: returns drawn float32 weights by name (called only if one is missing).
        owner: what uses the weights, for messages ('score="general"').
        optional: names used only when given (never drawn).

    Returns:
        The float32 weights by name, in the order of `shapes`.
    """
    given = check_weight_names(params, tuple(shapes), owner)
    missing = [name for name in shapes if name not in given and name not in optional]
    drawn = draw() if missing else {}
    used = {}
    for name, shape in shapes.items():
        if name in given:
            used[name] = check_param(given[name], name, shape)
        elif name not in optional:
            used[name] = drawn[name]
    return used
