"""Benchmark: `attnviz.inspect` against a plain call of the same model, in one process.

Shape letters: B batch, T tokens, D model features, H heads, L layers.

The model: a BERT-base-sized encoder built with Keras layers, L = 12 blocks of
`keras.layers.MultiHeadAttention` (H = 12, D = 768, 64 features per head) plus a 3,072-unit
feed-forward network, each with residual and LayerNormalization, after a token Embedding whose
id 0 is padding (so every layer is given a padding mask). Input: one sequence (B = 1) of
T = 128 token ids, the last 8 padding.

Subjects, timed round-robin (order alternating) after two warm-up calls each:
- plain: `model(tokens, training=False)`, outputs converted to numpy;
- inspect: `attnviz.inspect(model, tokens)`, which runs the model once and hands back every
  layer's weights, logits, mask, query/key/value heads and position scheme as numpy arrays,
  each call checked against its layer's own output (`AttentionCall.verified`: the weights times
  the values, through the output projection, recomputed in numpy);
- inspect without its check: the same with `verify` replaced by a no-op, to show what the
  self-check costs (for this bench only: `inspect` always checks).

Every call of the inspected run must agree with its layer (else the bench stops).
Target: inspect, with its check, costs at most 1.3x the plain call (medians).

    python -m bench.benchmark --only inspect    # 30 timed calls each (--quick: 8)
    python -m bench.inspect_bench [--quick]     # the same section on its own
"""

from __future__ import annotations

import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from bench.report import Figure, run_alone  # noqa: E402

LAYERS, HEADS, WIDTH, FEED_FORWARD, TOKENS, VOCABULARY = 12, 12, 768, 3072, 128, 1000
PADDING = 8  # padding tokens at the end of the sequence
TARGET = 1.3  # most inspect may cost, in plain calls
REPEATS, QUICK_REPEATS, WARM_UPS = 30, 8, 2


def build_encoder():
    """The L-block encoder described in the module doc, built on (1, T) token ids."""
    import keras

    keras.utils.set_random_seed(0)
    tokens = keras.Input((None,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(VOCABULARY, WIDTH, mask_zero=True, name="embedding")(tokens)
    for i in range(LAYERS):
        attention = keras.layers.MultiHeadAttention(
            HEADS, WIDTH // HEADS, name=f"layer_{i}_attention"
        )
        x = keras.layers.LayerNormalization(name=f"layer_{i}_norm_1")(x + attention(x, x))
        hidden = keras.layers.Dense(FEED_FORWARD, activation="gelu", name=f"layer_{i}_ffn_1")(x)
        hidden = keras.layers.Dense(WIDTH, name=f"layer_{i}_ffn_2")(hidden)
        x = keras.layers.LayerNormalization(name=f"layer_{i}_norm_2")(x + hidden)
    return keras.Model(tokens, x, name="encoder")


def token_ids() -> np.ndarray:
    """(1, T) token ids, the last PADDING of them 0 (padding)."""
    ids = np.random.default_rng(1).integers(1, VOCABULARY, size=(1, TOKENS)).astype("int32")
    ids[:, TOKENS - PADDING :] = 0
    return ids


def time_round_robin(subjects: dict, repeats: int) -> dict[str, list[float]]:
    """Seconds of each call, subjects alternating (the order flips every round); the CPU
    seconds of this process (all its threads) under "<name> cpu"."""
    times: dict[str, list[float]] = {key: [] for name in subjects for key in (name, f"{name} cpu")}
    for run in subjects.values():
        for _ in range(WARM_UPS):
            run()
    order = list(subjects)
    for _ in range(repeats):
        for name in order:
            start, cpu = time.perf_counter(), time.process_time()
            subjects[name]()
            times[name].append(time.perf_counter() - start)
            times[f"{name} cpu"].append(time.process_time() - cpu)
        order.reverse()
    return times


def measure(repeats: int) -> dict[str, float]:
    """Median ms of each subject (and "<name> cpu": its CPU ms), after checking that every call
    of an inspected run agrees with its layer."""
    import keras

    from attnviz.heads import inspect, inspection
    from attnviz.heads.verification import not_checked

    model, tokens = build_encoder(), token_ids()
    subjects = {
        "plain": lambda: keras.tree.map_structure(np.asarray, model(tokens, training=False)),
        "inspect": lambda: inspect(model, tokens),
        "unchecked": lambda: _unchecked(inspection, lambda: inspect(model, tokens), not_checked),
    }
    result = inspect(model, tokens)
    assert len(result) == LAYERS and result.calls[0].weights.shape == (1, HEADS, TOKENS, TOKENS)
    disagree = [
        f"{c.key}: {c.verified.describe()}" for c in result.calls if not c.verified.agrees()
    ]
    assert not disagree, disagree
    times = time_round_robin(subjects, repeats)
    return {name: statistics.median(samples) * 1e3 for name, samples in times.items()}


def run(quick: bool = False) -> list[Figure]:
    """The section's figures: inspect, and inspect without its check, beside a plain call."""
    repeats = QUICK_REPEATS if quick else REPEATS
    ms = measure(repeats)
    plain, cpu = ms["plain"], ms["plain cpu"]
    note = (
        f"median of {repeats} calls each, round-robin (the order flipping every round) after "
        f"{WARM_UPS} warm-up calls; {LAYERS} layers × {HEADS} heads, D = {WIDTH}, T = {TOKENS} "
        f"(the last {PADDING} padding), B = 1; every call agrees with its layer; CPU "
        f"{ms['inspect cpu']:.0f} ms against {cpu:.0f} ms ({ms['inspect cpu'] / cpu:.2f}×)"
    )
    check = (
        f"what inspect's self-check costs: {ms['inspect'] - ms['unchecked']:.1f} ms, CPU "
        f"{ms['inspect cpu'] - ms['unchecked cpu']:.0f} ms (the check replaced by a no-op, in "
        "this bench only)"
    )
    return [
        Figure("inspect (checked)", ms["inspect"], "plain call", plain, "ms",
               f"≤ {TARGET:.2f}× plain call", ms["inspect"] <= TARGET * plain, note),
        Figure("inspect without its check", ms["unchecked"], "plain call", plain, "ms", "",
               None, check),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the section on its own and print its table."""
    return run_alone(
        "inspect", run, argv, prog="python -m bench.inspect_bench",
        description=__doc__.splitlines()[0], quick_help="fewer timed calls",
    )  # fmt: skip


def _unchecked(inspection, run, not_checked):
    """`run()` with inspect's self-check replaced by a no-op (put back afterwards)."""
    verify = inspection.verify
    inspection.verify = lambda *args: not_checked("skipped by the bench")
    try:
        return run()
    finally:
        inspection.verify = verify


if __name__ == "__main__":
    sys.exit(main())
