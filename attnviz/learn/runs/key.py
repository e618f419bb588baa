"""A training run's key: the SHA-256 of everything that determines its result, so that two
Train presses with the same key can honestly share one run (training is deterministic: the same
configuration gives the same weights bit for bit).

What goes in: the task (a translation task's name; a language-model task's fields, so a task
given by name and the same `LMTask` are one key), the network's and the training's config
dataclasses (every field, by type: seed, epochs, pairs, time limit...), attnviz's version with a
digest of the code and data that train (`attnviz/learn`, `attnviz/core`: a changed trainer never
serves a result of the old one, even from a Redis that outlived a deploy), and the trainer (""
for attnviz's own; a test's injected `fit` has its own token). Canonical JSON: sorted keys,
integral floats written as floats (`time_limit=120` and `120.0` are one key).
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, fields, is_dataclass
from pathlib import Path
from typing import Any

from attnviz import __version__
from attnviz.learn.configs import LMConfig
from attnviz.learn.language.tasks import LMTask, get_lm_task

_TRAINING_CODE = ("learn", "core")  # attnviz's folders whose code and data decide a result
_DATA_SUFFIXES = (".py", ".txt")  # the code, and the text task's stories


def run_key(task: str | LMTask, network: Any, training: Any, trainer: str = "") -> str:
    """64 hex digits: the same for the same settings, another for any change (seed, epochs...).

    Args:
        task: a translation task's name, or a language-model task (`LMTask` or its name).
        network: the network's config dataclass (`NetworkConfig`, `TransformerConfig`, `LMConfig`).
        training: the `TrainConfig`.
        trainer: "" for attnviz's trainers; a token naming another `fit` (tests).
    """
    text = canonical_json(task, network, training, trainer)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(task: str | LMTask, network: Any, training: Any, trainer: str = "") -> str:
    """The text `run_key` hashes (sorted keys, no spaces)."""
    record = {
        "task": _task(task, network),
        "network": _config(network),
        "training": _config(training),
        "version": code_version(),
        "trainer": trainer,
    }
    return json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _task(task: Any, network: Any) -> Any:
    """A language model's task as its fields (named or given); a translation task's name."""
    if isinstance(task, LMTask) or isinstance(network, LMConfig):
        try:
            return {"lm_task": _plain(asdict(get_lm_task(task)))}
        except (ValueError, TypeError):
            pass  # not a task: the run itself says so; the key only has to be stable
    return {"name": task if isinstance(task, str) else repr(task)}


def _config(config: Any) -> dict[str, Any]:
    """A config dataclass as {"type": its class name, "fields": its fields}; floats as floats."""
    if not is_dataclass(config) or isinstance(config, type):
        return {"type": type(config).__name__, "repr": repr(config)}
    values = {}
    for f in fields(config):
        value = getattr(config, f.name)
        floating = "float" in str(f.type) and isinstance(value, int) and not isinstance(value, bool)
        values[f.name] = float(value) if floating else _plain(value)
    return {"type": type(config).__name__, "fields": values}


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars as Python's, tuples as lists."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()  # np.bool_, np.int64, np.float32...
    return value


@functools.cache
def code_version() -> str:
    """attnviz's version and a digest of the code and data that train (read once a process)."""
    root = Path(__file__).resolve().parents[2]  # the attnviz package
    digest = hashlib.sha256()
    for folder in _TRAINING_CODE:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in _DATA_SUFFIXES and "__pycache__" not in path.parts:
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:16]}"
