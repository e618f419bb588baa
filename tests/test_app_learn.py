"""AppTest of the Learn mode: shipped models, translating, comparing, training, the explorer."""

from __future__ import annotations

import app_support as ui
import numpy as np
import pytest
from app_support import APP, FIRST_RUN_TIMEOUT
from streamlit.testing.v1 import AppTest

from attnviz.learn import load_pretrained
from attnviz.learn.tasks import get_task


def _open(**params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"mode": "Learn", **params})
    at.run(timeout=FIRST_RUN_TIMEOUT)
    ui.assert_ok(at)
    return at


def _weights(at: AppTest, title: str) -> np.ndarray:
    return np.nan_to_num(ui.values(at, title), nan=0.0)


def test_shipped_dates_model_translates_the_example():
    at = _open()
    model = load_pretrained("dates", "dot")
    example = get_task("dates").example[0]
    expected = model.translate(example)
    assert at.text_input(key="learn_text_dates").value == example
    assert f"**Output:** `{expected.output}`" in [m.value for m in at.markdown]
    weights = _weights(at, "Attention: output × input")
    np.testing.assert_allclose(weights, expected.weights, atol=1e-6)
    spec = ui.chart(at, "Attention: output × input")
    assert ui.ticks(spec, "x")[: len(example)] == [c if c != " " else "␣" for c in example][:40]
    assert "dot score" in ui.captions(at) and "alignment score" in ui.captions(at)
    assert ui.chart(at, "How it was trained")  # the shipped model's own curves


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("22 nov 2026 §", "§"),
        ("", "empty"),
        ("x" * 200, "too long for the dates task: 200 characters, the most is 30"),
    ],
    ids=["unknown-character", "empty", "too-long"],
)
def test_bad_input_says_what_is_wrong_and_keeps_the_text(text, match):
    at = _open()
    at.text_input(key="learn_text_dates").set_value(text).run()
    assert not at.exception
    assert any(match in e for e in ui.errors(at)), ui.errors(at)
    assert at.text_input(key="learn_text_dates").value == text


def test_every_task_and_score_opens_its_shipped_model():
    at = _open()
    for task in ("reverse", at.button_group(key="task").options[-1]):
        for score in ("general", "concat"):
            at.button_group(key="task").set_value(task)
            at.radio(key="score").set_value(score).run()
            ui.assert_ok(at)
            assert f"{score} score" in ui.captions(at)


def test_scaling_on_points_to_training():
    at = _open()
    at.toggle(key="learn_scale").set_value(True).run()
    assert any("without √D scaling" in i.value for i in at.info)


def test_compare_shows_the_three_scores_side_by_side():
    at = _open(learn_view="Compare scores")
    table = at.dataframe[-1].value
    assert list(table["score"]) == ["dot", "general", "concat"]
    assert (table["validation characters (%)"] >= 99).all()
    assert (table["alignment score"] >= 0.9).all()
    titles = ui.titles(at)
    for score in ("dot", "general", "concat"):
        assert any(t.startswith(f"{score}: ") for t in titles), titles


@pytest.mark.parametrize("score", ["dot", "general", "concat"])
def test_one_step_opens_in_the_explorer_with_the_models_own_weights(score):
    at = _open(learn_view="One step in the explorer", score=score)
    model = load_pretrained("dates", score)
    text = at.text_input(key="learn_text_dates").value
    at.selectbox(key="learn_step").set_value(3).run()
    at.button[-1].click().run()
    ui.assert_ok(at)
    assert at.session_state["mode"] == "Matrices"
    assert "Trained score weights from Learn" in ui.captions(at)
    at.session_state["view"] = "Heatmaps"
    at.run()
    expected = model.translate(text).weights[3]
    np.testing.assert_allclose(ui.weights(at)[0], expected, atol=1e-5)
    at.button(key="forget_learned").click().run()  # back to weights drawn from the seed
    assert "Trained score weights" not in ui.captions(at)


def test_training_in_the_session_survives_reruns_and_clear_session():
    import keras

    at = _open(learn_model="Train", task="reverse", learn_epochs="2", learn_pairs="500")
    at.button[-1].click().run()  # Train
    ui.assert_ok(at)
    runs = at.session_state["learn_runs"]
    (run,) = runs.values()
    snapshot = run.join(timeout=120)
    assert snapshot.state == "done", snapshot
    assert [r.epoch for r in snapshot.reports] == [0, 1, 2]
    for _ in range(3):  # reruns, with Keras's global state cleared between them
        keras.backend.clear_session()
        at.run()
    ui.assert_ok(at)
    at.text_input(key="learn_text_reverse").set_value("abc").run()
    expected = snapshot.model.translate("abc")
    assert f"**Output:** `{expected.output}`" in [m.value for m in at.markdown]
    assert ui.chart(at, "Epoch 2: ")  # the probe after the last epoch
