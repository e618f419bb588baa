"""Tests for learn/global_seed.py: `set_global_seed` seeds exactly as
`keras.utils.set_random_seed` (Python, NumPy, TensorFlow's global seed and its op seeds, Keras's
generator) but leaves TensorFlow's kernel caches, and TensorFlow's own seeding, alone. (A
stateful TensorFlow kernel, such as `tf.random.uniform`'s, cached before, would go on with its
sequence: attnviz uses none; the trainings' bit-for-bit test is tests/learn/test_twins.py.)"""

from __future__ import annotations

import random

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.eager import context
from tensorflow.python.framework import random_seed

from attnviz.learn.global_seed import set_global_seed


def _draws() -> tuple:
    """One draw of every generator the seeds set."""
    return (
        random.random(),
        float(np.random.rand()),
        random_seed.get_seed(None),  # TensorFlow's (global seed, op seed) for the next op
        random_seed.get_seed(None),  # ... and the one after it
        tf.random.stateless_uniform([3], seed=[1, 2]).numpy().tolist(),  # (no state: control)
        keras.random.uniform([2]).numpy().tolist(),  # Keras's global generator
    )


def test_seed_draws_what_keras_set_random_seed_draws():
    keras.utils.set_random_seed(7)
    expected = _draws()
    set_global_seed(7)
    assert _draws() == expected
    set_global_seed(8)
    assert _draws() != expected


def test_seed_keeps_tensorflow_s_kernel_caches_and_leaves_its_seeding_as_it_was(monkeypatch):
    from tensorflow.python import pywrap_tfe

    cleared = []
    monkeypatch.setattr(pywrap_tfe, "TFE_ContextClearCaches", lambda handle: cleared.append(1))
    set_global_seed(3)
    assert cleared == [] and context.global_seed() == 3
    tf.random.set_seed(4)  # TensorFlow's own still clears them
    assert cleared == [1] and context.global_seed() == 4
    assert "_set_global_seed" not in vars(context.context())


def test_a_seed_that_is_not_an_int_is_refused():
    with pytest.raises(ValueError, match="integer"):
        set_global_seed("seven")


def test_attnviz_draws_with_no_stateful_tensorflow_random_op():
    # `set_global_seed` keeps their kernels (and their place in their sequences): none is used
    from pathlib import Path

    import attnviz

    stateful = ("tf.random.uniform", "tf.random.normal", "tf.random.shuffle",
                "tf.random.categorical", "tf.random.truncated_normal")  # fmt: skip
    root = Path(attnviz.__file__).parent
    found = [f"{path.relative_to(root)}: {name}" for path in root.rglob("*.py")
             for name in stateful if name in path.read_text()]  # fmt: skip
    assert found == []
