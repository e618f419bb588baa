"""`Seq2SeqAttention`: a character translator for one task, its greedy decoding and its attention.

Shape letters: N texts, S source positions (padded), T decoder steps, D encoder/decoder
features. A translation returns one row of attention weights per output character, over the
real source characters only (padding never gets weight: it is masked before the softmax).

Decoding is greedy: the decoder is fed its own best guess one step at a time, in one graph call
(`_greedy`). The encoder runs once; each step runs the decoder's GRU one step and attends from
the new decoder state. The decoder is causal and attends row by row, so each row is, bit for bit,
what the whole network gives when fed the decoded prefix at once (tests/learn/translation):
the weights and decoder states returned are those rows.

The model keeps its Keras layers and its `tf.function`s, so it survives
`keras.backend.clear_session()` (Streamlit calls it after every script run).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, NamedTuple

import keras
import numpy as np
import tensorflow as tf

from attnviz.core.checks import check_int, describe, read_only
from attnviz.core.kept import Kept
from attnviz.learn.configs import NetworkConfig
from attnviz.learn.global_seed import set_global_seed
from attnviz.learn.translation.network import Networks, build_networks
from attnviz.learn.translation.tasks import Task, get_task
from attnviz.learn.translation.vocab import END, PAD, START, Vocabulary
from attnviz.learn.twins import runner

DECODE_CHUNK = 512  # most texts one decoding call decodes
KEPT_TRANSLATIONS = 32  # a shared model's last translations, by text (at most ~0.1 MB each)


@dataclass(frozen=True)
class Translation:
    """One greedy translation and its attention."""

    source: str  # the text that was translated
    output: str  # the decoded characters (the end token left out)
    weights: np.ndarray  # (len(output), len(source)) float32, rows sum to 1 over the source
    source_tokens: tuple[str, ...]  # the source characters, the columns of `weights`
    target_tokens: tuple[str, ...]  # the output characters, the rows of `weights`


@dataclass(frozen=True)
class AttentionInputs:
    """What one decoder step's attention was computed from, for `compute_attention`."""

    query: np.ndarray  # (1, D) the decoder state at this step
    keys: np.ndarray  # (S, D) the encoder outputs of the real source characters
    values: np.ndarray  # (S, D) the same encoder outputs (keys and values are one tensor)
    params: dict[str, np.ndarray]  # the trained score weights: {}, {"W"} or {"W_q", "W_k", "v"}
    score: str  # "dot", "general" or "concat"
    scale: bool  # whether the scores were divided by sqrt(D)
    weights: np.ndarray  # (S,) the weights the model used at this step
    step: int  # the output position, 0-based
    source_tokens: tuple[str, ...]  # the source characters (rows of keys)
    target_tokens: tuple[str, ...]  # the output characters; target_tokens[step] is this step's


class _Decoded(NamedTuple):
    """Greedy decoding of a batch, as numpy arrays."""

    ids: np.ndarray  # (N, T) int32 predicted target ids
    weights: np.ndarray  # (N, T, S) attention weights
    dec: np.ndarray  # (N, T, D) decoder states (the queries)
    enc: np.ndarray  # (N, S, D) encoder outputs (the keys and values)


