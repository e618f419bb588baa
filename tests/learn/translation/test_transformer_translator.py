"""Tests for learn/translation/transformer_translator.py: the trained Transformer's translation,
every head of its forward pass, the heads recomputed from their inputs, and bad input.

Uses the shipped checkpoints (learn/checkpoints/*_transformer.npz) and a tiny untrained model.
"""

from concurrent.futures import ThreadPoolExecutor

import keras
import numpy as np
import pytest
import tensorflow as tf
from build_support import assert_same_weights, keras_default_builds, refusing

from attnviz.learn.configs import TransformerConfig
from attnviz.learn.pretrained import load_transformer
from attnviz.learn.translation.transformer_translator import TransformerCore, TransformerTranslator
from attnviz.learn.translation.vocab import END, PAD, START

pytestmark = pytest.mark.slow  # builds and runs Transformer translators

TEXT = "Sunday, 22 November 2026"


@pytest.fixture(scope="module")
def dates():
    return load_transformer("dates")


@pytest.fixture(scope="module")
def tiny():
    return TransformerTranslator("reverse", TransformerConfig(layers=1, heads=2, d_model=8, d_ff=8))


def test_translate_returns_the_iso_date_with_every_head(dates):
    t = dates.translate(TEXT)
    assert t.output == "2026-11-22"
    assert t.encoder_self.shape == (2, 4, 24, 24)  # (L, H, S, S): real characters only
    assert t.decoder_self.shape == (2, 4, 11, 11)  # 10 characters and the end step
    assert t.cross.shape == (2, 4, 11, 24)
    assert t.decoder_tokens == ("<s>", *"2026-11-22")  # what each decoder position was fed
    assert t.weights.shape == (10, 24)  # one row per output character, like Seq2SeqAttention
    np.testing.assert_allclose(t.weights, t.cross[-1, :, :10].mean(axis=0), atol=1e-7)
    for array in (t.encoder_self, t.decoder_self, t.cross, t.weights):
        assert not array.flags.writeable
        np.testing.assert_allclose(array.sum(axis=-1), 1.0, atol=1e-5)


def test_decoder_self_attention_is_causal_and_padding_is_never_attended(dates):
    t = dates.translate("1/2/50")
    assert (np.triu(t.decoder_self, k=1) == 0).all()  # no position sees a later one
    full = dates.teacher_forced_cross([("1/2/50", "1950-02-01")])  # (1, L, H, T, S)
    assert full.shape == (1, 2, 4, 11, 30)
    assert (full[0, ..., 6:] == 0).all()  # 24 padding columns in every layer and head


def test_the_trace_recomputes_every_head_from_its_inputs_and_kernels(dates):
    trace = dates.trace(TEXT)
    t = trace.translation
    own = {"bidirectional": t.encoder_self, "causal": t.decoder_self, "cross": t.cross}
    assert sorted(trace.results) == sorted((w, layer) for w in own for layer in range(2))
    for (way, layer), result in trace.results.items():
        np.testing.assert_allclose(result.weights[0], own[way][layer], atol=2e-6)
        assert result.settings.scale and result.d_k == 16 and result.num_heads == 4
        assert result.settings.causal == (way == "causal")


