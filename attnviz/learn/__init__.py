"""Learned attention: models whose attention was trained, not drawn, one subpackage per family.

`translation/`: character translators on three toy tasks with known alignments (`tasks`):
dates -> ISO (`dates`), reverse, German number words -> digits (`numbers`), their characters
as ids (`vocab`). A Luong-style bi-GRU encoder / GRU decoder that attends with attnviz's own
`ScoredAttention` and score layers (`network`, `model`) and a small encoder–decoder Transformer
built on the seed tutorial's decoder layers (`transformer_translator`), trained with
`keras.Model.fit` and a per-epoch report (`training`) and scored (`metrics`).

`language/`: a decoder-only language model (`model`, its layers `layers`) on an induction task
and a small corpus (`tasks`), trained on fresh sequences every epoch (`training`), with every
head's previous-token and induction score and ablation tables (`metrics`), and generation with
a KV cache (`generation`).

What the families share stays here: the models' configs (`configs`), the trainers compiled
before `fit` (`compiling`), how each shipped model is built and trained (`recipes`), the
shipped checkpoints (`checkpoints/`, loaded by `pretrained`, written by `train_all`), and the
queue of training runs the app starts (`runs`).

    from attnviz.learn import load_pretrained, load_transformer
    model = load_pretrained("dates", "dot")
    model.translate("Sunday, 22 November 2026").output      # "2026-11-22"
    transformer = load_transformer("dates")
    transformer.trace("22 nov 2026").results[("cross", 0)]  # every head, recomputed
    lm = load_lm("induction")
    ablation_table(lm, make_sequences("induction", 512, seed=1)).in_context_accuracy  # (L, H)

Names are imported on first use: `attnviz.learn.TASKS` and `make_pairs` do not import
TensorFlow; the models do.
"""

from __future__ import annotations

from attnviz.core.lazy import lazy_names

_HOMES = {  # public name -> the module that defines it
    "TASKS": "attnviz.learn.translation.tasks",
    "Task": "attnviz.learn.translation.tasks",
    "get_task": "attnviz.learn.translation.tasks",
    "make_pairs": "attnviz.learn.translation.tasks",
    "known_alignment": "attnviz.learn.translation.tasks",
    "NetworkConfig": "attnviz.learn.configs",
    "TrainConfig": "attnviz.learn.configs",
    "TRANSFORMER_TRAINING": "attnviz.learn.configs",
    "AttentionInputs": "attnviz.learn.translation.model",
    "Seq2SeqAttention": "attnviz.learn.translation.model",
    "Translation": "attnviz.learn.translation.model",
    "Evaluation": "attnviz.learn.translation.metrics",
    "alignment_score": "attnviz.learn.translation.metrics",
    "evaluate": "attnviz.learn.translation.metrics",
    "EpochReport": "attnviz.learn.translation.training",
    "TrainingStats": "attnviz.learn.translation.training",
    "train": "attnviz.learn.translation.training",
    "TransformerConfig": "attnviz.learn.configs",
    "TransformerTrace": "attnviz.learn.translation.transformer_translator",
    "TransformerTranslation": "attnviz.learn.translation.transformer_translator",
    "TransformerTranslator": "attnviz.learn.translation.transformer_translator",
    "head_alignment_scores": "attnviz.learn.translation.metrics",
    "train_transformer": "attnviz.learn.translation.training",
    "load_transformer": "attnviz.learn.pretrained",
    "CheckpointSummary": "attnviz.learn.pretrained",
    "MissingCheckpointError": "attnviz.learn.pretrained",
    "load_pretrained": "attnviz.learn.pretrained",
    "shipped_summaries": "attnviz.learn.pretrained",
    "load_lm": "attnviz.learn.pretrained",
    "LMConfig": "attnviz.learn.configs",
    "LM_TRAINING": "attnviz.learn.configs",
    "LM_TASKS": "attnviz.learn.language.tasks",
    "LMTask": "attnviz.learn.language.tasks",
    "get_lm_task": "attnviz.learn.language.tasks",
    "induction_task": "attnviz.learn.language.tasks",
    "make_sequences": "attnviz.learn.language.tasks",
    "Ablation": "attnviz.learn.language.model",
    "LanguageModel": "attnviz.learn.language.model",
    "LMForward": "attnviz.learn.language.model",
    "LMTrace": "attnviz.learn.language.model",
    "LMEpochReport": "attnviz.learn.language.training",
    "LMStats": "attnviz.learn.language.training",
    "LMCurves": "attnviz.learn.language.training",
    "train_lm": "attnviz.learn.language.training",
    "AblationTable": "attnviz.learn.language.metrics",
    "LMEvaluation": "attnviz.learn.language.metrics",
    "ablation_table": "attnviz.learn.language.metrics",
    "evaluate_lm": "attnviz.learn.language.metrics",
    "induction_scores": "attnviz.learn.language.metrics",
    "previous_token_scores": "attnviz.learn.language.metrics",
    "unigram_loss": "attnviz.learn.language.metrics",
    "Generation": "attnviz.learn.language.generation",
    "GenerationStep": "attnviz.learn.language.generation",
    "generate": "attnviz.learn.language.generation",
}

__all__ = sorted(_HOMES)


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
