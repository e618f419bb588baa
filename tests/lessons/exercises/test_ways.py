"""Lesson 8's exercises: the ways' masks and sides worked out by hand."""

from __future__ import annotations

import numpy as np

from attnviz.lessons.exercises.ways import CHOOSE, EXERCISES, GREY, PAD, ROLE

SIDES_BY_HAND = {  # way -> (queries from, keys and values from), as Vaswani et al. use them
    "bidirectional": ("source", "source"),
    "causal": ("target", "target"),
    "cross": ("target", "source"),
}


def _grey_by_hand(data) -> frozenset:
    queries, keys = (data[side] for side in SIDES_BY_HAND[data["way"]])
    return frozenset(
        (i, j)
        for i in range(len(queries))
        for j in range(len(keys))
        if keys[j] == PAD or (data["way"] == "causal" and j > i)
    )


def test_the_grey_cells_are_the_padding_keys_and_in_the_decoder_the_later_ones():
    ways = set()
    for seed in range(12):
        variant = GREY.make(seed)
        data = variant.data
        ways.add(data["way"])
        grey = _grey_by_hand(data)
        verdict = GREY.check(variant, grey)
        assert verdict.solved and f"{len(grey)} cell" in verdict.message, seed
        assert not GREY.check(variant, grey - {min(grey)}).solved
        reveal = GREY.reveal(variant, grey)
        assert set(reveal.right) == grey == {tuple(c) for c in np.argwhere(~reveal.allowed)}
        np.testing.assert_allclose(reveal.matrix[reveal.allowed.any(axis=1)].sum(axis=1), 1,
                                   atol=1e-5)  # fmt: skip
        assert np.all(reveal.matrix[~reveal.allowed] == 0)
    assert ways == {"bidirectional", "causal", "cross"}


def test_the_usual_grey_mistakes_are_named():
    causal = next(v for v in map(GREY.make, range(20)) if v.data["way"] == "causal")
    grey = _grey_by_hand(causal.data)
    n = len(causal.data["target"])
    diagonal = grey | {(i, i) for i in range(n)}
    assert "may see itself" in GREY.check(causal, diagonal).message
    flipped = frozenset((j, i) for i, j in grey)
    assert "flipped" in GREY.check(causal, flipped).message
    cross = next(v for v in map(GREY.make, range(20)) if v.data["way"] == "cross")
    t, s = len(cross.data["target"]), len(cross.data["source"])
    ahead = _grey_by_hand(cross.data) | {(i, j) for i in range(t) for j in range(s) if j > i}
    assert "no look-ahead mask" in GREY.check(cross, ahead).message
    assert "Pick cells of the" in GREY.check(cross, {(t, 0)}).message  # outside the grid


def test_the_queries_and_keys_come_from_the_sentence_the_way_names():
    for seed in range(10):
        variant = ROLE.make(seed)
        way, role = variant.data["way"], variant.data["role"]
        side = SIDES_BY_HAND[way][0 if role == "queries" else 1]
        assert ROLE.check(variant, f"the {side} sentence").solved, seed
        other = "target" if side == "source" else "source"
        told = ROLE.check(variant, f"the {other} sentence")
        assert not told.solved and f"the {side}'s" in told.message
        rows, cols = ROLE.reveal(variant, f"the {side} sentence").matrix.shape
        assert rows == len(variant.data[SIDES_BY_HAND[way][0]])
        assert cols == len(variant.data[SIDES_BY_HAND[way][1]])


def test_the_way_to_choose_is_the_one_whose_sides_and_mask_fit():
    for seed in range(10):
        variant = CHOOSE.make(seed)
        data = variant.data
        (way,) = [w for w, sides in SIDES_BY_HAND.items() if sides == data["sides"]]
        for i, j, sees in data["task"]:  # the task holds in that way, by hand
            assert sees == (way != "causal" or j <= i)
        verdict = CHOOSE.check(variant, {"way": way})
        assert verdict.solved and verdict.close == 1.0
        (control,) = variant.answer.controls
        assert not CHOOSE.check(variant, {"way": control.default}).solved  # not solved at start
        for other in set(SIDES_BY_HAND) - {way}:
            told = CHOOSE.check(variant, {"way": other})
            assert not told.solved and told.close == 0.0
            assert "here the" in told.message
    assert CHOOSE.check(variant, {"way": "sideways"}).message.startswith("Choose a way")
    assert CHOOSE.reveal(variant, {"way": "sideways"}) is None


def test_odd_answers_get_a_message_and_no_exception():
    odd = [np.array([1, 2]), [1], {"way": []}, {"theta": np.array([1, 2])}, {"theta": []},
           frozenset({("a", "b")}), b"x", object()]  # fmt: skip
    for exercise in EXERCISES:
        variant = exercise.make(5)
        for answer in odd:
            verdict = exercise.check(variant, answer)
            assert not verdict.solved and verdict.message, (exercise.id, answer)
            exercise.reveal(variant, answer)  # a chart or None, never an exception
