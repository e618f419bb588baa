"""`TransformerTranslator`: a small encoder–decoder Transformer for one Learn task.

Shape letters: N texts, S source positions (padded), T decoder positions, D model features,
H heads, L layers (encoder and decoder have L each), V target vocabulary size.

    source ids (N, S) -> TokenAndPositionEmbedding -> L x EncoderLayer -> enc (N, S, D)
    decoder ids (N, T) -> TokenAndPositionEmbedding -> L x DecoderLayer(enc) -> (N, T, D)
    -> Dense -> logits (N, T, V)

The decoder layers are the seed tutorial's (`transformer.decoder_layers.DecoderLayer`), the
encoder layers their match (`transformer.encoder_layers.EncoderLayer`); attention is
`keras.layers.MultiHeadAttention` (scaled dot product, no biases). Masks: the encoder's and the
cross-attention's keys skip source padding; the decoder's self-attention is causal and skips
target padding. Decoder position t is fed `[start, c1, ..., c_{n}][t]` and predicts output
character t (or the end token).

Every attention of a forward pass can be read (`trace`, its `attention` the one trace type of
`heads.calls`): the network itself returns, beside the weights of every layer and head, the
inputs each MultiHeadAttention got, so with the layer's kernels each head is recomputed by
`multihead.compute_multihead` (tested equal). Nothing is patched: the model is shared
read-only by every session of a server, and traces and translations run at the same time. Its
three attentions are the three ways of `core.ways` (`WAY_FIELDS`, each call's `way`). The model
keeps its Keras layers and three `tf.function`s of its own (a run, a traced run, and greedy
decoding: the encoder once, then a graph loop of decoder runs), so it survives
`keras.backend.clear_session()`.

Training, checkpoints and scores are shared with `Seq2SeqAttention`: `training.train_transformer`,
`learn.pretrained.load_transformer`, `metrics.alignment_score` (for a Transformer: its best
cross-attention head's, see `metrics.head_alignment_scores`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from attnviz.core.checks import check_choice, check_int, read_only
from attnviz.core.ways import WAYS
from attnviz.heads.calls import AttentionCall, AttentionCalls, frozen_labels
from attnviz.learn.configs import TransformerConfig
from attnviz.learn.translation.model import DECODE_CHUNK, CharTranslator, Translation
from attnviz.learn.translation.vocab import END, PAD, START, Vocabulary
from attnviz.transformer.decoder_layers import DecoderLayer
from attnviz.transformer.encoder_layers import EncoderLayer, TokenAndPositionEmbedding
from attnviz.transformer.multihead import MultiHeadResult, compute_multihead

START_LABEL = "<s>"  # how the start token is labelled
END_LABEL = "</s>"  # how the end token is labelled
WAY_FIELDS = {  # way of attention -> the `TransformerTranslation` field holding its weights
    "bidirectional": "encoder_self",  # the encoder's self-attention
    "causal": "decoder_self",  # the decoder's masked self-attention
    "cross": "cross",  # the encoder–decoder attention
}


@dataclass(frozen=True)
class TransformerTranslation(Translation):
    """A greedy translation with every head of the run that produced it.

    `weights` (from `Translation`) is the last layer's cross-attention averaged over the heads.
    Decoder position t was fed `decoder_tokens[t]` and wrote `target_tokens[t]` (or the end).
    """

    encoder_self: np.ndarray = None  # (L, H, S, S) over the real source characters
    decoder_self: np.ndarray = None  # (L, H, T, T), T = len(output) + 1 (the end step too)
    cross: np.ndarray = None  # (L, H, T, S)
    decoder_tokens: tuple[str, ...] = ()  # (T,) what each decoder position was fed


@dataclass(frozen=True)
class TransformerTrace:
    """One forward pass of a translation, every attention call with what it was computed from."""

    translation: TransformerTranslation
    # every attention call, in call order: "encoder_layer_<i>/self_attention" (way
    # "bidirectional"), then per decoder layer ".../self_attention" ("causal") and
    # ".../cross_attention" ("cross"); weights (1, H, T, S) as the model computed them, their
    # Q/K/V heads as recomputed, the tokens as labels
    attention: AttentionCalls
    results: dict[tuple[str, int], MultiHeadResult]  # (way name, layer) -> the heads recomputed
    source_tokens: tuple[str, ...]  # (S,) the keys of encoder self and cross attention
    decoder_tokens: tuple[str, ...]  # (T,) what each decoder position was fed
    output_tokens: tuple[str, ...]  # (T,) what each decoder position wrote ("</s>" = end)


class _Run(NamedTuple):
    """One network run of a batch, as numpy arrays."""

    logits: np.ndarray  # (N, T, V)
    encoder_self: np.ndarray  # (N, L, H, S, S)
    decoder_self: np.ndarray  # (N, L, H, T, T)
    cross: np.ndarray  # (N, L, H, T, S)


class _Inputs(NamedTuple):
    """What every attention of one network run was given (its query, key and value inputs)."""

    encoder: np.ndarray  # (N, L, S, D) each encoder layer's input: its self-attention's Q = K = V
    decoder: np.ndarray  # (N, L, T, D) each decoder layer's input: its self-attention's Q = K = V
    cross_query: np.ndarray  # (N, L, T, D) each cross-attention's query input
    memory: np.ndarray  # (N, S, D) the encoder's output: every cross-attention's K = V


class TransformerCore(keras.layers.Layer):
    """Embeddings, L encoder layers, L decoder layers and the output projection."""

    def __init__(self, config: TransformerConfig, vocab: Vocabulary, **kwargs: Any):
        super().__init__(**kwargs)
        self.config = c = config
        sizes = (c.heads, c.d_k, c.d_k, c.d_model, c.d_ff, c.rate)
        self.source_embedding = TokenAndPositionEmbedding(
            vocab.max_source_len, vocab.source_size, c.d_model, name="source_embedding"
        )
        self.target_embedding = TokenAndPositionEmbedding(
            vocab.target_steps, vocab.target_size, c.d_model, name="target_embedding"
        )
        n = range(c.layers)
        self.encoder_layers = [EncoderLayer(*sizes, name=f"encoder_layer_{i}") for i in n]
        self.decoder_layers = [DecoderLayer(*sizes, name=f"decoder_layer_{i}") for i in n]
        self.logits = keras.layers.Dense(vocab.target_size, name="logits")

    def build(self, source_shape: tuple, decoder_inputs_shape: tuple) -> None:
        """Every weight, in the order `call` first uses them (no trace of `call`)."""
        d = self.source_embedding.output_dim
        memory_shape = (*source_shape, d)  # (N, S, D)
        self.source_embedding.build(source_shape)
        for layer in self.encoder_layers:
            layer.build(memory_shape)
        y_shape = (*decoder_inputs_shape, d)  # (N, T, D)
        self.target_embedding.build(decoder_inputs_shape)
        for layer in self.decoder_layers:
            layer.build(y_shape, memory_shape)
        self.logits.build(y_shape)

    def compute_output_shape(self, source_shape: tuple, decoder_inputs_shape: tuple) -> tuple:
        """The shapes of `call` without `trace`: logits `(N, T, V)` and the weights `(N, L, H,
        S, S)`, `(N, L, H, T, T)`, `(N, L, H, T, S)`."""
        (n, s), t = source_shape, decoder_inputs_shape[1]
        layers, heads = self.config.layers, self.config.heads
        return (
            (n, t, self.logits.units),
            (n, layers, heads, s, s),
            (n, layers, heads, t, t),
            (n, layers, heads, t, s),
        )

    def call(self, source, decoder_inputs, training=False, trace=False):
        """`source (N, S)`, `decoder_inputs (N, T)` ids -> logits and the weights per layer; with
        `trace`, also the inputs of every attention (`_Inputs`' fields, in order)."""
        memory, encoder_self, encoder_in = self.encode(source, training=training)
        logits, decoder_self, cross, decoder_in, cross_in = self.decode(
            source, memory, decoder_inputs, training=training
        )
        outputs = (logits, _stack(encoder_self), _stack(decoder_self), _stack(cross))
        if trace:
            return (*outputs, _stack(encoder_in), _stack(decoder_in), _stack(cross_in), memory)
        return outputs

    def encode(self, source, training=False) -> tuple[Any, list, list]:
        """`source (N, S)` ids -> the encoder's output `(N, S, D)`, and per layer its weights
        `(N, H, S, S)` and its input `(N, S, D)`."""
        real_source = ops.not_equal(source, PAD)  # (N, S)
        rows = ops.ones_like(source, dtype="bool")[:, :, None]  # (N, S, 1)
        encoder_mask = ops.logical_and(rows, real_source[:, None, :])  # (N, S, S)
        x = self.source_embedding(source)  # (N, S, D)
        encoder_self, encoder_in = [], []
        for layer in self.encoder_layers:
            encoder_in.append(x)  # (N, S, D)
            x, weights = layer(x, encoder_mask, training=training)  # (N, S, D), (N, H, S, S)
            encoder_self.append(weights)
        return x, encoder_self, encoder_in

    def decode(self, source, memory, decoder_inputs, training=False) -> tuple[Any, ...]:
        """The decoder on `decoder_inputs (N, T)` ids, attending to `memory (N, S, D)` (the
        encoder's output for `source (N, S)`) -> logits `(N, T, V)`, and per layer the self and
        cross weights `(N, H, T, T)`, `(N, H, T, S)` and the inputs of both `(N, T, D)`."""
        real_source = ops.not_equal(source, PAD)  # (N, S)
        real_target = ops.not_equal(decoder_inputs, PAD)  # (N, T)
        t = ops.shape(decoder_inputs)[1]
        causal = ops.tril(ops.ones((t, t), dtype="bool"))  # (T, T): key j <= query i
        self_mask = ops.logical_and(causal[None], real_target[:, None, :])  # (N, T, T)
        cross_rows = ops.ones_like(decoder_inputs, dtype="bool")[:, :, None]  # (N, T, 1)
        cross_mask = ops.logical_and(cross_rows, real_source[:, None, :])  # (N, T, S)
        y = self.target_embedding(decoder_inputs)  # (N, T, D)
        decoder_self, cross, decoder_in, cross_in = [], [], [], []
        for layer in self.decoder_layers:
            decoder_in.append(y)  # (N, T, D)
            y, self_w, cross_w, query = layer(
                y, memory, self_mask, cross_mask, training=training, return_cross_query=True
            )
            decoder_self.append(self_w)  # (N, H, T, T)
            cross.append(cross_w)  # (N, H, T, S)
            cross_in.append(query)  # (N, T, D)
        return self.logits(y), decoder_self, cross, decoder_in, cross_in


def _call(way: str, layer: int, weights: np.ndarray, results: dict, labels: tuple) -> AttentionCall:
    """One attention of a trace: the model's own `weights (H, T, S)` of `way`'s `layer`, with
    the Q/K/V heads recomputed in `results` and `labels` (rows, columns) of its tokens."""
    result = results[(way, layer)]
    part = "encoder" if way == "bidirectional" else "decoder"
    t, s = weights.shape[-2:]
    return AttentionCall(
        key=f"{part}_layer_{layer}/{'cross' if way == 'cross' else 'self'}_attention",
        kind="cross" if way == "cross" else "self",
        way=way,
        layer=layer,
        weights=read_only(weights[None]),  # (1, H, T, S)
        mask=read_only(WAYS[way].mask(t, s)[None]) if WAYS[way].causal else None,  # (1, T, S)
        row_labels=frozen_labels([labels[0]]),
        col_labels=frozen_labels([labels[1]]),
        query_heads=result.query_heads,  # (1, H, T, Dk)
        key_heads=result.key_heads,  # (1, H, S, Dk)
        value_heads=result.value_heads,  # (1, H, S, Dv)
    )


def _stack(per_layer: list) -> Any:
    """L x `(N, ...)` -> `(N, L, ...)`."""
    return ops.stack(per_layer, axis=1)


class TransformerTranslator(CharTranslator):
    """A Transformer translator for one task, with greedy decoding and every head readable.

    Args: as `CharTranslator` (config: a `TransformerConfig`).
    """

    DECODING = "_greedy"

    def __init__(self, task: str, config: TransformerConfig, seed: int | None = 0) -> None:
        super().__init__(task, config, seed)
        source = keras.Input((self.vocab.max_source_len,), dtype="int32", name="source")
        dec_in = keras.Input((self.vocab.target_steps,), dtype="int32", name="decoder_inputs")
        self.core = TransformerCore(config, self.vocab, name="transformer")
        logits, *_ = self.core(source, dec_in)
        self.trainer = keras.Model([source, dec_in], logits, name="transformer_translator")
        sources = tf.TensorSpec((None, self.vocab.max_source_len), tf.int32)  # (N, S)
        steps = tf.TensorSpec((None, self.vocab.target_steps), tf.int32)  # (N, T)
        # No autograph: the graphs have no Python control flow on tensors (the decoding loop is
        # a `tf.while_loop`), and converting the code took ~0.6 s of the first translation.
        self._run = tf.function(
            lambda s, d: self.core(s, d, training=False),
            input_signature=[sources, steps],
            autograph=False,
        )  # -> logits (N, T, V), encoder self, decoder self, cross (N, L, H, ·, ·)
        self._traced_run = tf.function(
            lambda s, d: self.core(s, d, training=False, trace=True),
            input_signature=[sources, steps],
            autograph=False,
        )  # -> the same, then `_Inputs`' four fields
        self._greedy = tf.function(self._greedy_steps, input_signature=[sources], autograph=False)

    @property
    def parameter_count(self) -> int:
        """How many trained numbers the model has (the fixed position tables left out)."""
        return int(sum(np.prod(w.shape) for w in self.trainer.trainable_weights))

    def translate_batch(self, texts: Sequence[str]) -> list[TransformerTranslation]:
        """`translate` for many texts at once (one network run per decoder step); each
        result holds every head of the final run."""
        ids, run = self._decode(texts)
        return [self._translation(text, ids[i], run, i) for i, text in enumerate(texts)]

    def teacher_forced_cross(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """`(N, L, H, T, S)` cross-attention weights with the true targets fed to the decoder."""
        sources = self.vocab.encode_sources([s for s, _ in pairs])  # (N, S)
        dec_in, _, _ = self.vocab.encode_targets([t for _, t in pairs])  # (N, T)
        chunks = [
            self._run(sources[i : i + DECODE_CHUNK], dec_in[i : i + DECODE_CHUNK])[3].numpy()
            for i in range(0, len(pairs), DECODE_CHUNK)
        ]
        return np.concatenate(chunks)  # (N, L, H, T, S)

    def layer_params(self, way: str, layer: int) -> dict[str, np.ndarray]:
        """The kernels of one attention, by the names `compute_multihead` takes.

        Keras keeps `(D, H, Dk)` query/key/value kernels and an `(H, Dv, D)` output kernel;
        `compute_multihead` takes W_Q/W_K/W_V `(H, D, Dk)` and W_O `(H·Dv, D)`.
        """
        attention = self._attention_layer(way, layer)
        kernels = {
            "W_Q": attention.query_dense.kernel,
            "W_K": attention.key_dense.kernel,
            "W_V": attention.value_dense.kernel,
        }
        params = {k: np.transpose(np.asarray(w), (1, 0, 2)) for k, w in kernels.items()}
        out = np.asarray(attention.output_dense.kernel)  # (H, Dv, D)
        params["W_O"] = out.reshape(-1, out.shape[-1])  # (H·Dv, D)
        return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in params.items()}

    def _attention_layer(self, way: str, layer: int) -> keras.layers.MultiHeadAttention:
        check_choice(way, "way", tuple(WAYS))
        check_int(layer, "layer", low=0, high=self.config.layers - 1)
        if way == "bidirectional":
            return self.core.encoder_layers[layer].multihead_attention
        decoder_layer = self.core.decoder_layers[layer]
        if way == "causal":
            return decoder_layer.multihead_attention1
        return decoder_layer.multihead_attention2

    def trace(self, text: str) -> TransformerTrace:
        """Translate `text`, then rerun that forward pass returning every attention's inputs, and
        recompute each attention's heads from its inputs and the layer's kernels.

        The recomputed weights equal the layers' own (`results[...].weights` vs the
        translation's arrays); the trace crops padding: S real source characters, T decoder
        positions (the output and the end step). Safe to call from many threads at once.

        Raises:
            ValueError: as `translate`.
        """
        translation = self.translate(text)
        s, t = len(text), len(translation.decoder_tokens)
        source = self.vocab.encode_sources([text])  # (1, S_max)
        dec_in = self._decoder_inputs(translation.output)  # (1, T_max)
        with self._runner("_traced_run") as runner:  # this model, or its traced twin
            run = runner._traced_run(source, dec_in)  # noqa: SLF001 - its twin: the same class
        inputs = _Inputs(*(np.asarray(a) for a in run[4:]))
        sides = {  # way -> layer -> (query input (1, T, D), key = value input (1, S, D)), cropped
            "bidirectional": lambda i: (inputs.encoder[:, i, :s], inputs.encoder[:, i, :s]),
            "causal": lambda i: (inputs.decoder[:, i, :t], inputs.decoder[:, i, :t]),
            "cross": lambda i: (inputs.cross_query[:, i, :t], inputs.memory[:, :s]),
        }
        results = {}
        layers = range(self.config.layers)  # in call order: the encoder, then each decoder layer
        order = [("bidirectional", i) for i in layers] + [
            (way, i) for i in layers for way in ("causal", "cross")
        ]
        for way, layer in order:
            queries, keys = sides[way](layer)
            results[(way, layer)] = compute_multihead(
                queries,
                keys,
                keys,
                num_heads=self.config.heads,
                causal=WAYS[way].causal,
                params=self.layer_params(way, layer),
            )
        ends = (*translation.target_tokens, END_LABEL)
        labels = {  # way -> (rows, columns)
            "bidirectional": (translation.source_tokens, translation.source_tokens),
            "causal": (translation.decoder_tokens, translation.decoder_tokens),
            "cross": (ends, translation.source_tokens),
        }
        calls = [
            _call(way, layer, getattr(translation, WAY_FIELDS[way])[layer], results, labels[way])
            for way, layer in results  # encoder layers, then each decoder layer's two
        ]
        return TransformerTrace(
            translation,
            AttentionCalls(tuple(calls)),
            results,
            translation.source_tokens,
            translation.decoder_tokens,
            ends,
        )

    def _decoder_inputs(self, output: str) -> np.ndarray:
        """`(1, T_max)` ids `[start, c1, ..., cn]` fed to the decoder for `output`."""
        dec_in, _, _ = self.vocab.encode_targets([output])
        return dec_in

    def _translation(self, text: str, ids: np.ndarray, run: _Run, row: int):
        output = self.vocab.decode_target(ids)
        s, n = len(text), len(output)
        t = min(n + 1, self.vocab.target_steps)  # the output's steps and the end step
        cross = run.cross[row, :, :, :t, :s]  # (L, H, T, S)
        return TransformerTranslation(
            source=text,
            output=output,
            weights=read_only(cross[-1, :, :n].mean(axis=0)),  # (n, S) last layer, heads' mean
            source_tokens=tuple(text),
            target_tokens=tuple(output),
            encoder_self=read_only(run.encoder_self[row, :, :, :s, :s].copy()),
            decoder_self=read_only(run.decoder_self[row, :, :, :t, :t].copy()),
            cross=read_only(cross.copy()),
            decoder_tokens=(START_LABEL, *output)[:t],
        )

    def _decode(self, texts: Sequence[str]) -> tuple[np.ndarray, _Run]:
        """Greedy decoding of `texts` (checked), `DECODE_CHUNK` texts per network run."""
        parts = self._decoded_chunks(texts)
        ids = np.concatenate([p[0] for p in parts])
        run = _Run(*(np.concatenate(arrays) for arrays in zip(*(p[1] for p in parts), strict=True)))
        return ids, run

    def _decode_chunk(self, sources: np.ndarray) -> tuple[np.ndarray, _Run]:
        """Greedy decoding of `(N, S)` source ids: one graph call (`_greedy`) that runs the
        network once per step, and the last step's run of every head."""
        ids, *outputs = self._greedy(sources)
        return ids.numpy(), _Run(*(np.asarray(o) for o in outputs))

    def _greedy_steps(self, sources: tf.Tensor) -> tuple[tf.Tensor, ...]:
        """The decoding loop of `_greedy`, in the graph: the encoder runs once, then step t runs
        the decoder on the ids so far, picks output t (PAD and START never), and feeds it to
        position t + 1; it stops when every text has ended or the steps run out. Returns the ids
        `(N, T)` and the last run's logits and weights (`_Run`'s fields)."""
        n, steps = tf.shape(sources)[0], self.vocab.target_steps
        never = tf.constant(
            np.isin(np.arange(self.vocab.target_size), [PAD, START]), dtype=tf.bool
        )  # (V,)

        memory, encoder_self, _ = self.core.encode(sources)  # once: the source stays
        encoder_self = _stack(encoder_self)  # (N, L, H, S, S)

        def step(t, dec_in, ids, done):
            logits, decoder_self, cross, _, _ = self.core.decode(sources, memory, dec_in)
            outputs = (logits, encoder_self, _stack(decoder_self), _stack(cross))
            logits = tf.where(never, -np.inf, logits[:, t])  # (N, V)
            pick = tf.where(done, PAD, tf.argmax(logits, axis=-1, output_type=tf.int32))  # (N,)
            ids += pick[:, None] * tf.one_hot(t, steps, dtype=tf.int32)  # column t
            done |= pick == END
            fed = tf.where(done, PAD, pick)[:, None] * tf.one_hot(t + 1, steps, dtype=tf.int32)
            return t + 1, dec_in + fed, ids, done, outputs  # one_hot(T) is all 0: nothing fed

        c, s = self.config, self.vocab.max_source_len
        shapes = [(steps, self.vocab.target_size), (c.layers, c.heads, s, s),
                  (c.layers, c.heads, steps, steps), (c.layers, c.heads, steps, s)]  # fmt: skip
        nothing_yet = tuple(tf.zeros([n, *shape]) for shape in shapes)  # `_Run`'s fields
        dec_in = tf.one_hot(tf.zeros([n], tf.int32), steps, dtype=tf.int32) * START  # (N, T)
        *_, ids, _, outputs = tf.while_loop(
            lambda t, _dec_in, _ids, done, _outputs: (
                (t == 0) | ((t < steps) & ~tf.reduce_all(done))
            ),
            lambda t, dec_in, ids, done, _outputs: step(t, dec_in, ids, done),
            (0, dec_in, tf.zeros([n, steps], tf.int32), tf.zeros([n], tf.bool), nothing_yet),
        )
        return (ids, *outputs)
