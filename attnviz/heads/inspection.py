"""Inspect any Keras 3 model: every attention it computes in one run, in call order.

Shape letters: B batch, H heads, T queries, S keys, Dk and Dv features per head, L attention
calls stacked as layers.

`inspect(model, inputs)` runs the model once at inference and records every attention it
computes, whatever layer computes it: Keras's `MultiHeadAttention`, `GroupQueryAttention`,
`Attention` (Luong) and `AdditiveAttention` (Bahdanau), keras-hub's attention layers, and layers
written by hand. One general mechanism reads them all (see `capture`): an attention is a softmax
over keys whose result weighs values; TensorFlow reports every op the run executes (to this
thread only), and wherever a product sums a softmax's result over its last axis, the weights
`(B, H, T, S)`, the logits, the values and (walking back to the scores) the queries and keys are
kept. Nothing is patched, no class or layer is touched, variables are not written
(`keras.StatelessScope`), no process-wide setting changes (but see `recording` for models whose
`call` is a compiled `tf.function`): a model shared by threads can be inspected while they use it.

Per call the result says how the weights were made: the mask the layer applied (read from its
logits, `readout`), the layer's position scheme (`positions`: RoPE, ALiBi slopes, T5 buckets,
...), for grouped-query attention which key/value head each query head shares, and remarks
(sliding window, soft-capping, sink logits, reduced keys, windows), and whether what was recorded
reproduces what the layer returned in the same run (`verified`, see `verification`). What
looks like attention but could not be read is named in an `InspectionWarning` and in
`Inspection.warnings`: no attention is dropped silently.

Keys. A call is keyed by the path of layer calls from the model down, names joined by "/", e.g.
"decoder_layer_0/self_attention" (the model's own name left out). A layer that attends more than
once in the run (a shared layer) appears once per attention: "path", then "path#1", ...

Inspecting a keras-hub preset you downloaded yourself (attnviz never downloads models, and the
hosted app does not accept model files: they can carry code). With `keras-hub` installed
(`pip install "attnviz[hub]"`) and a preset directory on disk::

    import keras_hub
    from attnviz.drawing.model_view import inspection_view
    from attnviz.heads import inspect

    path = "/data/presets/bert_tiny_en_uncased"  # a local directory: nothing is downloaded
    backbone = keras_hub.models.BertBackbone.from_preset(path)
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor.from_preset(
        path, sequence_length=16  # pad to 16 tokens, not the default 512
    )
    features = preprocessor(["The cat sat on the mat."])  # token_ids, segment_ids, padding_mask
    result = inspect(backbone, features)
    labels = [preprocessor.tokenizer.id_to_token(int(i)) for i in features["token_ids"][0]]
    inspection_view(result, row_labels=labels, col_labels=labels).show()
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NoReturn

import keras
import numpy as np

from attnviz.core.checks import read_only
from attnviz.heads.calls import AttentionCall, AttentionCalls
from attnviz.heads.capture import Captured
from attnviz.heads.readout import read_out
from attnviz.heads.recording import CaptureError, record, unread
from attnviz.heads.running import check_model, check_training, model_batch, run_model
from attnviz.heads.verification import verify


class InspectionWarning(UserWarning):
    """Something in the run looks like attention but could not be read."""


@dataclass(frozen=True)
class Inspection(AttentionCalls):
    """Every attention of one run of a model, in call order (`AttentionCalls`), with the
    model's outputs and what could not be read."""

    outputs: Any  # the model's outputs of this run, as numpy
    warnings: tuple[str, ...] = ()  # what looked like attention but could not be read


