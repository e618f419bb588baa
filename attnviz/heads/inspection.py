"""Inspect any Keras 3 model: every attention layer's weights from one run, in call order.

Shape letters: B batch, H heads, T queries, S keys, L attention calls stacked as layers.

`inspect(model, inputs)` finds every `keras.layers.MultiHeadAttention` in `model` (subclasses
too, nested in sub-models and sublayers at any depth), runs the model once at inference
(`training=False`) and returns the weights `(B, H, T, S)` each layer computed, by key, in the
order the layers were called. See `capture` for how the weights are read; the model is not
changed: its classes are never touched, each attention layer's own attributes are put back
after the run (also after an error), and the run happens in a `keras.StatelessScope`, so no
variable is assigned. On TensorFlow, `tf.function`s run eagerly during the call (and the
setting is put back), so no graph is traced with the recording in place.

Keys. A call is keyed by the layer's path from the model down, sublayer names joined by "/",
e.g. "decoder_layer_0/self_attention" (the model's own name is left out). A layer called more
than once in the run (a shared layer) appears once per call: its first call under the path,
the next ones under "path#1", "path#2", ...

Thread safety. `inspect` calls are serialised by a lock, but while one runs, the model's
attention layers are patched and (on TensorFlow) `tf.config.run_functions_eagerly` is on for the
whole process: do not call the same model from another thread meanwhile.

Inspecting a keras-hub preset you downloaded yourself. attnviz never downloads models, and the
hosted app does not accept model files (they can carry code). In a notebook, with `keras-hub`
installed and a preset directory on disk (e.g. unpacked from Kaggle or Hugging Face)::

    import keras_hub
    import numpy as np
    from attnviz.drawing.model_view import inspection_view
    from attnviz.heads import attention_rollout, head_summaries, inspect

    path = "/data/presets/bert_tiny_en_uncased"  # a local directory: nothing is downloaded
    backbone = keras_hub.models.BertBackbone.from_preset(path)
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor.from_preset(
        path, sequence_length=16  # pad to 16 tokens, not the default 512
    )
    features = preprocessor(["The cat sat on the mat."])  # token_ids, segment_ids, padding_mask
    result = inspect(backbone, features)
    result.keys()  # ("transformer_layer_0/self_attention_layer", ...)
    tokens = preprocessor.tokenizer.id_to_token  # to label the rows and columns
    labels = [tokens(int(i)) for i in features["token_ids"][0]]
    inspection_view(result, row_labels=labels, col_labels=labels).show()
    stack = result.layer_stack("self", item=0)  # weights (L, H, T, T) of the first sentence
    real = np.asarray(features["padding_mask"][0]).astype(bool)  # (T,) True = real token
    head_summaries(stack.weights, mask=real)  # from attnviz.heads: what each head does
    attention_rollout(stack.weights).rollout  # (T, T): rollout through every layer

GPT-2 works the same with `keras_hub.models.GPT2Backbone` and `GPT2Preprocessor` (its keys are
"transformer_layer_<i>/self_attention").
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NoReturn

import keras
import numpy as np

from attnviz.core.checks import check_choice, check_int, describe
from attnviz.heads.capture import (
    CaptureError,
    RecordedCall,
    calls_without_weights,
    eager_functions,
    find_attention_layers,
    recording,
)

KINDS = ("self", "cross", "unknown")  # how a layer was called: query == value/key, or not
_LOCK = threading.Lock()  # one inspection at a time: the patches are per layer, not per thread
ERROR_CHARS = 600  # most characters of a Keras error message quoted in ours


@dataclass(frozen=True)
class AttentionCall:
    """One call of one attention layer during the inspected run."""

    key: str  # unique in the run: the path, plus "#n" for the layer's n-th repeated call
    path: str  # sublayer names from the model down, e.g. "decoder_layer_0/self_attention"
    name: str  # the layer's own name (not unique: every decoder layer has a "self_attention")
    call_index: int  # 0 for the layer's first call in the run, 1 for its second, ...
    kind: str  # "self" (query is also key and value), "cross", or "unknown"
    weights: np.ndarray  # (B, H, T, S) read-only float32 softmax weights, before dropout
    mask: np.ndarray | None  # (B, T, S) read-only bool, True = may attend; None = unmasked
    config: MappingProxyType  # read-only view of a copy of the layer's `get_config()`
    class_name: str  # the layer's class, e.g. "keras_hub...CachedMultiHeadAttention"
    # read-only "query" (B, T, Dq), "key" and "value" (B, S, ·) the layer was called with
    # (key = value if not given); empty if unknown
    inputs: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class LayerStack:
    """Some calls' weights for one sequence, stacked like layers (for summaries, rollout, views)."""

    keys: tuple[str, ...]  # the stacked calls, in call order
    weights: np.ndarray  # (L, H, T, S) float32 weights of sequence `item`
    masks: np.ndarray  # (L, T, S) bool, True = may attend (all True for an unmasked call)
    item: int  # which sequence of the batch


