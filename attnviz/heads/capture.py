"""Finding the attention a model computes while it runs: a softmax over keys that weighs values.

Shape letters: B batch, H heads, T queries, S keys, Dk query/key and Dv value features per head.

The general mechanism. `AttentionTape` listens to every op of a traced run (`tracing`) and
records an attention wherever a product (`Einsum`, batched `MatMul`) sums over the last axis of
a tensor that came from a `Softmax` op: that tensor holds the weights `A (…, T, S)` as the
layer used them, the product's other operand is `V`. Between the softmax and the product the
tensor may pass through ops that keep what it means (`CARRIED`): casts, masking with `where` or
a multiply (Keras zeroes fully masked rows so), dropout (nothing at inference), reshapes,
slicing (GPT-OSS drops its sink column). The weights are read where they last had the softmax's
rank, so heads a reshape merged into the rows (TensorFlow's einsum does, for Gemma's grouped
heads) stay heads. The same ops are replayed on the softmax's input: the logits stay cell for
cell beside the weights.

From the softmax the tape walks back through the ops that build logits from scores (`TO_SCORES`:
scaling, added biases and masks, soft-capping, concatenated sink logits; transposes, whose
permutation it follows) to the product that made the scores; its two operands are `Q` and `K`
as the layer multiplied them, e.g. after RoPE. Products with a variable as an operand are
projections and are passed over; so are scores that reach the logits through a gather
(DeBERTa's position terms) or a slice (XLNet's shifted relative scores): the content product
`Q·Kᵀ` is the one kept, the position terms stay in the logits. Fused kernels are no exception
on TensorFlow: `ops.dot_product_attention` computes its softmax explicitly there, so it is
recorded the same way. A softmax over several axes at once (Keras's `Softmax(axis=(-2, -1))`,
which `MultiHeadAttention(attention_axes=(1, 2))` uses) runs as `exp(x − logsumexp(x))`, with
no Softmax op: an `Exp` of `x` minus a `Log` (plus a constant) is taken as a softmax over the
trailing axes the log kept as 1, and T and S are each those axes flattened, row-major.

From the product `A·V` the tape also follows the result onward inside the layer call, to the
layer's output projection (`verification.Onward`), so that the call can be checked against what
the layer returned.
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.heads.layouts import (
    PRODUCTS,
    ProductAxes,
    Roles,
    canonical,
    fit_heads,
    output_roles,
    product_axes,
    score_roles,
)
from attnviz.heads.owners import Owner, find_owner
from attnviz.heads.tracing import OpNode, OpTrace, layer_scopes
from attnviz.heads.verification import Onward

SOFTMAX = "Softmax"
CARRIED = {  # ops a softmax's result keeps its meaning through, on its way to the values
    "Cast", "Identity", "StopGradient", "SelectV2", "Select", "Mul", "RealDiv",
    "Reshape", "ExpandDims", "Squeeze", "Transpose", "StridedSlice", "Slice",
}  # fmt: skip
TO_SCORES = {  # ops between the scores Q·Kᵀ and the softmax's input (Transpose: see walk)
    "AddV2", "Add", "Sub", "Mul", "RealDiv", "Div", "Neg", "SelectV2", "Select", "Cast",
    "Identity", "StopGradient", "Tanh", "Reshape", "ExpandDims", "Squeeze", "ConcatV2",
    "BiasAdd", "Maximum", "Minimum",
}  # fmt: skip
PARAMETER_CARRIERS = {"Identity", "Cast", "Reshape", "Transpose", "ExpandDims", "Squeeze"}
WALK_OPS = 64  # most ops walked back from a softmax to its scores


@dataclass(frozen=True)
class _Flow:
    """A softmax's result on its way to the values."""

    softmax: OpNode  # the Softmax op
    ref: weakref.ref  # the tensor now carrying the weights (to detect a reused id)
    logits: Any  # the softmax's input, with the same reshapes and slices as that tensor
    natural: Any  # the last tensor on the way with the softmax's rank (…, T, S)
    natural_logits: Any  # its logits
    spans: int = 1  # how many axes T and S each are (2: attention over an image's rows and
    # columns at once, `keras.layers.MultiHeadAttention(attention_axes=(1, 2))`)


