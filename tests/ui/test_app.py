"""The whole app through Streamlit's AppTest: every input mode, control and view, numbers checked.

AppTest reruns `app.py` headless, as a browser session would. Charts are read back from the
plotly JSON the app sends (trace 0 of a heatmap holds the values, NaN where a cell is drawn as
blocked); expected numbers are pinned by hand or recomputed here with float64 numpy.

Two things AppTest cannot click, set through session state instead (what the click does):
- a tab of `st.tabs`: the tabs are keyed (`key="view"`), so `open_view` sets that key;
- a download button's file: its data is built on click, so `test_download_view` reads the
  deferred callable from the media file manager (Streamlit internals; skipped if they change).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import app_support as ui
import numpy as np
import pytest
import streamlit.testing.v1.app_test as app_test_module
from app_support import APP, FIRST_RUN_TIMEOUT
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from attnviz.inputs.presets import shipped_presets
from attnviz.ui.controls.input_widgets import SEQUENCE, TARGET
from attnviz.ui.controls.sidebar import SEED
from attnviz.ui.pages import multihead

NUMPY_LAB = {  # attnviz/inputs/preset_files/01_numpy_lab.json, the app's first-visit matrices
    "q": [[1, 0, 0], [0, 1, 0]],
    "k": [[1, 2, 3], [4, 5, 6]],
    "v": [[0, 1, 0], [1, 0, 1]],
}
LAB_CAUSAL_WEIGHTS = [[1, 0], [0.150325, 0.849675]]
LAB_CAUSAL_OUTPUT = [[0, 1, 0], [0.849675, 0.150325, 0.849675]]
TITLES = (  # always all six stages, so the layout stays put as controls change
    "Raw scores",
    "Scaled scores",
    "Mask (allowed keys)",
    "Masked scores (what softmax sees)",
    "Attention weights",
    "Output (context vectors)",
)
PRESETS = sorted(shipped_presets())
TWO_SENTENCES = "The cat sat on the mat .\nIt slept ."  # 7 and 3 tokens


# --------------------------------------------------------------------------- helpers


@pytest.fixture
def fresh() -> AppTest:
    """A fresh session after its first run (the app's first visit: the NumPy lab preset)."""
    app = ui.new_session("matrices")
    ui.assert_ok(app)
    return app


@pytest.fixture
def at(fresh: AppTest) -> AppTest:
    """A fresh session with the NumPy lab's matrices and no mask switched on."""
    fresh.toggle(key="causal").set_value(False).run()
    ui.assert_ok(fresh)
    return fresh


def _causal_lab(at: AppTest) -> None:
    """The NumPy lab (first-visit matrices) with the causal mask on."""
    at.toggle(key="causal").set_value(True).run()
    ui.assert_ok(at)


def _select_preset(at: AppTest, name: str) -> None:
    """Pick a preset from the menu (via another one if it is already chosen)."""
    if ui.preset_box(at).value == name:
        other = next(n for n in PRESETS if n != name)
        ui.preset_box(at).set_value(other).run()
    ui.preset_box(at).set_value(name).run()


def _softmax(scores: np.ndarray, allowed: np.ndarray | None = None) -> np.ndarray:
    """Row softmax in float64; rows with no allowed key get zeros."""
    allowed = np.ones(scores.shape, bool) if allowed is None else allowed
    logits = np.where(allowed, scores, -np.inf)
    top = logits.max(axis=-1, keepdims=True)
    exp = np.exp(logits - np.where(np.isfinite(top), top, 0))
    total = exp.sum(axis=-1, keepdims=True)
    return np.divide(exp, total, out=np.zeros_like(exp), where=total > 0)


def _entropy_bits(row: np.ndarray) -> float:
    nonzero = row[row > 0]
    return float(-(nonzero * np.log2(nonzero)).sum())


# --------------------------------------------------------------------------- first load


def test_the_page_loads_the_chart_code_in_a_hidden_container(fresh):
    import streamlit as st

    from attnviz.ui.frame import loading, presenter

    html = [e.proto.body for e in fresh.get("html")]
    script = [body for body in html if "<script>" in body and "PlotlyChart" in body]
    assert len(script) == 1 and all(
        e.proto.unsafe_allow_javascript for e in fresh.get("html") if "<script>" in e.proto.body
    )
    # the page's only script: its own constant ones (tick labels, the SVG button) and style
    # are in the page's head (`head.PageHead`), not elements of every run
    assert [b for b in html if "<script>" in b] == script
    assert presenter.NARROW_STYLE not in html and presenter.CHART_SCRIPT not in "".join(html)
    chunk = re.search(r"'(PlotlyChart\.[\w-]+\.js)'", script[0]).group(1)
    assert (Path(st.__file__).parent / "static" / "static" / "js" / chunk).is_file()
    hidden = f".st-key-{loading.CHART_CODE_KEY}, :has(> .st-key-{loading.CHART_CODE_KEY})"
    assert script[0].endswith(f"</script><style>{hidden} {{display: none}}</style>")  # no gap
    assert not [b for b in html if b.startswith("<style>.st-key-")]  # no element of its own


def test_first_load_draws_the_numpy_lab(fresh):
    at = fresh
    # a new visitor starts on the NumPy lab preset, its causal mask included
    assert at.toggle(key="causal").value is True
    assert [t.split(" (×")[0] for t in ui.titles(at)] == list(TITLES)
    q, k = np.array(NUMPY_LAB["q"]), np.array(NUMPY_LAB["k"])
    np.testing.assert_allclose(ui.values(at, "Raw scores"), q @ k.T)  # (T, D) x (D, S) -> (T, S)
    np.testing.assert_allclose(ui.weights(at), LAB_CAUSAL_WEIGHTS, atol=1e-6)
    at.toggle(key="causal").set_value(False).run()
    assert [t.split(" (×")[0] for t in ui.titles(at)] == list(TITLES)
    np.testing.assert_allclose(ui.weights(at), _softmax(q @ k.T / np.sqrt(3)), atol=1e-6)
    assert {t.key for t in at.sidebar.toggle} == {
        "scale", "causal", "padding", "window_on", "prefix_on", "sinks_on", "chunk_on"
    }  # fmt: skip
    assert {r.key for r in at.sidebar.radio} == {"score", "mask_value", "position"}
    assert at.text_area(key="q_text").value == "1 0 0\n0 1 0"
    assert at.query_params["k_text"] == "1 2 3\n4 5 6"  # typed inputs go into the shared URL


def test_numpy_lab_with_causal_mask(at):
    _causal_lab(at)
    np.testing.assert_allclose(ui.weights(at), LAB_CAUSAL_WEIGHTS, atol=1e-5)
    np.testing.assert_allclose(ui.values(at, "Output"), LAB_CAUSAL_OUTPUT, atol=1e-5)
    weights = ui.chart(at, "Attention weights")
    assert np.isnan(ui.decode(weights["data"][0]["z"])[0, 1])  # the future key is not coloured
    np.testing.assert_array_equal(ui.decode(weights["data"][1]["z"]), [[0, 1], [0, 0]])
    np.testing.assert_array_equal(ui.values(at, "Mask (allowed"), [[1, np.nan], [1, 1]])
    assert len(ui.titles(at)) == 6


def test_numpy_lab_preset_switches_causal_on(at):
    _select_preset(at, "01_numpy_lab")
    ui.assert_ok(at)
    assert at.toggle(key="causal").value is True
    np.testing.assert_allclose(ui.weights(at), LAB_CAUSAL_WEIGHTS, atol=1e-5)


# --------------------------------------------------------------------------- presets


def _check_numpy_lab(at):
    assert at.toggle(key="causal").value is True
    np.testing.assert_allclose(ui.weights(at), LAB_CAUSAL_WEIGHTS, atol=1e-5)


def _check_numpy_lab_no_mask(at):
    assert at.toggle(key="causal").value is False
    np.testing.assert_allclose(ui.weights(at), [[0.150325, 0.849675]] * 2, atol=1e-5)
    assert "not a preset's" not in ui.captions(at)


def _check_keras_tutorial(at):
    assert at.button_group(key="source").value == "random"
    assert ui.values(at, "Output").shape == (5, 64)  # one (T, Dv) item of the (64, 5, 64) output
    assert "batch of 64, 5 queries × 5 keys · Dq 64, Dk 64, Dv 64" in ui.captions(at)
    seq = at.number_input(key="seq")
    assert (seq.min, seq.max) == (0, 63)
    seq.set_value(63).run()
    ui.assert_ok(at)
    rng = np.random.default_rng(0)  # the tutorial's inputs, drawn again: (B, T, D) each
    q, k, v = rng.random((64, 5, 64)), rng.random((64, 5, 64)), rng.random((64, 5, 64))
    weights = _softmax(q[63] @ k[63].T / 8)  # (5, 64) x (64, 5) -> (5, 5)
    np.testing.assert_allclose(ui.weights(at), weights, atol=1e-5)
    np.testing.assert_allclose(ui.values(at, "Output"), weights @ v[63], atol=1e-4)


def _check_one_hot(at):
    weights = ui.weights(at)
    np.testing.assert_array_equal(weights.argmax(axis=1), [0, 1, 2, 3])
    assert weights.diagonal().min() > 0.6


def _check_identical_keys(at):
    np.testing.assert_allclose(ui.weights(at), np.full((3, 4), 0.25), atol=1e-6)
    np.testing.assert_allclose(ui.values(at, "Output"), [[0, 1]] * 3, atol=1e-6)  # value mean


def _check_padded_batch(at):
    assert at.number_input(key="seq").value == 1  # it opens on its padded sequence
    assert at.multiselect(key="pad_keys_1").value == [2, 3]
    weights = ui.weights(at)
    np.testing.assert_array_equal(weights[:, 2:], 0)
    np.testing.assert_allclose(weights.sum(axis=1), 1, atol=1e-6)


def _check_masking_pitfall(at):
    assert at.radio(key="mask_value").value == "-1e9"
    np.testing.assert_allclose(ui.weights(at)[0], [1 / 3] * 3, atol=1e-6)


def _same_as_the_back_end(at, name):
    """The page's weights are compute_attention's with the preset's own settings (the presets'
    claims are checked in tests/inputs/test_presets.py); returns that result."""
    from attnviz.core.attention import compute_attention
    from attnviz.inputs.parsing import parse_matrix_text
    from attnviz.inputs.presets import random_qkv

    preset = shipped_presets()[name]
    if preset.random:
        q, k, v = random_qkv(preset.random)
    else:
        q, k, v = (parse_matrix_text(t) for t in (preset.query, preset.key, preset.value))
    expected = compute_attention(q, k, v, **preset.settings)
    np.testing.assert_allclose(ui.weights(at), expected.weights, atol=1e-6)
    return expected


def _check_attention_sinks(at):
    assert at.toggle(key="sinks_on").value and at.number_input(key="sinks").value == 1
    assert at.toggle(key="window_on").value and at.number_input(key="window").value == 2
    _same_as_the_back_end(at, "07_attention_sinks")
    assert (ui.weights(at)[:, 0] > 0.7).all()  # every row keeps the sink


def _check_packed_documents(at):
    assert at.text_input(key="documents").value == "3, 4, 2"
    _same_as_the_back_end(at, "08_packed_documents")
    np.testing.assert_array_equal(ui.weights(at)[7:, :7], 0)  # the third document alone


def _check_prefix_lm(at):
    assert at.toggle(key="prefix_on").value and at.number_input(key="prefix").value == 3
    _same_as_the_back_end(at, "09_prefix_lm")
    assert ui.weights(at)[0, 2] > 0.8  # the prompt looks ahead


def _check_chunked_attention(at):
    assert at.toggle(key="chunk_on").value and at.number_input(key="chunk").value == 4
    _same_as_the_back_end(at, "10_chunked_attention")


def _check_rope_probe(at):
    assert at.radio(key="position").value == "rope"
    expected = _same_as_the_back_end(at, "11_rope_probe")
    assert "RoPE is on" in " ".join(c.value for c in at.caption)
    ui.open_view(at, "Positions")  # the rotation is a stage of its own, beside the probe
    np.testing.assert_allclose(ui.values(at, "Rotated Q"), expected.rotated_query, atol=1e-5)
    np.testing.assert_allclose(ui.values(at, "Rotated K"), expected.rotated_key, atol=1e-5)


def _check_alibi(at):
    assert at.radio(key="position").value == "alibi"
    _same_as_the_back_end(at, "12_alibi")
    assert any(t.startswith("ALiBi bias") for t in ui.titles(at))


PRESET_CHECKS = {
    "01_numpy_lab": _check_numpy_lab,
    "02_keras_tutorial": _check_keras_tutorial,
    "03_one_hot": _check_one_hot,
    "04_identical_keys": _check_identical_keys,
    "05_padded_batch": _check_padded_batch,
    "06_masking_pitfall": _check_masking_pitfall,
    "07_attention_sinks": _check_attention_sinks,
    "08_packed_documents": _check_packed_documents,
    "09_prefix_lm": _check_prefix_lm,
    "10_chunked_attention": _check_chunked_attention,
    "11_rope_probe": _check_rope_probe,
    "12_alibi": _check_alibi,
    "13_numpy_lab_no_mask": _check_numpy_lab_no_mask,
}


def test_every_preset_is_checked():
    assert list(PRESET_CHECKS) == PRESETS


@pytest.mark.parametrize("name", list(PRESET_CHECKS), ids=list(PRESET_CHECKS))
def test_every_preset_loads(at, name):
    _select_preset(at, name)
    ui.assert_ok(at)
    assert ui.preset_box(at).value == name
    PRESET_CHECKS[name](at)


def test_the_preset_box_follows_the_inputs(at):
    _select_preset(at, "03_one_hot")
    teaches = "with √Dk scaling that key takes 0.711"
    assert teaches in ui.captions(at)
    np.testing.assert_allclose(ui.weights(at).max(axis=1), 0.711, atol=1e-3)  # as it says
    at.text_area(key="q_text").input("4 0 0 0\n0 4 0 0\n0 0 4 0\n0 0 0 5").run()  # an edit
    assert ui.preset_box(at).value == "custom"
    assert teaches not in ui.captions(at) and "not a preset's" in ui.captions(at)
    at.button(key="reset_preset").click().run()  # Reset to example: the preset as it came
    assert ui.preset_box(at).value == "03_one_hot"
    assert at.text_area(key="q_text").value.endswith("0 0 0 4")
    at.toggle(key="scale").set_value(False).run()  # a control the preset set counts too
    assert ui.preset_box(at).value == "custom"
    ui.preset_box(at).set_value("03_one_hot").run()  # choosing it again restores it
    assert at.toggle(key="scale").value is True and teaches in ui.captions(at)
    at.button_group(key="source").set_value("random").run()
    assert ui.preset_box(at).value == "custom"


def test_a_presets_numbers_under_other_settings_are_called_so(at):
    # lesson 5: the numbers stay the preset's when the score changes; the box said "Custom:
    # your own inputs" and the caption "the numbers below are yours"
    _select_preset(at, "03_one_hot")
    title = shipped_presets()["03_one_hot"].title
    at.radio(key="score").set_value("general").run()
    ui.assert_ok(at)
    box = ui.preset_box(at)
    assert box.value == "custom" and box.options[0] == f"Custom: other settings on “{title}”"
    said = ui.captions(at)
    assert "not a preset's" not in said and "yours" not in said
    assert f"The numbers are those of “{title}”; the settings differ from it (score)" in said
    at.button(key="reset_preset").click().run()  # Reset brings the preset's settings back
    assert ui.preset_box(at).value == "03_one_hot" and at.radio(key="score").value == "dot"


def test_a_link_to_a_head_trained_in_a_session_says_it_cannot_open_it():
    # a session's model is gone with its session: the reload says so instead of showing
    # the NumPy lab's numbers as if they were the head
    came = "a Transformer trained in this session, cross · layer 0 · head 1"
    at = ui.new_session("matrices", **{"from": f"session:{came}"})
    assert not at.exception
    (message,) = ui.errors(at)
    assert message.startswith(f"This link opened {came}: a model trained in a browser session")
    assert "no link can open it again" in message
    assert ui.weights(at).shape == (2, 2) and "from" not in at.query_params  # the page works


def test_a_link_to_random_inputs_opens_with_the_box_saying_custom():
    """A shared link's first run: the inputs' widgets hold the link's values only once drawn,
    so the box is filled after them (it said "NumPy lab" above random 8 × 8 numbers)."""
    at = ui.new_session(source="Random", r_t="8", r_s="8", causal="true")
    ui.assert_ok(at)
    assert ui.weights(at).shape == (8, 8)
    assert ui.preset_box(at).value == "custom" and "not a preset's" in ui.captions(at)


def test_preset_forgets_the_previous_presets_padding(at):
    _select_preset(at, "06_masking_pitfall")  # marks key 0 as padding
    _select_preset(at, "01_numpy_lab")  # marks none: key 0 must be attendable again
    ui.assert_ok(at)
    assert at.multiselect(key="pad_keys_0").value == []
    assert not at.warning  # no query row lost all its keys
    np.testing.assert_allclose(ui.weights(at), LAB_CAUSAL_WEIGHTS, atol=1e-5)


# --------------------------------------------------------------------------- sidebar controls


def test_scale_off_uses_raw_scores(at):
    at.toggle(key="scale").set_value(False).run()
    ui.assert_ok(at)
    assert "Scaled scores (scaling off: × 1)" in ui.titles(at)
    assert "Scaling is off: the scaled scores equal the raw scores." in ui.captions(at)
    raw = np.array(NUMPY_LAB["q"]) @ np.array(NUMPY_LAB["k"]).T  # (T, D) x (D, S) -> (T, S)
    np.testing.assert_allclose(ui.values(at, "Raw scores"), raw)
    np.testing.assert_allclose(ui.weights(at), _softmax(raw), atol=1e-6)
    assert "no scaling" in ui.captions(at)


@pytest.mark.parametrize("score", ["general", "concat"])
def test_learned_score_functions(at, score):
    dot = ui.weights(at)
    at.radio(key="score").set_value(score).run()
    ui.assert_ok(at)
    weights = ui.weights(at)
    np.testing.assert_allclose(weights.sum(axis=1), 1, atol=1e-6)
    assert (weights >= 0).all() and not np.allclose(weights, dot, atol=1e-3)
    assert "W" in at.sidebar.latex[0].value  # the formula follows the choice
    at.number_input(key="seed").set_value(7).run()  # the seed draws other learned weights
    ui.assert_ok(at)
    assert not np.allclose(ui.weights(at), weights, atol=1e-4)


def test_general_score_accepts_different_query_and_key_sizes(at):
    at.text_area(key="k_text").input("1 2\n4 5").run()
    at.text_area(key="v_text").input("0 1\n1 0").run()
    assert "Dq == Dk" in ui.errors(at)[0] and not at.exception
    at.radio(key="score").set_value("general").run()
    ui.assert_ok(at)
    np.testing.assert_allclose(ui.weights(at).sum(axis=1), 1, atol=1e-6)


@pytest.mark.parametrize(
    ("width", "expected"),
    [(0, [[1, 0], [0, 1]]), (4096, [[0.150325, 0.849675], [0.150325, 0.849675]])],
    ids=["w0-diagonal", "w4096-no-effect"],
)
def test_local_window(at, width, expected):
    at.toggle(key="window_on").set_value(True).run()
    at.number_input(key="window").set_value(width).run()
    ui.assert_ok(at)
    np.testing.assert_allclose(ui.weights(at), expected, atol=1e-5)


def test_mask_value_on_masking_pitfall(at):
    _select_preset(at, "06_masking_pitfall")
    ui.assert_ok(at)
    np.testing.assert_allclose(ui.weights(at)[0], [1 / 3] * 3, atol=1e-6)
    (warning,) = [w.value for w in at.warning]
    assert "Query rows with no visible key: 0 (0)" in warning and "pitfall" in warning
    at.radio(key="mask_value").set_value("-inf").run()
    ui.assert_ok(at)
    np.testing.assert_array_equal(ui.weights(at)[0], [0, 0, 0])
    np.testing.assert_array_equal(ui.values(at, "Output")[0], [0, 0])
    (warning,) = [w.value for w in at.warning]
    assert "all-zero weights" in warning
    at.toggle(key="padding").set_value(False).run()  # key 0 is attendable again
    ui.assert_ok(at)
    assert not at.warning
    np.testing.assert_allclose(ui.weights(at)[0], [1, 0, 0], atol=1e-6)


def test_padding_keys_multiselect(at):
    at.multiselect(key="pad_keys_0").set_value([1]).run()
    ui.assert_ok(at)
    np.testing.assert_allclose(ui.weights(at), [[1, 0], [1, 0]], atol=1e-6)
    at.toggle(key="padding").set_value(False).run()  # marked keys are ignored
    ui.assert_ok(at)
    np.testing.assert_allclose(ui.weights(at), [[0.150325, 0.849675]] * 2, atol=1e-5)
    assert at.multiselect(key="pad_keys_0").value == [1]


# --------------------------------------------------------------------------- matrix sources


def test_random_source_with_sizes(at):
    at.button_group(key="source").set_value("random").run()
    for key, value in {"r_t": 3, "r_s": 7, "r_dk": 5, "r_dv": 2, "r_seed": 11}.items():
        at.number_input(key=key).set_value(value).run()
    ui.assert_ok(at)
    rng = np.random.default_rng(11)  # random_qkv's draws, in its order
    q, k, v = rng.random((3, 5)), rng.random((7, 5)), rng.random((7, 2))
    weights = _softmax(q @ k.T / np.sqrt(5))  # (3, 5) x (5, 7) -> (3, 7)
    np.testing.assert_allclose(ui.weights(at), weights, atol=1e-5)
    np.testing.assert_allclose(ui.values(at, "Output"), weights @ v, atol=1e-5)
    assert "3 queries × 7 keys · Dq 5, Dk 5, Dv 2" in ui.captions(at)


def test_random_source_too_large(at):
    at.button_group(key="source").set_value("random").run()
    at.number_input(key="r_batch").set_value(1024).run()
    at.number_input(key="r_t").set_value(4096).run()
    assert not at.exception
    assert "The random batch is too large" in ui.errors(at)[0]
    assert at.sidebar.toggle  # the rest of the page still works
    at.number_input(key="r_batch").set_value(1).run()
    ui.assert_ok(at)
    assert ui.weights(at).shape == (256, 6)  # 4096 queries drawn as a 256-row overview


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array), allow_pickle=True)
    return buffer.getvalue()


