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
from attnviz.parsing import (  # noqa: E402
    load_matrix,
    parse_csv_bytes,
    parse_json_text,
    parse_matrix_text,
    parse_npy_bytes,
)
from attnviz.scoring import AttentionScore, ConcatScore, DotScore, GeneralScore  # noqa: E402
from attnviz.text import (  # noqa: E402
    PAD_TOKEN,
    EncodedSentences,
    encode_sentences,
    positional_encoding,
    tokenize,
)

__all__ = [
    "PAD_TOKEN",
    "AttentionResult",
    "AttentionScore",
    "AttentionSettings",
    "ConcatScore",
    "DotScore",
    "EncodedSentences",
    "GeneralScore",
    "ScoredAttention",
    "attention_stages",
    "compute_attention",
    "encode_sentences",
    "load_matrix",
    "parse_csv_bytes",
    "parse_json_text",
    "parse_matrix_text",
    "parse_npy_bytes",
    "positional_encoding",
    "tokenize",
]
__version__ = "0.1.0"
