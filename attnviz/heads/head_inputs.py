"""One inspected head as the explorer opens it: its Q, K and V, the scaling and mask that make
the explorer's `softmax(q·kᵀ/√Dk)` the head's own weights, and how far they agree.

Shape letters: T queries, S keys, Dk and Dv features per head.

The recorded query and key heads are the operands of the layer's `Q·Kᵀ` (after RoPE). Layers
scale in different places: Keras's `MultiHeadAttention` multiplies the queries by 1/√Dk before
the product (so the logits are q·kᵀ as recorded), Llama's divides the scores after it (the
logits are q·kᵀ/√Dk), Gemma scales by its own number. The factor is read from the logits: 1 or
1/√Dk (the explorer's √Dk switch off or on), else the one number that fits, folded into Q. Where
the logits are not q·kᵀ times one number (ALiBi's or T5's bias, soft-capping, sink logits) or
the mask is neither none nor causal (padding, a sliding window), the explorer's weights differ
from the head's and `reasons` say why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.masks import causal_mask

TOLERANCE = 1e-5  # largest weight difference still counted as the same head
FIT = 1e-4  # largest logit error, relative to the largest logit, of a fitting factor
UNSEEN = "the weights differ for a reason the record does not show"


@dataclass(frozen=True)
class HeadInputs:
    """What the explorer is given for one head, and how well it reproduces the head."""

    query: np.ndarray  # (T, Dk) float32: the recorded queries (times `factor` if not 1 or 1/√Dk)
    key: np.ndarray  # (S, Dk) float32: the recorded keys (after RoPE)
    value: np.ndarray  # (S, Dv) float32: the recorded values
    scale: bool  # the explorer divides q·kᵀ by √Dk
    causal: bool  # the explorer applies its causal mask
    factor: float  # what the layer multiplied the recorded q·kᵀ by
    difference: float  # largest |explorer's weight − the head's weight|
    reasons: tuple[str, ...]  # why they differ (empty when within `TOLERANCE`)

    @property
    def reproduced(self) -> bool:
        """Whether the explorer gives this head's weights (within `TOLERANCE`)."""
        return self.difference <= TOLERANCE


def head_inputs(call: Any, head: int, item: int = 0) -> HeadInputs:
    """The explorer's inputs for head `head` of sequence `item` of an `AttentionCall`.

    Raises:
        ValueError: if the call has no recorded query, key or value heads, or `head` or `item`
            is out of range.
    """
    if call.query_heads is None or call.key_heads is None or call.value_heads is None:
        raise ValueError(
            f"The attention {call.key!r} has no recorded Q, K and V heads (its scores were not "
            "a product of queries and keys), so it cannot be opened in the explorer."
        )
    batch, heads = call.weights.shape[:2]
    if not (0 <= head < heads and 0 <= item < batch):
        raise ValueError(
            f"No head {head} of sequence {item}: {call.key!r} has {heads} heads and {batch} "
            "sequences."
        )
    q = call.query_heads[item, head].astype(np.float64)  # (T, Dk)
    k = call.key_heads[item, head].astype(np.float64)  # (S, Dk)
    weights = call.weights[item, head].astype(np.float64)  # (T, S)
    allowed = call.head_masks[item, head]  # (T, S) True = may attend
    logits = None if call.logits is None else call.logits[item, head].astype(np.float64)
    scores = np.einsum("td,sd->ts", q, k)  # (T, Dk) x (S, Dk) -> (T, S), without BLAS threads
    # (BLAS's thread pool woke up slowly beside TensorFlow's in a server: 50 ms, not 1 ms)
    factor, fits = _factor(scores, logits, allowed, weights, q.shape[1])
    causal, mask_reasons = _explorer_mask(allowed)
    unit = 1 / np.sqrt(q.shape[1])
    scale = bool(np.isclose(factor, unit, rtol=1e-6)) and not np.isclose(factor, 1.0)
    folded = factor if not scale and factor != 1.0 else 1.0  # what Q is multiplied by
    explorer = _softmax(scores * factor, causal_mask(*scores.shape) if causal else None)
    difference = float(np.abs(explorer - weights).max())
    reasons: tuple[str, ...] = ()
    if difference > TOLERANCE:
        reasons = (*_logit_reasons(call, fits), *mask_reasons) or (UNSEEN,)
    return HeadInputs(
        query=(q * folded).astype(np.float32),
        key=call.key_heads[item, head].astype(np.float32),
        value=call.value_heads[item, head].astype(np.float32),
        scale=scale,
        causal=causal,
        factor=float(factor),
        difference=difference,
        reasons=reasons,
    )


def _factor(scores, logits, allowed, weights, d_k: int) -> tuple[float, bool]:
    """`(factor, fits)`: the number the layer multiplied q·kᵀ by (1, 1/√Dk, or the least-squares
    fit), and whether the logits are exactly that (on the allowed cells)."""
    candidates = (1.0, 1 / np.sqrt(d_k))
    if logits is None:  # no logits recorded: the candidate whose softmax is the weights
        errors = [np.abs(_softmax(scores * c, allowed) - weights).max() for c in candidates]
        return candidates[int(np.argmin(errors))], bool(min(errors) <= TOLERANCE)
    wanted, made = logits[allowed], scores[allowed]  # (N,) each
    size = max(float(np.abs(wanted).max(initial=0.0)), 1e-12)
    errors = [float(np.abs(wanted - c * made).max(initial=0.0)) / size for c in candidates]
    best = int(np.argmin(errors))
    if errors[best] <= FIT:
        return candidates[best], True
    power = float(made @ made)
    fitted = float(wanted @ made) / power if power > 0 else candidates[best]
    if fitted > 0 and np.abs(wanted - fitted * made).max(initial=0.0) / size <= FIT:
        return fitted, True
    return candidates[best], False


def _explorer_mask(allowed: np.ndarray) -> tuple[bool, tuple[str, ...]]:
    """`(causal, reasons)`: the explorer's mask nearest the head's (causal, or none), and what
    it cannot show of the head's mask."""
    causal = causal_mask(*allowed.shape)
    if allowed.all():
        return False, ()
    if np.array_equal(allowed, causal):
        return True, ()
    within = not (allowed & ~causal).any()  # nothing above the diagonal is allowed
    extra = int((~allowed & causal).sum() if within else (~allowed).sum())
    what = "causal mask" if within else "no mask"
    return within, (
        f"the layer masks {extra} more cells than the explorer's {what} (padding, a sliding "
        "window or sinks: see the heatmap's grey cells)",
    )


def _logit_reasons(call: Any, fits: bool) -> tuple[str, ...]:
    """Why the logits are not q·kᵀ times one number, from the call's record."""
    if fits:
        return ()
    reasons = []
    if call.position.applied == "scores":
        reasons.append(f"the logits add the position scheme: {call.position.text}")
    reasons += [note for note in call.notes if note]
    if not reasons:
        reasons.append("the logits are not q·kᵀ times one number (a bias or soft-capping)")
    return tuple(reasons)


def _softmax(scores: np.ndarray, allowed: np.ndarray | None) -> np.ndarray:
    """Row softmax of `scores (T, S)` over the `allowed` cells (all if None); rows with none
    allowed are zeros."""
    if allowed is None:
        allowed = np.ones(scores.shape, dtype=bool)
    masked = np.where(allowed, scores, -np.inf)
    top = np.max(masked, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    exps = np.where(allowed, np.exp(masked - top), 0.0)
    sums = exps.sum(axis=-1, keepdims=True)
    return np.divide(exps, sums, out=np.zeros_like(exps), where=sums > 0)
