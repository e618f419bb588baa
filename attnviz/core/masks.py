"""Attention masks: which key each query may attend.

Shape letters: B batch, T queries, S keys. A mask is a bool array, True = allowed.
Masks combine with AND, so a key is allowed only when every active mask allows it.
Pure numpy: building a mask never needs TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnviz.core.checks import check_int, describe
from attnviz.core.limits import MAX_TOKENS

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
) -> np.ndarray:
    """Combine the causal, window and key padding masks with AND.

    Args:
        batch: B.
        t: number of queries T.
        s: number of keys S.
        causal: apply the look-ahead mask.
        window: local-attention half-width w >= 0, or None for no window.
        key_padding_mask: checked bool `(B or 1, S)` from `check_padding_mask`, or None.

    Returns:
        Bool array `(B, T, S)`, True = allowed.
    """
    mask = causal_mask(t, s) if causal else np.ones((t, s), dtype=bool)  # (T, S)
    if window is not None:
        mask &= window_mask(t, s, window)
    mask = np.broadcast_to(mask, (batch, t, s))  # (B, T, S)
    if key_padding_mask is not None:
        mask = mask & key_padding_mask[:, None, :]  # (B, T, S) & (B, 1, S)
    return np.ascontiguousarray(mask)


def check_window(window: Any) -> int | None:
    """Validate the local-attention window: None (off) or a whole number from 0."""
    if window is None:
        return None
    return check_int(window, "window", low=0, high=MAX_TOKENS)
