"""`AttentionSettings`: how attention is computed, everything but the inputs and the weights.

Plain Python (no TensorFlow), so the sidebar can build settings before TensorFlow has loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.core.checks import check_choice, describe
from attnviz.core.masks import MASK_VALUES, check_window
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

    def __post_init__(self) -> None:
        check_choice(self.score, "score", SCORE_KINDS)
        check_choice(self.mask_value, "mask_value", MASK_VALUES)
        check_window(self.window)
        check_seed(self.seed)
        for name in ("scale", "causal"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(
                    f"`{name}` must be True or False. Received: {describe(getattr(self, name))}."
                )