@dataclass(frozen=True)
class Captured:
    """One attention the run computed, as arrays, and the layer call it belongs to."""

    seq: int  # the place in the run of the product A·V
    weights: np.ndarray  # (B, H, T, S) float32, as the layer multiplied them into V
    logits: np.ndarray | None  # (B, H, T, S) float32 softmax input, masks applied (None if a
    # change of shape on the way could not be followed)
    query: np.ndarray | None  # (B, H, T, Dk) Q as multiplied by K; None if not found
    key: np.ndarray | None  # (B, H, S, Dk) K, a shared head repeated for each of its queries
    value: np.ndarray | None  # (B, H, S, Dv) V, likewise
    key_heads: int | None  # how many key heads the product Q·Kᵀ had (fewer when shared)
    owner: Owner | None  # the layer call it belongs to (None outside any layer)
    onward: Onward | None = None  # the product's result followed to the layer's output


class AttentionTape:
    """The listener `tracing` calls after every op: finds and keeps the run's attention."""

    def __init__(self) -> None:
        self.trace: OpTrace | None = None  # set by the caller once tracing starts
        self.found: list[Captured] = []  # in the order the products A·V ran
        self.softmaxes: list[tuple[OpNode, tuple]] = []  # every softmax of rank >= 3, its shape
        self.used: set[int] = set()  # seq of the softmaxes that reached values
        self._flows: dict[int, _Flow] = {}  # id(tensor) -> its flow
        self._pairs: dict[int, tuple] = {}  # seq -> operands of a product of two activations
        self._perms: dict[int, tuple] = {}  # seq -> permutation of a Transpose op
        self._onward: dict[int, tuple] = {}  # id(tensor) -> (weakref, Onward following it)
        self._logs: dict[int, tuple] = {}  # seq -> output shape of a Log op (a logsumexp's)

    def __call__(self, node: OpNode, inputs: tuple, outputs: tuple) -> None:
        if self._onward and len(outputs) == 1:
            self._follow(node, inputs, outputs[0])
        if node.op_type == "Log":
            self._logs[node.seq] = tuple(outputs[0].shape)
        elif node.op_type == "Exp" and len(outputs[0].shape) >= 3:
            self._exp_softmax(node, outputs[0])
        if node.op_type in PRODUCTS:
            self._keep_pair(node, inputs)
        elif node.op_type == "Transpose":
            self._perms[node.seq] = tuple(int(i) for i in np.asarray(inputs[1]))
        elif node.op_type == SOFTMAX and len(outputs[0].shape) >= 3:
            self.softmaxes.append((node, tuple(outputs[0].shape)))
            out = outputs[0]
            self._flows[id(out)] = _Flow(node, weakref.ref(out), inputs[0], out, inputs[0])
            return
        if not self._flows:
            return
        hits = [i for i, x in enumerate(inputs) if self._flow(x) is not None]
        if hits and node.op_type in PRODUCTS:
            self._on_product(node, inputs, outputs, hits)
        elif hits and node.op_type in CARRIED and len(outputs) == 1:
            self._carry(node, inputs, outputs[0], hits[0])

    def _keep_pair(self, node: OpNode, inputs: tuple) -> None:
        """Hold the operands of a product of two activations (a possible Q·Kᵀ, whose operands
        are often temporaries such as a transposed K) until a softmax may need them."""
        if len(inputs) == 2 and not any(_is_parameter(self.trace, node, i) for i in (0, 1)):
            self._pairs[node.seq] = tuple(inputs)

    def _exp_softmax(self, node: OpNode, output: Any) -> None:
        """Take `exp(x − logsumexp(x, axes))` as a softmax over those (trailing) axes: Keras's
        `Softmax` over several axes is computed so (no Softmax op)."""
        sub = self.trace.producer(node, 0)
        if sub is None or sub.op_type != "Sub" or sub.input(0) is None:
            return
        x, norm = sub.input(0), self._log_shape(sub)
        if tuple(x.shape) != tuple(output.shape) or norm is None or len(norm) != len(x.shape):
            return
        ones = [d == 1 for d in reversed(norm)]
        spans = ones.index(False) if False in ones else len(ones)
        if not 1 <= spans <= (len(x.shape) - 1) // 2:
            return
        self.softmaxes.append((sub, tuple(output.shape)))
        self._flows[id(output)] = _Flow(sub, weakref.ref(output), x, output, x, spans)

    def _log_shape(self, sub: OpNode) -> tuple | None:
        """The shape of what `sub` subtracts if that is a log (of a sum of exps), maybe plus a
        constant (the maximum taken out first); else None."""
        made = self.trace.producer(sub, 1)
        if made is not None and made.op_type in ("AddV2", "Add"):
            before = [self.trace.producer(made, i) for i in range(len(made.input_ids))]
            made = next((p for p in before if p is not None and p.op_type == "Log"), None)
        return None if made is None else self._logs.get(made.seq)

    def _follow(self, node: OpNode, inputs: tuple, output: Any) -> None:
        """Move each attention's onward follower (see `verification`) past `node`."""
        for index, tensor in enumerate(inputs):
            entry = self._onward.get(id(tensor))
            if entry is None or entry[0]() is not tensor:
                continue
            parameter = lambda i: _is_parameter(self.trace, node, i)  # noqa: E731
            if entry[1].follow(node, inputs, output, index, parameter):
                del self._onward[id(tensor)]
                if not entry[1].finished:
                    self._onward[id(output)] = (weakref.ref(output), entry[1])
            return

    def _flow(self, tensor: Any) -> _Flow | None:
        flow = self._flows.get(id(tensor))
        return flow if flow is not None and flow.ref() is tensor else None

    def _carry(self, node: OpNode, inputs: tuple, output: Any, index: int) -> None:
        """Follow the weights through `node` (input `index` carries them) to `output`."""
        flow = self._flow(inputs[index])
        logits = _replay(node, inputs, index, output, flow.logits)
        kept = len(output.shape) == len(flow.natural.shape)
        self._flows[id(output)] = _Flow(
            flow.softmax,
            weakref.ref(output),
            logits,
            output if kept else flow.natural,
            logits if kept else flow.natural_logits,
        )

    def _on_product(self, node: OpNode, inputs: tuple, outputs: tuple, hits: list[int]) -> None:
        """Record the attention if the product sums a softmax's result over its keys."""
        if len(inputs) != 2:
            return
        axes = product_axes(node, (len(inputs[0].shape), len(inputs[1].shape)))
        for index in hits:
            flow = self._flow(inputs[index])
            roles = output_roles(axes, index, flow.spans) if axes else None
            if roles is not None:
                self.used.add(flow.softmax.seq)
                captured = self._capture(node, inputs, axes, roles, flow)
                if captured.owner is not None:
                    onward = Onward(np.asarray(outputs[0]), axes, roles, captured.owner.scope)
                    captured = dataclasses.replace(captured, onward=onward)
                    self._onward[id(outputs[0])] = (weakref.ref(outputs[0]), onward)
                self.found.append(captured)
                done = flow.softmax
                self._flows = {k: f for k, f in self._flows.items() if f.softmax is not done}
                self._pairs.pop(node.seq, None)
                return

    def _capture(
        self, node: OpNode, inputs: tuple, axes: ProductAxes, roles: Roles, flow: _Flow
    ) -> Captured:
        """The arrays of one attention, from the product A·V and the walk back to Q·Kᵀ."""
        natural = np.asarray(flow.natural)
        weights = _by_heads(natural, flow.spans)  # (B, H, T, S)
        _, heads, t, s = weights.shape
        logits = None if flow.natural_logits is None else np.asarray(flow.natural_logits)
        consumed = inputs[roles.first].shape
        sizes = tuple(consumed[axes.inputs[roles.first].index(c)] for c in roles.batch)
        value = canonical(np.asarray(inputs[roles.second]), axes.inputs[roles.second],
                          roles.batch, roles.cols, sizes)  # fmt: skip
        sources = {"value": (node, roles.second)}
        query = key = key_heads = None
        found = _score_product(self.trace, flow, self._pairs, self._perms)
        if found is None:
            sources["scores"] = (flow.softmax, 0)  # not a product (e.g. additive scores)
        else:
            product, score_axes, score, score_sizes = found
            operands = [np.asarray(x) for x in self._pairs.pop(product.seq)]
            lay = lambda i, seq: canonical(  # noqa: E731
                operands[i], score_axes.inputs[i], score.batch, seq, score_sizes
            )
            query = fit_heads(lay(score.first, score.rows), heads, t)
            key = fit_heads(lay(score.second, score.cols), heads, s)
            key_heads = _heads_of(operands[score.second], score_axes.inputs[score.second], score)
            sources |= {"query": (product, score.first), "key": (product, score.second)}
        return Captured(
            seq=node.seq,
            weights=weights,
            logits=None
            if logits is None or logits.shape != natural.shape
            else _by_heads(logits, flow.spans),
            query=query,
            key=key,
            value=fit_heads(value, heads, s),
            key_heads=key_heads,
            owner=find_owner(self.trace, layer_scopes(node.scopes), sources),
        )

    def unmatched_softmaxes(self) -> list[tuple[OpNode, tuple]]:
        """The softmaxes of rank >= 3 whose result never weighed values, with their shapes."""
        return [(node, shape) for node, shape in self.softmaxes if node.seq not in self.used]


