"""`LanguageModel`: a small decoder-only Transformer for one Learn language-model task.

Shape letters: N sequences, T tokens, D model features, L layers, H query heads, G key/value
heads, Dk features per head, V vocabulary (the task's symbols and `<s>`).

    ids (N, T) -> Embedding -> L × [causal self-attention, MLP] -> logits (N, T, V)

(see `layers`). Position t predicts the token after it. Every attention of a forward pass can
be read: the network returns, beside every layer's weights `(N, L, H, T, T)`, the input each
attention got, so with the layer's kernels each head is recomputed by
`multihead.compute_multihead(position=..., causal=True)` (`trace`, tested equal; its
`attention` is the one trace type of `heads.calls`). Any heads can
be switched off (`Ablation`: output zeroed or replaced by its mean) in the same compiled
function. Nothing is patched: one model serves every session of a server, from many threads.
The model keeps its Keras layers and its `tf.function`s, so it survives
`keras.backend.clear_session()`.

Training is `training.train_lm`, scores and ablation tables `metrics`, generation with the
KV cache `generation.generate` (on `decode_step`: the same network, reading only the new
tokens beside the cached keys and values), the shipped checkpoint `learn.pretrained.load_lm`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, NamedTuple

import keras
import numpy as np
import tensorflow as tf

from attnviz.core.checks import check_choice, check_int, describe, read_only
from attnviz.core.limits import MAX_LM_TOKENS
from attnviz.heads.calls import AttentionCall, AttentionCalls, frozen_labels
from attnviz.learn.configs import LMConfig
from attnviz.learn.global_seed import set_global_seed
from attnviz.learn.language.layers import LMCore
from attnviz.learn.language.tasks import LMTask, draw_sequences, get_lm_task
from attnviz.learn.twins import runner
from attnviz.transformer.multihead import MultiHeadResult, compute_multihead

ABLATION_MODES = ("zero", "mean")  # what a switched-off head outputs
RUN_CHUNK = 256  # most sequences one network run reads
MEAN_SEQUENCES = 256  # training sequences a head's mean output is taken over


@dataclass(frozen=True)
class Ablation:
    """Heads switched off: each one's output (before W_O) zeroed or replaced by its mean."""

    heads: tuple[tuple[int, int], ...]  # (layer, head) pairs, from 0
    mode: str = "zero"  # "zero", or "mean": its mean output over MEAN_SEQUENCES training
    # sequences and their positions (the head's usual contribution, without its information)

    def __post_init__(self) -> None:
        check_choice(self.mode, "mode", ABLATION_MODES)
        pairs = self.heads
        listed = isinstance(pairs, (tuple, list)) and all(
            isinstance(p, (tuple, list)) and len(p) == 2 for p in pairs
        )
        if not listed:
            raise ValueError(
                "`heads` must be a list of (layer, head) pairs, e.g. [(1, 2)]. "
                f"Received: {describe(pairs)}."
            )
        checked = tuple(
            (check_int(a, "layer", low=0), check_int(b, "head", low=0)) for a, b in pairs
        )
        object.__setattr__(self, "heads", checked)


@dataclass(frozen=True)
class LMForward:
    """One forward pass over a text: every head's attention and the next-token predictions."""

    text: str  # the text read (after <s>)
    tokens: tuple[str, ...]  # (T,) what each position read: "<s>", then the text
    weights: np.ndarray  # (L, H, T, T) causal self-attention of every layer and head
    probabilities: np.ndarray  # (T, V) the next-token distribution after each position
    predicted: tuple[str, ...]  # (T,) the most likely next token after each position
    ablation: Ablation | None = None  # the heads that were switched off, if any


@dataclass(frozen=True)
class LMTrace:
    """One forward pass with every attention recomputed from what it was given."""

    forward: LMForward  # the pass itself
    # every attention call, "block_<i>/attention" (way "causal") layer by layer: the pass's
    # weights (1, H, T, T), the causal mask, Q/K/V heads as recomputed (after RoPE), the tokens
    attention: AttentionCalls
    results: dict[tuple[str, int], MultiHeadResult]  # ("causal", layer) -> the heads recomputed
    inputs: np.ndarray  # (L, T, D) each attention's input (its Q = K = V, after the norm)


class LMRun(NamedTuple):
    """One network run of a batch, as numpy arrays."""

    logits: np.ndarray  # (N, T, V)
    weights: np.ndarray  # (N, L, H, T, T)
    inputs: np.ndarray  # (N, L, T, D) each attention's input
    heads: np.ndarray  # (N, L, H, T, Dk) each head's output, before W_O (after any ablation)