def inspect(model: Any, inputs: Any, **call_kwargs: Any) -> Inspection:
    """Run `model` once on `inputs` and return every attention it computes.

    Args:
        model: a built Keras 3 model or layer (TensorFlow backend).
        inputs: what `model(inputs)` takes: an array, a list or a dict of arrays.
        **call_kwargs: more arguments for the call, e.g. `padding_mask=...` for a subclassed
            model; `training` may only be False (the run is at inference).

    Returns:
        An `Inspection`: the calls in the order they ran, each with its key, kind, weights
        `(B, H, T, S)`, mask, logits, query/key/value heads, position scheme and config; the
        model's outputs (exactly a plain call's); and warnings about what could not be read.

    Raises:
        ValueError: if `model` is not a built Keras model or layer, rejects `inputs` (Keras's
            message is quoted), or computes no attention on them.
    """
    check_model(model)
    check_training(call_kwargs.pop("training", False))
    run = run_model(lambda: record(model, inputs, call_kwargs), model, inputs)
    if not run.tape.found:
        _no_attention(model, unread(run))
    messages = tuple(unread(run))
    for message in messages:
        warnings.warn(message, InspectionWarning, stacklevel=2)
    batch = model_batch(inputs)
    return Inspection(
        calls=_as_calls(run.tape.found, batch),
        outputs=_to_numpy_tree(run.outputs),
        warnings=messages,
    )


def _no_attention(model: keras.layers.Layer, messages: list[str]) -> NoReturn:
    """Raise: the run computed no attention (saying which attention layers did not run)."""
    idle = [
        layer.name
        for layer in model._flatten_layers(include_self=True, recursive=True)
        if "attention" in type(layer).__name__.lower()
    ]
    said = f" Its attention layers ({', '.join(idle)}) did not run on these inputs." if idle else ""
    raise CaptureError(
        "`model` computed no attention on these inputs: no softmax over keys weighed values "
        f"in its run.{said}{' ' + ' '.join(messages) if messages else ''} Received: "
        f"{type(model).__name__} '{model.name}'. Check that `inputs` reach its attention."
    )


def _as_calls(found: list[Captured], batch: int | None) -> tuple[AttentionCall, ...]:
    """The frozen, keyed calls of a run."""
    calls, counts, kinds = [], {}, {}
    for captured in found:
        owner = captured.owner
        index = counts.get(id(owner.layer), 0)
        counts[id(owner.layer)] = index + 1
        kinds[owner.kind] = kinds.get(owner.kind, -1) + 1  # its row when stacked by kind
        out = read_out(captured, batch)
        layer = owner.layer
        calls.append(
            AttentionCall(
                key=owner.path if index == 0 else f"{owner.path}#{index}",
                path=owner.path,
                name=layer.name,
                call_index=index,
                kind=owner.kind,
                layer=kinds[owner.kind],
                weights=_frozen(out.weights),
                mask=_frozen(out.mask),
                config=MappingProxyType(_config(layer)),
                class_name=f"{type(layer).__module__}.{type(layer).__qualname__}",
                inputs=MappingProxyType(owner.inputs),
                logits=_frozen(out.logits),
                query_heads=_frozen(out.query_heads),
                key_heads=_frozen(out.key_heads),
                value_heads=_frozen(out.value_heads),
                kv_heads=out.kv_heads,
                head_mask=_frozen(out.head_mask),
                position=out.position,
                fold=out.fold,
                notes=out.notes,
                verified=verify(out.weights, out.value_heads, captured.onward),
            )
        )
    return tuple(calls)


def _frozen(array: np.ndarray | None) -> np.ndarray | None:
    """`array` made read-only (None stays None). No copy: each array is either new or a view of
    a TensorFlow tensor's buffer, which numpy keeps alive and TensorFlow never writes again."""
    return None if array is None else read_only(array)


def _config(layer: keras.layers.Layer) -> dict:
    """A copy of the layer's config ({} if it cannot give one)."""
    try:
        return copy.deepcopy(layer.get_config())
    except (NotImplementedError, TypeError, ValueError, AttributeError):
        return {}


def _to_numpy_tree(outputs: Any) -> Any:
    """The model's outputs with every tensor converted to a numpy array."""

    def one(x: Any) -> Any:
        return np.asarray(keras.ops.convert_to_numpy(x)) if keras.ops.is_tensor(x) else x

    return keras.tree.map_structure(one, outputs)