def test_upload_source(at):
    at.button_group(key="source").set_value("upload").run()
    assert [i.value for i in at.info] == [f"Upload {m} to continue." for m in "QKV"]
    at.file_uploader(key="upload_Q").upload("q.csv", b"1,0,0\n0,1,0", "text/csv")
    at.file_uploader(key="upload_K").upload("k.json", b"[[1, 2, 3], [4, 5, 6]]")
    at.file_uploader(key="upload_V").upload("v.npy", _npy(NUMPY_LAB["v"]))
    at.toggle(key="causal").set_value(True).run()
    ui.assert_ok(at)
    np.testing.assert_allclose(ui.values(at, "Output"), LAB_CAUSAL_OUTPUT, atol=1e-5)
    pickled = _npy(np.array([[None]], dtype=object))
    at.file_uploader(key="upload_V").set_value(("evil.npy", pickled, "application/octet-stream"))
    at.run()
    assert not at.exception and "unpickling can run code" in ui.errors(at)[0]
    at.file_uploader(key="upload_V").set_value(("v.csv", b"0,1,0\n1,0", "text/csv")).run()
    assert not at.exception and "row 2 has 2 numbers but row 1 has 3" in ui.errors(at)[0]


# --------------------------------------------------------------------------- bad matrix input

BAD_MATRICES = [  # (box, text, words the error must contain)
    ("q_text", "1 2 3\n4 5", ["`Q`", "row 2 has 2 numbers but row 1 has 3"]),
    ("q_text", "1 two 3\n4 5 6", ["`Q`", "'two' is not a number"]),
    ("q_text", "1 nan 0\n0 1 0", ["`Q`", "'nan' is not a finite number"]),
    ("k_text", "1 inf 3\n4 5 6", ["`K`", "'inf' is not a finite number"]),
    ("v_text", "1e300 1 0\n1 0 1", ["`V`", "too large", "1e+300"]),
    ("q_text", "", ["`Q` is empty"]),
    ("q_text", " \n\t\n", ["`Q` is empty"]),
    ("k_text", "1 2\n4 5", ["Dq == Dk", "query (2, 3), key (2, 2)", 'score="general"']),
    ("v_text", "0 1 0\n1 0 1\n1 1 1", ["K and V need the same number of rows", "V (3, 3)"]),
    ("q_text", "[[1, 0, 0], [0, 1, 0]", ["`Q` is not valid JSON", "line 1, column 22"]),
    ("q_text", "<b>1</b> 0 0\n0 1 0", ["`Q`", "HTML", "plain text"]),
    ("q_text", "[[[1, 0, 0]]]", ["all be batches", "Q (1, 1, 3), K (2, 3)"]),
]
BAD_MATRIX_IDS = [
    "ragged-rows",
    "words",
    "nan",
    "inf",
    "1e300",
    "empty-q",
    "blank-q",
    "dot-dims",
    "kv-rows",
    "json-malformed",
    "html",
    "batch-and-matrix",
]


