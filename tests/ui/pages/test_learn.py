"""AppTest of the Learn mode: shipped models, translating, comparing, training, the explorer."""

from __future__ import annotations

import threading

import app_support as ui
import numpy as np
import pytest
from app_support import APP, FIRST_RUN_TIMEOUT
from streamlit.testing.v1 import AppTest

from attnviz.learn import load_pretrained, runs
from attnviz.learn.configs import NetworkConfig, TrainConfig, TransformerConfig
from attnviz.learn.runs import TrainingRun
from attnviz.learn.translation.tasks import get_task
from attnviz.learn.translation.training import EpochReport
from attnviz.ui.controls.sidebar import SEED
from attnviz.ui.explorer.results import VIEW
from attnviz.ui.pages import learn

pytestmark = pytest.mark.slow  # loads, runs and trains models


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
        ("22 nov 2026 §", "Your input holds characters the dates task does not know: '§'"),
        ("", "Your input is empty. Type 1 to 30 characters"),
        ("x" * 200, "Your input is too long for the dates task: 200 characters, the most is 30"),
    ],
    ids=["unknown-character", "empty", "too-long"],
)
def test_bad_input_says_what_is_wrong_and_keeps_the_text(text, match):
    at = _open()
    at.text_input(key="learn_text_dates").set_value(text).run()
    assert not at.exception
    assert [e for e in ui.errors(at) if match in e], ui.errors(at)  # once, in the page's words
    assert len(ui.errors(at)) == 1 and at.warning.len == 0  # no "whatever it answers": none
    assert at.text_input(key="learn_text_dates").value == text
    for view in ("Compare scores", "One step in the explorer"):  # every tab says it the same
        at.session_state[learn.VIEW.key] = view
        at.run()
        assert len(ui.errors(at)) == 1 and not at.exception


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


def test_the_seed_says_it_draws_only_a_model_trained_here():
    at = _open()
    said = "a shipped model keeps the seed it was trained with"
    assert said in ui.captions(at)
    at.number_input(key=SEED.key).set_value(5).run()  # the shipped model stays seed 0's
    assert said in ui.captions(at) and "(seed 0)" in ui.captions(at)
    at.button_group(key=learn.SOURCE.key).set_value("Train").run()
    assert said not in ui.captions(at)


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
    learned = {
        "dot": "dot (no weights of its own)",
        "general": "general with its trained weights (W)",
        "concat": "concat with its trained weights (W_q, W_k, v)",
    }[score]
    assert f"the score is {learned}." in ui.captions(at)
    at.button[-1].click().run()
    ui.assert_ok(at)
    assert ui.current_mode(at) == "matrices"
    came = "the shipped GRU translator (Dates → ISO 8601), "  # what it is: the box, the caption
    assert ui.preset_box(at).options[0].startswith("From " + came)
    assert f"Q, K and V of {came}{score} score, step 3" in ui.captions(at)
    assert ("The score's weights are the trained ones" in ui.captions(at)) == (score != "dot")
    at.session_state[VIEW.key] = "Heatmaps"
    at.run()
    expected = model.translate(text).weights[3]
    np.testing.assert_allclose(ui.weights(at)[0], expected, atol=1e-5)
    origin = at.query_params["from"]  # the link names the step: it opens again elsewhere
    assert origin == f"step:dates:{score}:3:{text}"
    assert ui.preset_box(at).value == "custom"  # the box says where they came from
    shared = ui.new_session("matrices", **{"from": origin, "view": "Heatmaps"})
    ui.assert_ok(shared)
    assert f"Q, K and V of {came}" in ui.captions(shared)
    np.testing.assert_allclose(ui.weights(shared)[0], expected, atol=1e-5)
    if score != "dot":  # a dot score has no weights to swap for seeded ones
        at.button(key="forget_learned").click().run()  # back to weights drawn from the seed
        assert "trained ones" not in ui.captions(at) and "from" not in at.query_params
    ui.preset_box(shared).set_value("03_one_hot").run()  # a preset forgets it too
    assert came not in ui.captions(shared) and "from" not in shared.query_params


