"""Finding a Keras model's attention layers and recording the weights they compute in one run.

Shape letters: B batch, H heads, T queries, S keys.

How the weights are read without changing the model. Keras's `MultiHeadAttention.call`
projects query, key and value and hands them to `self._compute_attention(...)`, which returns
`(output, weights)`; subclasses such as keras_hub's `CachedMultiHeadAttention` call it too.
Asked for `return_attention_scores=True` it takes its explicit softmax path and returns the
weights (the fused `dot_product_attention` path returns None). For the length of one
`recording`, every attention layer found gets two *instance* attributes that shadow its class's
methods:

- `call`: notes that the layer was called (in call order) and whether as self-attention (the
  query is also the value and key) or cross-attention, then runs the original `call`;
- `_compute_attention`: runs the original with `return_attention_scores=True`, keeps a numpy
  copy of the weights `(B, H, T, S)` and of the mask the layer applied `(B, T, S)`, and returns
  what the original returned.

A layer built with `flash_attention=True` cannot return weights; its `_flash_attention` is
turned off for the run. Classes are never touched. On exit, also after an error, each layer's
`__dict__` entries are put back exactly as they were. Not thread-safe: another thread calling
the same layers during a recording would be recorded too (see `inspection.inspect`).

`eager_functions` makes TensorFlow run `tf.function`s eagerly during the run (and restores the
setting): a model whose `call` is a `tf.function` then runs the patched methods instead of a
graph traced before, and no graph is traced, and cached, with the patches in place.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect as pyinspect
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import keras
import numpy as np

from attnviz.core.checks import read_only
from attnviz.core.masks import causal_mask

PATCHED = ("call", "_compute_attention", "_flash_attention")  # instance attributes set here


class CaptureError(ValueError):
    """An attention layer ran but its weights could not be read."""


@dataclass(frozen=True)
class FoundLayer:
    """One attention layer of a model."""

    path: str  # sublayer names from the model down, e.g. "decoder_layer_0/self_attention"
    layer: keras.layers.MultiHeadAttention  # the layer itself


@dataclass
class RecordedCall:
    """One call of an attention layer, filled in while the model runs."""

    found: FoundLayer  # which layer
    call_index: int  # 0 for the layer's first call in this run, 1 for the second, ...
    kind: str  # "self", "cross", or "unknown" (a call signature without query/value)
    weights: np.ndarray | None = None  # (B, H, T, S) float32, once `_compute_attention` ran
    mask: np.ndarray | None = None  # (B, T, S) bool, True = may attend; None = no mask
    config: dict[str, Any] = field(default_factory=dict)  # the layer's `get_config()`
    inputs: dict[str, np.ndarray] = field(default_factory=dict)  # "query" (B, T, Dq), "key",
    # "value" (B, S, ·) as the call got them (key = value when not given); {} if unreadable


def find_attention_layers(model: keras.layers.Layer) -> list[FoundLayer]:
    """Every `keras.layers.MultiHeadAttention` (or subclass) in `model`, at any depth.

    Depth-first, in the order Keras tracks sublayers; a layer shared by two parents is listed
    once, under its first path. The model itself counts if it is an attention layer.
    """
    if isinstance(model, keras.layers.MultiHeadAttention):
        return [FoundLayer(model.name, model)]
    found: list[FoundLayer] = []
    _walk(model, "", found, {id(model)})
    return found


def _walk(layer: keras.layers.Layer, prefix: str, found: list[FoundLayer], seen: set[int]):
    """Append the attention layers below `layer` to `found`, depth first."""
    for sub in layer._flatten_layers(include_self=False, recursive=False):
        if id(sub) in seen:
            continue
        seen.add(id(sub))
        path = f"{prefix}/{sub.name}" if prefix else sub.name
        if isinstance(sub, keras.layers.MultiHeadAttention):
            found.append(FoundLayer(path, sub))
        _walk(sub, path, found, seen)


@contextlib.contextmanager
def recording(layers: list[FoundLayer]) -> Iterator[list[RecordedCall]]:
    """Patch `layers` (see module doc) and yield the list their calls are recorded into."""
    calls: list[RecordedCall] = []
    saved = [_saved_attributes(found.layer) for found in layers]
    try:
        for found in layers:
            _patch(found, calls)
        yield calls
    finally:
        for found, attributes in zip(layers, saved, strict=True):
            _restore(found.layer, attributes)


def _saved_attributes(layer: keras.layers.Layer) -> dict[str, Any]:
    """The layer's own `__dict__` entries that `_patch` may replace (absent ones left out)."""
    return {name: vars(layer)[name] for name in PATCHED if name in vars(layer)}


def _restore(layer: keras.layers.Layer, saved: dict[str, Any]) -> None:
    """Put the patched `__dict__` entries back as they were (bypassing Keras's tracking)."""
    for name in PATCHED:
        if name in saved:
            object.__setattr__(layer, name, saved[name])
        else:
            vars(layer).pop(name, None)


