"""The shipped checkpoints: one trained model per task and kind, saved as weights only.

A kind is a score ("dot", "general", "concat": a `Seq2SeqAttention` attending with it) or
"transformer" (a `TransformerTranslator`); a language-model task ("induction", "text") has the
kind "lm" (a `LanguageModel`). Each checkpoint is two files in the package's
`attnviz/learn/checkpoints/` folder (package data, read with `importlib.resources`, so an
installed attnviz finds them wherever it is installed):

- `<task>_<kind>.npz`: the weights, numpy arrays in the order of the model's `get_weights`
  (read with `allow_pickle=False`: no pickles, no code);
- `<task>_<kind>.json`: the training record (`TrainingStats`) and the fresh-pair evaluation,
  plain numbers for display.

The architecture is never read from a file: `recipes` (code) says how each task's models are
built and trained, `load_pretrained` / `load_transformer` rebuild them
from there and only fill in the weights, checking every array's shape.
`python -m attnviz.learn.train_all` regenerates the files.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from importlib.resources import as_file, files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np

from attnviz.core.checks import check_choice
from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.learn.language.model import LanguageModel
from attnviz.learn.language.tasks import LM_TASKS
from attnviz.learn.language.training import LMStats
from attnviz.learn.recipes import (
    KINDS,
    LM,
    LM_RECIPES,
    TRANSFORMER,
    TRANSFORMER_RECIPES,
    network_config,
)
from attnviz.learn.translation.model import Seq2SeqAttention
from attnviz.learn.translation.tasks import TASKS
from attnviz.learn.translation.training import TrainingStats
from attnviz.learn.translation.transformer_translator import TransformerTranslator

Model = Seq2SeqAttention | TransformerTranslator | LanguageModel  # what a checkpoint holds

CHECKPOINTS: Traversable = files("attnviz.learn") / "checkpoints"  # the checkpoint folder
REGENERATE = "python -m attnviz.learn.train_all"  # the command that writes the checkpoints
TEST_SEED = 20_261_122  # make_pairs seed of the fresh pairs checkpoints are evaluated on


def checkpoint_path(task: str, kind: str, suffix: str = ".npz") -> Path:
    """Where the checkpoint of `task` and `kind` (a score, "transformer", or "lm" for a
    language-model task) lives (`.npz` weights or `.json` record), in `CHECKPOINTS`: a `Path`
    when attnviz is a folder on disk (a checkout or an ordinary install)."""
    if kind == LM:
        check_choice(task, "task", LM_TASKS)
    else:
        check_choice(task, "task", TASKS)
        check_choice(kind, "kind", KINDS)
    return CHECKPOINTS / f"{task}_{kind}{suffix}"


def _kind_of(model: Model) -> str:
    if isinstance(model, LanguageModel):
        return LM
    return TRANSFORMER if isinstance(model, TransformerTranslator) else model.config.score


def save_checkpoint(model: Model, extra: dict[str, Any] | None = None) -> Path:
    """Write `model`'s weights and record to `CHECKPOINTS` and return the weights' path.

    attnviz must be a folder on disk (a checkout, or an install whose files can be written)."""
    kind = _kind_of(model)
    name = f"{model.task.name}_{kind}"
    checkpoint_path(model.task.name, kind)  # checks the task and kind
    with as_file(CHECKPOINTS) as folder:  # the folder itself when it is on disk
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        weights = model.get_weights()
        path = folder / f"{name}.npz"
        np.savez_compressed(path, **{f"w{i:03d}": w for i, w in enumerate(weights)})
        record = {"format": 1, "network": asdict(model.config), **(extra or {})}
        if model.stats is not None:
            record["stats"] = _plain(asdict(model.stats))
        text = json.dumps(record, indent=1, allow_nan=False)
        (folder / f"{name}.json").write_text(text + "\n", encoding="utf-8")
    return path


def _plain(value: Any) -> Any:
    """JSON-ready: tuples as lists, NaN as None."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


class MissingCheckpointError(FileNotFoundError, ValueError):
    """A shipped checkpoint file is missing (a ValueError too, so input-error handlers show it)."""


def read_record(task: str, kind: str) -> dict[str, Any]:
    """The JSON record of a shipped checkpoint (training stats, fresh-pair evaluation).

    Raises:
        MissingCheckpointError: if the file is missing (says how to regenerate it).
    """
    path = checkpoint_path(task, kind, ".json")
    if not path.is_file():
        raise MissingCheckpointError(_missing(path))
    return json.loads(path.read_text(encoding="utf-8"))


def _missing(path: Traversable) -> str:
    return (
        f"The checkpoint {path.name} is missing from {CHECKPOINTS}. Regenerate the shipped "
        f"checkpoints with `{REGENERATE}` (about 5 minutes on 2 CPU cores)."
    )


def load_pretrained(task: str, score: str = "dot") -> Seq2SeqAttention:
    """The shipped model of `task` with `score`, rebuilt in code and given its saved weights.

    Leaves the global random seeds alone. The model keeps its training record in `.stats`.

    Raises:
        ValueError: for an unknown task or score, or a file that does not fit the architecture.
        MissingCheckpointError: (a FileNotFoundError and a ValueError) if the weights file is
            missing; the message says how to regenerate it.
    """
    check_choice(score, "score", SCORE_KINDS)
    config = network_config(task, score)
    path = checkpoint_path(task, score)
    if not path.is_file():
        raise MissingCheckpointError(_missing(path))
    model = Seq2SeqAttention(task, config, seed=None)  # no reseeding: weights come from file
    return _filled(model, path, task, score)


