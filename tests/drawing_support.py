"""Matrices the drawing tests draw: random causal attention weights of any size."""

import numpy as np


def causal_weights(t: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`(t, t)` float32 softmax weights with a causal mask, and the blocked cells."""
    blocked = np.triu(np.ones((t, t), dtype=bool), 1)
    logits = np.random.default_rng(seed).normal(size=(t, t)).astype(np.float32)
    logits[blocked] = -np.inf
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True), blocked
