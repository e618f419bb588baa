"""Back end: `compute_attention` against Keras's MultiHeadAttention and plain numpy.

Shape letters: N tokens (T = S = N), D = 64 features.

All three compute softmax(Q Kᵀ / √D) V for one (N, D) query, key and value and hand back numpy
arrays, timed round-robin in one process:
- attnviz: `compute_attention(q, k, v)` (dot score, scaled, no mask), and with `causal=True`.
  It returns every stage (scores, masked scores, weights, output, mask) as read-only arrays.
- Keras: one `keras.layers.MultiHeadAttention(num_heads=1, key_dim=64, use_bias=False)`, built
  once with identity projections, called on (1, N, D) with `return_attention_scores=True` (and
  `use_causal_mask=True` for the causal rows); both outputs converted with `.numpy()`.
- numpy: float32 softmax(Q Kᵀ / √D) with the row maximum subtracted, then the weighted sum
  (a causal mask sets the blocked logits to -inf first).
"""

from __future__ import annotations

import dataclasses
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from bench.report import SIZES, Figure, interleaved, median_ms  # noqa: E402

D = 64
REPEATS = {16: 60, 256: 40, 1024: 30, 4096: 15}  # timed calls per subject
QUICK_REPEATS = {16: 10, 256: 10, 1024: 5, 4096: 3}


def numpy_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> tuple:
    """float32 softmax(Q Kᵀ / √D) V with max-subtraction; returns (output, weights)."""
    scores = q @ k.T / np.float32(np.sqrt(q.shape[1]))  # (N, D) x (D, N) -> (N, N)
    if causal:
        scores = np.where(np.tri(*scores.shape, dtype=bool), scores, np.float32(-np.inf))
    exps = np.exp(scores - scores.max(axis=1, keepdims=True))  # (N, N)
    weights = exps / exps.sum(axis=1, keepdims=True)
    return weights @ v, weights  # (N, N) x (N, D) -> (N, D)


def identity_mha():
    """A one-head, bias-free MultiHeadAttention whose four projections are identities."""
    import keras

    layer = keras.layers.MultiHeadAttention(num_heads=1, key_dim=D, use_bias=False)
    x = np.zeros((1, 2, D), np.float32)
    layer(x, x, x)  # builds the (D, 1, D) and (1, D, D) kernels
    for weight in layer.weights:
        weight.assign(np.eye(D, dtype=np.float32).reshape(tuple(weight.shape)))
    return layer


def _subjects(q, k, v, mha, causal: bool) -> dict:
    from attnviz import compute_attention

    q3, k3, v3 = q[None], k[None], v[None]  # (1, N, D)

    def keras_mha():
        out, scores = mha(q3, v3, key=k3, return_attention_scores=True, use_causal_mask=causal)
        return out.numpy(), scores.numpy()

    return {
        "attnviz": lambda: compute_attention(q, k, v, causal=causal),
        "keras": keras_mha,
        "numpy": lambda: numpy_attention(q, k, v, causal),
    }


def _check_agreement(subjects: dict) -> str:
    """Empty if the three weight matrices agree within 1e-5, else a warning."""
    ours = subjects["attnviz"]().weights
    theirs = np.asarray(subjects["keras"]()[1])[0, 0]  # (1, heads, N, N) -> (N, N)
    plain = subjects["numpy"]()[1]
    worst = max(np.abs(ours - theirs).max(), np.abs(ours - plain).max())
    return "" if worst <= 1e-5 else f"WARNING: weights differ by up to {worst:.2g}."


def _figures(n: int, causal: bool, times: dict, warning: str) -> list[Figure]:
    ms = {name: median_ms(samples) for name, samples in times.items()}
    tag = f"N={n:,}" + (" causal" if causal else "")
    note = warning.strip()
    keras_target = "≤ 1.00× Keras"
    numpy_target = "≤ 1.00× numpy" if n >= 256 else ""
    return [
        Figure(f"{tag} vs Keras MHA", ms["attnviz"], "Keras", ms["keras"], "ms", keras_target,
               ms["attnviz"] <= ms["keras"], note),
        Figure(f"{tag} vs numpy", ms["attnviz"], "numpy", ms["numpy"], "ms", numpy_target,
               ms["attnviz"] <= ms["numpy"] if numpy_target else None),
    ]  # fmt: skip


def run(quick: bool = False, sizes: tuple[int, ...] = SIZES) -> list[Figure]:
    """Time the three implementations at every size, without and with a causal mask."""
    mha = identity_mha()
    repeats = QUICK_REPEATS if quick else REPEATS
    figures = []
    for n in sizes:
        rng = np.random.default_rng(n)
        q, k, v = (rng.random((n, D), dtype=np.float32) for _ in range(3))  # (N, D) each
        for causal in (False, True):
            subjects = _subjects(q, k, v, mha, causal)
            warning = _check_agreement(subjects)
            times = interleaved(subjects, repeats[n], warmup=2)
            figures += _figures(n, causal, times, warning)
    counts = " / ".join(str(repeats[n]) for n in sizes)
    summary = (
        f"medians of {counts} calls per subject at N = {', '.join(f'{n:,}' for n in sizes)}, "
        "round-robin after 2 warm-up calls each; attnviz, Keras and numpy weights checked to "
        "agree within 1e-5"
    )
    figures[0] = dataclasses.replace(figures[0], note=(figures[0].note + " " + summary).strip())
    return figures