def test_training_in_the_session_survives_reruns_and_clear_session(monkeypatch):
    import keras

    # what the session keeps holds for any size: the page's GRU model, trained smaller
    asked = ui.smaller_runs(monkeypatch, units=8, embed_dim=8, attention_units=8)
    at = _open(learn_model="Train", task="reverse", learn_epochs="2", learn_pairs="500")
    snapshot = _trained_here(at, timeout=120)
    ((task, network, training),) = asked  # what the page asked for
    assert (task, network) == ("reverse", NetworkConfig())
    assert (training.epochs, training.n_pairs) == (2, 500)
    assert [r.epoch for r in snapshot.reports] == [0, 1, 2]
    _translates_after_reruns(at, snapshot, keras)
    assert ui.chart(at, "Epoch 2: ")  # the probe after the last epoch


def _trained_here(at: AppTest, timeout: float):
    """Press Train and wait for the session's run to end; its snapshot."""
    at.button[-1].click().run()  # Train
    ui.assert_ok(at)
    (run,) = at.session_state["learn_runs"].values()
    snapshot = run.join(timeout=timeout)
    assert snapshot.state == "done", snapshot
    return snapshot


def _translates_after_reruns(at: AppTest, snapshot, keras) -> None:
    """Reruns with Keras's global state cleared between them; the model still translates."""
    for _ in range(3):
        keras.backend.clear_session()
        at.run()
    ui.assert_ok(at)
    at.text_input(key="learn_text_reverse").set_value("abc").run()
    expected = snapshot.model.translate("abc")
    assert f"**Output:** `{expected.output}`" in [m.value for m in at.markdown]


class _Held:
    """Another session's run that holds the training slot (or waits) without training: it
    reports the epochs it is given, then waits to be released."""

    def __init__(self, report_seconds: tuple[float, ...] = ()) -> None:
        self.report_seconds = report_seconds  # seconds of epoch 0, 1, ... since its start
        self.started = threading.Event()
        self.release = threading.Event()

    def fit(self, task, network, training, callback):
        for epoch, seconds in enumerate(self.report_seconds):
            callback(EpochReport(epoch, None, None, 0.0, 0.0, seconds, None, False))
        self.started.set()
        assert self.release.wait(120)
        return None


def test_a_waiting_run_shows_its_place_when_it_starts_and_offers_the_shipped_model(monkeypatch):
    now = [500.0]  # the queue's clock, moved by hand
    monkeypatch.setattr(runs.QUEUE, "clock", lambda: now[0])
    training, waiting = _Held((2.0, 12.0)), _Held()  # 2 s setup, then 10 s an epoch
    held = [TrainingRun.start("dates", NetworkConfig(), TrainConfig(5), fit=training.fit)]
    try:
        assert training.started.wait(60)
        held.append(TrainingRun.start("dates", NetworkConfig(), TrainConfig(3), fit=waiting.fit))
        now[0] = 513.0  # 1 s after the training run's epoch 1 of 5
        at = _open(learn_model="Train", task="reverse")
        at.button[-1].click().run()  # Train: this session's run joins the queue, 3rd
        ui.assert_ok(at)
        (mine,) = at.session_state["learn_runs"].values()
        held.append(mine)
        # 39 s for the training run (4 epochs × 10 s, less 1 s) + 32 s for the one ahead
        # (2 s + 3 epochs × 10 s at the same 10,000 pairs): 71 s, said as about 1 min 20 s
        (bar,) = at.progress
        assert bar.text == (
            "Waiting for the server's training slot: 2nd in the queue; it should start in "
            "about 1 min 20 s."
        )
        assert mine.snapshot().starts_in == 71.0
        at.button(key="learn_shipped_meanwhile").click().run()
        ui.assert_ok(at)
        assert at.button_group(key="learn_model").value == "Shipped"
        assert "reverse" in at.session_state["task"] and ui.chart(at, "How it was trained")
        assert mine.snapshot().state == "waiting"  # still in the queue
    finally:
        for run in held[2:]:
            run.stop()
        training.release.set()
        waiting.release.set()
        for run in held:
            run.join(timeout=60)
    assert mine.snapshot().state == "stopped" and not runs.training_active()


def test_a_press_like_another_session_s_joins_its_run_and_says_so(monkeypatch):
    held = _Held()  # trains nothing: the two sessions' one run holds until released
    start = TrainingRun.start.__func__  # the classmethod's function

    def held_start(cls, task, network=None, training=None, **kwargs):
        return start(cls, task, network, training, fit=held.fit, **kwargs)

    monkeypatch.setattr(TrainingRun, "start", classmethod(held_start))
    sessions = [_open(learn_model="Train", task="reverse", learn_epochs="2") for _ in range(2)]
    try:
        for at in sessions:  # the two press Train with the same settings
            at.button[-1].click().run()
            ui.assert_ok(at)
        assert held.started.wait(60)
        (first,), (second,) = (at.session_state["learn_runs"].values() for at in sessions)
        assert first.run_id == second.run_id and second.source == "shared"
        sessions[0].run()
        for at in sessions:
            assert any(c.value.startswith("1 other is watching this run") for c in at.caption)
    finally:
        held.release.set()
    assert first.join(timeout=60).state == second.join(timeout=60).state == "done"


