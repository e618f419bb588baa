"""Training runs' data as bytes, for a store shared by replicas: epoch reports, weights, a
trained model's record and the job itself (what to train), and back. No pickles, ever.

The bytes are an `.npz` archive (read with `allow_pickle=False`): the entry "tree" holds UTF-8
JSON of the value, where every array is a reference `{"$array": i}` to the entry "a<i>" (numeric
arrays only: object arrays are refused both ways). Dataclasses are written as
`{"$type": name, "fields": {...}}` and only the types of `KNOWN` are rebuilt, through their own
constructor (so their own checks run); any other name, or fields that are not the type's, is a
ValueError. Tuples and dicts are tagged (`$tuple`, `$dict`) so they come back as they went.

    data = dumps(report); report == loads(data)  # an EpochReport with its probe
    loads(dumps(Job("dates", NetworkConfig(), TrainConfig())))
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import numpy as np

from attnviz.learn.configs import LMConfig, NetworkConfig, TrainConfig, TransformerConfig
from attnviz.learn.language.metrics import LMEvaluation
from attnviz.learn.language.model import Ablation, LMForward
from attnviz.learn.language.tasks import LMTask
from attnviz.learn.language.training import LMEpochReport, LMStats
from attnviz.learn.translation.model import Translation
from attnviz.learn.translation.training import EpochReport, TrainingStats
from attnviz.learn.translation.transformer_translator import TransformerTranslation

TREE = "tree"  # the archive's JSON entry
_TAGS = ("$array", "$tuple", "$dict", "$type")


@dataclass(frozen=True)
class Job:
    """What to train: another replica rebuilds it from its bytes and trains it."""

    task: str | LMTask  # a translation task's name, or a language-model task (or its name)
    network: NetworkConfig | TransformerConfig | LMConfig  # the model's config
    training: TrainConfig  # epochs, pairs, batches, seed, time limit
    trainer: str = ""  # "" = attnviz's own trainer for the network; else an injected `fit`'s token


KNOWN: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        Job, NetworkConfig, TransformerConfig, LMConfig, TrainConfig, LMTask,
        EpochReport, Translation, TransformerTranslation, TrainingStats,
        LMEpochReport, LMEvaluation, LMForward, Ablation, LMStats,
    )
}  # fmt: skip  # the only types `loads` rebuilds


def dumps(value: Any) -> bytes:
    """`value` (None, bools, numbers, strings, lists, tuples, dicts with string keys, numeric
    numpy arrays and `KNOWN` dataclasses, nested) as bytes.

    Raises:
        ValueError: for anything else (says what and where).
    """
    arrays: list[np.ndarray] = []
    tree = _tree(value, arrays, "value")
    text = json.dumps(tree, separators=(",", ":"))  # NaN and infinities as JSON's extension
    buffer = io.BytesIO()
    entries = {f"a{i}": a for i, a in enumerate(arrays)}
    np.savez(buffer, **{TREE: np.frombuffer(text.encode("utf-8"), np.uint8)}, **entries)
    return buffer.getvalue()


def loads(data: bytes) -> Any:
    """The value `dumps` wrote.

    Raises:
        ValueError: for bytes that are not `dumps`'s (a pickle, another archive, a type not in
            `KNOWN`, fields a type does not have).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValueError(f"A run's data must be bytes. Received: {type(data).__name__}.")
    try:
        with np.load(io.BytesIO(bytes(data)), allow_pickle=False) as archive:
            entries = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise ValueError(
            f"These bytes are not a training run's data (an .npz archive without pickles): "
            f"{type(err).__name__}: {err}"
        ) from err
    if TREE not in entries or entries[TREE].dtype != np.uint8:
        raise ValueError(f"A run's data must hold its JSON as the entry {TREE!r}; it does not.")
    tree = json.loads(entries.pop(TREE).tobytes().decode("utf-8"))
    return _value(tree, entries)


def _tree(value: Any, arrays: list[np.ndarray], where: str) -> Any:
    """`value` as JSON-ready data, its arrays appended to `arrays`."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise ValueError(f"{where}: object arrays cannot be stored (no pickles).")
        arrays.append(value)
        return {"$array": len(arrays) - 1}
    if isinstance(value, np.generic):
        return _tree(value.item(), arrays, where)
    if isinstance(value, list):
        return [_tree(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, tuple):
        return {"$tuple": [_tree(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"$dict": {k: _tree(v, arrays, f"{where}[{k!r}]") for k, v in value.items()}}
    name = type(value).__name__
    if is_dataclass(value) and KNOWN.get(name) is type(value):
        items = {f.name: getattr(value, f.name) for f in fields(value) if f.init}
        tree = {k: _tree(v, arrays, f"{where}.{k}") for k, v in items.items()}
        return {"$type": name, "fields": tree}
    raise ValueError(
        f"{where}: a {name} cannot be stored. A run's data holds numbers, strings, lists, "
        f"tuples, dicts, numeric arrays and these dataclasses: {', '.join(KNOWN)}."
    )


def _value(tree: Any, arrays: dict[str, np.ndarray]) -> Any:
    """The value of `tree`, its array references filled from `arrays`."""
    if isinstance(tree, list):
        return [_value(v, arrays) for v in tree]
    if not isinstance(tree, dict):
        return tree
    tag = next(iter(tree), None) if len(tree) in (1, 2) else None
    if tag == "$array" and len(tree) == 1 and f"a{tree[tag]}" in arrays:
        return arrays[f"a{tree[tag]}"]
    if tag == "$tuple" and len(tree) == 1 and isinstance(tree[tag], list):
        return tuple(_value(v, arrays) for v in tree[tag])
    if tag == "$dict" and len(tree) == 1 and isinstance(tree[tag], dict):
        return {k: _value(v, arrays) for k, v in tree[tag].items()}
    if tag == "$type" and isinstance(tree.get("fields"), dict):
        return _built(tree["$type"], {k: _value(v, arrays) for k, v in tree["fields"].items()})
    raise ValueError(f"A run's data holds an entry that is none of {_TAGS}: {str(tree)[:80]}.")


def _built(name: Any, values: dict[str, Any]) -> Any:
    """The `KNOWN` dataclass `name` from `values` (exactly its fields)."""
    cls = KNOWN.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(
            f"A run's data names the type {str(name)[:60]!r}, which is not one a run stores: "
            f"{', '.join(KNOWN)}."
        )
    expected = {f.name for f in fields(cls) if f.init}
    if set(values) != expected:
        raise ValueError(
            f"A run's {name} must have the fields {sorted(expected)}. Received: {sorted(values)}."
        )
    return cls(**values)