def load_transformer(task: str) -> TransformerTranslator:
    """The shipped Transformer of `task`, rebuilt in code and given its saved weights.

    Leaves the global random seeds alone. The model keeps its training record in `.stats`.

    Raises:
        ValueError: for a task without a shipped Transformer (`TRANSFORMER_RECIPES`), or a
            file that does not fit the architecture.
        MissingCheckpointError: if the weights file is missing (says how to regenerate it).
    """
    check_choice(task, "task", tuple(TRANSFORMER_RECIPES))
    path = checkpoint_path(task, TRANSFORMER)
    if not path.is_file():
        raise MissingCheckpointError(_missing(path))
    model = TransformerTranslator(task, TRANSFORMER_RECIPES[task].network, seed=None)
    return _filled(model, path, task, TRANSFORMER)


def load_lm(task: str = "induction") -> LanguageModel:
    """The shipped language model of `task` (`LM_RECIPES`), rebuilt in code and given its saved
    weights.

    Leaves the global random seeds alone. The model keeps its training record in `.stats`.

    Raises:
        ValueError: for a task without a shipped language model, or a file that does not fit
            the architecture.
        MissingCheckpointError: if the weights file is missing (says how to regenerate it).
    """
    check_choice(task, "task", tuple(LM_RECIPES))
    path = checkpoint_path(task, LM)
    if not path.is_file():
        raise MissingCheckpointError(_missing(path))
    model = LanguageModel(task, LM_RECIPES[task].network, seed=None)
    return _filled(model, path, task, LM)


def _filled(model, path: Traversable, task: str, kind: str):
    """`model` with the weights of `path` and the training record beside it; `shared`: kept
    and used many times, it traces its own functions once (not a twin's: `learn.twins`)."""
    model.set_weights(_read_weights(path, model.get_weights()))
    model.shared = True
    record = read_record(task, kind) if checkpoint_path(task, kind, ".json").is_file() else {}
    if "stats" in record:
        model.stats = _stats_from(record["stats"], LMStats if kind == LM else TrainingStats)
    return model


def _read_weights(path: Traversable, expected: list[np.ndarray]) -> list[np.ndarray]:
    """The arrays of `path` (no pickles), checked against the shapes of `expected`."""
    names = [f"w{i:03d}" for i in range(len(expected))]
    with path.open("rb") as file, np.load(file, allow_pickle=False) as saved:  # object arrays
        found = {name: saved[name] for name in saved.files}  # raise ValueError
    arrays = [found[name] for name in names] if sorted(found) == names else []
    shapes = [a.shape for a in arrays]
    if not arrays or shapes != [w.shape for w in expected]:
        raise ValueError(
            f"{path.name} does not fit the architecture of its model: it holds {len(found)} "
            f"arrays of shapes {shapes or '(misnamed)'}, the model needs {len(expected)} of "
            f"shapes {[w.shape for w in expected]}. Regenerate it with `{REGENERATE}`."
        )
    return [a.astype(np.float32) for a in arrays]


def _stats_from(stats: dict[str, Any], kind: type = TrainingStats) -> Any:
    """`TrainingStats` (or `LMStats`) from its JSON form (None back to NaN in the history and
    the head scores)."""

    def rows(name: str) -> tuple[tuple[float, ...], ...]:
        return tuple(tuple(math.nan if v is None else v for v in row) for row in stats[name])

    tables = {name: rows(name) for name in ("history", "head_scores") if name in stats}
    known = {f.name for f in fields(kind)}
    plain = {k: v for k, v in stats.items() if k in known and k not in tables}
    return kind(**plain, **tables)


@dataclass(frozen=True)
class CheckpointSummary:
    """One shipped checkpoint's numbers, read from its JSON record (no TensorFlow needed)."""

    task: str  # the task name
    score: str  # "dot", "general", "concat" (a seq2seq model) or "transformer"
    exact_match: float  # on 1,000 fresh pairs (make_pairs seed TEST_SEED)
    char_accuracy: float  # on the same fresh pairs
    alignment: float  # alignment score on the same fresh pairs
    val_char_accuracy: float  # on the validation pairs during training
    train_seconds: float  # seconds of training on the machine that wrote it
    epochs: int  # epochs trained
    parameters: int  # trained numbers


def shipped_summaries() -> list[CheckpointSummary]:
    """The summary of every shipped checkpoint whose record exists, task by task."""
    rows = []
    for task in TASKS:
        for score in KINDS:
            if not checkpoint_path(task, score, ".json").is_file():
                continue
            record = read_record(task, score)
            fresh, stats = record["fresh"], record["stats"]
            rows.append(
                CheckpointSummary(
                    task,
                    score,
                    fresh["exact_match"],
                    fresh["char_accuracy"],
                    fresh["alignment"],
                    stats["val_char_accuracy"],
                    stats["train_seconds"],
                    stats["epochs_run"],
                    stats["parameters"],
                )  # fmt: skip
            )
    return rows
