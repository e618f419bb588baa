"""Tests for learn/twins.py: a run trained on a kept twin ends with the very weights, losses and
scores of a run on a new trace (the way before twins), for each kind of model Learn trains; and
the kept twins themselves: given every variable, their optimizer at its first state, one per run
at a time, at most `TWINS`, a twin of another architecture refused."""

from __future__ import annotations

import math

import keras
import numpy as np
import pytest

from attnviz.learn import global_seed, twins
from attnviz.learn.configs import LMConfig, NetworkConfig, TrainConfig, TransformerConfig
from attnviz.learn.language.training import train_lm
from attnviz.learn.translation.training import train, train_transformer


def _seq2seq(seed: int):
    return train("reverse", NetworkConfig(units=16), TrainConfig(2, n_pairs=96, seed=seed))


def _transformer(seed: int):
    network = TransformerConfig(d_model=16, heads=2, d_ff=32, rate=0.1)  # dropout: its seeds too
    return train_transformer("reverse", network, TrainConfig(2, n_pairs=96, seed=seed))


def _language_model(seed: int):
    tiny = LMConfig(layers=1, heads=2, d_model=8, d_ff=0)
    return train_lm("text", tiny, TrainConfig(2, n_pairs=64, val_pairs=32, batch_size=32,
                                               seed=seed, time_limit=900.0))  # fmt: skip


def _tensorflow_s_own(eager):
    """TensorFlow's own seeding, its kernel caches cleared (as `keras.utils.set_random_seed`)."""
    return type(eager)._set_global_seed.__get__(eager)  # noqa: SLF001


def _without_seconds(history) -> list:
    """A record's history, its last column (seconds) left out; NaN as None (NaN != NaN)."""
    return [[None if math.isnan(x) else x for x in row[:-1]] for row in history]


@pytest.mark.slow  # trains nine small runs
@pytest.mark.parametrize("fit", [_seq2seq, _transformer, _language_model],
                         ids=["seq2seq", "transformer", "language model"])  # fmt: skip