@pytest.mark.parametrize(("box", "text", "words"), BAD_MATRICES, ids=BAD_MATRIX_IDS)
def test_bad_matrix_input(at, box, text, words):
    good = at.text_area(key=box).value
    at.text_area(key=box).input(text).run()
    assert not at.exception
    (message,) = ui.errors(at)
    for word in words:
        assert word in message
    assert not at.get("plotly_chart")
    assert at.text_area(key=box).value == text  # the user's text stays in its box
    assert len(at.sidebar.toggle) == 7 and at.title[0].value == "attnviz"  # the page stays up
    at.toggle(key="causal").set_value(True).run()  # controls still work with bad input
    assert not at.exception and len(ui.errors(at)) == 1
    at.text_area(key=box).input(good).run()
    ui.assert_ok(at)
    np.testing.assert_allclose(ui.weights(at), LAB_CAUSAL_WEIGHTS, atol=1e-5)


# --------------------------------------------------------------------------- sentences


def _sentences(at: AppTest, text: str) -> None:
    ui.open_mode(at, "Sentences")
    at.text_area(key="sentences").input(text).run()


def test_sentences_pad_the_shorter_one(at):
    _sentences(at, TWO_SENTENCES)
    ui.assert_ok(at)
    assert "batch of 2, 7 queries × 7 keys" in ui.captions(at)
    assert ui.ticks(ui.chart(at, "Attention weights"), "x") == TWO_SENTENCES.splitlines()[0].split(
        " "
    )
    at.number_input(key="seq").set_value(1).run()
    ui.assert_ok(at)
    weights_chart = ui.chart(at, "Attention weights")
    assert ui.ticks(weights_chart, "x") == ["It", "slept", "."] + ["&lt;pad&gt;"] * 4
    assert ui.ticks(weights_chart, "y")[:3] == ["It", "slept", "."]
    weights = ui.weights(at)
    np.testing.assert_array_equal(weights[:, 3:], 0)  # nobody attends padding
    np.testing.assert_allclose(weights.sum(axis=1), 1, atol=1e-6)
    at.toggle(key="padding").set_value(False).run()
    ui.assert_ok(at)
    assert (ui.weights(at)[:, 3:] > 0).all()  # without the mask, weight leaks onto padding


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("?!... 🙂🙂 ,,,", ["?", "!", ".", ".", ".", "🙂", "🙂", ",", ",", ","]),
        ("שלום עולם 👋🏽\nمرحبا بالعالم", ["שלום", "עולם", "👋🏽"]),
        ("zero\u200bwidth\u200d join", ["zero", "width", "join"]),
        ("<img src=x onerror=alert(1)>", ["&lt;", "img", "src", "=", "x", "onerror"]),
    ],
    ids=["punctuation-emoji", "rtl-emoji", "zero-width", "html"],
)
def test_sentences_of_any_text(at, text, tokens):
    _sentences(at, text)
    ui.assert_ok(at)
    spec = ui.chart(at, "Attention weights")
    assert ui.ticks(spec, "x")[: len(tokens)] == tokens
    assert ui.ticks(spec, "y")[: len(tokens)] == tokens
    labels = json.dumps([spec["layout"][axis]["ticktext"] for axis in ("xaxis", "yaxis")])
    assert "<img" not in labels and "<img" not in json.dumps(ui.ticks(spec, "x"))
    np.testing.assert_allclose(ui.weights(at).sum(axis=1), 1, atol=1e-6)


