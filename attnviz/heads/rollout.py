"""Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers").

Shape letters: L layers, H heads, T tokens (queries = keys: self-attention only). Pure numpy,
in float64.

Attention weights of one layer mix the tokens of the layer before, but a Transformer layer also
passes its input on through the residual connection. Rollout models both and follows the mixing
through every layer:

    Ā_l = (1/H) Σ_h A_{l,h}                    average the heads of layer l
    Â_l = norm(0.5 · Ā_l + 0.5 · I)             add the residual identity, renormalise rows
    R   = Â_L · … · Â_2 · Â_1                    multiply through the layers

`R[i, j]` is how much of input token j reaches position i after the last layer; every row sums
to 1. The paper uses the weight 0.5 for the identity (`residual_weight`). Rows of Ā_l that are
all zero (a fully masked query) become rows of the identity: the token keeps itself.

Works for encoder self-attention and for decoder causal self-attention: a product of lower
triangular matrices is lower triangular, so causal rollouts never see the future.
Cross-attention `(T, S)` has no rollout: its keys are another sequence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.checks import describe
from attnviz.heads.stacks import as_layer_stack

RESIDUAL_WEIGHT = 0.5  # the paper's weight of the residual identity
ROLLOUT_TEX = (  # the formula, for st.latex and notebooks: three lines, each fits a phone
    r"\begin{gathered}\bar A_l = \frac{1}{H}\sum_{h=1}^{H} A_{l,h} \\ "
    r"\hat A_l = \operatorname{norm}\!\left(0.5\,\bar A_l + 0.5\,I\right) \\ "
    r"R = \hat A_L\,\hat A_{L-1}\cdots\hat A_1\end{gathered}"
)


@dataclass(frozen=True)
class Rollout:
    """Attention rollout of one sequence through L layers (float64 arrays)."""

    rollout: np.ndarray  # (T, T) R = Â_L ⋯ Â_1; rows sum to 1
    per_layer: np.ndarray  # (L, T, T) R_l = Â_l ⋯ Â_1, the rollout up to layer l
    mixed: np.ndarray  # (L, T, T) Â_l, each layer's head average with the residual identity
    residual_weight: float  # α in Â_l = norm((1 − α) Ā_l + α I); the paper's is 0.5


def attention_rollout(weights: Any, *, residual_weight: float = RESIDUAL_WEIGHT) -> Rollout:
    """Roll the attention of L self-attention layers out into one token-to-token matrix.

    Args:
        weights: `(L, H, T, T)` or a list of L `(H, T, T)` self-attention weights of one
            sequence, first layer first (`(H, T, T)` counts as one layer), or a trace's
            `LayerStack` of self-attention calls (`AttentionCalls.layer_stack`).
        residual_weight: α, the weight of the identity: Â_l = norm((1 − α) Ā_l + α I).
            0.5 as in the paper; 0 multiplies the plain head averages.

    Returns:
        A `Rollout`: the final `rollout (T, T)`, the rollout after each layer and the mixed
        matrices Â_l.

    Raises:
        ValueError: for weights that are not square self-attention weights, or α outside [0, 1].
    """
    stack = as_layer_stack(weights)  # (L, H, T, T)
    if stack.shape[-1] != stack.shape[-2]:
        raise ValueError(
            "Rollout multiplies self-attention through the layers, so every layer's weights "
            f"must be square (T, T). Received shape {stack.shape} (L, H, T, S). Cross-attention "
            "has no rollout: pass encoder or decoder self-attention."
        )
    alpha = _check_residual_weight(residual_weight)
    mixed = _mix_residual(stack.mean(axis=1), alpha)  # (L, H, T, T) -> (L, T, T)
    per_layer = np.empty_like(mixed)  # (L, T, T)
    running = np.eye(mixed.shape[-1])  # (T, T)
    for layer, matrix in enumerate(mixed):
        running = matrix @ running  # (T, T) x (T, T) -> (T, T): Â_l · (Â_{l−1} ⋯ Â_1)
        per_layer[layer] = running
    return Rollout(rollout=per_layer[-1], per_layer=per_layer, mixed=mixed, residual_weight=alpha)


def _mix_residual(average: np.ndarray, alpha: float) -> np.ndarray:
    """`(L, T, T)` head averages -> Â_l = norm((1 − α) Ā_l + α I), rows summing to 1."""
    identity = np.eye(average.shape[-1])  # (T, T)
    mixed = (1.0 - alpha) * average + alpha * identity  # (L, T, T)
    sums = mixed.sum(axis=-1, keepdims=True)  # (L, T, 1)
    zero = sums == 0  # a fully masked row with α = 0: keep the token itself
    mixed = np.where(zero, identity, mixed)  # (L, T, T)
    return mixed / np.where(zero, 1.0, sums)


def _check_residual_weight(value: Any) -> float:
    """α must be a number from 0 to 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(
            "`residual_weight` must be a number from 0 to 1 (the identity's share; the paper "
            f"uses 0.5). Received: {describe(value)}."
        )
    return float(value)