def _patch(found: FoundLayer, calls: list[RecordedCall]) -> None:
    """Shadow the layer's `call` and `_compute_attention` with recording wrappers."""
    layer = found.layer
    open_calls: list[RecordedCall] = []  # this layer's calls still running (innermost last)
    original_call, original_compute = layer.call, layer._compute_attention
    call_signature = pyinspect.signature(original_call)
    compute_signature = pyinspect.signature(original_compute)

    @functools.wraps(original_call)
    def call(*args: Any, **kwargs: Any) -> Any:
        record = _new_record(found, calls, _call_kind(call_signature, args, kwargs))
        record.inputs = _call_inputs(call_signature, args, kwargs)
        open_calls.append(record)
        try:
            return original_call(*args, **kwargs)
        finally:
            open_calls.pop()

    @functools.wraps(original_compute)
    def compute_attention(*args: Any, **kwargs: Any) -> Any:
        bound = compute_signature.bind(*args, **kwargs)
        if "return_attention_scores" in compute_signature.parameters:
            bound.arguments["return_attention_scores"] = True
        result = original_compute(*bound.args, **bound.kwargs)
        record = open_calls[-1] if open_calls else None
        if record is None or record.weights is not None:  # called outside, or twice, in `call`
            record = _new_record(found, calls, "unknown")
        _fill_record(record, result, bound.arguments)
        return result

    object.__setattr__(layer, "call", call)  # plain instance attributes: no Keras tracking
    object.__setattr__(layer, "_compute_attention", compute_attention)
    if getattr(layer, "_flash_attention", False):
        object.__setattr__(layer, "_flash_attention", False)  # flash kernels hide the weights


def _new_record(found: FoundLayer, calls: list[RecordedCall], kind: str) -> RecordedCall:
    """Append and return a new record of `found`'s next call."""
    index = sum(1 for c in calls if c.found.layer is found.layer)
    record = RecordedCall(found, index, kind, config=copy.deepcopy(found.layer.get_config()))
    calls.append(record)
    return record


def _call_kind(signature: pyinspect.Signature, args: tuple, kwargs: dict) -> str:
    """The call's kind: "self" if the query is also the value (and key), else "cross"
    ("unknown" if the signature names no query and value)."""
    try:
        arguments = signature.bind(*args, **kwargs).arguments
    except TypeError:
        return "unknown"
    if "query" not in arguments or "value" not in arguments:
        return "unknown"
    query, value, key = arguments["query"], arguments["value"], arguments.get("key")
    same = _same_tensor(query, value) and (key is None or _same_tensor(query, key))
    return "self" if same else "cross"


def _call_inputs(signature: pyinspect.Signature, args: tuple, kwargs: dict) -> dict:
    """Read-only numpy copies of the call's query, key and value (key = value if not given),
    so a head can be recomputed from them; {} if the signature or the tensors do not allow it."""
    try:
        arguments = signature.bind(*args, **kwargs).arguments
        query, value = arguments["query"], arguments["value"]
        key = arguments.get("key")
        tensors = {"query": query, "key": value if key is None else key, "value": value}
        return {
            name: _read_only(np.asarray(keras.ops.convert_to_numpy(x)))
            for name, x in tensors.items()
        }
    except Exception:  # symbolic tensors, another signature: the weights are still recorded
        return {}


def _same_tensor(a: Any, b: Any) -> bool:
    """The same tensor, or (after a dtype cast made a copy) equal shapes and values."""
    if a is b:
        return True
    try:
        return bool(np.array_equal(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b)))
    except Exception:  # symbolic tensors, or something that is not an array
        return False


def _fill_record(record: RecordedCall, result: Any, arguments: dict[str, Any]) -> None:
    """Keep numpy copies of the weights in `result` and of the mask in `arguments`."""
    if not (isinstance(result, (tuple, list)) and len(result) == 2) or result[1] is None:
        return  # reported after the run: the layer gave no weights
    weights = _to_numpy(result[1], record.found).astype(np.float32, copy=False)
    record.weights = _read_only(weights)
    record.mask = _effective_mask(arguments, weights.shape, record.found)


def _effective_mask(arguments: dict[str, Any], shape: tuple, found: FoundLayer):
    """The `(B, T, S)` bool mask `_compute_attention` applied (causal included), or None."""
    given, causal = arguments.get("attention_mask"), arguments.get("use_causal_mask", False)
    if len(shape) != 4 or (given is None and not causal):
        return None
    b, _, t, s = shape
    mask = np.ones((b, t, s), dtype=bool)
    if given is not None:
        try:
            mask &= np.broadcast_to(_to_numpy(given, found).astype(bool), (b, t, s))
        except ValueError:
            return None  # a mask of an unusual shape: the weights still show its effect
    if causal is True:
        mask &= causal_mask(t, s)  # (B, T, S) & (T, S): Keras's look-ahead mask, j <= i
    return _read_only(mask)


def _to_numpy(tensor: Any, found: FoundLayer) -> np.ndarray:
    """An eager tensor as numpy; symbolic ones (inside a compiled graph) cannot be read."""
    try:
        return np.asarray(keras.ops.convert_to_numpy(tensor))
    except Exception as err:
        raise CaptureError(
            f"The attention layer '{found.path}' ran inside a compiled graph, where its weights "
            "are symbolic and cannot be read. inspect runs the model eagerly; if the model "
            "compiles its own `call` (e.g. with jax.jit), call an uncompiled copy."
        ) from err


def _read_only(array: np.ndarray) -> np.ndarray:
    """A read-only copy (the tensor's buffer may be reused by the backend)."""
    return read_only(np.array(array))


def calls_without_weights(calls: list[RecordedCall]) -> list[RecordedCall]:
    """The recorded calls whose layer never handed over its weights."""
    return [c for c in calls if c.weights is None]


@contextlib.contextmanager
def eager_functions() -> Iterator[None]:
    """On TensorFlow, run `tf.function`s eagerly for the call, then restore the setting."""
    if keras.backend.backend() != "tensorflow":
        yield
        return
    import tensorflow as tf

    before = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)
    try:
        yield
    finally:
        tf.config.run_functions_eagerly(before)