def test_very_long_sentence(at):
    _sentences(at, "word " * 2000)  # 10,000 characters, 2,000 tokens
    ui.assert_ok(at)
    assert "overview" in ui.chart(at, "Attention weights")["layout"]["title"]["text"]
    assert ui.weights(at).shape == (250, 250)  # blocks of 8 x 8 tokens
    np.testing.assert_allclose(ui.weights(at).sum(axis=1), 1, atol=1e-4)
    at.number_input(key="focus").set_value(1999).run()
    ui.assert_ok(at)
    focus = ui.chart(at, "Weights of query 1999 (word)")
    assert ui.decode(focus["data"][0]["y"]).sum() == pytest.approx(1, abs=1e-4)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", ["holds no sentence", "empty"]),
        ("\n  \n", ["holds no sentence", "blank lines"]),
        ("ok\n\u200b\u200b", ["Sentence 2 has no words", "invisible characters"]),
        ("x" * 20_001, ["Sentence 1 has 20001 characters", "at most 20000"]),
    ],
    ids=["empty", "blank-lines", "only-zero-width", "too-long"],
)
def test_bad_sentences(at, text, words):
    _sentences(at, text)
    assert not at.exception
    (message,) = ui.errors(at)
    for word in words:
        assert word in message
    assert at.text_area(key="sentences").value == text
    assert len(at.sidebar.toggle) == 7
    at.text_area(key="sentences").input("it works").run()
    ui.assert_ok(at)
    assert ui.ticks(ui.chart(at, "Attention weights"), "x") == ["it", "works"]