def test_a_new_session_on_a_training_page_s_link_watches_that_run_again(monkeypatch):
    # a reload, or a replica taking a page over from one that died: a new session, the same URL
    held = _Held()
    start = TrainingRun.start.__func__  # the classmethod's function

    def held_start(cls, task, network=None, training=None, **kwargs):
        return start(cls, task, network, training, fit=held.fit, **kwargs)

    monkeypatch.setattr(TrainingRun, "start", classmethod(held_start))
    pressed = _open(learn_model="Train", task="reverse", learn_epochs="2")
    try:
        pressed.button[-1].click().run()  # Train
        ui.assert_ok(pressed)
        assert held.started.wait(60)
        link = {k: v[0] if isinstance(v, list) else v for k, v in pressed.query_params.items()}
        assert link["learn_run"]  # the run, named in the page's URL
        again = _open(**link)
        (mine,), (found,) = (at.session_state["learn_runs"].values() for at in (pressed, again))
        assert found.run_id == mine.run_id and found.source == "shared"
        assert any(c.value.startswith("1 other is watching this run") for c in again.caption)
        other = _open(**{**link, "seed": "1"})  # the link's run is not these settings' run
        assert not other.session_state["learn_runs"]
        assert "Press Train to train this task with these settings." in [
            i.value for i in other.info
        ]
    finally:
        held.release.set()
    assert mine.join(timeout=60).state == "done"
    served = _open(**link)  # once done: the finished run, from the store
    (kept,) = served.session_state["learn_runs"].values()
    assert (kept.run_id, kept.source) == (mine.run_id, "finished")


# --- the Transformer -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def transformer():
    from attnviz.learn.pretrained import load_transformer

    return load_transformer("dates")


def test_the_shipped_transformer_translates_with_its_heads_averaged(transformer):
    at = _open(learn_arch="Transformer")
    example = get_task("dates").example[0]
    expected = transformer.translate(example)
    assert f"**Output:** `{expected.output}`" in [m.value for m in at.markdown]
    title = "Heads' mean: output × input"
    np.testing.assert_allclose(_weights(at, title), expected.weights, atol=1e-6)
    assert "Transformer: 2 encoder and 2 decoder layers × 4 heads" in ui.captions(at)
    assert "the last layer's cross-attention, averaged over its heads" in ui.captions(at)
    assert not [r for r in at.sidebar.radio if r.key == "score"]  # the score is fixed
    assert "scaled dot product" in "\n".join(c.value for c in at.sidebar.caption)


def test_no_shipped_transformer_for_german_numbers_points_to_training():
    at = _open(learn_arch="Transformer", task="german_numbers")
    assert any("No Transformer is shipped for this task" in i.value for i in at.info)


def test_the_model_view_shows_every_head_summaries_rollout_and_the_best_head(transformer):
    at = _open(learn_arch="Transformer", learn_tview="Model view")
    trace = transformer.trace(get_task("dates").example[0])
    t = trace.translation
    grids = [s for s in ui.specs(at) if sum(d.get("coloraxis") == "coloraxis" for d in s["data"])]
    assert len(grids) == 3  # encoder self, decoder self, cross
    for grid, stack in zip(grids, (t.encoder_self, t.decoder_self, t.cross), strict=True):
        (values,) = [d for d in grid["data"] if d.get("coloraxis") == "coloraxis"]
        blocks = ui.grid_blocks(np.nan_to_num(ui.decode(values["z"]), nan=0.0), 2, 4)
        np.testing.assert_allclose(blocks, stack, atol=1e-6)  # (L, H, T, S)
    maps = [s for s in ui.specs(at) if s["data"][0].get("marker", {}).get("symbol") == "square"]
    assert len(maps) == 3 and all(ui.decode(m["data"][0]["x"]).size == 8 for m in maps)
    tables = [d.value for d in at.dataframe]
    assert any("alignment" in table.columns for table in tables)
    # the enlarged head starts as the best-aligned cross head, and its weights are the trace's
    from attnviz.heads.summaries import head_summaries, top_heads
    from attnviz.learn.translation.tasks import known_alignment

    spans = [*known_alignment("dates", t.source, t.output), None]
    best = top_heads(head_summaries(t.cross, spans=spans), "alignment", 1)[0]
    assert at.selectbox(key="mv_head").value == "cross/{}/{}".format(*best)
    enlarged = np.nan_to_num(ui.values(at, f"cross · layer {best[0]} · head {best[1]}"), nan=0)
    np.testing.assert_allclose(enlarged, t.cross[best], atol=1e-6)
    assert ui.chart(at, "Rollout of the encoder self-attention")
    assert ui.chart(at, "Rollout of the decoder self-attention")
    at.selectbox(key="mv_head").set_value("causal/1/2").run()
    ui.assert_ok(at)
    blocked = ui.values(at, "decoder self · layer 1 · head 2")
    np.testing.assert_allclose(np.nan_to_num(blocked, nan=0), t.decoder_self[1, 2], atol=1e-6)
    assert np.isnan(blocked[np.triu_indices(11, 1)]).all()  # the future: drawn as masked
    at.selectbox(key="mv_by").set_value("alignment").run()  # sort by alignment, best first
    cross_table = next(d.value for d in at.dataframe if "alignment" in d.value.columns)
    scores = list(cross_table["alignment"])
    assert scores == sorted(scores, reverse=True)