def test_the_trace_s_attention_is_every_call_in_call_order_with_its_tokens(dates):
    trace = dates.trace(TEXT)
    t, attention = trace.translation, trace.attention
    own = {"bidirectional": t.encoder_self, "causal": t.decoder_self, "cross": t.cross}
    assert attention.keys() == (
        "encoder_layer_0/self_attention", "encoder_layer_1/self_attention",
        "decoder_layer_0/self_attention", "decoder_layer_0/cross_attention",
        "decoder_layer_1/self_attention", "decoder_layer_1/cross_attention",
    )  # fmt: skip
    assert list(attention.groups()) == ["bidirectional", "causal", "cross"]
    for call in attention:
        result = trace.results[(call.way, call.layer)]
        assert call.kind == ("cross" if call.way == "cross" else "self")
        np.testing.assert_array_equal(call.weights[0], own[call.way][call.layer])  # the model's
        for name in ("query_heads", "key_heads", "value_heads"):  # (1, H, ·, 16) recomputed
            assert getattr(call, name) is getattr(result, name)
        assert not call.weights.flags.writeable
    s, n = len(TEXT), len(t.output)
    causal = attention.at("causal", 1)
    assert causal.mask.shape == (1, n + 1, n + 1) and (causal.mask[0] == np.tri(n + 1)).all()
    assert attention.at("cross", 0).mask is None and attention.at("bidirectional", 0).mask is None
    assert attention.at("cross", 1).labels() == ((*"2026-11-22", "</s>"), tuple(TEXT))
    assert causal.labels() == (("<s>", *"2026-11-22"),) * 2
    assert attention.at("bidirectional", 0).weights.shape == (1, 4, s, s)
    stack = attention.layer_stack("causal")  # masked cells hold exactly 0: drawn grey
    np.testing.assert_array_equal(
        stack.blocked, np.broadcast_to(~causal.mask[0], (2, 4, n + 1, n + 1))
    )


def test_greedy_decoding_equals_the_whole_network_run_step_by_step(dates):
    # `translate_batch` runs the encoder once and the decoder per step (the source does not
    # change); here the whole network runs at every step, as training calls it, in Python
    texts = [TEXT, "1/2/50", "NOV 22 26", "7 Jul 1999"]
    vocab = dates.vocab
    sources = vocab.encode_sources(texts)  # (N, S)
    n, steps = len(texts), vocab.target_steps
    dec_in = np.zeros((n, steps), np.int32)
    dec_in[:, 0] = START
    ids, done = np.zeros((n, steps), np.int32), np.zeros(n, bool)
    for t in range(steps):
        logits, *weights = (np.asarray(a) for a in dates.core(sources, dec_in))
        logits = logits[:, t].copy()  # (N, V)
        logits[:, [PAD, START]] = -np.inf
        pick = np.where(done, PAD, logits.argmax(axis=-1))
        ids[:, t] = pick
        done |= pick == END
        if done.all():
            break
        if t + 1 < steps:
            dec_in[:, t + 1] = np.where(done, PAD, pick)
    for row, got in enumerate(dates.translate_batch(texts)):
        assert got.output == vocab.decode_target(ids[row])
        s, t = len(texts[row]), len(got.decoder_tokens)
        np.testing.assert_allclose(got.encoder_self, weights[0][row, :, :, :s, :s], atol=1e-6)
        np.testing.assert_allclose(got.decoder_self, weights[1][row, :, :, :t, :t], atol=1e-6)
        np.testing.assert_allclose(got.cross, weights[2][row, :, :, :t, :s], atol=1e-6)


def test_threads_tracing_and_translating_one_shared_model_get_the_single_threaded_results(dates):
    # One shipped model serves every session of a server: traces and translations run at once.
    texts = [TEXT, "1/2/50", "NOV 22 26", "22.11.2026", "March 3, 2021", "7 Jul 1999", "12/31/49"]
    alone = {text: (dates.trace(text), dates.translate(text)) for text in texts}
    eager_before = tf.config.functions_run_eagerly()

    def work(worker: int) -> list[str]:
        wrong = []
        for i in range(15):  # 8 threads at once, each through every text twice
            text = texts[(worker + i) % len(texts)]
            trace, translation = dates.trace(text), dates.translate(text)
            expected_trace, expected = alone[text]
            if translation.output != expected.output:
                wrong.append(f"{text}: {translation.output}")
            for key, result in trace.results.items():
                if not np.array_equal(result.weights, expected_trace.results[key].weights):
                    wrong.append(f"{text}: {key}")
        return wrong

    with ThreadPoolExecutor(8) as pool:
        wrong = [w for found in pool.map(work, range(8)) for w in found]
    assert wrong == []
    assert tf.config.functions_run_eagerly() == eager_before  # never touched


