"""attnviz: attention you can see, computed exactly as the textbooks define it."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep TensorFlow's start-up chatter quiet

from attnviz.attention import (  # noqa: E402
    AttentionResult,
    AttentionSettings,
    ScoredAttention,
    attention_stages,
    compute_attention,
)
from attnviz.scoring import AttentionScore, ConcatScore, DotScore, GeneralScore  # noqa: E402

__all__ = [
    "AttentionResult",
    "AttentionScore",
    "AttentionSettings",
    "ConcatScore",
    "DotScore",
    "GeneralScore",
    "ScoredAttention",
    "attention_stages",
    "compute_attention",
]
__version__ = "0.1.0"
