"""Lesson 7's exercises: the answers by the places' definitions and by float64 numpy."""

from __future__ import annotations

import numpy as np

from attnviz.inputs.text import encode_sentences
from attnviz.lessons.exercises.heads import EXERCISES, WHERE, WHICH, WIDTH
from attnviz.transformer.made_heads import made_params

BY_HAND = {  # where each place is for query i of n keys
    "the previous token": lambda i, n: i - 1,
    "itself": lambda i, n: i,
    "the first token": lambda i, n: 0,
    "the next token": lambda i, n: i + 1,
}


def _numpy_heads(words, order):
    """`(H, T, T)` softmax(X W_Q[h] (X W_K)ᵀ / √Dk) in float64."""
    x = encode_sentences(" ".join(words), d_model=16, d_k=16, seed=0).inputs[0]
    made = made_params(x, x, num_heads=4, order=order)
    w_q, w_k = (made.params[name].astype(np.float64) for name in ("W_Q", "W_K"))
    scores = np.einsum("td,hdk,sk->hts", x, w_q, x @ w_k[0]) / 2.0  # √Dk = √4
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_a_head_looks_where_its_place_says():
    for seed in range(6):
        variant = WHERE.make(seed)
        h, i, words = variant.data["head"], variant.data["query"], variant.data["words"]
        j = BY_HAND[variant.data["order"][h]](i, len(words))
        assert WHERE.check(variant, f"key {j} ({words[j]})").solved, seed
        reveal = WHERE.reveal(variant, f"key {j} ({words[j]})")
        np.testing.assert_allclose(reveal.matrix, _numpy_heads(words, variant.data["order"])[h],
                                   atol=1e-4)  # fmt: skip
        assert reveal.right == ((i, j),) == reveal.guessed


def test_a_mix_up_of_places_is_named():
    variant = WHERE.make(1)  # head 0 looks at the next token from query 2 (see the prompt)
    assert "head 0" in variant.prompt.split("In ")[-1] and variant.data["order"][0] == (
        "the next token"
    )
    i, words = variant.data["query"], variant.data["words"]
    told = WHERE.check(variant, f"key {i - 1} ({words[i - 1]})")
    assert not told.solved
    assert "a head that looks at the previous token would look" in told.message
    assert WHERE.check(variant, "key 99").message.startswith("Pick one of the keys: key 0")


def test_the_head_that_looks_at_a_place_is_the_one_made_to():
    for seed in range(6):
        variant = WHICH.make(seed)
        order, place = variant.data["order"], variant.data["place"]
        right = order.index(place)
        assert WHICH.check(variant, f"head {right}").solved, seed
        other = (right + 1) % 4
        told = WHICH.check(variant, f"head {other}")
        assert not told.solved and f"it looks at {order[other]}" in told.message
        ((name, row, rows, cols),) = variant.shown  # row i of each head, computed as numpy does
        i = variant.data["query"]
        np.testing.assert_allclose(row, _numpy_heads(variant.data["words"], order)[:, i],
                                   atol=1e-4)  # fmt: skip
        assert name == f"Row {i} of each head" and rows == ("head 0", "head 1", "head 2", "head 3")


def test_a_head_is_d_model_over_h_wide_and_the_concatenation_d_model():
    seen = set()
    for seed in range(12):
        variant = WIDTH.make(seed)
        d, h, what = (variant.data[k] for k in ("d_model", "heads", "what"))
        seen.add(what)
        right = d // h if what == "head" else d
        assert WIDTH.check(variant, str(right)).solved
        assert WIDTH.check(variant, f" {right}.0 ").solved
        assert "That is h × d_model" in WIDTH.check(variant, str(h * d)).message
        assert "number of heads" in WIDTH.check(variant, str(h)).message
        assert not WIDTH.check(variant, str(right + 0.5)).solved
    assert seen == {"head", "concat"}
    variant = next(v for v in map(WIDTH.make, range(12)) if v.data["what"] == "concat")
    d, h = variant.data["d_model"], variant.data["heads"]
    assert "one head's width" in WIDTH.check(variant, str(d // h)).message
    reveal = WIDTH.reveal(variant, str(d))
    assert reveal.matrix.shape == (3, d) and len(reveal.right) == 3 * (d // h)


def test_odd_answers_get_a_message_and_no_exception():
    odd = [np.array([1, 2]), [1], {"way": []}, {"theta": np.array([1, 2])}, {"theta": []},
           frozenset({("a", "b")}), b"x", object()]  # fmt: skip
    for exercise in EXERCISES:
        variant = exercise.make(5)
        for answer in odd:
            verdict = exercise.check(variant, answer)
            assert not verdict.solved and verdict.message, (exercise.id, answer)
            exercise.reveal(variant, answer)  # a chart or None, never an exception