def test_a_head_opens_step_by_step_in_the_explorer_with_its_own_weights(transformer):
    at = _open(learn_arch="Transformer", learn_tview="Model view")
    at.selectbox(key="mv_head").set_value("cross/0/1").run()
    next(b for b in at.button if "step by step" in b.label).click().run()
    ui.assert_ok(at)
    assert ui.current_mode(at) == "matrices"
    assert "the shipped Transformer (Dates → ISO 8601), cross · layer 0 · head 1" in ui.captions(at)
    at.session_state[VIEW.key] = "Heatmaps"
    at.run()
    expected = transformer.trace(get_task("dates").example[0]).translation.cross[0, 1]
    np.testing.assert_allclose(ui.weights(at), expected, atol=1e-5)


def test_a_transformer_trained_in_the_session_survives_reruns_and_clear_session(monkeypatch):
    import keras

    # what the session keeps holds for any size: the page's Transformer, one layer of two heads
    asked = ui.smaller_runs(monkeypatch, layers=1, heads=2, d_model=8, d_ff=8)
    params = dict(learn_arch="Transformer", learn_model="Train", task="reverse")
    at = _open(**params, learn_tepochs="1", learn_pairs="500")
    snapshot = _trained_here(at, timeout=180)
    ((task, network, training),) = asked  # what the page asked for
    assert (task, network) == ("reverse", TransformerConfig())
    assert (training.epochs, training.n_pairs) == (1, 500)
    assert [r.epoch for r in snapshot.reports] == [0, 1]
    _translates_after_reruns(at, snapshot, keras)
    assert ui.chart(at, "Epoch 1: ")  # the probe after the last epoch


def test_any_input_the_model_decodes_gets_an_alignment_score(transformer):
    text = "3 March 2021"  # not a trained format, but decoded right and its parts are shown
    at = _open(learn_arch="Transformer", learn_tview="Model view", learn_text_dates=text)
    assert transformer.translate(text).output == "2021-03-03"
    assert "No alignment score" not in ui.captions(at)
    tables = [d.value for d in at.dataframe if "alignment" in d.value.columns]
    assert tables and tables[0]["alignment"].notna().any()
    assert any("not written in one of the 12 formats" in w.value for w in at.warning)
    assert "Trained on" not in ui.captions(at)  # the formats are listed in an expander
    assert at.expander[0].label == "What the models were trained on"


def test_inputs_unlike_the_training_are_flagged_and_a_head_reopens_from_a_link(transformer):
    at = _open(learn_arch="Transformer", learn_tview="Model view", learn_text_dates="tomorrow")
    assert any("The model never saw an input like this" in w.value for w in at.warning)
    at.text_input(key="learn_text_dates").set_value("22 Nov 2026").run()
    assert not at.warning
    at.button[-1].click().run()  # Open this head step by step in the explorer
    ui.assert_ok(at)
    origin = at.query_params["from"]
    assert origin.startswith("head:dates:cross:") and origin.endswith(":22 Nov 2026")
    shared = ui.new_session("matrices", **{"from": origin})
    ui.assert_ok(shared)
    assert at.text_area(key="q_text").value == shared.text_area(key="q_text").value
