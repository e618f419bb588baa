"""Tests for learn/translation/model.py: greedy translation, its weights, the explorer step, bad
input.

Uses the shipped dates checkpoints (learn/checkpoints/), so nothing is trained here.
"""

import keras
import numpy as np
import pytest

from attnviz.core.attention import compute_attention
from attnviz.learn import load_pretrained

pytestmark = pytest.mark.slow  # builds and runs the GRU translators

TEXT = "Sunday, 22 November 2026"


@pytest.fixture(scope="module")
def models():
    return {score: load_pretrained("dates", score) for score in ("dot", "general", "concat")}


def test_translate_returns_the_iso_date_and_one_row_per_output_character(models):
    t = models["dot"].translate(TEXT)
    assert t.output == "2026-11-22" and t.source == TEXT
    assert t.source_tokens == tuple(TEXT) and t.target_tokens == tuple("2026-11-22")
    assert t.weights.shape == (10, 24) and t.weights.dtype == np.float32
    assert not t.weights.flags.writeable


@pytest.mark.parametrize("score", ["dot", "general", "concat"])
def test_rows_sum_to_one_and_padding_gets_exactly_zero(models, score):
    model = models[score]
    for text in (TEXT, "1/2/50", "nov 22 26"):
        weights = model.translate(text).weights
        np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
        assert (weights >= 0).all()
    padded = model.teacher_forced_weights([("nov 22 26", "2026-11-22")])  # (1, T, S)
    assert padded.shape == (1, 11, 30)
    assert (padded[0, :, 9:] == 0).all()  # 21 padding columns, every step
    np.testing.assert_allclose(padded[0].sum(axis=1), 1.0, atol=1e-5)


def test_attention_looks_at_the_year_month_and_day(models):
    weights = models["dot"].translate(TEXT).weights
    looked_at = [TEXT[j] for j in weights.argmax(axis=1)]
    assert looked_at[2:4] == ["2", "6"]  # year digits 3 and 4 read the year's "26"
    assert all(c in "22" for c in looked_at[8:])  # the day digits read "22"


def test_batches_translate_as_single_texts(models):
    model = models["general"]
    texts = [TEXT, "22.11.26", "THE 1ST OF MAY 1999"]
    batch = model.translate_batch(texts)
    for text, translated in zip(texts, batch, strict=True):
        single = model.translate(text)
        assert translated.output == single.output
        np.testing.assert_allclose(translated.weights, single.weights, atol=1e-6)
    assert [t.output for t in batch] == ["2026-11-22", "2026-11-22", "1999-05-01"]


@pytest.mark.parametrize(
    ("score", "names"), [("dot", []), ("general", ["W"]), ("concat", ["W_q", "W_k", "v"])]
)
def test_one_decoder_step_is_reproduced_by_compute_attention(models, score, names):
    model = models[score]
    translation = model.translate(TEXT)
    for step in range(len(translation.output)):
        inputs = model.attention_inputs(TEXT, step)
        assert inputs.query.shape == (1, 64) and inputs.keys.shape == (24, 64)
        assert sorted(inputs.params) == sorted(names) and inputs.score == score
        assert inputs.target_tokens[step] == translation.output[step]
        result = compute_attention(
            inputs.query, inputs.keys, inputs.values, score=inputs.score, scale=inputs.scale,
            params=inputs.params,
        )  # fmt: skip
        np.testing.assert_allclose(result.weights[0], translation.weights[step], atol=1e-5)


def test_general_step_matches_float64_numpy(models):
    inputs = models["general"].attention_inputs(TEXT, 5)
    q, k = inputs.query.astype(np.float64), inputs.keys.astype(np.float64)
    scores = q @ inputs.params["W"].astype(np.float64) @ k.T  # (1, Dq) (Dq, Dk) (Dk, S) -> (1, S)
    exps = np.exp(scores - scores.max())
    np.testing.assert_allclose(inputs.weights, (exps / exps.sum())[0], atol=1e-5)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "`text` is empty"),
        ("x" * 31, "too long for the dates task: 31 characters, the most is 30"),
        ("22 nov 2026 — q", r"does not know: 'q', '—'\. Allowed: "),
        (None, "`text` must be a string. Received: None"),
    ],
    ids=["empty", "long", "characters", "none"],
)
def test_bad_text_raises(models, text, match):
    with pytest.raises(ValueError, match=match):
        models["dot"].translate(text)


