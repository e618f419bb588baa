"""The checks around one inspected run: a built Keras model, inference only, and Keras's own
error, quoted, when the model rejects its inputs.

Shape letters: B batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import keras

from attnviz.core.checks import describe
from attnviz.heads.recording import CaptureError

ERROR_CHARS = 600  # most characters of a Keras error message quoted in ours
Result = TypeVar("Result")


def check_model(model: Any) -> None:
    """`model` must be a built Keras layer (a model is one)."""
    if not isinstance(model, keras.layers.Layer):
        raise ValueError(
            "`model` must be a Keras 3 model or layer (keras.Model, keras.layers.Layer). "
            f"Received: {describe(model)}. Load it with keras.saving.load_model or build it "
            "with keras.Model / keras.Sequential."
        )
    if not model.built:
        raise ValueError(
            f"`model` is not built: {model.name} has no weights yet, and running it would "
            f"create new random ones. Received an unbuilt {type(model).__name__}. Call it once "
            "on example inputs (or load its weights) first."
        )


def check_training(training: Any) -> None:
    """`training` may be passed only as False: the run is at inference, with no dropout."""
    if training is not False:
        raise ValueError(
            "`inspect` runs the model at inference, so `training` may only be False. "
            f"Received: training={describe(training)}. Training mode would apply dropout and "
            "update statistics."
        )


def model_batch(inputs: Any) -> int | None:
    """B: the leading size of the first array in `inputs` (None if there is none)."""
    for leaf in keras.tree.flatten(inputs):
        shape = getattr(leaf, "shape", None)
        if shape is not None and len(shape) > 0 and shape[0] is not None:
            return int(shape[0])
    return None


def run_model(run: Callable[[], Result], model: keras.layers.Layer, inputs: Any) -> Result:
    """`run()`, a model's errors turned into a ValueError that quotes Keras."""
    try:
        return run()
    except CaptureError:
        raise
    except Exception as err:
        said = " ".join(str(err).split())
        said = said if len(said) <= ERROR_CHARS else said[: ERROR_CHARS - 1] + "…"
        hint = _hint(said.lower())
        raise ValueError(
            f"The model could not run on `inputs`. Keras said: {type(err).__name__}: {said} "
            f"Received inputs: {_describe_inputs(inputs)}. Give the inputs the model was "
            f"built for{_expected_inputs(model)}.{hint}"
        ) from err


def _hint(said: str) -> str:
    """What to do about two errors Keras words in its own terms ("" for others)."""
    if "flash attention" in said:
        return (" A layer built with flash_attention=True cannot run on TensorFlow: rebuild it "
                "with flash_attention=False (same weights).")  # fmt: skip
    if "stateless scope" in said:
        return (" A layer of the model is not built yet (its first call would create random "
                "weights, which inspect does not allow): call the model once first.")  # fmt: skip
    return ""


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