def test_a_run_on_a_kept_twin_is_the_run_on_a_new_trace_bit_for_bit(fit, monkeypatch):
    with monkeypatch.context() as before:  # as before twins: traced anew, TF's caches cleared
        before.setattr(global_seed, "_seed_only", _tensorflow_s_own)
        twins.forget_twins()
        reference = fit(5)
    other = fit(6)  # the kept twin now holds another seed's run
    again = fit(5)  # on that twin, its train step traced and compiled by the runs before
    for a, b in zip(reference.get_weights(), again.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert _without_seconds(again.stats.history) == _without_seconds(reference.stats.history)
    assert not all(np.array_equal(a, b) for a, b in
                   zip(reference.get_weights(), other.get_weights(), strict=True))  # fmt: skip


# ---- the twins themselves, on a small Keras model --------------------------------------------


class Small:
    """A model as `twin_of` takes it: its Keras model in `.trainer`."""

    def __init__(self, units: int = 3) -> None:
        inputs = keras.Input((4,))
        self.trainer = keras.Model(inputs, keras.layers.Dense(units)(inputs))


def _compiled(model: Small) -> keras.Model:
    model.trainer.compile(optimizer=keras.optimizers.Adam(0.1), loss="mse")
    model.trainer.optimizer.build(model.trainer.trainable_variables)
    return model.trainer


@pytest.fixture(autouse=True)
def _no_twins_kept():
    twins.forget_twins()
    yield
    twins.forget_twins()


def test_a_twin_holds_the_model_s_variables_and_a_fresh_optimizer():
    made = []

    def make() -> Small:
        made.append(Small())
        return made[-1]

    first, second = Small(), Small()
    before = [v.numpy() for v in first.trainer.variables]
    with twins.twin_of(first, "k", make, _compiled) as twin:
        for mine, given in zip(twin.trainer.variables, before, strict=True):
            np.testing.assert_array_equal(mine.numpy(), given)
        twin.trainer.fit(np.ones((8, 4)), np.zeros((8, 3)), epochs=2, verbose=0)
        assert int(twin.trainer.optimizer.iterations) == 2
    for mine, kept in zip(first.trainer.variables, before, strict=True):
        np.testing.assert_array_equal(mine.numpy(), kept)  # the model itself is not trained
    with twins.twin_of(second, "k", make, _compiled) as again:
        assert again is twin and len(made) == 1  # kept: not made again
        assert int(again.trainer.optimizer.iterations) == 0  # its first state
        slots = [v.numpy() for v in again.trainer.optimizer.variables[2:]]
        assert slots and all(not s.any() for s in slots)  # Adam's slots at 0
        for mine, given in zip(again.trainer.variables, second.trainer.variables, strict=True):
            np.testing.assert_array_equal(mine.numpy(), given.numpy())


def test_two_runs_at_once_each_have_their_own_twin():
    with (
        twins.twin_of(Small(), "k", Small, _compiled) as one,
        twins.twin_of(Small(), "k", Small, _compiled) as two,
    ):
        assert one is not two
    with twins.twin_of(Small(), "k", Small, _compiled) as kept:
        assert kept in (one, two)


def test_at_most_twins_are_kept_the_least_recently_used_dropped(monkeypatch):
    monkeypatch.setattr(twins, "TWINS", 2)
    kept = {}
    for key in ("a", "b", "c"):
        with twins.twin_of(Small(), key, Small, _compiled) as twin:
            kept[key] = twin
    with twins.twin_of(Small(), "a", Small, _compiled) as again:
        assert again is not kept["a"]  # dropped: a new one
    with twins.twin_of(Small(), "c", Small, _compiled) as again:
        assert again is kept["c"]


def test_a_key_that_cannot_be_kept_gets_a_twin_for_its_run_only():
    with twins.twin_of(Small(), ["a", "list"], Small, _compiled) as one:
        pass
    with twins.twin_of(Small(), ["a", "list"], Small, _compiled) as two:
        assert two is not one


def test_a_twin_of_another_architecture_is_refused():
    with twins.twin_of(Small(3), "k", Small, _compiled):
        pass
    with (
        pytest.raises(ValueError, match="not of one architecture|not one architecture"),
        twins.twin_of(Small(5), "k", Small, _compiled),
    ):
        pass


def _gru(seed: int):
    from attnviz.learn.translation.model import Seq2SeqAttention

    return Seq2SeqAttention("reverse", NetworkConfig(units=16), seed=seed)


def _small_transformer(seed: int):
    from attnviz.learn.translation.transformer_translator import TransformerTranslator

    return TransformerTranslator("reverse", TransformerConfig(d_model=16, heads=2, d_ff=32), seed)


def _small_lm(seed: int):
    from attnviz.learn.language.model import LanguageModel

    return LanguageModel("induction", LMConfig(layers=1, heads=2, d_model=8, d_ff=0), seed=seed)


def _shipped_transformer(seed: int):
    """The shipped reverse Transformer (a trace needs a translation the task can read), its
    weights nudged by `seed` so that two seeds are two models."""
    from attnviz.learn.pretrained import load_transformer
    from attnviz.learn.translation.transformer_translator import TransformerTranslator

    shipped = load_transformer("reverse")
    model = TransformerTranslator("reverse", shipped.config, seed=None)  # a new one, not shared
    model.set_weights([w * (1 + 0.01 * seed) for w in shipped.get_weights()])
    return model


def _translations(model) -> list:
    """What a translator's page shows of three texts: each output and its weights."""
    texts = ["abc", "hello", "zyxwv"]
    return [(t.output, t.weights) for t in model.translate_batch(texts)]


def _transformer_trace(model) -> list:
    """A Transformer's step-by-step trace of one text: every head's recomputed weights."""
    trace = model.trace("hello")
    return [(str(key), result.weights) for key, result in trace.results.items()]


def _lm_views(model) -> list:
    """What the language model's page shows of one text: weights, predictions, a generation."""
    from attnviz.learn.language.generation import generate

    forward = model.forward("abcab")
    generated = generate(model, "qwerty", steps=4)
    return [(forward.predicted, forward.weights), (generated.text, generated.probabilities)]


SLOW = pytest.mark.slow  # each traces its functions three times (2-12 s): the quick run has one
NEW_MODELS = [  # a new model, what runs it, the `tf.function`s a run traces
    pytest.param(_gru, _translations, ("_greedy",), id="seq2seq"),
    pytest.param(_small_transformer, _translations, ("_greedy",), id="transformer", marks=SLOW),
    pytest.param(_shipped_transformer, _transformer_trace, ("_greedy", "_traced_run"),
                 id="transformer trace", marks=SLOW),
    pytest.param(_small_lm, _lm_views, ("_run", "decode_step"), id="language model", marks=SLOW),
]  # fmt: skip


@pytest.mark.parametrize(("new", "use", "functions"), NEW_MODELS)
def test_a_new_model_runs_on_a_traced_twin_as_on_its_own_functions(new, use, functions):
    # each finished run's model is new: its first use ran its own functions, traced again for
    # it; now a twin of its architecture holds its weights, bit for bit the same
    twins.forget_twins()
    models = [new(seed) for seed in (1, 2)]
    on_twins = [use(model) for model in models]
    for model in models:  # the models traced nothing
        assert not any(getattr(model, f).experimental_get_tracing_count() for f in functions)
    ((key, twin),) = twins._RUNNING.items()  # noqa: SLF001 - one twin for both
    assert key[0] is type(models[0]) and key[2] == models[0].config
    traced = [getattr(twin, f).experimental_get_tracing_count() for f in functions]
    assert traced == [1] * len(functions)  # once, for both models
    for model, shown in zip(models, on_twins, strict=True):
        for f in functions:  # trace the model's own functions: it then runs on them
            getattr(model, f).get_concrete_function()
        own = use(model)
        traced = [getattr(model, f).experimental_get_tracing_count() for f in functions]
        assert traced == [1] * len(functions)  # its own, once: it ran on them
        for (label, array), (own_label, own_array) in zip(shown, own, strict=True):
            assert label == own_label
            np.testing.assert_array_equal(array, own_array)
    assert not np.array_equal(on_twins[0][0][1], on_twins[1][0][1])  # two models, two answers


@pytest.mark.parametrize("kind", ["general", "transformer", "language model"])
def test_a_shipped_model_runs_on_its_own_functions_not_on_a_twin(kind):
    # a shipped model is kept by the server and used by every session: its own functions are
    # traced once (by the warm-up); on twins, the server's many shipped models' twins pushed
    # each other out of the kept ones (first opens traced again)
    from attnviz.learn import pretrained
    from attnviz.learn.language.generation import generate

    twins.forget_twins()
    if kind == "language model":
        model, function = pretrained.load_lm("induction"), "_run"
        model.forward("abcab")
        generate(model, "qwerty", steps=2)
        assert model.decode_step.experimental_get_tracing_count() == 1
    else:
        model = (
            pretrained.load_transformer("reverse") if kind == "transformer"
            else pretrained.load_pretrained("reverse", kind)
        )  # fmt: skip
        function = model.DECODING
        model.translate("hello")
    assert model.shared
    assert getattr(model, function).experimental_get_tracing_count() == 1
    assert not twins._RUNNING  # noqa: SLF001 - no twin made
