"""Attention masks: which key each query may attend.

Shape letters: B batch, T queries, S keys. A mask is a bool array, True = allowed.
The position rules (causal, window, sinks, packed documents, prefix-LM, chunks) live in
`mask_spec`; `build_mask` applies them and ANDs the key padding mask of each sequence on top.
Pure numpy: building a mask never needs TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnviz.core.checks import describe
from attnviz.core.mask_spec import MaskSpec, check_window

__all__ = [  # check_window lives with the other rules in mask_spec; re-exported for old callers
    "MASK_VALUES",
    "NEG_LARGE",
    "build_mask",
    "causal_mask",
    "check_padding_mask",
    "check_window",
    "window_mask",
]

MASK_VALUES = ("-inf", "-1e9")  # what a blocked logit becomes (see attention.attention_stages)
NEG_LARGE = -1e9  # what the Keras tutorials add to masked logits (float32)


def causal_mask(t: int, s: int) -> np.ndarray:
    """Look-ahead mask: query i may attend key j only if j <= i.

    Returns:
        Bool array `(T, S)`.
    """
    return np.tri(t, s, dtype=bool)  # (T, S), True on and below the diagonal


def window_mask(t: int, s: int, window: int) -> np.ndarray:
    """Local-attention mask: query i may attend key j only if |i - j| <= window.

    Returns:
        Bool array `(T, S)`.
    """
    rows = np.arange(t)[:, None]  # (T, 1)
    cols = np.arange(s)[None, :]  # (1, S)
    return np.abs(rows - cols) <= window  # (T, S)


def check_padding_mask(
    key_padding_mask: Any, batch: int | None, s: int, *, name: str = "key_padding_mask"
) -> np.ndarray:
    """Validate a key padding mask and return it as bool `(B, S)` (or `(1, S)` when unbatched).

    Args:
        key_padding_mask: bool-like `(S,)` or `(B, S)`; True = real token, False = padding.
        batch: the batch size B of the inputs, or None when the inputs have no batch axis.
        s: the number of keys S.
        name: what error messages call the mask.
    """
    try:
        padding = np.asarray(key_padding_mask)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"`{name}` could not be read as an array of True/False. "
            f"Received: {describe(key_padding_mask)}."
        ) from err
    if padding.dtype != bool:
        if padding.dtype.kind not in "iuf" or not np.isin(padding, (0, 1)).all():
            raise ValueError(
                f"`{name}` must hold True/False (or 1/0) values, True = real token. "
                f"Received: {describe(key_padding_mask)}."
            )
        padding = padding.astype(bool)
    expected = f"({s},)" if batch is None else f"({s},) or ({batch}, {s})"
    if padding.ndim == 1:
        padding = padding[None, :]  # (1, S)
    elif padding.ndim != 2 or batch is None:
        raise ValueError(
            f"`{name}` must have shape {expected}: one entry per key. "
            f"Received shape {padding.shape}."
        )
    if padding.shape[-1] != s or padding.shape[0] not in (1, batch or 1):
        raise ValueError(
            f"`{name}` must have shape {expected}: one entry per key "
            f"(the key matrix has {s} rows). Received shape {padding.shape}."
        )
    return padding


def build_mask(
    batch: int,
    t: int,
    s: int,
    *,
    causal: bool = False,
    window: int | None = None,
    key_padding_mask: np.ndarray | None = None,
    sinks: int | None = None,
    documents: tuple[int, ...] | None = None,
    prefix: int | None = None,
    chunk: int | None = None,
) -> np.ndarray:
    """Combine the position rules of `mask_spec.MaskSpec` with the key padding mask (AND).

    Args:
        batch: B.
        t: number of queries T.
        s: number of keys S.
        causal: apply the look-ahead mask.
        window: local-attention half-width w >= 0, or None for no window.
        key_padding_mask: checked bool `(B or 1, S)` from `check_padding_mask`, or None.
        sinks: the first k keys stay visible through the window and chunks, or None.
        documents: packed document lengths adding up to S (block-diagonal), or None.
        prefix: prefix-LM: bidirectional over the first P positions, causal after, or None.
        chunk: chunk size C: attend only within one's chunk, or None.

    Returns:
        Bool array `(B, T, S)`, True = allowed.

    Raises:
        ValueError: when a rule is invalid or does not fit T and S.
    """
    spec = MaskSpec(causal, window, sinks, documents, prefix, chunk)
    spec.check_fits(t, s)
    mask = spec.allowed(np.arange(t), np.arange(s))  # (T, S)
    mask = np.broadcast_to(mask, (batch, t, s))  # (B, T, S)
    if key_padding_mask is not None:
        mask = mask & key_padding_mask[:, None, :]  # (B, T, S) & (B, 1, S)
    return np.ascontiguousarray(mask)
