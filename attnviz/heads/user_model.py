"""Your own model: load the Keras model a person chose, for `attnviz view MODEL` and the app's
"Your model" page. Loading only; text becomes the model's inputs in `model_text`.

Shape letters: B batch, T tokens, V vocabulary.

`load_model(source)` takes:

- a `.keras` file, loaded with `keras.saving.load_model(path, safe_mode=True)`: a Lambda layer
  holding Python code is refused, nothing is unpickled. Only Keras's own classes and, when
  keras-hub is installed, keras-hub's load (custom classes would need their code imported);
- a keras-hub preset folder (one holding `config.json`, as `save_to_preset` writes it), or a
  preset name keras-hub knows ("gpt2_base_en", "hf://…", "kaggle://…"), which keras-hub
  downloads when online and caches where it caches (attnviz itself never downloads anything).
  keras-hub loads the backbone and, if the preset has one, its tokenizer.

When keras-hub has a causal LM for the backbone (`GPT2Backbone` → `GPT2CausalLM`: the backbone
plus its token embedding used in reverse, no further weights), the model inspected is that
causal LM, so one run gives every attention and the next-token logits `(B, T, V)`.

keras-hub is optional at run time: `pip install "attnviz[hub]"`. It is imported only here, when
a preset (or a `.keras` file of a keras-hub model) is loaded.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnviz.core.checks import describe

PRESET_CONFIG = "config.json"  # the file that makes a folder a keras-hub preset
TOKENIZER_CONFIG = "tokenizer.json"  # a preset's tokenizer, when it has one
HUB_HINT = 'Install it with attnviz\'s `hub` extra: pip install "attnviz[hub]".'
ALLOWED = (
    "a .keras file (Keras 3's format), a keras-hub preset folder (holding config.json, as "
    "`save_to_preset` writes it) or a keras-hub preset name such as gpt2_base_en"
)


@dataclass(frozen=True)
class UserModel:
    """A model a person chose, ready to inspect."""

    model: Any  # the Keras model `inspect` runs: the causal LM when there is one, else the
    # backbone or the model of the .keras file
    tokenizer: Any | None  # keras-hub tokenizer that makes the tokens; None: typed token ids
    causal_lm: bool  # the model's outputs are next-token logits (B, T, V)
    vocabulary_size: int | None  # token ids must be below it (None: not known)
    max_tokens: int | None  # most tokens the model takes (its positions), None: not known
    source: str  # what was asked for: a path or a preset name
    description: str  # one line: what was loaded, from where

    @property
    def name(self) -> str:
        """What to call the model: its class, or its own name for a plain Keras model."""
        return model_name(self.model)


def load_model(source: str | os.PathLike) -> UserModel:
    """Load `source`: a `.keras` file, a keras-hub preset folder or a keras-hub preset name.

    Raises:
        ValueError: for no such file or folder, a file that is not a `.keras` file, a folder
            that is not a preset, a preset keras-hub cannot load, a missing keras-hub, or a file
            Keras refuses (its message is quoted).
    """
    if not isinstance(source, (str, os.PathLike)) or not str(os.fspath(source)).strip():
        raise ValueError(f"`source` must be {ALLOWED}. Received: {describe(source)}.")
    text = str(os.fspath(source)).strip()
    path = Path(text).expanduser()
    if path.is_file():
        if path.suffix != ".keras":
            raise ValueError(
                f"{text!r} is not a .keras file. attnviz opens {ALLOWED}. Save a Keras model "
                "with `model.save('name.keras')`."
            )
        return _load_keras_file(path)
    if path.is_dir():
        if not (path / PRESET_CONFIG).is_file():
            raise ValueError(
                f"The folder {text!r} is not a keras-hub preset: it has no {PRESET_CONFIG}. "
                f"attnviz opens {ALLOWED}. Write one with `model.save_to_preset(folder)`."
            )
        return _load_preset(str(path.resolve()), local=path.resolve())
    if looks_like_path(text):
        raise ValueError(
            f"No such file or folder: {text!r}. attnviz opens {ALLOWED}. Check the path."
        )
    return _load_preset(text, local=None)


def looks_like_path(text: str) -> bool:
    """Whether `text` names a file or folder rather than a keras-hub preset name ("gpt2_base_en",
    "hf://user/model", "kaggle://…")."""
    if re.match(r"^[a-z]+://", text):
        return False
    return text.endswith(".keras") or "/" in text or os.sep in text or text.startswith(("~", "."))


def keras_hub_module() -> Any:
    """keras-hub, imported on first use.

    Raises:
        ValueError: when it is not installed (with how to install it).
    """
    try:
        return importlib.import_module("keras_hub")
    except ImportError as err:
        raise ValueError(f"keras-hub is needed to open keras-hub presets. {HUB_HINT}") from err


def _load_keras_file(path: Path) -> UserModel:
    import keras

    with contextlib.suppress(ImportError):  # keras-hub's classes, registered on import: its
        importlib.import_module("keras_hub")  # models saved as .keras load too
    try:
        loaded = keras.saving.load_model(path, compile=False, safe_mode=True)
    except Exception as err:  # noqa: BLE001 - Keras raises many kinds; all become one message
        raise ValueError(
            f"Keras could not load {str(path)!r}: {type(err).__name__}: {err} A .keras file is "
            "loaded with safe_mode=True (Lambda layers holding Python code are refused) and "
            "only Keras's and keras-hub's own layers can be rebuilt."
        ) from None
    preprocessor = getattr(loaded, "preprocessor", None)
    tokenizer = getattr(preprocessor, "tokenizer", None)
    model, causal = _as_causal_lm(loaded)
    where = f"the .keras file {path}"
    return UserModel(model, tokenizer, causal, _vocabulary_size(model, tokenizer),
                     _max_tokens(model), str(path), _describe(model, tokenizer, where))  # fmt: skip


def _load_preset(name: str, local: Path | None) -> UserModel:
    hub = keras_hub_module()
    try:
        backbone = hub.models.Backbone.from_preset(name)
    except Exception as err:  # noqa: BLE001 - downloads, formats, missing classes...
        online = "" if local else " (a preset name is downloaded by keras-hub: it needs a network)"
        raise ValueError(
            f"keras-hub could not load the preset {name!r}{online}: {type(err).__name__}: {err}"
        ) from None
    tokenizer = _preset_tokenizer(hub, name, local)
    model, causal = _as_causal_lm(backbone)
    where = f"the keras-hub preset {name}"
    return UserModel(model, tokenizer, causal, _vocabulary_size(model, tokenizer),
                     _max_tokens(model), name, _describe(model, tokenizer, where))  # fmt: skip


def _preset_tokenizer(hub: Any, name: str, local: Path | None) -> Any | None:
    """The preset's tokenizer, or None when it has none (then the page takes token ids)."""
    if local is not None and not (local / TOKENIZER_CONFIG).is_file():
        return None
    try:
        return hub.tokenizers.Tokenizer.from_preset(name)
    except Exception as err:  # noqa: BLE001 - a missing or unreadable tokenizer
        if local is None:
            return None  # a named preset without a tokenizer
        raise ValueError(
            f"keras-hub could not load the tokenizer of the preset {name!r}: "
            f"{type(err).__name__}: {err}"
        ) from None


