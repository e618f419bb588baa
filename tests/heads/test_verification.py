"""Tests for heads/verification: recomputing a layer's output from recorded weights and values,
on arrays laid out by hand (numpy only); the check on real models is in test_inspection*.py."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.heads.layouts import ProductAxes, Roles
from attnviz.heads.verification import OUTPUT, WEIGHTED, Onward, Step, Verified, verify

RNG = np.random.default_rng(41)
B, H, T, S, DV, D = 2, 3, 4, 5, 2, 6


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.fixture(scope="module")
def attention():
    """weights (B, H, T, S), values (B, H, S, Dv), the product laid out (B, T, H, Dv) as Keras's
    MultiHeadAttention lays it out, and an output projection (H, Dv, D) with a bias (D,)."""
    weights = _softmax(RNG.normal(size=(B, H, T, S))).astype(np.float32)
    values = RNG.normal(size=(B, H, S, DV)).astype(np.float32)
    product = np.einsum("bhts,bhsv->bthv", weights, values)
    kernel, bias = RNG.normal(size=(H, DV, D)), RNG.normal(size=(D,))
    output = np.einsum("bthv,hvd->btd", product, kernel) + bias
    return weights, values, product, kernel.astype(np.float32), bias, output.astype(np.float32)


def _onward(product: np.ndarray, steps=(), output=None) -> Onward:
    axes = ProductAxes(("bhts", "bshv"), "bthv")  # weights first, as Keras's einsum has them
    onward = Onward(product, axes, Roles(0, 1, "bh", "t", "s"), scope=None, steps=list(steps))
    onward.kept, onward.output = len(onward.steps), output
    return onward


def test_the_weighted_values_are_recomputed_in_the_layers_layout(attention):
    weights, values, product, *_ = attention
    verified = verify(weights, values, _onward(product))
    assert verified.against == WEIGHTED and verified.difference < 1e-6
    assert verified.describe().startswith("checked against the layer's weighted values")


def test_the_output_projection_and_bias_are_replayed(attention):
    weights, values, product, kernel, bias, output = attention
    # the projection as an einsum whose "..." letters layouts names with digits
    project = Step("Einsum", output.shape, axes=ProductAxes(("0thv", "hvd"), "0td"),
                   index=0, operand=kernel)  # fmt: skip
    steps = [project, Step("BiasAdd", output.shape, operand=bias)]
    verified = verify(weights, values, _onward(product, steps, output))
    assert verified.against == OUTPUT and verified.difference < 1e-5
    assert verified.scale == pytest.approx(np.abs(output).max())
    # the same through a reshape that merges the heads and a matmul with a transposed kernel
    merged = Step("Reshape", (B, T, H * DV))
    flat = kernel.reshape(H * DV, D).T.copy()  # (D, H·Dv), used transposed
    matmul = Step("BatchMatMulV2", output.shape, index=0, operand=flat, flags=(False, True))
    steps = [merged, matmul, Step("BiasAdd", output.shape, operand=bias)]
    assert verify(weights, values, _onward(product, steps, output)).difference < 1e-5


def test_weights_the_layer_did_not_use_are_found_out(attention):
    weights, values, product, kernel, bias, output = attention
    wrong = weights.copy()
    wrong[0, :, 1] = 1.0 / S  # an even row where the layer had a softmax
    project = Step("Einsum", output.shape, axes=ProductAxes(("bthv", "hvd"), "btd"),
                   operand=kernel)  # fmt: skip
    verified = verify(wrong, values, _onward(product, [project], output - bias))
    assert verified.checked and not verified.agrees()
    assert "DIFFERS by up to" in verified.describe()


def test_what_cannot_be_checked_says_why(attention):
    weights, values, product, *_ = attention
    assert verify(weights, None, _onward(product)).reason.startswith("the values")
    assert "not followed" in verify(weights, values, None).describe()
    shorter = verify(weights[:, :, :2], values, _onward(product))
    assert not shorter.checked and "does not fit the layer's (2, 4, 3, 2)" in shorter.reason


@pytest.mark.parametrize(
    ("difference", "words"),
    [(0.0, "exact"), (3e-7, "exact to 3e-7"), (2.1e-5, "exact to 3e-5")],
)
def test_the_check_in_words(difference, words):
    verified = Verified(difference, scale=2.0, against=OUTPUT)
    assert verified.describe() == f"checked against the layer's output: {words}"
    assert verified.agrees()
    assert not Verified(1e-3, scale=2.0, against=OUTPUT).agrees()  # above 1e-4 × 2
    assert Verified(1e-3, scale=20.0, against=OUTPUT).agrees()  # relative to the output
    assert Verified(None, reason="x").describe() == "not checked: x"
