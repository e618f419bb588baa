"""Seed Keras's global generators (a model's initial weights, `fit`'s shuffling) without throwing
away what TensorFlow has compiled.

`keras.utils.set_random_seed` seeds Python's, NumPy's and TensorFlow's global generators and
Keras's own. TensorFlow's part, `tf.random.set_seed`, also clears the process's kernel caches, so
that its old stateful random kernels, which keep their position in their sequence, start again.
attnviz's models draw only through Keras's stateless random ops (their state is variables, given
with the weights: `learn.twins`), and each `fit` shuffles with a new dataset: what those caches
hold for them is the compiled train and translation functions, which TensorFlow would otherwise
optimise again after every seeding (~3 s of a one-epoch run of the Learn page's translator,
measured 2026-11-28). `set_global_seed` sets the very same seeds, leaving the caches alone: the
weights trained are the same bit for bit (tests/learn/test_twins.py).
"""

from __future__ import annotations

import random
import threading

import keras

_LOCK = threading.Lock()


def set_global_seed(value: int) -> None:
    """`keras.utils.set_random_seed(value)`, TensorFlow's kernel caches kept (see module doc).

    Raises:
        ValueError: if `value` is not an int (as Keras's).
    """
    from tensorflow.python.eager import context  # TensorFlow's own: where its global seed lives

    eager = context.context()
    with _LOCK:
        eager._set_global_seed = _seed_only(eager)  # noqa: SLF001 - this instance, for this call
        try:
            keras.utils.set_random_seed(value)
        finally:
            del eager._set_global_seed  # noqa: SLF001 - TensorFlow's own method again


def _seed_only(eager):
    """TensorFlow 2.21's `Context._set_global_seed` without its `TFE_ContextClearCaches`."""

    def set_global_seed(value) -> None:
        eager._seed = value  # noqa: SLF001
        eager._rng = random.Random(int(value))  # noqa: SLF001

    return set_global_seed