@pytest.mark.parametrize(
    ("key", "value", "caption"),
    [("d_model", 1024, "Dk 8"), ("d_k", 1, "Dk 1, Dv 1"), ("d_k", 1024, "Dk 1024")],
    ids=["d_model-max", "dk-1", "dk-max"],
)
def test_sentence_encoding_sizes(at, key, value, caption):
    _sentences(at, TWO_SENTENCES)
    at.number_input(key=key).set_value(value).run()
    ui.assert_ok(at)
    assert caption in ui.captions(at)
    np.testing.assert_allclose(ui.weights(at).sum(axis=1), 1, atol=1e-5)


def test_positional_encoding_changes_the_weights(at):
    _sentences(at, "the the the")
    with_positions = ui.weights(at)
    at.toggle(key="pos").set_value(False).run()
    ui.assert_ok(at)
    np.testing.assert_allclose(ui.weights(at), np.full((3, 3), 1 / 3), atol=1e-6)  # same tokens
    assert not np.allclose(with_positions, 1 / 3, atol=1e-3)


# --------------------------------------------------------------------------- cross attention


def _cross(at: AppTest, source: str, target: str) -> None:
    ui.open_mode(at, "Cross (two sentences)")
    at.text_area(key="src_text").input(source)
    at.text_area(key="target").input(target).run()


def test_cross_queries_from_target(at):
    _cross(at, "a b c d e", "x y")
    ui.assert_ok(at)
    spec = ui.chart(at, "Attention weights")
    assert ui.weights(at).shape == (2, 5)  # (T target, S source)
    assert ui.ticks(spec, "y") == ["x", "y"] and ui.ticks(spec, "x") == list("abcde")
    assert ui.values(at, "Output").shape == (2, 8)  # Dv = Dk = 8
    np.testing.assert_allclose(ui.weights(at).sum(axis=1), 1, atol=1e-6)


def test_cross_pairs_by_line(at):
    _cross(at, "a b c\nd e", "x\ny z w v")
    ui.assert_ok(at)
    at.number_input(key="seq").set_value(1).run()
    ui.assert_ok(at)
    spec = ui.chart(at, "Attention weights")
    assert ui.ticks(spec, "x") == ["d", "e", "&lt;pad&gt;"]
    np.testing.assert_array_equal(ui.weights(at)[:, 2], 0)  # source padding is masked


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({}, None),
        ({"causal": "true"}, "A Transformer's encoder–decoder attention is never causal"),
        ({"position": "RoPE (rotary)"}, "encoder–decoder attention, where there is one, adds no "
                                        "position scheme"),
        ({"position": "ALiBi (linear bias)"}, "as if the two sentences were one sequence"),
    ],
    ids=["plain", "causal", "rope", "alibi"],
)  # fmt: skip
def test_cross_says_what_a_mask_or_position_scheme_means_there(fields, said):
    at = ui.new_session("cross", **fields)
    notes = [i.value for i in at.info]
    assert not at.exception and not ui.errors(at)
    assert [n for n in notes if said in n] if said else notes == []


def test_the_summary_speaks_of_padding_only_where_keys_are_padded(at):
    _cross(at, "a b c", "x y")  # one sentence: the padding mask (on) hides nothing
    said = ui.captions(at)
    assert "padding keys hidden" not in said and "no mask: every query sees every key" in said
    assert "No key is masked here" in said
    _cross(at, "a b c\nd e", "x\ny")  # the second source sentence is padded
    assert "padding keys hidden" in ui.captions(at)
    at.number_input(key=SEQUENCE.key).set_value(1).run()  # and its <pad> key masked
    assert "No key is masked here" not in ui.captions(at)


@pytest.mark.parametrize(
    ("source", "target", "words"),
    [
        ("a b", "x\ny", ["as many target lines as source lines", "1 source and 2 target"]),
        ("a b", "", ["Target: ", "holds no sentence"]),
        ("", "x", ["Source: ", "holds no sentence"]),
    ],
    ids=["line-counts", "empty-target", "empty-source"],
)
def test_bad_cross_input(at, source, target, words):
    _cross(at, source, target)
    assert not at.exception
    (message,) = ui.errors(at)
    for word in words:
        assert word in message
    assert (at.text_area(key="src_text").value, at.text_area(key="target").value) == (
        source,
        target,
    )
    at.text_area(key="src_text").input("a b")
    at.text_area(key="target").input("x").run()
    ui.assert_ok(at)
    assert ui.weights(at).shape == (1, 2)


def test_mode_switch_keeps_every_text(at):
    at.text_area(key="q_text").input("1 x").run()  # bad input, kept across modes
    _sentences(at, "my own words")
    _cross(at, "s1 s2", "t1")
    ui.open_mode(at, "Matrices")
    assert at.text_area(key="q_text").value == "1 x" and "'x' is not a number" in ui.errors(at)[0]
    ui.open_mode(at, "Sentences")
    assert at.text_area(key="sentences").value == "my own words"
    ui.open_mode(at, "Cross (two sentences)")
    assert at.text_area(key="target").value == "t1"
    ui.assert_ok(at)


# --------------------------------------------------------------------------- views


def test_lines_view_is_a_tab_of_its_own(at):
    _causal_lab(at)
    assert not at.get("iframe")  # the heatmaps tab redraws without reloading the line view
    ui.open_view(at, "Lines")
    frames = at.get("iframe")
    assert len(frames) == 1 and ui.titles(at) == []
    html = str(frames[0].proto)
    # the causal lab's weights, drawn as lines
    assert "Tap or hover a token" in html and "[1, 0, 0.1503]" in html


def test_step_by_step_view(at):
    _causal_lab(at)
    ui.open_view(at, "Step by step")
    assert len(ui.titles(at)) == 6  # every stage beside its formula
    at.number_input(key="cell_i").set_value(1).run()
    ui.assert_ok(at)
    text = at.text[0].value
    assert "query i = 1, key j = 0" in text  # typed matrices: no token beside the numbers
    assert "q_i · k_j = 0×1 + 1×2 + 0×3 = 2" in text
    assert "6. weight   0.176921 / 1.17692 = 0.150325" in text
    # the output row: 0.150325 × v_0 + 0.849675 × v_1, v = [[0, 1, 0], [1, 0, 1]]
    assert "feature 0 = 0.1503×0 + 0.8497×1 = 0.849675" in text
    assert "o_1 = [0.8497, 0.1503, 0.8497]" in text
    shapes = ui.chart(at, "Attention weights")["layout"]["shapes"]
    assert [(s["x0"], s["y0"]) for s in shapes] == [(-0.5, 0.5)]  # cell (1, 0) outlined
    at.number_input(key="cell_i").set_value(0)
    at.number_input(key="cell_j").set_value(1).run()
    ui.assert_ok(at)
    assert "3. mask     blocked: M = −∞, logit = −∞" in at.text[0].value
    assert "6. weight   0 / 1 = 0" in at.text[0].value