def test_bad_step_raises(models):
    with pytest.raises(ValueError, match="`step` must be from 0 to 9. Received: 10"):
        models["dot"].attention_inputs(TEXT, 10)
    with pytest.raises(ValueError, match="`texts` must be a non-empty list of strings"):
        models["dot"].translate_batch(TEXT)
    with pytest.raises(ValueError, match="`texts` must be a non-empty list of strings"):
        models["dot"].translate_batch([])


def test_models_survive_keras_clear_session(models):
    before = models["concat"].translate(TEXT)
    for _ in range(3):
        keras.backend.clear_session()  # what Streamlit does after every script run
    (after,) = models["concat"].translate_batch([TEXT])  # run again (`translate` keeps it)
    assert after.output == before.output == "2026-11-22"
    np.testing.assert_array_equal(after.weights, before.weights)
    assert load_pretrained("dates", "concat").translate(TEXT).output == "2026-11-22"


def test_a_shipped_model_keeps_its_translations_and_a_new_model_does_not(models, monkeypatch):
    model = models["dot"]
    assert model.shared  # shipped
    runs = []
    batch = type(model).translate_batch
    monkeypatch.setattr(
        type(model), "translate_batch", lambda self, texts: runs.append(self) or batch(self, texts)
    )
    first = model.translate("1 May 1999")
    assert model.translate("1 May 1999") is first and runs == [model]
    assert first.output == "1999-05-01" and not first.weights.flags.writeable
    assert model.translate("2 May 1999").output == "1999-05-02" and len(runs) == 2
    for _ in range(2):  # a bad text is checked every time, never kept
        with pytest.raises(ValueError, match="`text` is empty"):
            model.translate("")
    assert len(runs) == 4
    new = type(model)("dates", model.config, seed=0)  # trained in the app: its weights change
    new.translate("1 May 1999")
    new.translate("1 May 1999")
    assert runs[4:] == [new, new]


def test_parameter_count_counts_every_weight(models):
    model = models["dot"]
    assert model.parameter_count == sum(w.size for w in model.get_weights()) == 43_054


def _prefix_decoding(model, sources: np.ndarray):
    """Greedy decoding as the whole network gives it: step t reruns the teacher-forced network
    (`_decode_all`) on the outputs so far and picks output t (the decoding before `_greedy`)."""
    from attnviz.learn.translation.vocab import END, PAD, START

    n, steps = sources.shape[0], model.vocab.target_steps
    dec_in, ids, done = np.zeros((n, steps), np.int32), np.zeros((n, steps), np.int32), False
    dec_in[:, 0] = START
    enc, state = model._encode(sources)
    for t in range(steps):
        logits, weights, dec = (x.numpy() for x in model._decode_all(dec_in, enc, state, sources))
        logits[:, t, [PAD, START]] = -np.inf
        ids[:, t] = logits[:, t].argmax(axis=-1)
        done = done | (ids[:, t] == END)
        if np.all(done) or t + 1 == steps:
            return ids, weights[:, : t + 1], dec[:, : t + 1], enc.numpy()
        dec_in[:, t + 1] = ids[:, t]


@pytest.mark.parametrize(
    ("task", "score"), [("dates", "dot"), ("german_numbers", "general"), ("reverse", "concat")]
)  # every task and score layer (all nine: the same, 18 s)
def test_greedy_decoding_in_one_graph_is_bit_for_bit_the_whole_network_on_each_prefix(task, score):
    # `_greedy` runs the GRU one step a step (4-5x faster than rerunning the whole network on
    # each prefix); its ids, weights and decoder states must be exactly the network's
    from attnviz.learn.translation.tasks import make_pairs

    model = load_pretrained(task, score)
    sources = model.vocab.encode_sources([source for source, _ in make_pairs(task, 12, 7)])
    for batch in (sources[:1], sources[7:8], sources):  # (N, S): one text, and twelve at once
        ids, weights, dec, enc = _prefix_decoding(model, batch)
        got = model._decode_chunk(batch)
        run = weights.shape[1]  # steps run
        np.testing.assert_array_equal(got.ids, ids)
        np.testing.assert_array_equal(got.weights[:, :run], weights)
        np.testing.assert_array_equal(got.dec[:, :run], dec)
        np.testing.assert_array_equal(got.enc, enc)
    assert model._greedy.experimental_get_tracing_count() == 1  # one graph for every batch size
