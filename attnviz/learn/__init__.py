"""Learned attention: small translators whose attention was trained, not drawn.

Three toy tasks with known alignments (`tasks`: dates -> ISO, reverse, German number words ->
digits), a Luong-style bi-GRU encoder / GRU decoder that attends with attnviz's own
`ScoredAttention` and score layers (`network`, `model`), a small encoder–decoder Transformer
built on the seed tutorial's decoder layers (`transformer`), training with `keras.Model.fit`
and a per-epoch report (`training`; the trainers compiled by `compiling`), scores (`metrics`)
and the shipped checkpoints (`pretrained`, `train_all`). And a decoder-only language model
(`language_model`, its layers `lm_layers`) on an induction task and a small corpus (`lm_tasks`),
trained on fresh sequences every epoch (`lm_training`), with every head's previous-token and
induction score and ablation tables (`lm_metrics`), and generation with a KV cache
(`lm_generation`).

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
    "load_lm": "attnviz.learn.pretrained",
    "LMConfig": "attnviz.learn.configs",
    "LM_TRAINING": "attnviz.learn.configs",
    "LM_TASKS": "attnviz.learn.lm_tasks",
    "LMTask": "attnviz.learn.lm_tasks",
    "get_lm_task": "attnviz.learn.lm_tasks",
    "induction_task": "attnviz.learn.lm_tasks",
    "make_sequences": "attnviz.learn.lm_tasks",
    "Ablation": "attnviz.learn.language_model",
    "LanguageModel": "attnviz.learn.language_model",
    "LMForward": "attnviz.learn.language_model",
    "LMTrace": "attnviz.learn.language_model",
    "LMEpochReport": "attnviz.learn.lm_training",
    "LMStats": "attnviz.learn.lm_training",
    "LMCurves": "attnviz.learn.lm_training",
    "train_lm": "attnviz.learn.lm_training",
    "AblationTable": "attnviz.learn.lm_metrics",
    "LMEvaluation": "attnviz.learn.lm_metrics",
    "ablation_table": "attnviz.learn.lm_metrics",
    "evaluate_lm": "attnviz.learn.lm_metrics",
    "induction_scores": "attnviz.learn.lm_metrics",
    "previous_token_scores": "attnviz.learn.lm_metrics",
    "unigram_loss": "attnviz.learn.lm_metrics",
    "Generation": "attnviz.learn.lm_generation",
    "GenerationStep": "attnviz.learn.lm_generation",
    "generate": "attnviz.learn.lm_generation",
}

__all__ = sorted(_HOMES)


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
