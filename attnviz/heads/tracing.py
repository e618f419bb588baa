"""A trace of the TensorFlow ops one model run executes: which op made each tensor, in which
Keras layer call.

TensorFlow calls the functions given to `op_callbacks.add_op_callback` after every op it
executes eagerly, *in the thread that added them only* (they live in the eager context's
thread-local data), with the op's type, input and output tensors and attributes. Keras keeps,
also per thread, the stack of name scopes its layers open in `Layer.__call__`, each scope's
`caller` being the layer. `tracing(listener)` joins the two for the length of a `with` block:
every op becomes an `OpNode` (its inputs and the layer calls it ran in) kept in an `OpTrace`,
and is handed to `listener`. Nothing is patched and no process-wide setting is changed: other
threads, and this thread after the block, run exactly as before.

Tensors are identified by `id()` and a weak reference. An id is reused as soon as its tensor is
freed (a layer's local scores often are, right after the next op), but CPython hands out one
weak reference object per live object: the op that made a tensor stored the same reference
object as the op that consumed it, while a later tensor with that id gets a new one. So
`producer` is exact, and the trace keeps no tensor alive; a walk back from an op can still read
the tensors the layers' code holds.

`tensorflow.python.framework.op_callbacks` is TensorFlow's internal module behind
`tf.debugging.enable_check_numerics`; attnviz pins TensorFlow, and tests/heads check it works.
Ops inside a `tf.function` that runs from a cached graph are not seen one by one: the run sees
one op named after the function (`OpTrace.functions` lists them).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import keras
from keras.src.backend.common import global_state

FUNCTION_PREFIXES = ("__inference_", "__forward_", "__backward_")  # ops that run a whole graph


class OpNode(NamedTuple):
    """One op the run executed (a NamedTuple: built for every op, so it must be cheap)."""

    seq: int  # the op's place in the run: 1 for the first op, 2 for the next, ...
    op_type: str  # e.g. "Einsum", "Softmax", "ReadVariableOp"
    input_ids: tuple[int, ...]  # `id()` of each input tensor, in the op's order
    input_refs: tuple[weakref.ref, ...]  # a weak reference to each input tensor
    scopes: tuple  # Keras name scopes open when it ran, outermost first (`.caller` = layer)
    attrs: tuple  # the op's attributes as TensorFlow gives them: ("name", value, ...)

    def input(self, index: int) -> Any:
        """Input `index` if it is still alive, else None."""
        return self.input_refs[index]()

    def attr(self, name: str, default: Any = None) -> Any:
        """The attribute `name` (bytes decoded), or `default`."""
        for key, value in zip(self.attrs[0::2], self.attrs[1::2], strict=True):
            if key == name:
                return value.decode() if isinstance(value, bytes) else value
        return default


class OpTrace:
    """Every op of one run, by the ids of the tensors they made."""

    def __init__(self) -> None:
        self.seq = 0  # ops seen so far
        self.producers: dict[int, list] = {}  # id(tensor) -> [(op, weakref(tensor)), ...]
        self.functions: list[str] = []  # compiled graphs run whole (their ops unseen)
        self.traced_graphs = 0  # ops created while tracing a `tf.function` (not run here)
        self.scopes: dict[int, tuple] = {}  # id(scope) -> the scopes open down to it, for every
        # name scope an op ran in (a layer call's chain of callers)

    def producer(self, consumer: OpNode, index: int) -> OpNode | None:
        """The op that made input `index` of `consumer`, or None if no traced op made it (a
        model input, a constant, a variable's handle)."""
        ref = consumer.input_refs[index]
        for node, made in self.producers.get(consumer.input_ids[index], ()):
            if made is ref:
                return node
        return None


def layer_scopes(scopes: tuple) -> tuple:
    """The scopes of `scopes` that layers opened (Keras opens others, e.g. for optimizers)."""
    return tuple(s for s in scopes if isinstance(getattr(s, "caller", None), keras.layers.Layer))


@contextlib.contextmanager
def tracing(listener: Callable[[OpNode, tuple, tuple], None]) -> Iterator[OpTrace]:
    """Trace this thread's eager ops until the block ends, calling `listener(node, inputs,
    outputs)` after each (see module doc). The callback is removed also after an error."""
    from tensorflow.python.framework import op_callbacks  # imported here: TensorFlow only

    trace = OpTrace()
    busy = [False]  # True while `listener` runs: ops it executes itself are not traced

    def callback(op_type, inputs, attrs, outputs, op_name=None, graph=None):
        if busy[0]:
            return None
        if graph is not None:  # an op created while tracing a graph, not run
            trace.traced_graphs += 1
            return None
        op_type = op_type.decode() if isinstance(op_type, bytes) else op_type
        if op_type.startswith(FUNCTION_PREFIXES):
            trace.functions.append(op_type)
        trace.seq += 1
        stack = global_state.get_global_attribute("name_scope_stack")
        if stack and id(stack[-1]) not in trace.scopes:
            trace.scopes.update((id(s), tuple(stack[: i + 1])) for i, s in enumerate(stack))
        node = OpNode(
            trace.seq,
            op_type,
            tuple(map(id, inputs)),
            tuple(map(weakref.ref, inputs)),
            tuple(stack) if stack else (),
            tuple(attrs) if attrs else (),
        )
        for output in outputs:
            trace.producers.setdefault(id(output), []).append((node, weakref.ref(output)))
        busy[0] = True
        try:
            listener(node, inputs, outputs)
        finally:
            busy[0] = False
        return None

    op_callbacks.add_op_callback(callback)
    try:
        yield trace
    finally:
        op_callbacks.remove_op_callback(callback)
