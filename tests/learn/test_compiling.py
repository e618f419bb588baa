"""Tests for learn/compiling.py: one trace of the train step, the same weights as Keras's own
compile, the accuracy weighted or not, and an unbuilt model refused."""

import keras
import numpy as np
import pytest

from attnviz.learn.compiling import compile_trainer

N, D, C = 32, 3, 4  # examples, features, classes


def _model() -> keras.Model:
    keras.utils.set_random_seed(0)
    inputs = keras.Input((D,))
    return keras.Model(inputs, keras.layers.Dense(C)(inputs))


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    return rng.normal(size=(N, D)).astype("float32"), rng.integers(0, C, N)


def _fit_counting_traces(trainer: keras.Model, batch_size: int = 8) -> int:
    """Fit 2 epochs; how many times TensorFlow traced the train step."""
    traces = []
    step = trainer.train_step
    trainer.train_step = lambda data: traces.append(data) or step(data)
    keras.utils.set_random_seed(2)
    x, y = _data()
    trainer.fit(x, y, batch_size=batch_size, epochs=2, shuffle=True, verbose=0)
    return len(traces)


def _keras_compiled(model: keras.Model) -> keras.Model:
    """The same settings, compiled as Keras's own examples do (a metric named by a string)."""
    model.compile(
        optimizer=keras.optimizers.Adam(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=False,
    )
    return model


@pytest.mark.parametrize("batch_size", [8, 12])  # 12: each epoch ends with a batch of 8
def test_the_train_step_is_traced_once_with_the_same_weights_as_keras_own_compile(batch_size):
    ours = compile_trainer(_model(), 0.01, weighted=False, jit_compile=False)
    assert _fit_counting_traces(ours, batch_size) == 1
    theirs = _keras_compiled(_model())
    assert _fit_counting_traces(theirs, batch_size) == 2  # the one making Adam's slots, again
    for a, b in zip(ours.get_weights(), theirs.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("weighted", [True, False])
def test_the_accuracy_is_weighted_only_when_asked(weighted):
    trainer = compile_trainer(_model(), 0.01, weighted=weighted, jit_compile=False)
    x, y = _data()
    weights = np.where(np.arange(N) < N // 2, 1.0, 0.0)  # the second half weighs nothing
    right = (np.argmax(trainer.predict(x, verbose=0), axis=-1) == y).astype(float)
    logs = trainer.evaluate(x, y, sample_weight=weights, batch_size=N, verbose=0, return_dict=True)
    expected = (right * weights).sum() / weights.sum() if weighted else right.mean()
    assert logs["accuracy"] == pytest.approx(expected, abs=1e-6)


def test_an_unbuilt_model_is_refused():
    with pytest.raises(ValueError, match="no weights yet: build it"):
        compile_trainer(keras.Sequential([keras.layers.Dense(2)]), 0.01, weighted=False,
                        jit_compile=False)  # fmt: skip
