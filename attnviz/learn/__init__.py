"""Learned attention: small translators whose attention was trained, not drawn.

Three toy tasks with known alignments (`tasks`: dates -> ISO, reverse, German number words ->
digits), a Luong-style bi-GRU encoder / GRU decoder that attends with attnviz's own
`ScoredAttention` and score layers (`network`, `model`), a small encoder–decoder Transformer
built on the seed tutorial's decoder layers (`transformer`), training with `keras.Model.fit`
and a per-epoch report (`training`), scores (`metrics`) and the shipped checkpoints
(`pretrained`, `train_all`).

    from attnviz.learn import load_pretrained, load_transformer
    model = load_pretrained("dates", "dot")
    model.translate("Sunday, 22 November 2026").output      # "2026-11-22"
    transformer = load_transformer("dates")
    transformer.trace("22 nov 2026").results[("cross", 0)]  # every head, recomputed

Names are imported on first use: `attnviz.learn.TASKS` and `make_pairs` do not import
TensorFlow; the models do.
"""

from __future__ import annotations

from attnviz.core.lazy import lazy_names

_HOMES = {  # public name -> the module that defines it
    "TASKS": "attnviz.learn.tasks",
    "Task": "attnviz.learn.tasks",
    "get_task": "attnviz.learn.tasks",
    "make_pairs": "attnviz.learn.tasks",
    "known_alignment": "attnviz.learn.tasks",
    "NetworkConfig": "attnviz.learn.configs",
    "TrainConfig": "attnviz.learn.configs",
    "TRANSFORMER_TRAINING": "attnviz.learn.configs",
    "AttentionInputs": "attnviz.learn.model",
    "Seq2SeqAttention": "attnviz.learn.model",
    "Translation": "attnviz.learn.model",
    "Evaluation": "attnviz.learn.metrics",
    "alignment_score": "attnviz.learn.metrics",
    "evaluate": "attnviz.learn.metrics",
    "EpochReport": "attnviz.learn.training",
    "TrainingStats": "attnviz.learn.training",
    "train": "attnviz.learn.training",
    "TransformerConfig": "attnviz.learn.configs",
    "TransformerTrace": "attnviz.learn.transformer",
    "TransformerTranslation": "attnviz.learn.transformer",
    "TransformerTranslator": "attnviz.learn.transformer",
    "head_alignment_scores": "attnviz.learn.metrics",
    "train_transformer": "attnviz.learn.training",
    "load_transformer": "attnviz.learn.pretrained",
    "CheckpointSummary": "attnviz.learn.pretrained",
    "MissingCheckpointError": "attnviz.learn.pretrained",
    "load_pretrained": "attnviz.learn.pretrained",
    "shipped_summaries": "attnviz.learn.pretrained",
}

__all__ = sorted(_HOMES)


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