def test_compare_view(at):
    _causal_lab(at)
    ui.open_view(at, "Compare")
    assert ui.titles(at) == ["A: current settings", "B: no masks", "A − B"]
    a, b = ui.values(at, "A: current"), ui.values(at, "B: no masks")
    assert np.isnan(a[0, 1])  # masked: drawn grey ✕, as in every other chart
    a = np.nan_to_num(a, nan=0.0)
    np.testing.assert_allclose(a, LAB_CAUSAL_WEIGHTS, atol=1e-5)
    np.testing.assert_allclose(b, [[0.150325, 0.849675]] * 2, atol=1e-5)
    np.testing.assert_allclose(ui.values(at, "A − B"), a - b, atol=1e-6)
    assert "Largest change of any weight: 0.849675." in ui.captions(at)
    at.button_group(key="compare").set_value("scale").run()
    ui.assert_ok(at)
    raw = np.array(NUMPY_LAB["q"]) @ np.array(NUMPY_LAB["k"]).T
    expected = _softmax(raw, np.tril(np.ones((2, 2), bool)))
    unscaled = np.nan_to_num(ui.values(at, "B: unscaled"), nan=0.0)
    np.testing.assert_allclose(unscaled, expected, atol=1e-5)
    at.button_group(key="compare").set_value("score").run()
    at.radio(key="compare_score").set_value("concat").run()
    ui.assert_ok(at)
    assert ui.titles(at)[1] == "B: concat score"
    at.button_group(key="compare").set_value("mask_value").run()
    ui.assert_ok(at)
    assert "The two settings give the same weights here." in ui.captions(at)


def test_a_link_to_the_compare_tab_draws_a_and_b_on_its_first_run():
    # B is computed from the link's tab and comparison, whose widgets are drawn after it; the
    # comparison travels as the label its control shows, the score as itself
    link = ui.new_session("sentences", view="Compare", causal="true")
    assert ui.titles(link) == ["A: current settings", "B: no masks", "A − B"]
    scores = ui.new_session(
        "matrices", view="Compare", compare="Another score function", compare_score="concat"
    )
    ui.assert_ok(scores)
    assert ui.titles(scores)[1] == "B: concat score"
    assert scores.button_group(key="compare").value == "score"


def test_a_link_with_the_lab_s_numbers_names_the_preset_they_equal():
    # a link that carries settings but no matrices opens on the lab's numbers without its
    # causal mask: the box names the preset those are ("Custom: your numbers" was untrue), and
    # switching the mask on makes them the lab's own preset
    at = ui.new_session("matrices", view="Step by step")
    ui.assert_ok(at)
    assert ui.preset_box(at).value == "13_numpy_lab_no_mask"
    assert "not a preset's" not in ui.captions(at)
    at.toggle(key="causal").set_value(True).run()
    assert ui.preset_box(at).value == "01_numpy_lab"
    at.text_area(key="q_text").input("1 0 0\n0 2 0").run()
    assert ui.preset_box(at).value == "custom"
    at.button(key="reset_preset").click().run()  # back to what the box named last
    assert ui.preset_box(at).value == "01_numpy_lab" and at.toggle(key="causal").value


def test_compare_with_nothing_masked_adds_a_causal_mask(at):
    ui.open_view(at, "Compare")  # padding on, but no key is padding: nothing is masked
    assert ui.titles(at)[1] == "B: causal mask"
    b = np.nan_to_num(ui.values(at, "B: causal mask"), nan=0.0)  # masked cells drawn grey
    np.testing.assert_allclose(b, LAB_CAUSAL_WEIGHTS, atol=1e-5)


def test_compare_without_masks_turns_todays_masks_off_too(at):
    at.toggle(key="chunk_on").set_value(True).run()  # 2 queries, chunks of 1: the diagonal
    at.number_input(key="chunk").set_value(1).run()
    ui.open_view(at, "Compare")
    ui.assert_ok(at)
    assert ui.titles(at)[1] == "B: no masks"
    raw = np.array(NUMPY_LAB["q"]) @ np.array(NUMPY_LAB["k"]).T / np.sqrt(3)  # Dk 3
    expected = _softmax(raw, np.ones((2, 2), bool))
    np.testing.assert_allclose(ui.values(at, "B: no masks"), expected, atol=1e-5)
    a = np.nan_to_num(ui.values(at, "A: current"), nan=0.0)
    np.testing.assert_allclose(a, np.eye(2), atol=1e-6)


def test_row_statistics_view(at):
    _causal_lab(at)
    ui.open_view(at, "Row statistics")
    table = at.dataframe[0].value
    row = np.array([0.150325, 0.849675])
    np.testing.assert_allclose(table["entropy (bits)"], [0, _entropy_bits(row)], atol=1e-4)
    assert _entropy_bits(row) == pytest.approx(0.6107, abs=1e-4)
    np.testing.assert_allclose(table["max weight"], [1, 0.849675], atol=1e-6)
    assert list(table["allowed keys"]) == [1, 2]
    assert list(table["most attended key"]) == ["0", "1"]
    assert not table["no visible key"].any()


class _RecordingFiles(MediaFileManager):
    """A media file manager that remembers itself, so a test can read deferred downloads."""

    made: list[MediaFileManager] = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.made.append(self)


def _csv(text: str) -> tuple[list[str], list[str], np.ndarray]:
    header, *rows = list(csv.reader(io.StringIO(text)))
    values = np.array([[float(x) for x in row[1:]] for row in rows])
    return header[1:], [row[0] for row in rows], values


def test_download_view(at, monkeypatch):
    monkeypatch.setattr(app_test_module, "MediaFileManager", _RecordingFiles)
    _causal_lab(at)
    ui.open_view(at, "Download")
    buttons = {b.label: b for b in at.get("download_button")}
    names = ("raw_scores", "scores", "mask", "masked_scores", "weights", "output")
    assert set(buttons) == {f"{n}.csv" for n in names} | {"Whole result (JSON)"}
    files = getattr(_RecordingFiles.made[-1], "_deferred_callables", None)
    if files is None:
        pytest.skip("Streamlit's media file manager changed: download data not readable")
    data = {label: files[b.proto.deferred_file_id]["callable"]() for label, b in buttons.items()}
    cols, rows, weights = _csv(data["weights.csv"])
    assert (cols, rows) == (["0", "1"], ["0", "1"])
    np.testing.assert_allclose(weights, LAB_CAUSAL_WEIGHTS, atol=1e-6)
    np.testing.assert_allclose(_csv(data["output.csv"])[2], LAB_CAUSAL_OUTPUT, atol=1e-6)
    assert _csv(data["masked_scores.csv"])[2][0, 1] == -np.inf
    result = json.loads(data["Whole result (JSON)"])
    assert result["settings"]["causal"] is True
    assert result["inputs"]["query"] == NUMPY_LAB["q"]


# --------------------------------------------------------------------------- the shared URL


def test_url_sets_the_controls_and_the_view():
    at = AppTest.from_file(APP, default_timeout=60)
    # a bound widget's URL value is its option label (the tab name) or its number (cell_i)
    at.query_params.update({"causal": "true", "view": "Step by step", "cell_i": "1"})
    texts = {"q_text": "0 1 0\n1 0 0", "k_text": "1 2 3\n4 5 6", "v_text": "0 1 0\n1 0 1"}
    at.query_params.update(texts)  # a shared link carries all three boxes
    at.run(timeout=FIRST_RUN_TIMEOUT)
    ui.assert_ok(at)
    assert at.toggle(key="causal").value is True
    assert at.text_area(key="q_text").value == "0 1 0\n1 0 0"
    assert "q_i · k_j = 1×1 + 0×2 + 0×3 = 1" in at.text[0].value  # query 1 is now [1, 0, 0]
    assert "6. weight   0.176921 / 1.17692 = 0.150325" in at.text[0].value