@dataclass(frozen=True)
class Inspection:
    """Every attention call of one run of a model, in call order."""

    calls: tuple[AttentionCall, ...]  # in the order the layers were called
    outputs: Any  # the model's outputs of this run, as numpy (see `inspect` on padding rows)

    def keys(self) -> tuple[str, ...]:
        """Every call's key, in call order."""
        return tuple(call.key for call in self.calls)

    @property
    def weights(self) -> MappingProxyType:
        """Read-only {key: weights `(B, H, T, S)`}, in call order."""
        return MappingProxyType({call.key: call.weights for call in self.calls})

    def __getitem__(self, key: str) -> AttentionCall:
        for call in self.calls:
            if call.key == key:
                return call
        raise KeyError(f"No attention call {key!r}. The calls are: {', '.join(self.keys())}.")

    def __len__(self) -> int:
        return len(self.calls)

    def layer_stack(
        self, kind: str | None = "self", *, keys: Sequence[str] | None = None, item: int = 0
    ) -> LayerStack:
        """Stack the weights of sequence `item` over the calls of one `kind` (or `keys`).

        Raises:
            ValueError: if no call matches, the calls' shapes differ, or `item` is not in the batch.
        """
        chosen = self._choose(kind, keys)
        shapes = {call.weights.shape for call in chosen}
        if len(shapes) != 1 or len(next(iter(shapes))) != 4:
            raise ValueError(
                "The chosen calls must share one (B, H, T, S) shape to be stacked. Received "
                f"shapes {[c.weights.shape for c in chosen]} for {[c.key for c in chosen]}. "
                "Pass `keys=` of calls over the same tokens."
            )
        batch, _, t, s = next(iter(shapes))
        item = check_int(item, "item", low=0, high=batch - 1)
        full = np.ones((t, s), dtype=bool)
        return LayerStack(
            keys=tuple(call.key for call in chosen),
            weights=np.stack([call.weights[item] for call in chosen]),  # L x (H, T, S)
            masks=np.stack([full if c.mask is None else c.mask[item] for c in chosen]),
            item=item,
        )

    def _choose(self, kind: str | None, keys: Sequence[str] | None) -> list[AttentionCall]:
        """The calls named by `keys`, else those of `kind` (every call if None)."""
        if isinstance(keys, str):
            keys = (keys,)
        if keys is not None:
            return [self[key] for key in keys] or self._none_chosen(kind, keys)
        if kind is not None:
            check_choice(kind, "kind", KINDS)
        chosen = [call for call in self.calls if kind is None or call.kind == kind]
        return chosen or self._none_chosen(kind, keys)

    def _none_chosen(self, kind: str | None, keys: Any) -> NoReturn:
        kinds = ", ".join(f"{c.key} ({c.kind})" for c in self.calls)
        raise ValueError(
            f"No attention call matches kind={kind!r}, keys={keys!r}. The calls are: {kinds}."
        )


def inspect(model: Any, inputs: Any, **call_kwargs: Any) -> Inspection:
    """Run `model` once on `inputs` and return every attention layer's weights.

    Args:
        model: a built Keras 3 model or layer containing `keras.layers.MultiHeadAttention`
            layers (or subclasses), at any depth.
        inputs: what `model(inputs)` takes: an array, a list or a dict of arrays.
        **call_kwargs: more arguments for the call, e.g. `padding_mask=...` for a subclassed
            model; `training` may only be False (the run is at inference).

    Returns:
        An `Inspection`: the calls in call order, each with its key, path, kind, weights
        `(B, H, T, S)`, mask `(B, T, S)` and config, and the model's outputs. The attention
        layers take Keras's explicit-softmax path (the one `return_attention_scores=True`
        takes), so the outputs equal a plain call's except in the rows of fully masked
        queries (padding), where Keras's fused kernel and its softmax give different rows.

    Raises:
        ValueError: if `model` is not a built Keras model or layer, holds no MultiHeadAttention,
            rejects `inputs` (Keras's message is quoted), or an attention layer did not hand over
            its weights.
    """
    layers = _check_model(model)
    _check_training(call_kwargs.pop("training", False))
    with _LOCK, recording(layers) as calls, eager_functions(), keras.StatelessScope():
        outputs = _run(model, inputs, call_kwargs)
    _check_recorded(calls, layers)
    return Inspection(calls=_as_calls(calls), outputs=_to_numpy_tree(outputs))


