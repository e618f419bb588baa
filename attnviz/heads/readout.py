"""From what the tape captured to what a view needs: heads laid out, masks read, position
scheme named, shared key/value heads counted.

Shape letters: B batch, H heads, T queries, S keys, Dk and Dv features per head, G groups.

The mask. A layer masks a key by pushing its logit far down before the softmax: Keras sets
−1e9 (−3e4 in float16), others add −1e4, or use the dtype's lowest number or −∞. So a cell is
read as masked when its logit is at most `MASKED_LOGIT`, −5,000: every mask value in use is
below it, and no real score comes near it (scores are `q·k/√Dk`; soft-capping holds them to
±50; ALiBi's penalty, its largest slope ½ times the distance, stays above −2,048 within
attnviz's 4,096 tokens). Swin's shifted windows add only −100: `adapters` rebuilds that mask.
The mask is `(B, T, S)` when every head masks alike (the usual case, whatever shape the layer
was given: `(T, S)`, `(B, 1, 1, S)`, `(B, 1, T, S)`, implicit Keras masks...), with a per-head
`(B, H, T, S)` beside it when the heads differ. Rows where every key is masked (padding
queries) hold what the layer computed: zeros from Keras's `Softmax` layer, even weights from
its fused kernel.

Folded batches. Windowed attention computes each window as its own batch entry. The weights
keep that layout `(B·G, H, N, N)`, G groups per sequence, innermost; `fold` says so. Layers that
fold heads into the batch (`(B·H, N, N)`) are unfolded into heads first (see `adapters`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.heads import adapters
from attnviz.heads.capture import Captured
from attnviz.heads.positions import PositionScheme, position_scheme

MASKED_LOGIT = -5e3  # a logit at or below this was masked (see module doc)


@dataclass(frozen=True)
class Fold:
    """How a group-wise layer laid out its batch axis."""

    what: str  # what each group is: "windows", "frames", "patches" or "groups"
    count: int  # G groups per sequence: the batch axis holds B·G entries, groups innermost


@dataclass(frozen=True)
class Readout:
    """One captured attention, ready to be frozen into an `AttentionCall`."""

    weights: np.ndarray  # (B·G, H, T, S) float32
    logits: np.ndarray | None  # (B·G, H, T, S) float32
    query_heads: np.ndarray | None  # (B·G, H, T, Dk)
    key_heads: np.ndarray | None  # (B·G, H, S, Dk)
    value_heads: np.ndarray | None  # (B·G, H, S, Dv)
    mask: np.ndarray | None  # (B·G, T, S) bool, True = may attend in some head; None = none masked
    head_mask: np.ndarray | None  # (B·G, H, T, S) bool when heads mask differently, else None
    kv_heads: tuple[int, ...]  # per query head, the key/value head it uses
    position: PositionScheme  # the layer's position scheme
    fold: Fold | None  # None when the batch axis is the model's own
    notes: tuple[str, ...]  # remarks for a view


def read_out(captured: Captured, batch: int | None) -> Readout:
    """The `Readout` of `captured`; `batch` is the model's batch size B (None if unknown)."""
    layer, chain = captured.owner.layer, captured.owner.chain
    arrays = _unfold_heads(captured, layer)
    weights, logits = arrays[0], arrays[1]
    caller = chain[-2].caller if len(chain) > 1 else None
    masked = _mask(logits)
    window = adapters.window_mask(layer, caller, weights.shape[0])
    notes = adapters.notes(layer)
    if window is not None:
        masked = window[:, None] if masked is None else masked & window[:, None]
        shifted = (
            f"Shifted windows: the image was rolled by {caller.shift_size} tokens first; tokens "
            "from different regions of a window cannot attend each other."
        )
        notes += (shifted,)
    mask, head_mask = _split_mask(masked, weights.shape)
    notes += _query_mask_note(mask)
    return Readout(
        weights=weights,
        logits=logits,
        query_heads=arrays[2],
        key_heads=arrays[3],
        value_heads=arrays[4],
        mask=mask,
        head_mask=head_mask,
        kv_heads=_kv_heads(layer, weights.shape[1], captured.key_heads),
        position=position_scheme(layer),
        fold=_fold(weights.shape[0], batch, layer, caller, captured.owner.path),
        notes=notes,
    )


def _unfold_heads(captured: Captured, layer) -> list[np.ndarray | None]:
    """weights, logits, Q, K, V; heads the layer folded into the batch moved back to heads."""
    arrays = [captured.weights, captured.logits, captured.query, captured.key, captured.value]
    entries, heads = captured.weights.shape[:2]
    folded = adapters.heads_in_batch(layer, heads, entries)
    if folded == 1:
        return arrays
    unfold = lambda a: a.reshape(entries // folded, folded, *a.shape[2:])  # noqa: E731
    return [None if a is None else unfold(a) for a in arrays]  # (B·H, 1, ·, ·) -> (B, H, ·, ·)


def _mask(logits: np.ndarray | None) -> np.ndarray | None:
    """`(B, H, T, S)` bool, True = may attend, from the logits; None if none is masked."""
    if logits is None:
        return None
    allowed = logits > MASKED_LOGIT  # NaN (never produced by a mask) counts as masked
    return None if allowed.all() else allowed


def _query_mask_note(mask: np.ndarray | None) -> tuple[str, ...]:
    """A remark when the mask `(B, T, S)` hides whole query rows whose positions stay visible
    as keys (ESM's and RoFormerV2's padding mask is `(B, 1, S, 1)`: a mask on queries)."""
    if mask is None or mask.shape[1] != mask.shape[2]:
        return ()
    hidden = ~mask.any(axis=2)  # (B, T): rows with no key allowed
    if not (hidden & mask.any(axis=1)).any():  # ... whose position some query still sees
        return ()
    return ("Query mask: the padded positions' query rows are masked whole, but as keys "
            "they stay visible to the other queries. A masked row holds what the layer's "
            "softmax gave it.",)  # fmt: skip


def _split_mask(masked: np.ndarray | None, shape: tuple) -> tuple:
    """(mask (B, T, S), head_mask (B, H, T, S) or None) from a mask broadcastable to `shape`."""
    if masked is None:
        return None, None
    full = np.broadcast_to(masked, shape)
    shared = full[:, 0]
    if (full == shared[:, None]).all():
        return shared.copy(), None
    return full.any(axis=1), full.copy()


def _kv_heads(layer, heads: int, made: int | None) -> tuple[int, ...]:
    """Per query head, the index of the key/value head it uses: as the layer declares its
    key/value heads (grouped-query layers repeat them before Q·Kᵀ), else as Q·Kᵀ had them."""
    count = adapters.key_value_heads(layer) or made or heads
    groups = heads // count if heads % count == 0 else 1
    return tuple(h // groups for h in range(heads))


def _fold(entries: int, batch: int | None, layer, caller, path: str) -> Fold | None:
    """The fold of a batch axis of `entries` entries, for a model batch of `batch`."""
    if not batch or entries == batch or entries % batch:
        return None
    return Fold(adapters.fold_name(layer, caller, path), entries // batch)
