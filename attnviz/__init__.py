"""attnviz: attention you can see, computed exactly as the textbooks define it.

The package is grouped by concept: `core` (limits, checks, masks and their rules, position
schemes, score layers, attention, the KV cache, tiled attention, statistics), `inputs` (matrix
parsing, sentences → Q/K/V, presets, the position probe), `transformer` (multi-head with shared
K/V heads, RoPE as a Keras layer, the three ways, the decoder), `drawing` (figures, lines, the
model view, downloads), `learn` (trained seq2seq attention), `heads` (any Keras model's
attention, head summaries, rollout) and `ui` (the Streamlit app, the only code that imports
streamlit).

The public names below are imported on first use, so `import attnviz` (and drawing) does not
import TensorFlow until an attention function is asked for.
"""

from __future__ import annotations

import os

from attnviz.core.lazy import lazy_names

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep TensorFlow's start-up chatter quiet

_HOMES = {  # public name -> the module that defines it
    "AttentionResult": "attnviz.core.attention",
    "AttentionSettings": "attnviz.core.settings",
    "ScoredAttention": "attnviz.core.attention",
    "attention_stages": "attnviz.core.attention",
    "compute_attention": "attnviz.core.attention",
    "MaskSpec": "attnviz.core.mask_spec",
    "alibi_bias": "attnviz.core.positions",
    "alibi_slopes": "attnviz.core.positions",
    "apply_rope": "attnviz.core.positions",
    "rope_frequencies": "attnviz.core.positions",
    "CacheDecoding": "attnviz.core.kv_cache",
    "decode_with_cache": "attnviz.core.kv_cache",
    "TiledAttention": "attnviz.core.tiled",
    "tiled_attention": "attnviz.core.tiled",
    "AttentionScore": "attnviz.core.scoring",
    "ConcatScore": "attnviz.core.scoring",
    "DotScore": "attnviz.core.scoring",
    "GeneralScore": "attnviz.core.scoring",
    "load_matrix": "attnviz.inputs.parsing",
    "parse_csv_bytes": "attnviz.inputs.parsing",
    "parse_json_text": "attnviz.inputs.parsing",
    "parse_matrix_text": "attnviz.inputs.parsing",
    "parse_npy_bytes": "attnviz.inputs.parsing",
    "PAD_TOKEN": "attnviz.inputs.text",
    "EncodedSentences": "attnviz.inputs.text",
    "encode_sentences": "attnviz.inputs.text",
    "positional_encoding": "attnviz.inputs.text",
    "tokenize": "attnviz.inputs.text",
    "position_probe": "attnviz.inputs.probe",
    "compute_multihead": "attnviz.transformer.multihead",
    "head_costs": "attnviz.transformer.head_weights",
    "RotaryPositions": "attnviz.transformer.rotary",
    "inspect": "attnviz.drawing.inspection_page",
    "head_summaries": "attnviz.heads.summaries",
    "attention_rollout": "attnviz.heads.rollout",
    "model_view": "attnviz.drawing.model_view",
    "view": "attnviz.viewer",
}

__all__ = sorted(_HOMES)
__version__ = "0.1.0"


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
