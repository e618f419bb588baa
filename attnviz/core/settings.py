"""`AttentionSettings`: how attention is computed, everything but the inputs and the weights.

Plain Python (no TensorFlow), so the sidebar can build settings before TensorFlow has loaded.
Every field is a keyword argument of `compute_attention` of the same name:
`compute_attention(q, k, v, **dataclasses.asdict(settings))`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.core.checks import check_choice, check_heads, check_int, describe
from attnviz.core.mask_spec import MaskSpec
from attnviz.core.masks import MASK_VALUES
from attnviz.core.positions import ATTENTION_POSITIONS, DEFAULT_ROPE_THETA, check_rope_theta
from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.core.seeding import check_seed


@dataclass(frozen=True)
class AttentionSettings:
    """How attention is computed; everything but the inputs and the weights."""

    score: str = "dot"  # "dot", "general" or "concat"
    scale: bool = True  # divide scores by sqrt(Dk)
    causal: bool = False  # query i attends key j only if j <= i
    window: int | None = None  # local attention: only if |i - j| <= window; None = off
    mask_value: str = "-inf"  # "-inf" (fully masked rows give zeros) or "-1e9" (Keras tutorials)
    seed: int = 0  # draws the learned scoring weights not given in `params`
    sinks: int | None = None  # the first k keys stay visible through window and chunks; None = off
    documents: tuple[int, ...] | None = None  # packed document lengths (block-diagonal); None = off
    prefix: int | None = None  # prefix-LM: bidirectional over the first P, causal after; None = off
    chunk: int | None = None  # chunked attention: only within one's chunk of C tokens; None = off
    position: str = "none"  # "none", "rope" (rotate Q and K) or "alibi" (add a distance penalty)
    rope_theta: float = DEFAULT_ROPE_THETA  # RoPE base θ: pair p turns by position × θ^(-2p/D)
    alibi_heads: int = 8  # ALiBi in one head: the slope of head `alibi_head` of this many heads
    alibi_head: int = 0  # that head, from 0 (slope 2^(-8(h+1)/H) for H a power of two)

    def __post_init__(self) -> None:
        check_choice(self.score, "score", SCORE_KINDS)
        check_choice(self.mask_value, "mask_value", MASK_VALUES)
        check_seed(self.seed)
        if not isinstance(self.scale, (bool, np.bool_)):
            raise ValueError(f"`scale` must be True or False. Received: {describe(self.scale)}.")
        spec = self.mask_spec  # checks causal, window, sinks, documents, prefix and chunk
        object.__setattr__(self, "documents", spec.documents)  # a list becomes a tuple
        check_choice(self.position, "position", ATTENTION_POSITIONS)
        object.__setattr__(self, "rope_theta", check_rope_theta(self.rope_theta))
        heads = check_heads(self.alibi_heads, "alibi_heads")
        if isinstance(self.alibi_head, (int, np.integer)) and not 0 <= self.alibi_head < heads:
            raise ValueError(
                f"`alibi_head` must be one of the {heads} ALiBi heads, from 0 to {heads - 1}. "
                f"Received: {self.alibi_head}."
            )
        check_int(self.alibi_head, "alibi_head", low=0, high=heads - 1)

    @property
    def mask_spec(self) -> MaskSpec:
        """The position rules of the mask (everything but key padding)."""
        return MaskSpec(
            self.causal, self.window, self.sinks, self.documents, self.prefix, self.chunk
        )