def _as_causal_lm(model: Any) -> tuple[Any, bool]:
    """`(model to inspect, is a causal LM)`: a keras-hub causal LM as it is; a keras-hub backbone
    inside its causal LM when keras-hub has one (`<Name>Backbone` → `<Name>CausalLM`)."""
    hub = sys.modules.get("keras_hub")  # imported by the loader when installed
    if hub is None:
        return model, False
    if isinstance(model, hub.models.CausalLM):
        return model, True
    if not isinstance(model, hub.models.Backbone):
        return model, False
    name = type(model).__name__.removesuffix("Backbone") + "CausalLM"
    task = getattr(hub.models, name, None)
    if isinstance(task, type) and getattr(task, "backbone_cls", None) is type(model):
        return task(backbone=model, preprocessor=None), True
    return model, False


def _vocabulary_size(model: Any, tokenizer: Any | None) -> int | None:
    """How many token ids the model takes: the tokenizer's, the backbone's, or the input
    dimension of the model's first Embedding layer (None if none is found)."""
    if tokenizer is not None:
        return int(tokenizer.vocabulary_size())
    backbone = getattr(model, "backbone", model)
    size = getattr(backbone, "vocabulary_size", None)
    if isinstance(size, int):
        return size
    import keras

    for layer in model._flatten_layers(include_self=False, recursive=True):
        if isinstance(layer, keras.layers.Embedding):
            return int(layer.input_dim)
    return None


def _max_tokens(model: Any) -> int | None:
    """The longest sequence a keras-hub backbone has positions for (`max_sequence_length`), or
    None (rotary positions have no such limit; a plain Keras model says none)."""
    length = getattr(getattr(model, "backbone", model), "max_sequence_length", None)
    return length if isinstance(length, int) and length > 0 else None


GENERIC_CLASSES = ("Functional", "Sequential", "Model")  # Keras's own: say the model's name


def model_name(model: Any) -> str:
    """A model's class ("GPT2CausalLM"), or the name it was given ("tiny_mha") when its class is
    one of Keras's own (`GENERIC_CLASSES`: "Functional" says nothing of the model)."""
    kind = type(model).__name__
    name = getattr(model, "name", None)
    return name if kind in GENERIC_CLASSES and isinstance(name, str) and name else kind


def _describe(model: Any, tokenizer: Any | None, where: str) -> str:
    """One line: "GPT2CausalLM (1,234 parameters) from …, tokenized by its GPT2Tokenizer";
    "tiny_mha (a Keras Functional model, 1,234 parameters) from …"."""
    kind, name = type(model).__name__, model_name(model)
    what = f"a Keras {kind} model, " if name != kind else ""
    words = f"{name} ({what}{model.count_params():,} parameters) from {where}"
    if tokenizer is None:
        return words + "; no tokenizer: type token ids"
    return words + f", tokenized by its {type(tokenizer).__name__}"
