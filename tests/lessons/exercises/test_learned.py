"""Lesson 9's exercises on the shipped dates translator, their answers recomputed here from the
model's own decoder states in float64 numpy, and the untrained model's weights against 1/S."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.learn.translation.dates import read_date
from attnviz.lessons.exercises import learned
from attnviz.lessons.exercises.learned import LOOKS_AT, OTHER, UNTRAINED

pytestmark = pytest.mark.slow  # loads the shipped translator and builds an untrained one

SEEDS = (0, 1, 7)


@pytest.fixture(scope="module")
def model():
    return learned.trained_model()  # the one the exercises use, loaded once


def _numpy_weights(model, source: str, row: int) -> np.ndarray:
    """Row `row` of the model's attention, recomputed in float64 numpy from the decoder state
    and the encoder outputs it attended with: softmax(keys · query), no scaling."""
    inputs = model.attention_inputs(source, row)
    scores = inputs.keys.astype(np.float64) @ inputs.query[0].astype(np.float64)  # (S,)
    e = np.exp(scores - scores.max())
    return e / e.sum()


@pytest.mark.parametrize("seed", SEEDS)
def test_the_part_is_where_the_numpy_weights_peak(model, seed):
    variant = LOOKS_AT.make(seed)
    source, target, row = (variant.data[k] for k in ("source", "target", "row"))
    assert model.translate(source).output == target
    top = int(np.argmax(_numpy_weights(model, source, row)))
    _, spans = read_date(source)
    part = {0: "year", 1: "year", 2: "year", 3: "year", 5: "month", 6: "month"}.get(row, "day")
    start, end = spans[part]
    assert start <= top < end  # the variant is one where the model reads the right part
    right = f"'{source[start:end]}' ("
    picked = next(o for o in variant.answer.options if o.startswith(right))
    assert LOOKS_AT.solution(variant) == picked
    assert LOOKS_AT.check(variant, picked).solved
    for other in variant.answer.options:
        if other != picked:
            assert not LOOKS_AT.check(variant, other).solved, other
    reveal = LOOKS_AT.reveal(variant, picked)
    assert reveal.right == ((row, top),)
    assert {c for _, c in reveal.guessed} == set(range(start, end))


def test_the_options_are_the_parts_in_reading_order():
    variant = LOOKS_AT.make(0)
    source = variant.data["source"]
    _, spans = read_date(source)
    expected = [f"'{source[a:b]}'" for a, b in sorted(spans.values())]
    assert [o.split(" (")[0] for o in variant.answer.options[:-1]] == expected
    assert variant.answer.options[-1] == OTHER


def test_reading_input_character_k_for_output_character_k_is_named():
    for seed in range(6):
        variant = LOOKS_AT.make(seed)
        told = LOOKS_AT.check(variant, LOOKS_AT.wrong(variant)).message
        row = variant.data["row"]
        if "does not read input character" in told:
            assert f"Output character {row} does not read input character {row}" in told
            return
    pytest.fail("no seed of 0-5 tripped the same-place mistake")


@pytest.mark.parametrize("seed", SEEDS)
def test_the_untrained_weight_is_one_over_the_input_length(seed):
    variant = UNTRAINED.make(seed)
    source, target = variant.data["source"], variant.data["target"]
    weights = learned.untrained_model().teacher_forced_weights([(source, target)])[0]
    weights = weights[: len(target), : len(source)].astype(np.float64)  # (T, S)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(weights * len(source), 1.0, atol=0.015)  # all within 1.5 %
    by_hand = 1 / len(source)
    assert UNTRAINED.check(variant, f"{by_hand:.4f}").solved
    assert UNTRAINED.check(variant, f" {by_hand:.4f} ".replace(".", ",")).solved  # a comma
    assert not UNTRAINED.check(variant, f"{1 / (len(source) + 1):.4f}").solved
    np.testing.assert_allclose(
        UNTRAINED.reveal(variant, "0.1").matrix, weights, rtol=1e-6, atol=1e-7
    )


def test_each_usual_mistake_is_named():
    variant = next(
        v for v in map(UNTRAINED.make, range(20)) if " " in v.data["source"]
    )  # a date with spaces: counting letters and digits only is a different number
    source, outputs = variant.data["source"], len(variant.data["target"])
    letters = sum(c.isalnum() for c in source)
    assert (
        "counted the letters and digits only"
        in UNTRAINED.check(variant, f"{1 / letters:.4f}").message
    )
    assert "sharp weight" in UNTRAINED.check(variant, "0.9").message
    if abs(1 / outputs - 1 / len(source)) > 0.002:
        told = UNTRAINED.check(variant, f"{1 / outputs:.4f}").message
        assert f"That is 1/{outputs}, shared over the output characters" in told
    miscounted = len(source) + (1 if len(source) - 1 in (outputs, letters) else -1)
    told = UNTRAINED.check(variant, f"{1 / miscounted:.4f}").message
    assert f"the input has {len(source)} characters" in told
