"""Generation token by token with a key/value cache, and what each new token attended to.

Shape letters: T tokens (the prompt's, `<s>` first, then the generated ones), L layers, H query
heads, G key/value heads, Dk features per head, V vocabulary.

`generate` reads `<s>` and the prompt in one pass (the prefill), caching every layer's keys
(rotated by RoPE at their own position) and values; then it picks the next token (greedy, or
sampled at a temperature), reads only that token, appends its key and value to the cache, and
repeats. Step t is the token at position t: its query row against the t + 1 cached keys of
every layer and head (`GenerationStep.weights`), which is the KV-cache view. Nothing earlier is
recomputed, and the rows of all steps assembled are the weights of one full forward pass over
the whole text (tested equal).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.core.checks import check_int, describe, read_only
from attnviz.core.kv_cache import BYTES_PER_NUMBER
from attnviz.core.limits import MAX_LM_TOKENS
from attnviz.core.seeding import check_seed
from attnviz.learn.language.model import Ablation, LanguageModel
from attnviz.learn.language.tasks import BOS

MAX_TEMPERATURE = 10.0  # a temperature above this is noise


@dataclass(frozen=True)
class GenerationStep:
    """Position t: the token read there and what its query did with the cache."""

    t: int  # the position, from 0 (<s>)
    token: str  # the token read at position t
    prefill: bool  # read with the prompt in one pass (False: generated, read alone)
    weights: np.ndarray  # (L, H, t + 1) its attention over the cached positions 0 … t
    probabilities: np.ndarray  # (V,) the next-token distribution after position t
    predicted: str  # the most likely next token
    next_token: str  # the token that came next: the prompt's, or the one generated ("" last)
    cache_rows: int  # keys (and values) cached per layer and K/V head: t + 1
    cache_bytes: int  # bytes of the whole cache after this step: (t + 1)·L·G·2·Dk·4


@dataclass(frozen=True)
class Generation:
    """A prompt, the tokens generated after it, and every step's view of the cache."""

    prompt: str  # the text given
    generated: str  # the tokens generated after it
    tokens: tuple[str, ...]  # (T,) every token read: "<s>", the prompt, the generated ones
    steps: tuple[GenerationStep, ...]  # (T,) one per position
    weights: np.ndarray  # (L, H, T, T) row t = step t's weights: the full causal matrices
    probabilities: np.ndarray  # (T, V) the next-token distribution after each position
    keys: np.ndarray  # (L, G, T, Dk) the cache's keys after the last step (rotated under RoPE)
    values: np.ndarray  # (L, G, T, Dk) the cache's values
    cache_bytes: np.ndarray  # (T,) int, bytes cached after each step
    temperature: float  # 0: greedy; else the softmax temperature sampled at
    seed: int  # the sampling seed
    ablation: Ablation | None = None  # heads switched off while generating, if any

    @property
    def text(self) -> str:
        """The prompt and the generated tokens."""
        return self.prompt + self.generated