def test_url_restores_sentences():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"mode": "Sentences", "sentences": "hello there\nhi"})
    at.run(timeout=FIRST_RUN_TIMEOUT)
    ui.assert_ok(at)
    assert at.text_area(key="sentences").value == "hello there\nhi"
    assert ui.ticks(ui.chart(at, "Attention weights"), "x") == ["hello", "there"]


def test_url_drops_long_texts(at):
    at.text_area(key="q_text").input("1 0 0\n" * 400).run()  # 2,400 characters
    assert "q_text" not in at.query_params and "k_text" not in at.query_params
    at.text_area(key="q_text").input("1 0 0\n0 1 0").run()
    assert at.query_params["q_text"] == "1 0 0\n0 1 0"


@pytest.mark.slow  # runs a shipped model and a decoder
def test_streamlits_after_run_keras_clear_keeps_tensorflows_kernels(at, monkeypatch):
    # Streamlit calls keras.backend.clear_session() after every run; Keras's version drops
    # TensorFlow's kernel cache, and the next run's first TensorFlow call rebuilds it (a trained
    # model's first run after a clear took 0.5-0.9 s). No page run builds a Keras model to free
    # (the Decoder page computes in arrays), so attnviz lets it through only outside page runs.
    import keras

    from attnviz.ui.frame import loading

    cleared = []
    monkeypatch.setattr(loading, "_KERAS_CLEAR_SESSION", [lambda **kw: cleared.append(kw)])
    at.run()
    ui.assert_ok(at)
    assert keras.backend.clear_session is loading._clear_session_after_run
    assert keras.utils.clear_session is not loading._clear_session_after_run  # public API kept
    at.toggle(key="causal").set_value(True).run()  # matrices: no models, the cache stays
    ui.open_mode(at, "Multi-head")  # attention of random heads: no model either
    at.session_state[multihead.WEIGHTS.key] = "Trained on dates"  # a cached shipped model runs
    at.run()
    ui.assert_ok(at)
    ui.open_mode(at, "Decoder")
    at.number_input(key=SEED.key).set_value(4242).run()  # a seed no test uses: a new decoder
    ui.assert_ok(at)
    assert cleared == []
    keras.backend.clear_session()  # outside a page run (this test's thread): Keras's clear
    assert cleared == [{"free_memory": True}]


# --------------------------------------------------------------------------- how Q, K, V are made


def test_sentences_show_how_q_k_v_are_made(at):
    from attnviz.inputs.text import encode_sentences

    ui.open_mode(at, "sentences")
    at.text_area(key="sentences").input("the cat saw the dog").run()
    ui.open_view(at, "Q, K, V")
    enc = encode_sentences("the cat saw the dog", d_model=16, d_k=8, seed=0)
    np.testing.assert_allclose(ui.values(at, "Token embeddings"), enc.embeddings[0], atol=1e-6)
    np.testing.assert_allclose(ui.values(at, "= X, the inputs"), enc.inputs[0], atol=1e-6)
    np.testing.assert_allclose(ui.values(at, "W_K"), enc.params["W_K"], atol=1e-6)
    q = ui.values(at, "Q = X · W_Q")
    np.testing.assert_allclose(q, enc.inputs[0] @ enc.params["W_Q"], atol=1e-5)  # float64 here
    at.radio(key="qkv_matrix").set_value("V").run()
    at.number_input(key="qkv_i").set_value(3).run()
    text = at.text[0].value
    assert text.startswith("V[3, 0]: token 3 (the), feature 0")
    assert f"= {enc.value[0, 3, 0]:.6g}" in text
    at.toggle(key="pos").set_value(False).run()  # the two "the" rows are now the same
    q = ui.values(at, "Q = X · W_Q")
    np.testing.assert_allclose(q[0], q[3], atol=1e-6)


def test_cross_sentences_make_q_from_the_target_and_k_v_from_the_source(at):
    ui.open_mode(at, "cross")
    ui.open_view(at, "Q, K, V")
    assert [m.value for m in at.markdown if m.value.startswith("**The")] == [
        "**The target's tokens make the queries**",
        "**The source's tokens make the keys and values**",
    ]
    assert ui.chart(at, "Q = X · W_Q") and ui.chart(at, "K = X · W_K")


def test_multi_head_shows_how_one_head_s_q_k_v_are_made():
    from attnviz.inputs.text import encode_sentences
    from attnviz.transformer.way_attention import compute_way

    at = ui.new_session("multihead", way="bidirectional", mh_head="2")
    ui.assert_ok(at)
    assert "W_Q (d_model × 4)" not in ui.titles(at)  # folded: its nine charts are not drawn
    at.session_state[multihead.MADE_OPEN.key] = True  # unfolded, as a click on it does
    at.run()
    ui.assert_ok(at)
    at.selectbox(key=multihead.HEAD.key).set_value(2).run()  # it stays open for another head
    enc = encode_sentences(at.text_area(key="src_text").value, d_model=16, d_k=16, seed=0)
    result = compute_way("bidirectional", enc.inputs, None, num_heads=4,
                         source_padding_mask=enc.padding_mask, seed=0)  # fmt: skip
    np.testing.assert_allclose(ui.values(at, "W_Q"), result.params["W_Q"][2], atol=1e-6)
    np.testing.assert_allclose(ui.values(at, "Q = X · W_Q"), result.query_heads[0, 2], atol=1e-5)


def test_multi_head_weights_made_to_differ_look_where_the_page_says():
    at = ui.new_session("multihead", way="bidirectional", mh_weights=multihead.MADE)
    ui.assert_ok(at)
    spec = ui.chart(at, multihead.HEADS_TITLE)
    (values,) = [d for d in spec["data"] if d.get("name") == "weights"]
    heads = np.nan_to_num(ui.grid_blocks(ui.decode(values["z"]), 1, 4)[0])  # (4, T, T)
    n = 8  # "Le chat est assis sur le tapis .": the first sentence, drawn
    rows = np.arange(n)
    assert heads[0, rows[1:], rows[1:] - 1].mean() >= 0.9  # the previous token
    assert heads[1, rows, rows].mean() >= 0.9  # itself
    assert heads[2, rows, 0].mean() >= 0.9  # the first token
    assert heads[3, rows[:-1], rows[:-1] + 1].mean() >= 0.9  # the next token
    assert "head 0 looks at the previous token" in ui.captions(at)
    assert "built by hand, not learned" in ui.captions(at)
    at.number_input(key=multihead.HEADS.key).set_value(16).run()  # 1 feature per head
    assert not at.exception and "at least 2" in ui.errors(at)[0]


@pytest.mark.parametrize(
    ("page", "fields", "said"),
    [
        ("multihead", dict(mh_h="3", mh_kv="3"), "d_model must be divisible by the number of "
         "heads h: 16 is not divisible by 3. Try d_model = 15."),
        ("multihead", dict(mh_h="4", mh_kv="3"), "The K/V heads g must divide the heads h: 4 "
         "heads can share 1, 2 or 4 K/V heads, not 3."),
        ("decoder", dict(dec_h="3"), "d_model must be divisible by the number of heads h: 512 "
         "is not divisible by 3. Try d_model = 510."),
    ],
    ids=["d_model", "kv-heads", "decoder"],
)  # fmt: skip
def test_head_sizes_that_do_not_fit_say_so_in_the_page_s_words(page, fields, said):
    at = ui.new_session(page, **fields)
    assert not at.exception and ui.errors(at) == [said] and not ui.specs(at)


