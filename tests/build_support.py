"""Checks of the explicit Keras builds of attnviz's trained networks (a test support module).

attnviz's network layers create their weights in `build` and give their output shapes in
`compute_output_shape`, so Keras never traces their `call` to build them or to make a model's
symbolic outputs (a trace cost about a second per model). The tests of each network check two
things with these helpers: that building runs no `call`, and that the weights are the ones
Keras's traced build draws from the same seed (the shipped checkpoints were trained from those).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import keras
import numpy as np
import pytest


def keras_default_builds(monkeypatch: pytest.MonkeyPatch, *classes: type) -> None:
    """Give `classes` Keras's default `build` and `compute_output_shape` back: Keras then
    builds them by tracing `call` symbolically."""
    for cls in classes:
        monkeypatch.setattr(cls, "build", keras.layers.Layer.build)
        monkeypatch.setattr(cls, "compute_output_shape", keras.layers.Layer.compute_output_shape)


def refusing(call: Callable) -> Callable:
    """`call` with its signature (Keras reads it), raising if it runs."""

    @functools.wraps(call)
    def never(*args, **kwargs):
        raise AssertionError(f"{call.__qualname__} ran while building")

    return never


def assert_same_weights(built: list[np.ndarray], traced: list[np.ndarray]) -> None:
    """The same weights, array for array: same shapes in the same order, equal values."""
    assert [w.shape for w in built] == [w.shape for w in traced]
    for a, b in zip(built, traced, strict=True):
        np.testing.assert_array_equal(a, b)