def generate(
    model: LanguageModel,
    prompt: str,
    steps: int = 20,
    *,
    temperature: float = 0.0,
    seed: int = 0,
    ablation: Ablation | None = None,
) -> Generation:
    """Generate `steps` tokens after `prompt`, one at a time, with a key/value cache.

    Args:
        model: a `LanguageModel`.
        prompt: text of the model's task (its symbols), at least one character.
        steps: tokens to generate, from 0; `<s>`, the prompt and them at most `MAX_LM_TOKENS`.
        temperature: 0 picks the most likely token; above 0 samples from softmax(logits / it),
            up to 10.
        seed: the sampling seed.
        ablation: heads to switch off while generating.

    Returns:
        A `Generation`.

    Raises:
        ValueError: for a prompt the task cannot read, too many steps, a bad temperature, seed
            or ablation.
    """
    ids = list(model.task.encode(prompt, "prompt"))  # <s> and the prompt
    check_int(steps, "steps", low=0, high=MAX_LM_TOKENS - len(ids))
    temperature = _check_temperature(temperature)
    rng = np.random.default_rng(check_seed(seed))
    keep, fill = model.ablation_arrays(ablation)
    c = model.config
    empty = np.zeros((1, c.num_kv_heads, 0, c.d_k), np.float32)  # (1, G, 0, Dk)
    with model.runner("decode_step") as runner:  # the model, or its traced twin
        start = np.array([ids], np.int32)  # (1, P)
        run = runner.decode_step(start, keep, fill, [(empty, empty)] * c.layers, 0)
        rows = [np.asarray(run[1])[0, :, :, t, : t + 1] for t in range(len(ids))]  # (L, H, t+1)
        logits = [np.asarray(run[0])[0]]  # (P, V)
        caches = run[4]
        for _ in range(steps):
            ids.append(_pick(logits[-1][-1], temperature, rng))
            new = np.array([[ids[-1]]], np.int32)  # (1, 1)
            run = runner.decode_step(new, keep, fill, caches, len(ids) - 1)
            rows.append(np.asarray(run[1])[0, :, :, 0])  # (L, H, t + 1)
            logits.append(np.asarray(run[0])[0])  # (1, V)
            caches = run[4]
    keys = np.stack([np.asarray(k)[0] for k, _ in caches])  # (L, G, T, Dk)
    values = np.stack([np.asarray(v)[0] for _, v in caches])
    probabilities = _softmax(np.concatenate(logits))  # (T, V)
    return _generation(model, prompt, ids, rows, probabilities, keys, values, temperature, seed,
                       ablation)  # fmt: skip


def _check_temperature(temperature: object) -> float:
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        raise ValueError(f"`temperature` must be a number. Received: {describe(temperature)}.")
    if not 0 <= temperature <= MAX_TEMPERATURE:
        raise ValueError(
            f"`temperature` must be from 0 (always the most likely token) to "
            f"{MAX_TEMPERATURE:g}. Received: {temperature}."
        )
    return float(temperature)


def _softmax(logits: np.ndarray) -> np.ndarray:
    """Next-token probabilities `(T, V)`, `<s>` never next."""
    z = logits.astype(np.float64)
    z[:, BOS] = -np.inf
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)).astype(np.float32)


def _pick(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    """The next id: the most likely, or one drawn at `temperature`."""
    if temperature == 0:
        z = logits.copy()
        z[BOS] = -np.inf
        return int(z.argmax())
    p = _softmax((logits / temperature)[None])[0].astype(np.float64)
    return int(rng.choice(len(p), p=p / p.sum()))


def _generation(model, prompt, ids, rows, probabilities, keys, values, temperature, seed, ablation):
    c, labels = model.config, model.task.labels
    t = len(ids)
    weights = np.zeros((c.layers, c.heads, t, t), np.float32)  # (L, H, T, T)
    per_row = c.layers * c.num_kv_heads * 2 * c.d_k * BYTES_PER_NUMBER  # bytes per position
    steps = []
    for i, row in enumerate(rows):
        weights[:, :, i, : i + 1] = row
        steps.append(
            GenerationStep(
                t=i,
                token=labels[ids[i]],
                prefill=i < len(prompt) + 1,
                weights=read_only(row.copy()),
                probabilities=read_only(probabilities[i]),
                predicted=labels[int(probabilities[i].argmax())],
                next_token=labels[ids[i + 1]] if i + 1 < t else "",
                cache_rows=i + 1,
                cache_bytes=(i + 1) * per_row,
            )
        )
    return Generation(
        prompt=prompt,
        generated=model.task.decode(ids[len(prompt) + 1 :]),
        tokens=tuple(labels[i] for i in ids),
        steps=tuple(steps),
        weights=read_only(weights),
        probabilities=read_only(probabilities),
        keys=read_only(keys),
        values=read_only(values),
        cache_bytes=read_only(np.arange(1, t + 1) * per_row),
        temperature=temperature,
        seed=seed,
        ablation=ablation,
    )