def test_multi_head_says_which_sentence_box_is_empty():
    at = ui.new_session("multihead", way="cross")  # two boxes: the source and the target
    at.text_area(key=TARGET.key).set_value("  ").run()
    assert ui.errors(at) == [
        "Target: The text holds no sentence: it is empty or has only blank lines. Type at "
        "least one sentence."
    ]
    assert not at.exception and at.text_area(key=TARGET.key).value == "  "


def test_multi_head_shares_key_value_heads_and_says_what_it_saves():
    from attnviz.inputs.text import encode_sentences
    from attnviz.transformer.way_attention import compute_way

    at = ui.new_session("multihead", way="bidirectional", mh_h="4", mh_kv="2")
    ui.assert_ok(at)
    assert [m.value for m in at.markdown if m.value.startswith("**K/V head")] == [
        "**K/V head 0**, shared by query heads 0, 1",
        "**K/V head 1**, shared by query heads 2, 3",
    ]
    assert "4 query heads on 2 K/V heads" in ui.captions(at)
    assert (
        "the KV cache a decoder keeps: 64 bytes per token (float32), 50% less than multi-head's 128"
        in ui.captions(at)
    )
    enc = encode_sentences(at.text_area(key="src_text").value, d_model=16, d_k=16, seed=0)
    expected = compute_way("bidirectional", enc.inputs, None, num_heads=4, num_kv_heads=2,
                           source_padding_mask=enc.padding_mask, seed=0)  # fmt: skip
    np.testing.assert_allclose(
        np.nan_to_num(ui.values(at, "Head 0 (enlarged)")), expected.weights[0, 0], atol=1e-5
    )
    grids = [s for s in ui.specs(at) if s["layout"]["title"]["text"].startswith("Its query heads")]
    for group, grid in enumerate(grids):  # one grid per K/V head, its query heads side by side
        names = [note["text"] for note in grid["layout"]["annotations"] if note["text"]]
        assert names == [f"head {2 * group}", f"head {2 * group + 1}"]
        (values,) = [d for d in grid["data"] if d.get("name") == "weights"]
        blocks = ui.grid_blocks(ui.decode(values["z"]), 1, 2)[0]  # (2, T, S)
        np.testing.assert_allclose(blocks, expected.weights[0, 2 * group : 2 * group + 2],
                                   atol=1e-5)  # fmt: skip
    assert len(grids) == 2
    at.number_input(key="mh_kv").set_value(3).run()  # 3 does not divide 4
    assert any("divide" in e.value for e in at.error)


@pytest.mark.parametrize(
    ("heads", "kv_heads", "new_heads", "follows"),
    [
        (4, 4, 8, 8),  # multi-head attention stays multi-head
        (4, 4, 3, 3),
        (4, 2, 3, 1),  # 2 does not divide 3: the largest divisor of 3 not above 2
        (4, 2, 8, 2),  # still divides: kept
        (6, 3, 4, 2),
        (4, 1, 5, 1),  # multi-query stays multi-query
    ],
)
def test_changing_the_heads_snaps_the_kv_heads_to_fit(heads, kv_heads, new_heads, follows):
    at = ui.new_session("multihead", way="bidirectional", mh_dmodel="120", mh_h=str(heads),
                        mh_kv=str(kv_heads))  # fmt: skip
    ui.assert_ok(at)
    at.number_input(key=multihead.HEADS.key).set_value(new_heads).run()
    ui.assert_ok(at)  # no "g must divide h" error
    assert at.number_input(key=multihead.KV_HEADS.key).value == follows
    kv = f"{follows} K/V head" + ("" if follows == 1 else "s")  # "1 K/V head", not "heads"
    assert f"{new_heads} query heads on {kv}" in ui.captions(at)


# ------------------------------------------- every caption, formula and title follows the chart


@pytest.mark.parametrize("score", ["dot", "general", "concat"])
def test_the_step_by_step_formulas_follow_the_scaling(score):
    # the formula said /√d_k while the summary said "no scaling"
    at = ui.new_session("matrices", score=score, scale="false", view="Step by step")
    ui.assert_ok(at)
    assert "no scaling" in ui.captions(at)
    formulas = [tex.value for tex in at.main.latex]
    assert formulas and not [tex for tex in formulas if "sqrt" in tex], formulas
    assert any("2 · Scaling is off" in m.value for m in at.markdown)  # its caption too
    at.toggle(key="scale").set_value(True).run()
    assert sum(r"\sqrt{d_k}" in tex.value for tex in at.main.latex) >= 4  # 2, 4, 5, 6 and all


def test_the_captions_speak_of_one_thing_in_the_singular():
    # "keys within 1 positions", "1 rows": every count said from the number drawn
    at = ui.new_session(
        "matrices", source="Random", r_t="2", r_s="2", window_on="true", window="1",
        view="KV cache", cache_t="0",
    )  # fmt: skip
    ui.assert_ok(at)
    said = ui.captions(at)
    assert "2 queries × 2 keys ·" in said and "keys within 1 position" in said
    assert "the new token's query scores the 1 cached key (1 visible)" in said
    assert "The cache holds 1 row," in said
    assert not re.search(r"\b1 (positions|rows|keys|queries)\b", said), said
    one = ui.new_session("matrices", source="Random", r_t="1", r_s="1", view="Row statistics")
    ui.assert_ok(one)
    said = ui.captions(one)
    assert "1 query × 1 key ·" in said and "uniform over the one key" in said


def test_the_focus_row_is_named_once():
    # typed rows are their own numbers: "Weights of query 0", not "Weights of query 0 (0)"
    at = ui.new_session("matrices", source="Random", r_t="300", r_s="300", focus="3")
    ui.assert_ok(at)
    assert "Weights of query 3" in ui.titles(at)
    assert not any("query 3 (3)" in title for title in ui.titles(at))


@pytest.mark.parametrize("tab", ["Step by step", "KV cache", "Tiled", "Compare", "Positions"])
def test_overviews_promise_no_focus_row_outside_the_heatmaps(tab):
    # only the Heatmaps tab has the focus-row view; Compare's narrow charts keep their notes
    scheme = {"position": "alibi"} if tab == "Positions" else {}  # a scheme to draw
    at = ui.new_session("matrices", source="Random", r_t="300", r_s="300", view=tab, **scheme)
    ui.assert_ok(at)
    notes = [t for t in ui.titles(at) if "overview" in t]
    assert notes, ui.titles(at)
    assert not [t for t in notes if "focus-row" in t]
    for title in notes:  # each small line fits a third of a page (Compare's three charts)
        lines = re.findall(r"<sup>(.*?)</sup>", title)
        assert lines and max(len(line) for line in lines) <= 36, title


def test_a_heads_numbers_edited_are_no_longer_called_the_heads(at):
    from attnviz.inputs.problem import LearnedWeights

    texts = tuple(at.text_area(key=k).value for k in ("q_text", "k_text", "v_text"))
    at.session_state["learned"] = LearnedWeights({}, (("a", "b"), ("c", "d")), "a test head", "N.")
    at.session_state["opened_texts"] = texts  # as "Open this head step by step" fills them
    at.run()
    ui.assert_ok(at)
    assert ui.preset_box(at).options[0] == "From a test head"
    assert "Q, K and V of a test head. N." in ui.captions(at)
    at.text_area(key="q_text").input("1 0 0\n0 2 0").run()  # the user changes a number
    assert ui.preset_box(at).options[0] == "Custom: edited from a test head"
    said = ui.captions(at)
    assert "Q, K and V of a test head. N." not in said and "you have changed them" in said
