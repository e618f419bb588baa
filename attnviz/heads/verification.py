"""Checking a recorded attention against what its layer returned in the same run.

Shape letters: B batch, H heads, T queries, S keys, Dv value features per head.

What was recorded, the weights `A (B, H, T, S)` and the values `V (B, H, S, Dv)`, is enough
to recompute the layer's output: `A·V`, laid out as the layer's product laid it out, then
through the ops the layer applied to it next, up to its output projection (and its bias), when
the layer has one. While the model runs, `Onward` follows the product's result forward, inside
the same layer call, through changes of layout (reshapes, transposes, casts), the masking of
padded rows (`where`) or a gate (a multiply), to a product with a variable or a 1×1 convolution
(the projection) and an added variable (its bias), and keeps each op's arguments and the tensor
the layer produced. `verify` replays those ops on the recomputation and compares: the largest
absolute difference is the check's result. With no projection found
(`keras.layers.Attention`, layers that return the weighted values), the comparison is with the
product's own result, the weighted values the layer computed.

A capture that disagrees with its own layer (weights read from the wrong tensor, heads or
positions laid out differently from the values, a padded row recorded as something the layer
did not use) shows as a large difference, instead of hiding in a plausible-looking picture.
The check works on arrays already captured (no second run of the model): layout changes in
numpy, matrix products by TensorFlow's kernels on numpy arrays (faster than numpy's BLAS on a
small shared machine); what the check costs beside a plain call is the benchmark's `inspect`
section.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attnviz.heads.layouts import PRODUCTS, ProductAxes, Roles, layout_order, product_axes
from attnviz.heads.tracing import OpNode

RELAYOUTS = {"Reshape", "Transpose", "ExpandDims", "Squeeze", "Cast", "Identity", "StopGradient"}
BIASES = {"BiasAdd", "AddV2", "Add"}
SELECTS = {"SelectV2", "Select"}  # where(rows, zeros, x): Gemma zeroes the output of padded rows
AGREEMENT = 1e-4  # most difference, relative to the output's largest value (at least 1), that
# `Verified.agrees` accepts: float32 sums of products differ from numpy's by a few ulps
OUTPUT = "the layer's output"
WEIGHTED = "the layer's weighted values (A·V; no output projection was followed)"


@dataclass(frozen=True)
class Verified:
    """How a recorded attention compared with what its layer returned in the same run."""

    difference: float | None  # largest |recomputed − the layer's own|; None when not checked
    scale: float = 0.0  # largest |value| the layer returned there (to judge the difference)
    against: str = ""  # what it was compared with: OUTPUT or WEIGHTED
    reason: str = ""  # why it was not checked (empty when it was)

    @property
    def checked(self) -> bool:
        return self.difference is not None

    def agrees(self, tolerance: float = AGREEMENT) -> bool:
        """Checked, and the difference is within `tolerance` × max(1, the output's scale)."""
        return self.checked and self.difference <= tolerance * max(1.0, self.scale)

    def describe(self) -> str:
        """In words, e.g. "checked against the layer's output: exact to 3e-7"."""
        if not self.checked:
            return f"not checked: {self.reason}"
        if not self.agrees():
            return (
                f"checked against {self.against}: DIFFERS by up to {_short(self.difference)} "
                f"(its values reach {_short(self.scale)}); what is shown is not what it did"
            )
        exact = "exact" if self.difference == 0 else f"exact to {_short(self.difference)}"
        return f"checked against {self.against}: {exact}"

    def brief(self) -> str:
        """The same in a few words, where the whole sentence does not fit."""
        if not self.checked:
            return "not checked"
        if not self.agrees():
            return f"checked: DIFFERS by {_short(self.difference)}"
        return "checked: exact" + ("" if self.difference == 0 else f" to {_short(self.difference)}")


def not_checked(reason: str) -> Verified:
    return Verified(None, reason=reason)


def _short(number: float) -> str:
    """One significant digit, rounded up (an upper bound): 2.1e-7 -> "3e-7", 0.02 -> "2e-2"."""
    exponent = math.floor(math.log10(number))
    mantissa = math.ceil(number / 10.0**exponent - 1e-9)
    if mantissa == 10:
        mantissa, exponent = 1, exponent + 1
    return f"{mantissa}e{exponent}"


@dataclass(frozen=True)
class Step:
    """One op the layer applied to the weighted values on their way to its output."""

    op_type: str  # e.g. "Reshape", "Einsum", "BiasAdd"
    shape: tuple[int, ...]  # the op's output shape
    perm: tuple[int, ...] = ()  # a Transpose's permutation
    axes: ProductAxes | None = None  # a projection's letters
    index: int = 0  # which operand of a projection (or bias add) the values are
    operand: np.ndarray | None = None  # the projection's kernel, the bias, a select's
    # condition or a multiply's other factor
    other: np.ndarray | None = None  # a select's other branch
    flags: tuple[bool, bool] = (False, False)  # a MatMul's transposes


@dataclass
class Onward:
    """Follows one attention's weighted values forward during the run (see module doc)."""

    product: np.ndarray  # the product A·V's result as the layer computed it
    axes: ProductAxes  # the product's letters
    roles: Roles  # which operand was the weights, the letters of T and S
    scope: Any  # the layer call's name scope: ops outside it are not followed
    steps: list[Step] = field(default_factory=list)
    kept: int = 0  # steps up to the projection (and bias) reached so far
    output: np.ndarray | None = None  # the tensor after step `kept`
    finished: bool = False  # a bias followed the projection: nothing more to follow

    def follow(self, node: OpNode, inputs: tuple, output: Any, index: int, parameter) -> bool:
        """Take `node` (its input `index` is the tensor followed, `output` its result) as the
        next step if it is one (`parameter(i)`: whether input i is a variable); True if taken."""
        in_call = any(s is self.scope for s in node.scopes)
        if self.finished or not in_call:
            return False
        shape = tuple(int(d) for d in output.shape)
        other = 1 - index
        if node.op_type in RELAYOUTS and index == 0:
            perm = (
                tuple(int(i) for i in np.asarray(inputs[1])) if node.op_type == "Transpose" else ()
            )
            self.steps.append(Step(node.op_type, shape, perm=perm))
            return True
        kept_shape = shape == tuple(int(d) for d in inputs[index].shape)
        if node.op_type in SELECTS and index > 0 and kept_shape:  # masks the layer's output
            cond, branch = np.asarray(inputs[0]), np.asarray(inputs[3 - index])
            self.steps.append(Step("SelectV2", shape, index=index, operand=cond, other=branch))
            return True
        if node.op_type == "Mul" and len(inputs) == 2 and kept_shape:  # e.g. by a query mask
            self.steps.append(Step("Mul", shape, operand=np.asarray(inputs[other])))
            return True
        if len(inputs) != 2 or not parameter(other):
            return False
        if node.op_type == "Conv2D" and index == 0:  # a 1×1 convolution: a product over channels
            return self._pointwise(node, inputs[1], shape, output)
        if node.op_type in PRODUCTS:
            ranks = (len(inputs[0].shape), len(inputs[1].shape))
            axes = product_axes(node, ranks)
            if axes is None:
                return False
            flags = (bool(node.attr("transpose_a") or node.attr("adj_x")),
                     bool(node.attr("transpose_b") or node.attr("adj_y")))  # fmt: skip
            self._keep(Step(node.op_type, shape, axes=axes, index=index, flags=flags,
                            operand=np.asarray(inputs[other])), output)  # fmt: skip
            return True
        if node.op_type in BIASES and self.kept:
            self._keep(Step("BiasAdd", shape, operand=np.asarray(inputs[other])), output)
            self.finished = True
            return True
        return False

    def _pointwise(self, node: OpNode, kernel: Any, shape: tuple, output: Any) -> bool:
        """Take a 1×1, stride-1, channels-last convolution (MobileNetV5's and SD3's output
        projections) as the product with its kernel `(1, 1, Cin, Cout)`."""
        strides = tuple(node.attr("strides", ()) or ())
        pointwise = tuple(kernel.shape[:2]) == (1, 1) and set(strides) <= {1}
        if not pointwise or node.attr("data_format", "NHWC") != "NHWC":
            return False
        matrix = np.asarray(kernel).reshape(kernel.shape[2], kernel.shape[3])  # (Cin, Cout)
        self._keep(Step("MatMul", shape, operand=matrix), output)
        return True

    def _keep(self, step: Step, output: Any) -> None:
        self.steps.append(step)
        self.kept = len(self.steps)
        self.output = np.asarray(output)


def verify(
    weights: np.ndarray | None, values: np.ndarray | None, onward: Onward | None
) -> Verified:
    """Recompute the layer's output from the recorded `weights (B', H, T, S)` and `values
    (B', H, S, Dv)` and compare it with what the layer produced (see module doc)."""
    if onward is None:
        return not_checked("the product of the weights and the values was not followed")
    if values is None:
        return not_checked("the values the weights multiplied were not recorded")
    product = onward.product
    letters = onward.axes.output
    roles = onward.roles
    order = layout_order(letters, roles.batch, roles.rows)
    if sorted(order) != list(range(len(letters))):
        return not_checked(f"the layout of the weighted values ({letters}) was not understood")
    recomputed = _matmul(weights, values)  # (B', H, T, Dv)
    if recomputed.size != product.size:
        return not_checked(
            f"the recorded weights {weights.shape} and values {values.shape} give "
            f"{recomputed.shape}, which does not fit the layer's {product.shape}"
        )
    moved = tuple(product.shape[i] for i in order)
    recomputed = np.transpose(recomputed.reshape(moved), np.argsort(order))  # as the layer had it
    if onward.output is None:
        return _compare(recomputed, product, WEIGHTED)
    for step in onward.steps[: onward.kept]:
        recomputed = _replay(step, recomputed)
        if recomputed is None:
            return not_checked(f"the layer's {step.op_type} could not be replayed")
    return _compare(recomputed, onward.output, OUTPUT)


def _compare(recomputed: np.ndarray, actual: np.ndarray, against: str) -> Verified:
    actual = np.asarray(actual, dtype=np.float32)
    if recomputed.shape != actual.shape:
        return not_checked(f"the recomputation's shape {recomputed.shape} is not the layer's "
                           f"{actual.shape}")  # fmt: skip
    difference = np.abs(recomputed - actual)
    scale = float(np.max(np.abs(actual), initial=0.0))
    if not np.isfinite(actual).all():
        return not_checked("the layer's own result holds NaN or infinite values")
    return Verified(float(np.max(difference, initial=0.0)), scale, against)


def _replay(step: Step, x: np.ndarray) -> np.ndarray | None:
    """`x` put through one recorded step (float32), or None if it cannot be."""
    if step.op_type in ("Reshape", "ExpandDims", "Squeeze"):
        return x.reshape(step.shape) if x.size == math.prod(step.shape) else None
    if step.op_type == "Transpose":
        return np.transpose(x, step.perm) if len(step.perm) == x.ndim else None
    if step.op_type == "BiasAdd":
        return x + step.operand.astype(np.float32, copy=False)
    if step.op_type == "SelectV2":
        pair = (x, step.other) if step.index == 1 else (step.other, x)
        return np.where(step.operand, *pair).astype(np.float32, copy=False)
    if step.op_type == "Mul":
        return x * step.operand.astype(np.float32, copy=False)
    if step.op_type in RELAYOUTS:
        return x  # casts and identities: the recomputation stays float32
    kernel = step.operand.astype(np.float32, copy=False)
    pair = (x, kernel) if step.index == 0 else (kernel, x)
    if step.op_type == "Einsum":
        import tensorflow as tf

        return tf.einsum(_equation(step.axes), *pair).numpy()
    return _matmul(*pair, *step.flags)


def _matmul(a: np.ndarray, b: np.ndarray, adj_a: bool = False, adj_b: bool = False) -> np.ndarray:
    """`a @ b` (float32, transposing the last two axes where asked), by TensorFlow's kernel: on
    a shared 2-core machine it was 4-10x faster than numpy's BLAS on these shapes."""
    import tensorflow as tf

    a, b = (np.asarray(x, dtype=np.float32) for x in (a, b))
    return tf.linalg.matmul(a, b, transpose_a=adj_a, transpose_b=adj_b).numpy()


def _equation(axes: ProductAxes) -> str:
    """A product's letters as an equation numpy's einsum takes: the letters `layouts` made for
    "..." (digits, Greek) are given Latin letters the equation does not use."""
    used = set(axes.inputs[0] + axes.inputs[1] + axes.output)
    spare = iter(c for c in string.ascii_letters if c not in used)
    names = {c: c if c in string.ascii_letters else next(spare) for c in sorted(used)}
    spell = lambda letters: "".join(names[c] for c in letters)  # noqa: E731
    return f"{spell(axes.inputs[0])},{spell(axes.inputs[1])}->{spell(axes.output)}"
