"""Lesson 6's exercises, against projections worked out by hand and in float64 numpy."""

from __future__ import annotations

import numpy as np

from attnviz.inputs.text import encode_sentences
from attnviz.lessons.exercises.base import EditMatrices, TypeNumber, Variant
from attnviz.lessons.exercises.projections import ALIKE_QUERIES, Q_CELL, SAME, TWINS


def _positional(length: int, d_model: int) -> np.ndarray:
    """The sinusoidal encoding, written out from "Attention Is All You Need"."""
    pe = np.zeros((length, d_model))
    for pos in range(length):
        for i in range(d_model):
            angle = pos / 10000 ** (2 * (i // 2) / d_model)
            pe[pos, i] = np.sin(angle) if i % 2 == 0 else np.cos(angle)
    return pe


def test_equal_words_get_equal_queries_only_without_positions():
    seen = set()
    for seed in range(10):
        variant = TWINS.make(seed)
        a, b = variant.data["pair"]
        positional = variant.data["positional"]
        seen.add(positional)
        assert TWINS.check(variant, SAME[1] if positional else SAME[0]).solved
        assert not TWINS.check(variant, SAME[0] if positional else SAME[1]).solved
        q = TWINS.reveal(variant, SAME[0]).matrix  # (T, Dk)
        if positional:  # the rows differ by exactly (PE[a] - PE[b]) W_Q
            w_q = encode_sentences("a", d_model=8, d_k=4, seed=variant.data["encoding_seed"])
            w_q = w_q.params["W_Q"]  # the weights depend on the seed and sizes only
            pe = _positional(len(q), 8)
            np.testing.assert_allclose(q[a] - q[b], (pe[a] - pe[b]) @ w_q, atol=1e-9)
        else:
            np.testing.assert_array_equal(q[a], q[b])
    assert seen == {True, False}


def _cell_variant() -> Variant:
    e = np.array([[1.0, 0, 2], [0, 1, 1], [2, 2, 0]])
    p = np.array([[0.0, 1, 0], [1, 0, -1], [0, 0, 1]])
    w = np.array([[1.0, 2], [-1, 0], [1, 1]])
    return Variant(0, "", TypeNumber("", 0.01), {"e": e, "p": p, "w": w, "cell": (1, 0)})


def test_one_entry_of_q_by_hand():
    variant = _cell_variant()
    # x1 = (0, 1, 1) + (1, 0, -1) = (1, 1, 0); column 0 of W_Q = (1, -1, 1): 1 - 1 + 0 = 0
    assert Q_CELL.check(variant, "0").solved
    assert "1·1 + 1·(-1) + 0·1" in Q_CELL.check(variant, "0").message
    # the embedding alone: (0, 1, 1) · (1, -1, 1) = 0 too, so take column 1 instead
    variant = Variant(0, "", TypeNumber("", 0.01), {**variant.data, "cell": (1, 1)})
    # x1 · (2, 0, 1) = 2; the embedding alone (0, 1, 1) · (2, 0, 1) = 1; position alone 1
    assert Q_CELL.check(variant, "2").solved
    told = Q_CELL.check(variant, "1")
    assert not told.solved and "embedding alone" in told.message
    # Q[0, 0] = (1, 1, 2) · (1, -1, 1) = 2 = the answer; Q[2, 0] = (2, 2, 1) · (1, -1, 1) = 1
    assert "Take row 1 of x and column 1" in Q_CELL.check(variant, "5").message  # Q[2, 1]


def test_drawn_cells_against_numpy():
    for seed in range(6):
        variant = Q_CELL.make(seed)
        e, p, w = variant.data["e"], variant.data["p"], variant.data["w"]
        i, c = variant.data["cell"]
        assert Q_CELL.check(variant, str(float((e[i] + p[i]) @ w[:, c]))).solved
        told = Q_CELL.check(variant, str(float(e[i] @ w[:, c])))
        assert not told.solved and "embedding alone" in told.message
        np.testing.assert_allclose(Q_CELL.reveal(variant, "0").matrix, (e + p) @ w)


def _alike_variant() -> Variant:
    x = np.array([[1.0, 0, 1], [0, 1, 1], [1, 1, 0]])  # x0 - x1 = (1, -1, 0)
    return Variant(0, "", EditMatrices((("W_Q", ""),)), {"x": x})


def test_two_tokens_share_a_query_when_w_q_ignores_their_difference():
    variant = _alike_variant()
    # columns (1, 1, 0) and (0, 0, 1) are at right angles to (1, -1, 0):
    # queries (1, 1), (1, 1) and (2, 0)
    solved = ALIKE_QUERIES.check(variant, {"W_Q": "1 0\n1 0\n0 1"})
    assert solved.solved and "(1, 1)" in solved.message and "(2, 0)" in solved.message
    # column (1, 0, 0) is not: x0 W = (1, 0), x1 W = (0, 0)
    apart = ALIKE_QUERIES.check(variant, {"W_Q": "1 0\n0 0\n0 0"})
    assert not apart.solved and "x0 − x1 = (1, -1, 0)" in apart.message
    # all zeros: everyone shares (0, 0), token 2 too
    flat = ALIKE_QUERIES.check(variant, {"W_Q": "0 0\n0 0\n0 0"})
    assert not flat.solved and "token 2's is (0, 0)" in flat.message
    # (1, 1, 1) is at right angles to x2 - x0 = (0, 1, -1) too: every token gets (2, 2)
    same = ALIKE_QUERIES.check(variant, {"W_Q": "1 1\n1 1\n1 1"})
    assert not same.solved and "token 2's is (2, 2)" in same.message


def test_drawn_inputs_are_solved_by_right_angles_in_numpy():
    for seed in range(6):
        variant = ALIKE_QUERIES.make(seed)
        x = variant.data["x"]
        w = np.array(
            [
                [float(v) for v in line.split()]
                for line in ALIKE_QUERIES.solution(variant)["W_Q"].splitlines()
            ]
        )
        np.testing.assert_allclose((x[0] - x[1]) @ w, 0, atol=1e-12)
        assert np.max(np.abs((x[2] - x[0]) @ w)) >= 0.5
        start = dict(variant.answer.start)
        assert not ALIKE_QUERIES.check(variant, start).solved  # the drawn W_Q keeps them apart
