"""Tests for attnviz.transformer.rotary: the keras.ops RoPE equals the numpy one the explorer
draws, in eager calls, inside a model with variable-length inputs, and after saving."""

import keras
import numpy as np
import pytest

from attnviz.core.positions import apply_rope
from attnviz.transformer.rotary import RotaryPositions, rotate

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("theta", [10_000.0, 500_000.0, 2.0])
@pytest.mark.parametrize("shape", [(7, 4), (2, 5, 8), (2, 3, 5, 6)], ids=["TD", "BTD", "BHTD"])
def test_rotate_equals_apply_rope(shape, theta):
    x = RNG.normal(size=shape).astype(np.float32)
    np.testing.assert_allclose(
        np.asarray(rotate(x, theta=theta)), apply_rope(x, theta=theta), rtol=1e-5, atol=1e-5
    )


def test_rotate_at_given_positions_equals_apply_rope():
    x = RNG.normal(size=(1, 2, 4)).astype(np.float32)  # (B, T, D): two tokens late in a sequence
    positions = np.array([41.0, 42.0], dtype=np.float32)
    np.testing.assert_allclose(
        np.asarray(rotate(x, positions)), apply_rope(x, positions), rtol=1e-5, atol=1e-5
    )


def test_layer_in_a_model_with_any_length_saves_and_loads(tmp_path):
    inputs = keras.Input((None, 6))
    model = keras.Model(inputs, RotaryPositions(theta=100.0)(inputs))
    for t in (3, 11):
        x = RNG.normal(size=(2, t, 6)).astype(np.float32)
        np.testing.assert_allclose(model(x), apply_rope(x, theta=100.0), rtol=1e-5, atol=1e-5)
    path = tmp_path / "rope.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    x = RNG.normal(size=(1, 4, 6)).astype(np.float32)
    np.testing.assert_allclose(loaded(x), model(x), rtol=1e-6, atol=1e-6)
    assert loaded.layers[-1].get_config()["theta"] == 100.0


def test_bad_values_are_explained():
    with pytest.raises(ValueError, match=r"known, even size\. Received shape \(2, 3\)"):
        rotate(np.ones((2, 3), np.float32))
    with pytest.raises(
        ValueError, match=r"`rope_theta` \(the RoPE base θ\) must be greater than 0"
    ):
        RotaryPositions(theta=0)