def _by_heads(array: np.ndarray, spans: int = 1) -> np.ndarray:
    """`(B, …, T, S)` as `(B, H, T, S)`: the axes between the first and the last two are heads
    (none: one head). With `spans` axes each for T and S, each is flattened, in order."""
    t, s = (math.prod(array.shape[-2 * spans : -spans]), math.prod(array.shape[-spans:]))
    return array.reshape(array.shape[0], -1, t, s).astype(np.float32, copy=False)


def _replay(node: OpNode, inputs: tuple, index: int, output: Any, logits: Any) -> Any:
    """`logits` put through the change of shape `node` made to its input `index` (the weights):
    unchanged for ops that keep the shape; None once that cannot be followed."""
    import tensorflow as tf

    if logits is None or tuple(output.shape) == tuple(inputs[index].shape):
        return logits
    try:
        if node.op_type in ("Reshape", "ExpandDims", "Squeeze"):
            return tf.reshape(logits, tf.shape(output))
        if node.op_type == "Transpose":
            return tf.transpose(logits, inputs[1])
        if node.op_type == "Slice":
            return tf.slice(logits, inputs[1], inputs[2])
        if node.op_type == "StridedSlice":
            masks = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
            flags = {m: node.attr(m, 0) for m in masks}
            return tf.strided_slice(logits, inputs[1], inputs[2], inputs[3], **flags)
    except (ValueError, TypeError, tf.errors.OpError):
        return None
    return None  # a broadcasting multiply or where: the logits no longer line up


