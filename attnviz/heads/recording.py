"""Running a model once while the tape listens, and saying what it could not read.

The run is `model(inputs, training=False, **call_kwargs)` inside `tracing` (TensorFlow's op
callbacks for this thread only) and a `keras.StatelessScope` (this thread's variable writes
go to the scope, not to the model): the model, its layers and every other thread are left as
they were. Nothing is patched.

One case needs a process-wide switch. When the run executed a compiled `tf.function` whole
(a model whose `call` is decorated with it), its ops ran inside a graph the tape cannot see. The
run is then repeated once with `tf.config.run_functions_eagerly(True)`, under a lock, and the
setting is put back afterwards, also after an error. Other threads calling `tf.function`s
meanwhile run them eagerly too (same results, slower).

Unread attention. After the run, every layer that looks like attention (Keras's attention
layers, or a class named "…Attention…") and ran, but has no recorded attention in it or around
it, is named in a warning, and so is every softmax over keys (rank >= 3) inside such a layer
that never weighed values: linear attention, scores normalised another way, or attention
written with ops the tape does not follow.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import keras

from attnviz.heads.capture import AttentionTape
from attnviz.heads.owners import KEEP_OWNER
from attnviz.heads.tracing import OpTrace, layer_scopes, tracing

_EAGER_LOCK = threading.Lock()  # one process-wide eager rerun at a time


class CaptureError(ValueError):
    """The model ran but its attention could not be read."""


@dataclass(frozen=True)
class Run:
    """One traced run of a model."""

    tape: AttentionTape  # what was captured
    trace: OpTrace  # every op of the run
    outputs: Any  # the model's outputs
    rerun_eagerly: bool  # True if compiled functions forced the eager rerun


def record(model: keras.layers.Layer, inputs: Any, call_kwargs: dict) -> Run:
    """Run `model` on `inputs` once with the tape listening (see module doc).

    Raises:
        Whatever the model raises.
    """
    if keras.backend.backend() != "tensorflow":
        raise CaptureError(
            "`inspect` reads attention through TensorFlow's op callbacks, so the Keras "
            f"backend must be TensorFlow. Received backend: {keras.backend.backend()!r}. Set "
            "KERAS_BACKEND=tensorflow before importing Keras."
        )
    run = _traced(model, inputs, call_kwargs)
    if not run.trace.functions:
        return run
    with _EAGER_LOCK, _eager_functions():
        run = _traced(model, inputs, call_kwargs)
    return Run(run.tape, run.trace, run.outputs, rerun_eagerly=True)


def _traced(model: keras.layers.Layer, inputs: Any, call_kwargs: dict) -> Run:
    tape = AttentionTape()
    with tracing(tape) as trace, keras.StatelessScope():
        tape.trace = trace
        outputs = model(inputs, training=False, **call_kwargs)
    return Run(tape, trace, outputs, rerun_eagerly=False)


@contextlib.contextmanager
def _eager_functions() -> Iterator[None]:
    """Run `tf.function`s eagerly for the block, then restore the setting (process-wide)."""
    import tensorflow as tf

    before = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)
    try:
        yield
    finally:
        tf.config.run_functions_eagerly(before)


def unread(run: Run) -> list[str]:
    """Messages naming what looks like attention but was not recorded (see module doc)."""
    covered = [c.owner.chain for c in run.tape.found if c.owner is not None]
    messages = []
    for chain in _attention_like(run.trace):
        if not any(_nested(chain, c) or _nested(c, chain) for c in covered):
            layer = chain[-1].caller
            messages.append(
                f"'{_path(chain)}' ({type(layer).__name__}) ran, but no softmax over keys "
                "that weighs values was found in it: its weights are not in the result."
            )
    for node, shape in run.tape.unmatched_softmaxes():
        chain = layer_scopes(node.scopes)
        if any(_looks_like_attention(s.caller) for s in chain):
            messages.append(
                f"A softmax of shape {shape} in '{_path(chain)}' never weighed values (no "
                "product over its last axis followed), so it is not in the result."
            )
    return messages


def _attention_like(trace: OpTrace) -> list[tuple]:
    """The scope chains of every attention-like layer call of the run, outermost first."""
    chains = [layer_scopes(chain) for chain in trace.scopes.values()]
    return [c for c in chains if c and _looks_like_attention(c[-1].caller)]


def _looks_like_attention(layer: Any) -> bool:
    """Keras's attention layers, or a class named "…Attention…" (not "…AttentionMask…")."""
    name = type(layer).__name__.lower()
    return isinstance(layer, KEEP_OWNER) or ("attention" in name and "mask" not in name)


def _nested(inner: tuple, outer: tuple) -> bool:
    """Whether the call `inner` ran inside the call `outer` (or is it)."""
    return len(inner) >= len(outer) and all(a is b for a, b in zip(inner, outer, strict=False))


def _path(chain: tuple) -> str:
    return "/".join(s.name for s in chain[1:]) or chain[0].name
