"""Tests for bench/exercises_bench.py: what the benchmark reads from a page (the matrices of an
exercise's formulas)."""

import numpy as np

from bench import exercises_bench, floor_exercise


def test_the_matrices_are_read_back_from_the_formulas_attnviz_writes():
    # attnviz's exercise view writes `Q = \begin{bmatrix} 2 & -1 \\ 0.5 & 3 \end{bmatrix}`
    latex = [
        r"\mathrm{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V",
        r"Q = \begin{bmatrix} 2 & -1 & 0 \\ 0.5 & 3 & -2 \end{bmatrix}",
        r"K = \begin{bmatrix} -3 \end{bmatrix}",
    ]
    found = exercises_bench.matrices(latex)
    assert sorted(found) == ["K", "Q"]
    np.testing.assert_array_equal(found["Q"], [[2, -1, 0], [0.5, 3, -2]])
    np.testing.assert_array_equal(found["K"], [[-3]])


def test_the_floors_formulas_read_back_as_its_numbers():
    q, k, _ = floor_exercise.draw("1a", 2026)
    latex = [floor_exercise._matrix("Q", q), floor_exercise._matrix("K", k)]
    found = exercises_bench.matrices(latex)
    np.testing.assert_array_equal(found["Q"], q)
    np.testing.assert_array_equal(found["K"], k)