def _score_product(trace: OpTrace, flow: _Flow, pairs: dict, perms: dict):
    """Walk back from the softmax's input to the product Q·Kᵀ that made its scores:
    `(op, axes, roles, batch sizes)`, or None (see the module doc for which products count).
    The walk follows where the logits' T and S axes were (tuples of negative axis numbers)."""
    k = flow.spans
    t0, s0 = tuple(range(-2 * k, -k)), tuple(range(-k, 0))
    found, seen, frontier = [], set(), [(flow.softmax, 0, t0, s0)]
    while frontier and len(seen) < WALK_OPS:
        consumer, index, t, s = frontier.pop(0)
        producer = trace.producer(consumer, index)
        if producer is None or producer.seq in seen:
            continue
        seen.add(producer.seq)
        if producer.op_type in PRODUCTS and producer.seq in pairs:
            found.append(_as_scores(producer, pairs[producer.seq], t, s))
        elif producer.op_type == "Transpose" and producer.seq in perms:
            perm = perms[producer.seq]
            t, s = (tuple(perm[i] - len(perm) for i in axes) for axes in (t, s))
            frontier.append((producer, 0, t, s))
        elif producer.op_type in TO_SCORES:
            frontier += [(producer, i, t, s) for i in range(len(producer.input_ids))]
    found = [f for f in found if f is not None]
    return min(found, key=lambda f: f[0].seq) if found else None  # the first: content scores


def _as_scores(product: OpNode, operands: tuple, t: tuple, s: tuple):
    """`(op, axes, roles, batch sizes)` if `product` of two activations `operands` made the
    scores, its output axes `t` and `s` (negative numbers) being T and S; else None."""
    axes = product_axes(product, (len(operands[0].shape), len(operands[1].shape)))
    if axes is None or -min(t + s) > len(axes.output):
        return None
    letters = lambda these: "".join(axes.output[i] for i in these)  # noqa: E731
    roles = score_roles(axes, letters(t), letters(s))
    if roles is None:
        return None
    return product, axes, roles, tuple(_size(c, axes, operands) for c in roles.batch)


def _heads_of(operand: np.ndarray, letters: str, roles: Roles) -> int:
    """How many heads an operand has: the product of its batch axes after B (1 if it has none:
    one key head for every query head)."""
    return math.prod(operand.shape[letters.index(c)] for c in roles.batch[1:] if c in letters)


def _size(letter: str, axes: ProductAxes, operands: tuple) -> int:
    """The size of the output axis `letter` of a product (the largest, as it broadcasts)."""
    return max(
        x.shape[letters.index(letter)]
        for x, letters in zip(operands, axes.inputs, strict=True)
        if letter in letters
    )


def _is_parameter(trace: OpTrace, consumer: OpNode, index: int) -> bool:
    """Whether input `index` of `consumer` is a variable's value (maybe cast or reshaped)."""
    for _ in range(8):
        producer = trace.producer(consumer, index)
        if producer is None:
            return False
        if producer.op_type == "ReadVariableOp":
            return True
        if producer.op_type not in PARAMETER_CARRIERS:
            return False
        consumer, index = producer, 0
    return False
