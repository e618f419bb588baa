"""Heads: look inside every layer and head of a Transformer.

`calls` is the one trace type every model's run returns (`AttentionCalls`, a stack of
`AttentionCall`s). `inspection` runs any Keras 3 model once and returns every attention it
computes as one: `tracing`
watches the run's ops, `capture` finds each softmax that weighs values (with `layouts` reading
products and `owners` naming the layer call), `readout` reads masks and heads, `positions` names
position schemes, `adapters` covers what some layer families need, `recording` and `running` run
the model, `verification` checks each call against what its layer returned in the run.
`summaries` says in numbers what each head does; `rollout` follows attention through
the layers (Abnar & Zuidema 2020); `stacks` checks stacks of weights. Your own model
(`attnviz view`): `user_model` loads it, `model_text` makes text its inputs, `text_run` runs
and stacks it, `head_inputs` opens one of its heads in the explorer.
The model view that draws them all is `attnviz.drawing.model_view`.

The public names below are imported on first use: summaries and rollout are numpy-only, so
`from attnviz.heads import head_summaries` does not import TensorFlow; `inspect` does.
"""

from __future__ import annotations

from attnviz.core.lazy import lazy_names

_HOMES = {  # public name -> the module that defines it
    "AttentionCall": "attnviz.heads.calls",
    "AttentionCalls": "attnviz.heads.calls",
    "Fold": "attnviz.heads.readout",
    "Inspection": "attnviz.heads.inspection",
    "InspectionWarning": "attnviz.heads.inspection",
    "PositionScheme": "attnviz.heads.positions",
    "LayerStack": "attnviz.heads.calls",
    "inspect": "attnviz.heads.inspection",
    "Verified": "attnviz.heads.verification",
    "HeadSummary": "attnviz.heads.summaries",
    "SUMMARY_FIELDS": "attnviz.heads.summaries",
    "SUMMARY_LABELS": "attnviz.heads.summaries",
    "head_summaries": "attnviz.heads.summaries",
    "sort_heads": "attnviz.heads.summaries",
    "summary_table": "attnviz.heads.summaries",
    "top_heads": "attnviz.heads.summaries",
    "ROLLOUT_TEX": "attnviz.heads.rollout",
    "Rollout": "attnviz.heads.rollout",
    "attention_rollout": "attnviz.heads.rollout",
}

__all__ = sorted(_HOMES)


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