class CharTranslator:
    """What every Learn translator shares: its task and vocabulary, its Keras `trainer`, every
    weight in a fixed order, and checked greedy decoding in chunks. A subclass builds `trainer`
    and defines `translate_batch(texts)`, `_decode_chunk(sources (N, S))` and `DECODING`, the
    name of the `tf.function` that decoding traces.

    Args:
        task: one of `TASKS`.
        config: the network's sizes (and score).
        seed: seeds the initial weights (`learn.global_seed.set_global_seed`, which also reseeds
            Python's, NumPy's and TensorFlow's global generators); None leaves the global
            seeds alone (for weights that are loaded next).
    """

    trainer: keras.Model  # [source (N, S), decoder inputs (N, T)] -> logits (N, T, V)
    DECODING: str  # the `tf.function` attribute `_decode_chunk` runs (and traces, on a new model)
    shared = False  # True: kept and used many times (a shipped model): runs its own functions

    def __init__(self, task: str, config: Any, seed: int | None = 0) -> None:
        self.task: Task = get_task(task)
        self.vocab = Vocabulary.of(self.task)
        self.config = config
        self.stats: Any = None  # TrainingStats once trained or loaded
        self._translations = Kept(KEPT_TRANSLATIONS)  # text -> Translation, once `shared`
        if seed is not None:
            set_global_seed(seed)

    def get_weights(self) -> list[np.ndarray]:
        """Every weight of the network, in a fixed order (copies)."""
        return [np.array(w) for w in self.trainer.get_weights()]

    def set_weights(self, weights: Sequence[np.ndarray]) -> None:
        """Set every weight, in the order of `get_weights`."""
        self.trainer.set_weights(list(weights))

    def translate(self, text: str):
        """Translate `text` greedily and return the output with its attention weights.

        A `shared` model (shipped: its weights never change) keeps its last `KEPT_TRANSLATIONS`
        translations (their arrays are read-only): every run of a page showing one asks for the
        same text again, and every session of a classroom for the same example.

        Raises:
            ValueError: for a non-string, empty or too long text, or characters the task does
                not know (the message names them and lists the allowed ones).
        """
        if not self.shared:
            return self.translate_batch([text])[0]
        return self._translations.get(text, lambda: self.translate_batch([text])[0])

    def _decoded_chunks(self, texts: Sequence[str]) -> list:
        """`_decode_chunk` of `texts` (checked), `DECODE_CHUNK` texts per call."""
        if isinstance(texts, str) or not texts:
            raise ValueError(
                f"`texts` must be a non-empty list of strings. Received: {describe(texts)}."
            )
        sources = self.vocab.encode_sources(texts)  # (N, S), checks every text
        with self._runner(self.DECODING) as runner:
            return [
                runner._decode_chunk(sources[i : i + DECODE_CHUNK])  # noqa: SLF001 - its twin
                for i in range(0, len(texts), DECODE_CHUNK)
            ]

    def _runner(self, function: str) -> AbstractContextManager[CharTranslator]:
        """This model, or its twin holding its weights, to run its `tf.function` named
        `function` (`learn.twins.runner`: a new model traces nothing)."""
        make = lambda: type(self)(self.task.name, self.config, seed=None)  # noqa: E731
        return runner(self, function, (type(self), self.task.name, self.config), make)


