"""What some layer families need beyond the general mechanism: how their batch axis is folded,
masks they add as small numbers, and remarks a view should show.

Shape letters: B batch, H heads, T queries, S keys, W windows, N tokens in a window.

Every function here takes the owner layer (and the layer that called it) and returns a fact, or
a neutral default for layers it does not concern:

- `key_value_heads`: how many key/value heads a grouped-query layer declares;
- `heads_in_batch`: layers that fold heads into the batch axis (ViTDet's and SAM's windowed
  attention compute `(B·H, N, N)`) give the number of heads to unfold, innermost;
- `fold_name`: what the extra batch entries of layers that attend within groups are (Swin's and
  ViTDet's windows, VideoPrism's frames and patches);
- `window_mask`: Swin's shifted windows mask tokens that came from different image regions by
  adding −100 (too mild for the rule that reads masks from the logits): it is rebuilt here from
  the block's window and shift, as Swin builds it;
- `notes`: sliding windows, soft-capped logits, sink logits, reduced keys, merged self- and
  cross-attention.
"""

from __future__ import annotations

from typing import Any

import keras
import numpy as np

HEAD_COUNTS = ("num_heads", "num_query_heads", "num_attention_heads", "heads")
KEY_VALUE_COUNTS = ("num_key_value_heads", "num_kv_heads", "effective_num_kv_heads")


def head_count(layer: keras.layers.Layer) -> int | None:
    """The number of (query) heads the layer says it has, or None."""
    for name in HEAD_COUNTS:
        for spelled in (name, f"_{name}"):
            value = getattr(layer, spelled, None)
            if isinstance(value, int) and value > 0:
                return value
    return None


def key_value_heads(layer: keras.layers.Layer) -> int | None:
    """The number of key/value heads a grouped-query layer declares, or None."""
    for name in KEY_VALUE_COUNTS:
        for spelled in (name, f"_{name}"):
            value = getattr(layer, spelled, None)
            if isinstance(value, int) and value > 0:
                return value
    return None


def heads_in_batch(layer: keras.layers.Layer, heads: int, batch: int) -> int:
    """How many heads the layer folded into a batch axis of `batch` entries whose weights show
    `heads` heads: its head count if it has several and shows one; else 1."""
    count = head_count(layer)
    if heads == 1 and count and count > 1 and batch % count == 0:
        return count
    return 1


def fold_name(layer: keras.layers.Layer, caller: Any, path: str) -> str:
    """What each of a group-wise layer's batch entries is: "windows", "frames", "patches" or
    "groups" (e.g. a pipeline that doubles its batch for classifier-free guidance)."""
    windowed = any(getattr(x, "window_size", None) for x in (layer, caller) if x is not None)
    if windowed or "window" in path.lower():
        return "windows"
    if "spatial" in path:
        return "frames"  # VideoPrism: spatial attention within each frame
    if "temporal" in path:
        return "patches"  # VideoPrism: temporal attention across frames, per patch
    return "groups"


def window_mask(layer: keras.layers.Layer, caller: Any, entries: int) -> np.ndarray | None:
    """`(entries, N, N)` bool, True = may attend, for a Swin window attention called by a
    shifted block; None for other layers (and unshifted or padded windows)."""
    shift, size = getattr(caller, "shift_size", 0), getattr(caller, "window_size", None)
    resolution = getattr(caller, "input_resolution", None)
    if not shift or not isinstance(size, int) or resolution is None:
        return None
    height, width = resolution
    if height % size or width % size:
        return None
    regions = np.zeros((height, width), dtype=int)
    spans = lambda n: ((0, n - size), (n - size, n - shift), (n - shift, n))  # noqa: E731
    for i, (top, bottom) in enumerate(spans(height)):
        for j, (left, right) in enumerate(spans(width)):
            regions[top:bottom, left:right] = 3 * i + j
    windows = regions.reshape(height // size, size, width // size, size).transpose(0, 2, 1, 3)
    ids = windows.reshape(-1, size * size)  # (W, N) region of each token of each window
    allowed = ids[:, :, None] == ids[:, None, :]  # (W, N, N)
    if entries % len(allowed):
        return None
    return np.tile(allowed, (entries // len(allowed), 1, 1))  # (B·W, N, N), windows innermost


def notes(layer: keras.layers.Layer) -> tuple[str, ...]:
    """Remarks on how this layer's weights were made, for a view."""
    found = []
    window = _first(layer, ("sliding_window", "sliding_window_size"))
    sliding = getattr(layer, "use_sliding_window_attention", window is not None)
    if sliding and isinstance(window, int) and window < 2**15:
        found.append(f"Sliding window: each query sees at most {window} keys back.")
    cap = _first(layer, ("logit_soft_cap", "attention_logit_soft_cap", "attn_logit_softcapping"))
    if isinstance(cap, (int, float)):
        found.append(f"Soft-capped logits: cap·tanh(scores / cap), cap {cap:g}.")
    if getattr(layer, "sinks", None) is not None:
        found.append("Sink logits: one learned logit per head joins the softmax, so each "
                     "row sums to less than 1 (the rest goes to the sink).")  # fmt: skip
    ratio = getattr(layer, "sr_ratio", 1)
    if isinstance(ratio, int) and ratio > 1:
        found.append(f"Reduced keys: keys and values come from the tokens pooled {ratio}×{ratio} "
                     "by a strided convolution.")  # fmt: skip
    if "merged" in type(layer).__name__.lower():
        found.append("Merged attention: the decoder's own keys and the encoder's keys share one "
                     "softmax (self-attention keys first).")  # fmt: skip
    return tuple(found)


def _first(layer: Any, names: tuple[str, ...]) -> Any:
    for name in names:
        for spelled in (name, f"_{name}"):
            value = getattr(layer, spelled, None)
            if value is not None and not callable(value):
                return value
    return None