def test_layer_params_are_the_keras_kernels_in_compute_multihead_layout(dates):
    params = dates.layer_params("cross", 1)
    assert {k: v.shape for k, v in params.items()} == {
        "W_Q": (4, 64, 16), "W_K": (4, 64, 16), "W_V": (4, 64, 16), "W_O": (64, 64),
    }  # fmt: skip
    layer = dates.core.decoder_layers[1].multihead_attention2
    kernel = np.asarray(layer.query_dense.kernel)  # (D, H, Dk)
    np.testing.assert_array_equal(params["W_Q"][2], kernel[:, 2, :])


def test_batches_translate_as_single_texts(dates):
    texts = [TEXT, "1/2/50", "NOV 22 26"]
    batch = dates.translate_batch(texts)
    for text, got in zip(texts, batch, strict=True):
        alone = dates.translate(text)
        assert got.output == alone.output
        np.testing.assert_allclose(got.cross, alone.cross, atol=1e-5)


def test_an_untrained_model_still_gives_proper_weights(tiny):
    t = tiny.translate("abc")
    assert t.encoder_self.shape == (1, 2, 3, 3)
    np.testing.assert_allclose(t.cross.sum(axis=-1), 1.0, atol=1e-5)
    trainable = tiny.trainer.trainable_weights
    assert tiny.parameter_count == sum(int(np.prod(w.shape)) for w in trainable)


def test_the_model_survives_keras_clear_session(dates):
    before = dates.translate(TEXT)
    keras.backend.clear_session()  # what Streamlit does after every script run
    after = dates.translate(TEXT)
    assert after.output == before.output
    np.testing.assert_allclose(after.cross, before.cross, atol=1e-6)


@pytest.mark.parametrize(
    ("text", "match"),
    [("22 nov 2026 §", "'§'"), ("", "empty"), ("x" * 31, "too long"), (42, "must be a string")],
    ids=["unknown-character", "empty", "too-long", "not-a-string"],
)
def test_bad_input_says_what_is_wrong(dates, text, match):
    with pytest.raises(ValueError, match=match):
        dates.translate(text)
    with pytest.raises(ValueError, match=match):
        dates.trace(text)


def test_unknown_ways_and_layers_are_refused(dates):
    with pytest.raises(ValueError, match="way"):
        dates.layer_params("sideways", 0)
    with pytest.raises(ValueError, match="layer"):
        dates.layer_params("cross", 2)


def test_the_core_builds_the_seeded_weights_of_a_traced_build_without_running_call(
    monkeypatch,
):
    # Explicit builds, in the order `call` first uses each layer: a seed gives the weights
    # Keras drew while tracing `call` (the shipped checkpoints were trained from those).
    config = TransformerConfig(layers=2, heads=2, d_model=8, d_ff=8)
    with monkeypatch.context() as patched:
        patched.setattr(TransformerCore, "call", refusing(TransformerCore.call))
        built = TransformerTranslator("reverse", config, seed=7).get_weights()
    with monkeypatch.context() as patched:
        keras_default_builds(patched, TransformerCore)
        traced = TransformerTranslator("reverse", config, seed=7)
    assert_same_weights(built, traced.get_weights())
    # the symbolic shapes Keras took from compute_output_shape are the call's
    source = traced.vocab.encode_sources(["abc", "hello"])  # (2, S)
    dec_in, _, _ = traced.vocab.encode_targets(["cba", "olleh"])  # (2, T)
    outputs = traced.core(source, dec_in)
    expected = traced.core.compute_output_shape(source.shape, dec_in.shape)
    assert [tuple(x.shape) for x in outputs] == list(expected)
    assert tuple(traced.trainer.outputs[0].shape) == (None, *expected[0][1:])