def _check_model(model: Any) -> list:
    """The model's attention layers; the model must be a built Keras layer that has some."""
    if not isinstance(model, keras.layers.Layer):
        raise ValueError(
            "`model` must be a Keras 3 model or layer (keras.Model, keras.layers.Layer). "
            f"Received: {describe(model)}. Load it with keras.saving.load_model or build it "
            "with keras.Model / keras.Sequential."
        )
    layers = find_attention_layers(model)
    if not layers:
        raise ValueError(
            "`model` holds no keras.layers.MultiHeadAttention layer (nor a subclass of it), so "
            f"there are no attention weights to read. Received: {type(model).__name__} "
            f"'{model.name}'. Other attention layers (keras.layers.Attention, custom "
            "ones) are not supported."
        )
    unbuilt = [found.path for found in layers if not found.layer.built]
    if not model.built or unbuilt:
        raise ValueError(
            f"`model` is not built: {', '.join(unbuilt) or model.name} has no weights yet, and "
            "running it would create new random ones. Received an unbuilt "
            f"{type(model).__name__}. Call it once on example inputs (or load its weights) first."
        )
    return layers


def _check_training(training: Any) -> None:
    """`training` may be passed only as False: the run is at inference, with no dropout."""
    if training is not False:
        raise ValueError(
            "`inspect` runs the model at inference, so `training` may only be False. "
            f"Received: training={describe(training)}. Training mode would apply dropout and "
            "update statistics."
        )


def _run(model: keras.layers.Layer, inputs: Any, call_kwargs: dict[str, Any]) -> Any:
    """`model(inputs, training=False, **call_kwargs)`, its errors turned into a ValueError."""
    try:
        return model(inputs, training=False, **call_kwargs)
    except CaptureError:
        raise
    except Exception as err:
        said = " ".join(str(err).split())
        said = said if len(said) <= ERROR_CHARS else said[: ERROR_CHARS - 1] + "…"
        raise ValueError(
            f"The model could not run on `inputs`. Keras said: {type(err).__name__}: {said} "
            f"Received inputs: {_describe_inputs(inputs)}. Give the inputs the model was "
            f"built for{_expected_inputs(model)}."
        ) from err


def _describe_inputs(inputs: Any) -> str:
    """Shapes and dtypes of a structure of arrays, e.g. "{'token_ids': (2, 8) int32}"."""

    def one(x: Any) -> str:
        return f"{tuple(x.shape)} {x.dtype}" if hasattr(x, "shape") else describe(x)

    try:
        return str(keras.tree.map_structure(one, inputs))
    except Exception:
        return describe(inputs)


def _expected_inputs(model: keras.layers.Layer) -> str:
    """For functional models, what they take (a hint for error messages); else ""."""
    try:
        listed = [f"{x.name} {tuple(x.shape)} {x.dtype}" for x in model.inputs]
    except (AttributeError, TypeError, ValueError):  # no symbolic inputs (subclassed models)
        return ""
    return f", as `model.inputs` lists: {listed}"


def _check_recorded(calls: list[RecordedCall], layers: list) -> None:
    """Every attention call handed over its weights, and at least one layer ran."""
    if not calls:
        paths = ", ".join(found.path for found in layers)
        raise ValueError(
            f"None of the model's attention layers ({paths}) ran on these inputs, so there "
            "are no weights to show. Check that `inputs` reach them (e.g. the branch of the "
            "model that uses attention)."
        )
    missing = calls_without_weights(calls)
    if missing:
        names = ", ".join(f"{c.found.path} ({type(c.found.layer).__name__})" for c in missing)
        raise ValueError(
            f"These attention layers ran without handing their weights to `call`: {names}. "
            "Their class computes attention its own way instead of through "
            "MultiHeadAttention._compute_attention; call such a layer directly with "
            "return_attention_scores=True if it supports it."
        )


def _as_calls(calls: list[RecordedCall]) -> tuple[AttentionCall, ...]:
    """The frozen, keyed calls of a run."""
    return tuple(
        AttentionCall(
            key=c.found.path if c.call_index == 0 else f"{c.found.path}#{c.call_index}",
            path=c.found.path,
            name=c.found.layer.name,
            call_index=c.call_index,
            kind=c.kind,
            weights=c.weights,
            mask=c.mask,
            config=MappingProxyType(c.config),
            class_name=f"{type(c.found.layer).__module__}.{type(c.found.layer).__qualname__}",
            inputs=MappingProxyType(c.inputs),
        )
        for c in calls
    )


def _to_numpy_tree(outputs: Any) -> Any:
    """The model's outputs with every tensor converted to a numpy array."""

    def one(x: Any) -> Any:
        return np.asarray(keras.ops.convert_to_numpy(x)) if keras.ops.is_tensor(x) else x

    return keras.tree.map_structure(one, outputs)
