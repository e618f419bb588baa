"""Tests for bench/floor_exercise.py: the exercises benchmark's floor shows lesson 1's exercises'
numbers and, once answered, the chart attnviz reveals (title, height, cells, outlines)."""

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attnviz.drawing.answer_chart import answer_heatmap
from attnviz.lessons.exercises.scores import BEST_KEY, SCORE
from bench import floor_exercise as floor
from tests.app_support import decode

SCRIPT = str(Path(floor.__file__))
SEEDS = (0, 1, 7, 2026, 2026 + floor.REDRAW_STEP)  # the last: 2026 after one "New numbers"


@pytest.mark.parametrize("seed", SEEDS)
def test_the_floor_draws_the_numbers_of_attnvizs_exercises(seed):
    one = SCORE.make(seed)
    q, k, cell = floor.draw("1a", seed)
    np.testing.assert_array_equal(q, one.data["q"])
    np.testing.assert_array_equal(k, one.data["k"])
    assert cell == one.data["cell"]
    best = BEST_KEY.make(seed)
    q, k, (i, _) = floor.draw("1b", seed)
    np.testing.assert_array_equal(q, best.data["q"])
    np.testing.assert_array_equal(k, best.data["k"])
    assert i == best.data["query"]


def _attnviz_chart(exercise, variant, answer) -> dict:
    """The chart attnviz's exercise view reveals for `answer` (as `view._reveal` draws it)."""
    shown = exercise.reveal(variant, answer)
    return answer_heatmap(
        shown.matrix, shown.rows, shown.cols, title=shown.title, kind=shown.kind,
        allowed=shown.allowed, guessed=shown.guessed, right=shown.right,
    ).to_dict()  # fmt: skip


def _outlines(fig: dict) -> list[tuple]:
    return sorted(
        (s["x0"], s["x1"], s["y0"], s["y1"], s["line"]["color"], s["line"]["width"],
         s["line"]["dash"]) for s in fig["layout"]["shapes"]
    )  # fmt: skip


@pytest.mark.parametrize("exercise_id", ["1a", "1b"])
def test_the_floor_reveals_attnvizs_chart_with_its_title_size_cells_and_outlines(exercise_id):
    seed = 7
    q, k, (i, j) = floor.draw(exercise_id, seed)
    scores = q @ k.T  # (3, 3) x (3, 3) -> (3, 3), by hand in float64
    if exercise_id == "1a":
        exercise, answer = SCORE, floor.number(scores[i, j])
        ours = floor.figure(scores, floor.TITLES["1a"], right=((i, j),)).to_dict()
    else:
        best, wrong = int(np.argmax(scores[i])), (int(np.argmax(scores[i])) + 1) % 3
        exercise, answer = BEST_KEY, f"key {wrong}"
        ours = floor.figure(
            scores, floor.TITLES["1b"], right=((i, best),), guessed=((i, wrong),)
        ).to_dict()
    theirs = _attnviz_chart(exercise, exercise.make(seed), answer)
    assert ours["layout"]["title"]["text"] == theirs["layout"]["title"]["text"]
    assert ours["layout"]["height"] == theirs["layout"]["height"]
    assert "width" not in ours["layout"] and "width" not in theirs["layout"]  # the column's
    np.testing.assert_allclose(decode(ours["data"][0]["z"]), decode(theirs["data"][0]["z"]))
    assert _outlines(ours) == _outlines(theirs)
    assert len(_outlines(ours)) == (1 if exercise_id == "1a" else 2)


def _chart(at: AppTest) -> dict:
    (chart,) = at.get("plotly_chart")
    return json.loads(chart.proto.spec)


def test_the_floor_page_reveals_the_guess_on_commit_and_hides_it_for_new_numbers():
    at = AppTest.from_file(SCRIPT, default_timeout=30)
    at.query_params.update(exercise="1b", variant="2026")
    at.run()
    assert not at.exception and not at.get("plotly_chart")
    at.radio[0].set_value("key 1").run()
    assert not at.get("plotly_chart")  # nothing before the commit
    next(b for b in at.button if b.label == "Commit my guess").click().run()
    assert _chart(at)["layout"]["title"]["text"] == floor.TITLES["1b"]
    assert at.radio[0].disabled
    next(b for b in at.button if b.label == "New numbers").click().run()
    assert not at.exception and not at.get("plotly_chart") and at.radio[0].value is None


def test_the_floor_page_reveals_the_scores_for_a_right_number_only():
    at = AppTest.from_file(SCRIPT, default_timeout=30)
    at.query_params.update(exercise="1a", variant="2026")
    at.run()
    q, k, (i, j) = floor.draw("1a", 2026)
    assert at.text_input[0].label == f"Score of query {i} for key {j}"
    check = next(b for b in at.button if b.label == "Check")
    at.text_input[0].input(floor.number(q[i] @ k[j] + 1))
    check.click().run()
    assert at.warning and not at.get("plotly_chart")
    at.text_input[0].input(floor.number(q[i] @ k[j]))
    next(b for b in at.button if b.label == "Check").click().run()
    assert at.success and _chart(at)["layout"]["title"]["text"] == floor.TITLES["1a"]
