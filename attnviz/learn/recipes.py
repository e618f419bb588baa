"""How each shipped model is built and trained: a network config and a training config per task.

Plain Python (no TensorFlow): the pages read which tasks have a shipped Transformer before
TensorFlow loads. `pretrained` rebuilds the shipped models from here and `train_all` retrains
them (with its seed); nothing about a model's shape is ever read from a file.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnviz.core.checks import check_choice
from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.learn.configs import (
    TRANSFORMER_TRAINING,
    NetworkConfig,
    TrainConfig,
    TransformerConfig,
)
from attnviz.learn.tasks import TASKS

TRANSFORMER = "transformer"  # the checkpoint kind of a `TransformerTranslator`
KINDS = (*SCORE_KINDS, TRANSFORMER)  # every checkpoint kind: a score, or "transformer"


@dataclass(frozen=True)
class Recipe:
    """How the shipped model of one task is built and trained (the same for every score)."""

    network: NetworkConfig | TransformerConfig  # sizes (a seq2seq's score is set per checkpoint)
    training: TrainConfig  # epochs, pairs, batches (the seed is `train_all`'s)


RECIPES = {  # task -> how its seq2seq models (one per score) are built and trained
    "dates": Recipe(NetworkConfig(), TrainConfig(4, 10_000, 500, time_limit=300.0)),
    "reverse": Recipe(NetworkConfig(), TrainConfig(12, 20_000, 500, time_limit=300.0)),
    "german_numbers": Recipe(NetworkConfig(), TrainConfig(4, 10_000, 500, time_limit=300.0)),
}
_TRANSFORMER_RUN = {"n_pairs": 10_000, "val_pairs": 500, "time_limit": 600.0}
TRANSFORMER_RECIPES = {  # tasks with a shipped Transformer
    "dates": Recipe(
        TransformerConfig(),
        TrainConfig(**{**vars(TRANSFORMER_TRAINING), **_TRANSFORMER_RUN, "epochs": 20}),
    ),
    "reverse": Recipe(
        TransformerConfig(),
        TrainConfig(
            **{**vars(TRANSFORMER_TRAINING), **_TRANSFORMER_RUN, "epochs": 30, "n_pairs": 20_000}
        ),
    ),
}


def network_config(task: str, kind: str) -> NetworkConfig | TransformerConfig:
    """The network of the shipped `task` model of `kind` (a score or "transformer")."""
    check_choice(task, "task", TASKS)
    check_choice(kind, "kind", KINDS)
    if kind == TRANSFORMER:
        if task not in TRANSFORMER_RECIPES:
            raise ValueError(
                f"No Transformer is shipped for {task!r}: only for "
                f"{', '.join(repr(t) for t in TRANSFORMER_RECIPES)}."
            )
        return TRANSFORMER_RECIPES[task].network
    sizes = RECIPES[task].network
    return NetworkConfig(kind, False, sizes.embed_dim, sizes.units, sizes.attention_units)


def training_config(task: str, kind: str) -> TrainConfig:
    """How the shipped `task` model of `kind` was trained (but its seed)."""
    check_choice(kind, "kind", KINDS)
    recipes = TRANSFORMER_RECIPES if kind == TRANSFORMER else RECIPES
    network_config(task, kind)  # checks both
    return recipes[task].training