class LanguageModel:
    """A causal Transformer language model for one task, with every head readable and
    switchable.

    Args:
        task: one of `LM_TASKS`, or an `LMTask`.
        config: the sizes (`LMConfig`).
        seed: seeds the initial weights (`learn.global_seed.set_global_seed`); None leaves the
            global seeds alone (for weights loaded next).
    """

    shared = False  # True: kept and used many times (a shipped model): runs its own functions

    def __init__(self, task: str | LMTask, config: LMConfig, seed: int | None = 0) -> None:
        self.task: LMTask = get_lm_task(task)
        if not isinstance(config, LMConfig):
            raise ValueError(f"`config` must be an LMConfig. Received: {describe(config)}.")
        self.config = config
        self.stats: Any = None  # LMStats once trained or loaded
        if seed is not None:
            set_global_seed(seed)
        ids = keras.Input((None,), dtype="int32", name="ids")
        self.core = LMCore(config, self.task.vocab_size, name="language_model")
        logits, _ = self.core(ids)
        self.trainer = keras.Model(ids, logits, name="language_model")  # (N, T) -> (N, T, V)
        c = config
        # no autograph: no Python control flow on tensors (as the Transformer's)
        self._run = tf.function(
            lambda i, k, f: self.core(i, k, f, trace=True)[:4],
            input_signature=[
                tf.TensorSpec((None, None), tf.int32),  # ids (N, T)
                tf.TensorSpec((c.layers, c.heads), tf.float32),  # keep (L, H)
                tf.TensorSpec((c.layers, c.heads, c.d_k), tf.float32),  # fill (L, H, Dk)
            ],
            autograph=False,
        )  # -> logits, weights, inputs, heads
        cache = tf.TensorSpec((None, c.num_kv_heads, None, c.d_k), tf.float32)  # (N, G, S, Dk)
        self.decode_step = tf.function(
            lambda i, k, f, past, start: self.core(i, k, f, past=past, start=start, trace=True),
            input_signature=[
                tf.TensorSpec((None, None), tf.int32),  # the new ids (N, T)
                tf.TensorSpec((c.layers, c.heads), tf.float32),
                tf.TensorSpec((c.layers, c.heads, c.d_k), tf.float32),
                [(cache, cache)] * c.layers,  # each layer's cached keys and values
                tf.TensorSpec((), tf.int32),  # the position of the first new token
            ],
            autograph=False,
        )  # -> logits (N, T, V), weights (N, L, H, T, S), inputs, heads, the caches grown

    @property
    def parameter_count(self) -> int:
        """How many trained numbers the model has."""
        return int(sum(np.prod(w.shape) for w in self.trainer.trainable_weights))

    def get_weights(self) -> list[np.ndarray]:
        """Every weight of the network, in a fixed order (copies)."""
        return [np.array(w) for w in self.trainer.get_weights()]

    def set_weights(self, weights: Sequence[np.ndarray]) -> None:
        """Set every weight, in the order of `get_weights`."""
        self.trainer.set_weights(list(weights))

    def run(self, ids: Any, ablation: Ablation | None = None) -> LMRun:
        """Run the network on `ids (N, T)` (checked), `RUN_CHUNK` sequences at a time."""
        parts = list(self.runs(ids, ablation))
        return LMRun(*(np.concatenate(arrays) for arrays in zip(*parts, strict=True)))

    def runs(self, ids: Any, ablation: Ablation | None = None) -> Iterator[LMRun]:
        """`run`, one chunk of `RUN_CHUNK` sequences at a time (for scores over many)."""
        ids = self._check_ids(ids)
        keep, fill = self.ablation_arrays(ablation)
        for i in range(0, len(ids), RUN_CHUNK):
            with self.runner("_run") as model:  # held per chunk, not while the caller reads
                run = model._run(ids[i : i + RUN_CHUNK], keep, fill)  # noqa: SLF001 - a twin
            yield LMRun(*(np.asarray(a) for a in run))

    def runner(self, function: str) -> AbstractContextManager[LanguageModel]:
        """This model, or its twin holding its weights, to run its `tf.function` named
        `function` (`_run`, `decode_step`): `learn.twins.runner`, so that a new model (each
        finished run's) traces nothing."""
        make = lambda: LanguageModel(self.task, self.config, seed=None)  # noqa: E731
        return runner(self, function, (LanguageModel, self.task, self.config), make)

    def forward(self, text: str, ablation: Ablation | None = None) -> LMForward:
        """Read `<s>` and `text`; every head's weights and the next-token predictions.

        Raises:
            ValueError: for a text the task cannot read (see `LMTask.encode`) or a bad ablation.
        """
        ids = self.task.encode(text)  # (T,)
        run = self.run(ids[None], ablation)
        return self._forward(text, ids, run, ablation)

    def _forward(self, text: str, ids: np.ndarray, run: LMRun, ablation) -> LMForward:
        logits = run.logits[0].astype(np.float64)  # (T, V)
        logits[:, 0] = -np.inf  # <s> is never next
        probabilities = np.exp(logits - logits.max(axis=-1, keepdims=True))
        probabilities /= probabilities.sum(axis=-1, keepdims=True)
        labels = self.task.labels
        return LMForward(
            text=text,
            tokens=tuple(labels[i] for i in ids),
            weights=read_only(run.weights[0].copy()),
            probabilities=read_only(probabilities.astype(np.float32)),
            predicted=tuple(labels[i] for i in probabilities.argmax(axis=-1)),
            ablation=ablation,
        )

    def trace(self, text: str, ablation: Ablation | None = None) -> LMTrace:
        """`forward`, with every layer's heads recomputed by `compute_multihead` from the input
        that attention got and the layer's kernels (equal to the model's own weights).

        Raises:
            ValueError: as `forward`.
        """
        ids = self.task.encode(text)
        run = self.run(ids[None], ablation)
        c = self.config
        results = {
            ("causal", layer): compute_multihead(
                run.inputs[:, layer],  # (1, T, D): Q = K = V
                run.inputs[:, layer],
                run.inputs[:, layer],
                num_heads=c.heads,
                num_kv_heads=c.num_kv_heads,
                causal=True,
                position=c.position,
                rope_theta=c.rope_theta,
                params=self.layer_params(layer),
            )
            for layer in range(c.layers)
        }
        forward = self._forward(text, ids, run, ablation)
        calls = tuple(
            _call(layer, forward.weights[layer], results[("causal", layer)], forward.tokens)
            for layer in range(c.layers)
        )
        return LMTrace(forward, AttentionCalls(calls), results, read_only(run.inputs[0].copy()))

    def layer_params(self, layer: int) -> dict[str, np.ndarray]:
        """The kernels of one layer's attention, by the names `compute_multihead` takes:
        W_Q `(H, D, Dk)`, W_K and W_V `(G, D, Dk)`, W_O `(H·Dk, D)`."""
        check_int(layer, "layer", low=0, high=self.config.layers - 1)
        attention = self.core.blocks[layer].attention
        kernels = {
            "W_Q": attention.query_kernel,
            "W_K": attention.key_kernel,
            "W_V": attention.value_kernel,
            "W_O": attention.output_kernel,
        }
        return {k: np.array(w.numpy(), dtype=np.float32) for k, w in kernels.items()}

    def ablation_arrays(self, ablation: Ablation | None) -> tuple[np.ndarray, np.ndarray]:
        """`keep (L, H)` (1 = on) and `fill (L, H, Dk)` (what an off head outputs) of
        `ablation`.

        Raises:
            ValueError: for an ablation that is not an `Ablation` or names a head the model
                does not have.
        """
        c = self.config
        keep = np.ones((c.layers, c.heads), np.float32)
        fill = np.zeros((c.layers, c.heads, c.d_k), np.float32)
        if ablation is None:
            return keep, fill
        if not isinstance(ablation, Ablation):
            raise ValueError(f"`ablation` must be an Ablation. Received: {describe(ablation)}.")
        for layer, head in ablation.heads:
            if not (0 <= layer < c.layers and 0 <= head < c.heads):
                raise ValueError(
                    f"The model has {c.layers} layers of {c.heads} heads: (layer, head) from "
                    f"(0, 0) to ({c.layers - 1}, {c.heads - 1}). Received: ({layer}, {head})."
                )
            keep[layer, head] = 0.0
        if ablation.mode == "mean" and ablation.heads:
            fill = self.head_means()
        return keep, fill

    def head_means(self) -> np.ndarray:
        """`(L, H, Dk)` each head's mean output over `MEAN_SEQUENCES` training sequences (a
        stream no training epoch uses) and all their positions."""
        ids = draw_sequences(self.task, MEAN_SEQUENCES, "head means", "train")[:, :-1]  # (N, T)
        sums = [run.heads.sum(axis=(0, 3), dtype=np.float64) for run in self.runs(ids)]
        return (sum(sums) / (ids.shape[0] * ids.shape[1])).astype(np.float32)

    def _check_ids(self, ids: Any) -> np.ndarray:
        """`ids` as int32 `(N, T)` of this task's vocabulary, at most MAX_LM_TOKENS long."""
        array = np.asarray(ids)
        v = self.task.vocab_size
        if (
            array.ndim != 2
            or 0 in array.shape
            or not np.issubdtype(array.dtype, np.integer)
            or array.min() < 0
            or array.max() >= v
            or array.shape[1] > MAX_LM_TOKENS
        ):
            raise ValueError(
                f"`ids` must be a non-empty (N, T) array of token ids from 0 to {v - 1}, with "
                f"T at most {MAX_LM_TOKENS}. Received: {describe(ids)}. Encode text with "
                "model.task.encode, or draw sequences with make_sequences."
            )
        return array.astype(np.int32)


def _call(layer: int, weights: np.ndarray, result: MultiHeadResult, tokens: tuple) -> AttentionCall:
    """One layer's attention in a trace: the pass's `weights (H, T, T)`, the heads recomputed
    in `result` (Q and K after RoPE, if any), the `tokens (T,)` as labels."""
    t = weights.shape[-1]
    rotated = result.rotated_query_heads is not None
    labels = frozen_labels([tokens])
    return AttentionCall(
        key=f"block_{layer}/attention",
        kind="self",
        way="causal",
        layer=layer,
        weights=read_only(weights[None]),  # (1, H, T, T)
        mask=read_only(np.tri(t, dtype=bool)[None]),  # (1, T, T)
        row_labels=labels,
        col_labels=labels,
        query_heads=result.rotated_query_heads if rotated else result.query_heads,
        key_heads=result.rotated_key_heads if rotated else result.key_heads,
        value_heads=result.value_heads,  # (1, H, T, Dk)
    )
