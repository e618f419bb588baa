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
    LM_TRAINING,
    TRANSFORMER_TRAINING,
    LMConfig,
    NetworkConfig,
    TrainConfig,
    TransformerConfig,
)
from attnviz.learn.translation.tasks import TASKS

TRANSFORMER = "transformer"  # the checkpoint kind of a `TransformerTranslator`
KINDS = (*SCORE_KINDS, TRANSFORMER)  # every translator checkpoint kind: a score, "transformer"
LM = "lm"  # the checkpoint kind of a `LanguageModel` (its tasks are `language.tasks.LM_TASKS`)


@dataclass(frozen=True)
class Recipe:
    """How the shipped model of one task is built and trained (the same for every score)."""

    network: NetworkConfig | TransformerConfig | LMConfig  # sizes (a seq2seq's score is set per
    # checkpoint)
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


LM_RECIPES = {  # language-model task -> how its shipped model is built and trained
    # 2 layers × 4 heads, D = 32, MLPs of 128, RoPE: ~27k parameters. Runs of 4 to 16 letters
    # repeated anywhere (half the sequences a long run and its copy at the end, which starts
    # the circuit): induction forms by epoch ~8; the other 92 sharpen it for every shape of
    # `language.tasks.COPY_SHAPES`. With seed 0 one layer-1 head does most of the copying (other
    # seeds may split it over two heads: then switching one off leaves the other copying,
    # which the ablation table shows). The time limit is a safety net, far above the run.
    "induction": Recipe(
        LMConfig(), TrainConfig(**{**vars(LM_TRAINING), "epochs": 100, "time_limit": 3600.0})
    ),
    # The stories are 18,435 training characters: 512 windows of 64 an epoch are ~1.8 passes;
    # 4,096 an epoch would be 14 (at 20 passes, on the first 12,650 characters, the validation
    # loss rose after the second epoch).
    "text": Recipe(
        LMConfig(),
        TrainConfig(**{**vars(LM_TRAINING), "n_pairs": 512, "val_pairs": 256, "time_limit": 600.0}),
    ),
}
