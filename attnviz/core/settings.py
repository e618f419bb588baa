"""`AttentionSettings`: how attention is computed, everything but the inputs and the weights.

The one declaration of the attention keywords. `compute_attention`, `compute_multihead`,
`tiled_attention` and `decode_with_cache` take either `settings=AttentionSettings(...)` or the
same fields as keywords (not both), and turn them into settings with one helper,
`AttentionSettings.from_keywords`. Settings are built by keyword only.

Plain Python (no TensorFlow), so the sidebar can build settings before TensorFlow has loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from attnviz.core.checks import check_choice, check_heads, check_int, describe
from attnviz.core.mask_spec import MaskSpec
from attnviz.core.masks import MASK_VALUES
from attnviz.core.positions import ATTENTION_POSITIONS, DEFAULT_ROPE_THETA, check_rope_theta
from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.core.seeding import check_seed


@dataclass(frozen=True, kw_only=True)
class AttentionSettings:
    """How attention is computed; everything but the inputs and the weights.

    Every field is also a keyword of `compute_attention` (and of the other attention functions,
    less the fields they decide themselves). Build it by keyword; every value is checked.

    Attributes:
        score: "dot" (`q·k`, needs Dq == Dk), "general" (`q W kᵀ`) or "concat"
            (`v·tanh(q W_q + k W_k [+ b])`).
        scale: divide the scores by sqrt(Dk).
        causal: query i may attend key j only if j <= i.
        window: local attention: query i may attend key j only if |i - j| <= window; None = off.
        mask_value: "-inf" (a fully masked row gets zero weights) or "-1e9" (added to masked
            logits in float32, as the Keras tutorials do: a fully masked row comes out uniform).
        seed: seed of the learned scoring weights not given in `params`.
        sinks: attention sinks: the first k keys stay visible through `window` and `chunk`;
            None = off.
        documents: packed documents: their lengths, adding up to S; each query sees only keys
            of its own document (block-diagonal); None = off.
        prefix: prefix-LM: the first P positions see each other, causal after (in place of
            `causal`); None = off.
        chunk: chunked attention: only keys of the query's own chunk of C positions (causal
            within the chunk with `causal=True`); None = off. See `mask_spec` for how the rules
            combine.
        position: "none", "rope" (rotate the feature pairs of Q and K by position; Dq and Dk
            even) or "alibi" (add `−m·|i − j|` to the scores). Query i and key j sit at
            positions i and j.
        rope_theta: RoPE's base θ: pair p turns by position × θ^(-2p/D).
        alibi_heads: ALiBi in one head: the slope m is that of head `alibi_head` of this many
            heads (any number: 32 for MPT-7B and BLOOM-7B, 112 for BLOOM-176B).
        alibi_head: that head, from 0 (slope 2^(-8(h+1)/H) for H a power of two).
    """

    score: str = "dot"  # "dot", "general" or "concat"
    scale: bool = True  # divide scores by sqrt(Dk)
    causal: bool = False  # query i attends key j only if j <= i
    window: int | None = None  # local attention: only if |i - j| <= window; None = off
    mask_value: str = "-inf"  # "-inf" (fully masked rows give zeros) or "-1e9" (Keras tutorials)
    seed: int = 0  # draws the learned scoring weights not given in `params`
    sinks: int | None = None  # the first k keys stay visible through window and chunk; None = off
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
            causal=self.causal,
            window=self.window,
            sinks=self.sinks,
            documents=self.documents,
            prefix=self.prefix,
            chunk=self.chunk,
        )

    @classmethod
    def from_keywords(
        cls,
        settings: AttentionSettings | None,
        keywords: Mapping[str, Any],
        *,
        function: str,
        fixed: Mapping[str, Any] | None = None,
        derived: Mapping[str, Any] | None = None,
    ) -> AttentionSettings:
        """The settings a function computes with: the `settings` object, or its keywords.

        The one place where the attention keywords become settings: each attention function
        takes `settings=` or the keywords (the fields of `AttentionSettings`) and hands both
        here.

        Args:
            settings: the `AttentionSettings` given, or None.
            keywords: the attention keywords given, by name (empty when `settings` is given).
            function: the function's name, for messages ("compute_attention").
            fixed: fields the function only computes one way (tiles score with the dot
                product; decoding is causal): not keywords of it, and `settings` must agree.
            derived: fields the function sets from its other arguments (multi-head ALiBi's
                heads are `num_heads`): not keywords of it, and replaced in `settings`.

        Returns:
            The checked `AttentionSettings`.

        Raises:
            TypeError: for a keyword that is not one of the function's attention keywords
                (the message lists them).
            ValueError: when both `settings` and keywords are given, when `settings` is not an
                `AttentionSettings` or disagrees with `fixed`, or for a value not allowed.
        """
        fixed, derived = dict(fixed or {}), dict(derived or {})
        takes = [name for name in SETTING_NAMES if name not in fixed and name not in derived]
        unknown = [name for name in keywords if name not in takes]
        if unknown:
            raise TypeError(_unknown_message(function, unknown, takes, {**fixed, **derived}))
        if settings is None:
            return cls(**fixed, **derived, **keywords)
        if keywords:
            named = ", ".join(f"`{name}`" for name in keywords)
            raise ValueError(
                f"`{function}` takes `settings=` or the attention keywords, not both. Received "
                f"`settings` and {named}. Put them into the settings: "
                f"dataclasses.replace(settings, {', '.join(f'{n}=...' for n in keywords)})."
            )
        if not isinstance(settings, AttentionSettings):
            raise ValueError(
                f"`settings` must be an AttentionSettings (or None, to give the keywords). "
                f"Received: {describe(settings)}."
            )
        for name, value in fixed.items():
            if getattr(settings, name) != value:
                raise ValueError(
                    f"`{function}` computes with {name}={value!r} only: `settings.{name}` must be "
                    f"{value!r}. Received: {getattr(settings, name)!r}. Use "
                    f"dataclasses.replace(settings, {name}={value!r})."
                )
        return replace(settings, **derived) if derived else settings


SETTING_NAMES: tuple[str, ...] = tuple(f.name for f in fields(AttentionSettings))  # in order


def _unknown_message(
    function: str, unknown: list[str], takes: list[str], decided: Mapping[str, Any]
) -> str:
    """What `from_keywords` says of keywords a function does not take, and which it does."""
    named = ", ".join(f"`{name}`" for name in unknown)
    message = (
        f"`{function}` got {'an unknown keyword' if len(unknown) == 1 else 'unknown keywords'} "
        f"{named}. Its attention keywords are: {', '.join(takes)}"
    )
    own = [f"{name}={value!r}" for name, value in decided.items() if name in unknown]
    if own:
        message += f"; it sets {', '.join(own)} itself"
    return message + " (the fields of AttentionSettings; or pass settings=AttentionSettings(...))."