class Seq2SeqAttention(CharTranslator):
    """A bi-GRU encoder, GRU decoder and attnviz attention for one task (see `network`).

    Args: as `CharTranslator` (config: a `NetworkConfig`, the sizes and the score).
    """

    DECODING = "_greedy"

    def __init__(self, task: str, config: NetworkConfig, seed: int | None = 0) -> None:
        super().__init__(task, config, seed)
        self.networks: Networks = build_networks(config, self.vocab)
        d = 2 * config.units
        sources = tf.TensorSpec((None, self.vocab.max_source_len), tf.int32)  # (N, S)
        steps = tf.TensorSpec((None, self.vocab.target_steps), tf.int32)  # (N, T)
        # no autograph: no Python control flow on tensors (as the Transformer's)
        self._encode = tf.function(
            lambda source: self.networks.encoder(source, training=False),
            input_signature=[sources],
            autograph=False,
        )  # (N, S) -> enc (N, S, D), state (N, D)
        self._decode_all = tf.function(
            lambda dec_in, enc, state, source: self.networks.decoder(
                dec_in, enc, state, source, training=False
            ),
            input_signature=[
                steps,
                tf.TensorSpec((None, self.vocab.max_source_len, d), tf.float32),  # (N, S, D)
                tf.TensorSpec((None, d), tf.float32),  # (N, D)
                sources,
            ],
            autograph=False,
        )  # -> logits (N, T, V), weights (N, T, S), dec (N, T, D)
        self._greedy = tf.function(self._greedy_steps, input_signature=[sources], autograph=False)

    @property
    def trainer(self) -> keras.Model:
        """The Keras model `fit` trains: [source, decoder inputs] -> logits."""
        return self.networks.trainer

    @property
    def parameter_count(self) -> int:
        """How many trained numbers the model has."""
        return int(self.networks.trainer.count_params())

    def score_params(self) -> dict[str, np.ndarray]:
        """The trained weights of the score layer, by the names `compute_attention` takes."""
        scorer = self.networks.decoder.attention.scorer
        return {w.name: np.asarray(w.numpy(), dtype=np.float32) for w in scorer.weights}

    def translate_batch(self, texts: Sequence[str]) -> list[Translation]:
        """`translate` for many texts at once (one graph call per `DECODE_CHUNK` texts)."""
        decoded = self._decode(texts)
        return [self._translation(text, decoded, i) for i, text in enumerate(texts)]

    def attention_inputs(self, text: str, step: int) -> AttentionInputs:
        """The query, keys, values and score weights of decoder step `step` of `text`.

        `compute_attention(a.query, a.keys, a.values, score=a.score, scale=a.scale,
        params=a.params).weights[0]` equals `translate(text).weights[step]`.

        Raises:
            ValueError: for a bad text, or a step outside the translation's output.
        """
        decoded = self._decode([text])
        translation = self._translation(text, decoded, 0)
        steps = len(translation.output)
        if steps == 0:
            raise ValueError(f"The model translated {text!r} to nothing: there is no step.")
        check_int(step, "step", low=0, high=steps - 1)
        n = len(text)
        return AttentionInputs(
            query=read_only(decoded.dec[0, step : step + 1]),  # (1, D)
            keys=read_only(decoded.enc[0, :n]),  # (S, D)
            values=read_only(decoded.enc[0, :n]),  # (S, D)
            params={k: read_only(v) for k, v in self.score_params().items()},
            score=self.config.score,
            scale=self.config.scale,
            weights=translation.weights[step],
            step=step,
            source_tokens=translation.source_tokens,
            target_tokens=translation.target_tokens,
        )

    def teacher_forced_weights(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """`(N, T, S)` attention weights with the true targets fed to the decoder."""
        sources = self.vocab.encode_sources([s for s, _ in pairs])  # (N, S)
        dec_in, _, _ = self.vocab.encode_targets([t for _, t in pairs])  # (N, T)
        chunks = []
        for i in range(0, len(pairs), DECODE_CHUNK):
            source = sources[i : i + DECODE_CHUNK]
            enc, state = self._encode(source)  # (n, S, D), (n, D)
            chunks.append(self._decode_all(dec_in[i : i + DECODE_CHUNK], enc, state, source)[1])
        return np.concatenate([c.numpy() for c in chunks])  # (N, T, S)

    def _translation(self, text: str, decoded: _Decoded, row: int) -> Translation:
        output = self.vocab.decode_target(decoded.ids[row])
        weights = decoded.weights[row, : len(output), : len(text)]  # (T_out, S_in)
        return Translation(
            source=text,
            output=output,
            weights=read_only(weights.copy()),
            source_tokens=tuple(text),
            target_tokens=tuple(output),
        )

    def _decode(self, texts: Sequence[str]) -> _Decoded:
        """Greedy decoding of `texts` (checked), `DECODE_CHUNK` texts per call."""
        parts = self._decoded_chunks(texts)
        return _Decoded(*(np.concatenate(arrays) for arrays in zip(*parts, strict=True)))

    def _decode_chunk(self, sources: np.ndarray) -> _Decoded:
        """Greedy decoding of `(N, S)` source ids: one graph call (`_greedy`) on this model's own
        functions (`_decoded_chunks` picks the model or its twin)."""
        return _Decoded(*(np.asarray(part) for part in self._greedy(sources)))

    def _greedy_steps(self, sources: tf.Tensor) -> tuple[tf.Tensor, ...]:
        """The decoding loop of `_greedy`, in the graph: the encoder runs once, then step t feeds
        output t - 1 (START first) to the decoder (`Decoder.step`) and picks output t from row
        t's logits (PAD and START never); every text is fed its own pick, also after its end. It
        stops when every text has ended or the steps run out. Returns the ids `(N, T)`, the last
        step's weights `(N, T, S)`, the decoder states `(N, T, D)` (0 after the last step) and
        the encoder outputs `(N, S, D)`."""
        decoder, steps = self.networks.decoder, self.vocab.target_steps
        never = tf.constant(
            np.isin(np.arange(self.vocab.target_size), [PAD, START]), dtype=tf.bool
        )  # (V,)
        enc, state = self.networks.encoder(sources, training=False)  # (N, S, D), (N, D)
        n, s, d = tf.shape(sources)[0], self.vocab.max_source_len, enc.shape[-1]
        mask = tf.broadcast_to(tf.not_equal(sources, PAD)[:, None, :], [n, steps, s])  # (N, T, S)

        def step(t, token, state, dec, ids, done, _weights):
            state, dec, logits, weights = decoder.step(token, state, dec, t, enc, mask)
            pick = tf.argmax(tf.where(never, -np.inf, logits[:, t]), axis=-1, output_type=tf.int32)
            ids = tf.where(tf.one_hot(t, steps, dtype=tf.int32) > 0, pick[:, None], ids)  # col t
            return t + 1, pick, state, dec, ids, done | (pick == END), weights

        start = (0, tf.fill([n], START), state, tf.zeros([n, steps, d]),  # t, token, state, dec
                 tf.zeros([n, steps], tf.int32), tf.zeros([n], tf.bool),  # ids, done
                 tf.zeros([n, steps, s]))  # weights  # fmt: skip

        def going(t, _token, _state, _dec, _ids, done, _weights):
            return (t < steps) & ~tf.reduce_all(done)

        _, _, _, dec, ids, _, weights = tf.while_loop(going, step, start)
        return ids, weights, dec, enc
