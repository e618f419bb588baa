"""AppTest of the Language model page (ui/pages/language_model.py, ui/language_model/views.py):
the shipped induction model's every head, heads switched off, generation with the KV cache and
how it learned, each number checked against `attnviz.learn` run here; a model trained in the
session.
"""

from __future__ import annotations

import threading

import app_support as ui
import numpy as np
import pytest

import attnviz.ui.pages  # noqa: F401 - every page first, as the app imports them
from attnviz.drawing.next_token import RIGHT_COLOR
from attnviz.learn.language.generation import generate
from attnviz.learn.language.metrics import ablation_table, copyable
from attnviz.learn.language.model import Ablation
from attnviz.learn.language.tasks import get_lm_task, make_sequences
from attnviz.learn.pretrained import load_lm
from attnviz.learn.recipes import LM_RECIPES
from attnviz.ui.language_model.views import FRESH_SEED, FRESH_SEQUENCES
from attnviz.ui.models.heads_panel import ENLARGED, FIT
from attnviz.ui.pages import language_model

pytestmark = pytest.mark.slow  # loads, runs and trains language models

EXAMPLE = get_lm_task("induction").example


@pytest.fixture(scope="module")
def model():
    return load_lm("induction")


def _open(**fields):
    at = ui.new_session("language-model", **fields)
    ui.assert_ok(at)
    return at


def _grid_heads(at, layers: int = 2, heads: int = 4) -> np.ndarray:
    """The model view's heads (the last grid on the page: a run's probe grid comes before)."""
    grids = [s for s in ui.specs(at) if any(d.get("coloraxis") == "coloraxis" for d in s["data"])]
    grid = grids[-1]
    (values,) = [d for d in grid["data"] if d.get("coloraxis") == "coloraxis"]
    return ui.grid_blocks(np.nan_to_num(ui.decode(values["z"]), nan=0.0), layers, heads)


def test_every_head_on_the_example_is_the_models_own(model):
    at = _open()
    forward = model.forward(EXAMPLE)
    np.testing.assert_allclose(_grid_heads(at), forward.weights, atol=1e-6)  # (L, H, T, T)
    said = ui.captions(at)
    assert "26,971 parameters" in said and "in-context accuracy 99.9 %" in said
    bars = ui.chart(at, "How sure it was of each next token")["data"][0]
    ids = model.task.encode(EXAMPLE)  # <s> first
    sure = forward.probabilities[np.arange(len(EXAMPLE)), ids[1:]]
    np.testing.assert_allclose(ui.decode(bars["y"]), sure, atol=1e-6)
    right = [forward.predicted[i] == forward.tokens[i + 1] for i in range(len(EXAMPLE))]
    assert [c == RIGHT_COLOR for c in bars["marker"]["color"]] == right
    where = copyable(ids[None, :-1], ids[None, 1:])[0]  # (T,) inside the copy: 8 tokens
    assert where.sum() == 8 and (sure[where] > 0.9).all()  # copied, surely
    assert f"The model guessed {sum(right)} of the {len(EXAMPLE)} tokens" in said
    assert np.array(right)[where].all()  # every copy is copied


def test_the_enlarged_head_can_be_coloured_to_its_largest_weight(model):
    # a link names a head by the label its box shows
    at = _open(**{ENLARGED.key: "self · layer 0 · head 1", FIT.key: "true"})
    (trace,) = [
        s["data"][0] for s in ui.specs(at) if "layer 0 · head 1" in s["layout"]["title"]["text"]
    ]
    shown = np.nanmax(ui.decode(trace["z"]))
    assert trace["zmin"] == 0.0 and trace["zmax"] == pytest.approx(shown, rel=1e-6)
    assert shown == pytest.approx(model.forward(EXAMPLE).weights[0, 1].max(), rel=1e-6)


def test_the_enlarged_head_opens_in_the_explorer_with_rope(model):
    at = _open(**{ENLARGED.key: "self · layer 1 · head 0"})  # a link names a head by its label
    button = next(b for b in at.button if b.label.startswith("Open this head step"))
    button.click().run()
    ui.assert_ok(at)
    assert ui.current_mode(at) == "matrices"
    assert at.toggle(key="causal").value is True
    np.testing.assert_allclose(ui.weights(at), model.forward(EXAMPLE).weights[1, 0], atol=1e-5)
    assert "the shipped language model (induction), layer 1 · head 0" in ui.captions(at)
    origin = at.query_params["from"]  # a reload opens the head again
    origin = origin[0] if isinstance(origin, list) else origin
    assert origin == f"lm:induction:1:0:{EXAMPLE}"
    again = ui.new_session("matrices", **{"from": origin})
    ui.assert_ok(again)
    np.testing.assert_allclose(ui.weights(again), ui.weights(at), atol=1e-6)


def test_switching_heads_off_shows_the_circuit(model):
    at = _open(lm_view="Switch heads off")
    ids = make_sequences("induction", FRESH_SEQUENCES, seed=FRESH_SEED)
    table = ablation_table(model, ids, "zero")
    rows = at.dataframe[0].value
    np.testing.assert_allclose(
        rows["in-context accuracy off (%)"], np.round(100 * table.in_context_accuracy.ravel(), 1)
    )
    assert rows["in-context accuracy off (%)"][4] < 50  # layer 1 · head 0: the induction head
    (fig,) = [s for s in ui.specs(at) if s["data"][0].get("type") == "heatmap"]
    harm = ui.decode(fig["data"][0]["z"])  # (L·H, metrics), 1 = the most harmful head
    worst = int(np.argmin(table.in_context_accuracy))  # layer 0 · head 0, which reads the
    # current token (the induction head, layer 1 · head 0, comes close)
    assert harm.shape == (8, 4) and harm[worst].max() == 1.0
    name = f"layer {worst // 4} · head {worst % 4}"
    assert f"Switching {name} off hurts copying most" in ui.captions(at)
    at.multiselect(key="lm_off").set_value(["layer 1 · head 0"]).run()
    ui.assert_ok(at)
    off = model.forward(EXAMPLE, Ablation(((1, 0),)))
    guessed = at.dataframe[-1].value
    assert list(guessed["guessed (heads off)"]) == list(off.predicted[:-1])
    at.button_group(key="lm_ablate").set_value("mean").run()
    ui.assert_ok(at)
    mean = ablation_table(model, ids, "mean")
    np.testing.assert_allclose(
        at.dataframe[0].value["in-context accuracy off (%)"],
        np.round(100 * mean.in_context_accuracy.ravel(), 1),
    )


def test_an_older_link_with_the_long_mean_label_opens_the_mean_ablation():
    from attnviz.ui.language_model.views import ABLATE_MODE, ABLATE_MODES, OLD_MEAN_LABEL

    at = _open(lm_view="Switch heads off", lm_ablate=OLD_MEAN_LABEL)
    assert at.button_group(key=ABLATE_MODE.key).value == "mean"
    assert at.query_params[ABLATE_MODE.key] == ABLATE_MODES["mean"]  # today's label, to share


def test_generation_copies_and_shows_the_cache_at_each_step(model):
    at = _open(lm_view="Generate")
    prompt = EXAMPLE[:-8]
    generation = generate(model, prompt, 8)
    assert generation.generated == EXAMPLE[-8:]  # the repeat, copied
    assert f"**{prompt}**`{EXAMPLE[-8:]}`" in [m.value for m in at.markdown]
    assert f"the example less its last 8 characters ({EXAMPLE[-8:]})" in ui.captions(at)
    step = generation.steps[-1]
    values = ui.values(at, f"Step {step.t}: every head over the cache")
    np.testing.assert_allclose(values, step.weights.reshape(8, -1), atol=1e-6)
    assert f"the cache now holds {step.cache_bytes:,} bytes" in ui.captions(at)
    at.slider(key="lm_step").set_value(20).run()
    ui.assert_ok(at)
    np.testing.assert_allclose(
        ui.values(at, "Step 20: every head over the cache"),
        generation.steps[20].weights.reshape(8, -1),
        atol=1e-6,
    )
    rows = ui.values(at, "The last layer's heads' mean, rows 0 … 20")  # NaN = drawn blocked
    np.testing.assert_array_equal(np.isnan(rows), ~np.tri(21, dtype=bool))  # the future: grey
    mean = generation.weights[-1, :, :21, :21].mean(axis=0)  # (21, 21), float32 as the page's
    np.testing.assert_allclose(np.nan_to_num(rows), mean, atol=1e-6)
    at.number_input(key="lm_steps").set_value(20).run()  # past the 32 tokens it trained on
    assert any("trained on 32 tokens" in w.value for w in at.warning)


def test_a_prompt_it_cannot_read_says_why():
    at = ui.new_session("language-model", lm_text_induction="abc DEF")
    assert not at.exception
    (said,) = ui.errors(at)
    assert said.startswith("Your text holds characters the induction task does not know")
    assert "does not know: ' ', 'D', 'E', 'F'. Allowed: letters a–z. Remove" in said
    assert at.text_input(key="lm_text_induction").value == "abc DEF"  # kept, to be fixed
    at.text_input(key=language_model.TEXTS.of("induction").key).set_value("").run()
    assert ui.errors(at) == ["Your text is empty. Type at least one character."]
    at.session_state[language_model.VIEW.key] = "How it learned"  # needs no text: drawn
    at.run()
    assert ui.chart(at, "How it learned") and len(ui.errors(at)) == 1


def test_how_it_learned_shows_the_phase_change(model):
    at = _open(lm_view="How it learned")
    fig = ui.chart(at, "How it learned")
    names = [t.get("name") for t in fig["data"]]
    assert "induction: layer 1 · head 0" in names and "previous-token: layer 0 · head 2" in names
    said = ui.captions(at)
    assert "In-context accuracy jumped most at epoch" in said
    assert "layer 1 · head 0 is the strongest induction head" in said


def test_the_stories_model_reads_its_own_text():
    at = _open(lm_task=get_lm_task("text").title)  # the URL holds the title
    assert at.text_input(key="lm_text_text").value == get_lm_task("text").example
    assert not ui.errors(at)
    assert "The model guessed" in ui.captions(at)


def test_the_stories_model_reads_ordinary_english_and_lists_what_it_knows():
    text = 'Dad is lazy! Zoe (10) said: "X, yes; 2-3?"'
    at = _open(lm_task=get_lm_task("text").title, lm_text_text=text)
    assert not ui.errors(at) and "The model guessed" in ui.captions(at)
    at.text_input(key=language_model.TEXTS.of("text").key).set_value("Dad is lazy… €5").run()
    (said,) = ui.errors(at)
    assert said.endswith(
        "does not know: '…', '€'. Allowed: letters a–z and A–Z, digits 0–9, space, new line "
        "and the marks ! \" ' ( ) , - . : ; ?. Remove or replace those characters."
    )


UNLIKE = "The model never saw an input like this: "  # Learn's warning, word for word


@pytest.mark.parametrize(
    ("task", "text", "why"),
    [
        ("induction", "qwertzuiopqwertzu", None),  # a copy early in a short text: as trained
        ("induction", "abcdefghijklmnopqrstuvwxyzabcdefg", "it is 33 characters long"),
        ("induction", "thequickbrownfox", "'o' from position 15 repeats earlier letters but "),
        ("induction", "hello", "'l' comes twice in a row at position 4"),
        ("text", "A fox named Tamsin.", None),
        ("text", "Dad is lazy. " * 5, "it is 65 characters long, and the model trained on 63"),
    ],
)
def test_a_text_unlike_the_training_sequences_gets_learns_warning(task, text, why):
    title = get_lm_task(task).title
    at = _open(lm_task=title, **{language_model.TEXTS.of(task).key: text})
    warned = [w.value for w in at.warning if w.value.startswith(UNLIKE)]
    if why is None:
        assert not warned
    else:
        (said,) = warned
        assert why in said and said.endswith("Whatever it answers is a guess, however confident "
                                             "it looks.")  # fmt: skip
    assert "The model guessed" in ui.captions(at)  # and still drawn


def test_changing_tokens_to_generate_keeps_the_step(model):
    at = _open(lm_view="Generate")
    prompt = EXAMPLE[:-8]
    at.slider(key="lm_step").set_value(20).run()
    at.number_input(key="lm_steps").set_value(12).run()  # more tokens: the step stays
    ui.assert_ok(at)
    generation = generate(model, prompt, 12)
    assert at.slider(key="lm_step").value == 20 and at.slider(key="lm_step").max == 27
    np.testing.assert_allclose(
        ui.values(at, "Step 20: every head over the cache"),
        generation.steps[20].weights.reshape(8, -1),
        atol=1e-6,
    )  # 8 heads over 21 cached keys, not one cell
    at.number_input(key="lm_steps").set_value(1).run()  # fewer: the last step, 16
    ui.assert_ok(at)
    last = len(prompt) + 1  # <s>, the prompt and one token: steps 0 … 16
    assert at.slider(key="lm_step").value == at.slider(key="lm_step").max == last
    assert ui.values(at, f"Step {last}: every head over the cache").shape == (8, last + 1)


def test_training_here_draws_the_phase_change_and_the_probe_heads(monkeypatch):
    import keras

    # the page draws every epoch of any model: the recipe's, one layer of two heads (most of a
    # run's time is compiling its train step, which a smaller model makes shorter)
    asked = ui.smaller_runs(monkeypatch, layers=1, heads=2, d_model=8, d_ff=8)
    at = _open(lm_model="Train", lm_epochs="2", lm_sequences="512")
    at.button(key="lm_train").click().run()
    ui.assert_ok(at)
    (run,) = at.session_state[language_model.RUNS.key].values()
    snapshot = run.join(timeout=180)
    assert snapshot.state == "done", snapshot.error
    ((task, network, training),) = asked  # what the page asked for
    assert (task, training.epochs, training.n_pairs) == ("induction", 2, 512)
    assert network == LM_RECIPES["induction"].network
    for _ in range(2):  # Keras's global state cleared between reruns: the model still runs
        keras.backend.clear_session()
        at.run()
        ui.assert_ok(at)
    assert [r.epoch for r in snapshot.reports] == [0, 1, 2]
    assert ui.chart(at, "Loss, copying and every head's scores per epoch")
    assert "Every head on the probe" in ui.captions(at)
    np.testing.assert_allclose(
        _grid_heads(at, layers=1, heads=2), snapshot.model.forward(EXAMPLE).weights, atol=1e-6
    )  # the trained model's heads on the example, below


def test_the_heads_sort_by_their_induction_and_previous_token_scores(model):
    from attnviz.heads.summaries import SUMMARY_LABELS
    from attnviz.learn.language.metrics import induction_scores, previous_token_scores

    at = _open(mv_by=SUMMARY_LABELS["alignment"])  # a link from a page with cross heads
    box = at.selectbox(key="mv_by")
    assert SUMMARY_LABELS["alignment"] not in box.options  # no cross-attention here
    assert SUMMARY_LABELS["induction"] in box.options
    assert SUMMARY_LABELS["previous"] in box.options
    assert box.value == "entropy_bits"
    box.set_value("induction").run()
    ui.assert_ok(at)
    forward = model.forward(EXAMPLE)
    ids = np.array([model.task.encode(EXAMPLE)])  # the tokens read, <s> first
    assert ids.shape[1] == forward.weights.shape[-1]
    expected = induction_scores(forward.weights[None], ids)  # (L, H), language.metrics' own
    table = next(d.value for d in at.dataframe if "induction" in d.value.columns)
    by_head = {(r["layer"], r["head"]): r["induction"] for _, r in table.iterrows()}
    for (layer, head), score in by_head.items():
        assert score == pytest.approx(expected[int(layer), int(head)], abs=1e-6)
    best = np.unravel_index(np.nanargmax(expected), expected.shape)
    assert (table.iloc[0]["layer"], table.iloc[0]["head"]) == best  # sorted, best first
    prev = previous_token_scores(forward.weights[None])
    box.set_value("previous").run()
    table = next(d.value for d in at.dataframe if "previous" in d.value.columns)
    assert table.iloc[0].previous == pytest.approx(np.nanmax(prev), abs=1e-6)


def test_the_caption_says_what_the_bars_show(model):
    # "a model that copies is sure of every token" stood above bars sure of almost nothing
    from attnviz.drawing.next_token import copyable

    text = "qwertzuiopqwertzu"  # a repeat that starts early in a short text
    at = _open(lm_text_induction=text)
    bars = ui.chart(at, "How sure it was of each next token")["data"][0]
    sure = ui.decode(bars["y"])
    right = np.array([c == RIGHT_COLOR for c in bars["marker"]["color"]])
    tokens = ["<s>", *text]
    where = copyable(tokens)
    said = ui.captions(at)
    assert "sure of every" not in said
    assert f"gives the next token at {where.sum()} positions" in said
    assert f"the model's best guess was right at {right[where].sum()}," in said
    assert f"a mean probability of {sure[where].mean():.2f}." in said


def test_the_head_table_keeps_layer_and_head_pinned_for_a_phone(model):
    # on a phone the head table's numbers scroll sideways (they ran off its right edge): its
    # layer and head columns stay pinned at the left, narrow
    import json

    at = _open()
    (table,) = [t for t in at.dataframe if {"layer", "head", "entropy"} <= set(t.value.columns)]
    columns = json.loads(table.proto.columns)
    assert all(columns[name]["pinned"] for name in ("layer", "head"))
    assert not any(columns[name].get("pinned") for name in ("entropy", "previous"))


def test_a_new_session_on_a_training_page_s_link_watches_that_run_again(monkeypatch):
    # a reload, or a replica taking the page over from one that died: a new session, the URL
    from attnviz.learn.runs import TrainingRun

    started, release = threading.Event(), threading.Event()

    def held(task, network, training, callback):  # trains nothing: holds the run
        started.set()
        assert release.wait(120)

    start = TrainingRun.start.__func__  # the classmethod's function
    monkeypatch.setattr(TrainingRun, "start", classmethod(
        lambda cls, task, network=None, training=None, **kw: start(
            cls, task, network, training, fit=held, **kw)))  # fmt: skip
    pressed = _open(lm_model="Train", lm_epochs="2", lm_sequences="512", lm_seed="7")
    try:
        pressed.button(key="lm_train").click().run()
        ui.assert_ok(pressed)
        assert started.wait(60)
        link = {k: v[0] if isinstance(v, list) else v for k, v in pressed.query_params.items()}
        assert link[language_model.RUN_FIELD]  # the run, named in the page's URL
        again = _open(**link)
        (mine,), (found,) = (at.session_state[language_model.RUNS.key].values()
                             for at in (pressed, again))  # fmt: skip
        assert found.run_id == mine.run_id and found.source == "shared"
        assert any(c.value.startswith("1 other is watching this run") for c in again.caption)
        other = _open(**{**link, "lm_seed": "8"})  # the link's run is not these settings' run
        assert not other.session_state[language_model.RUNS.key]
        for run, at in ((found, again), (mine, pressed)):  # both stop: the run ends
            run.stop()
            at.run()
            ui.assert_ok(at)
            assert language_model.RUN_FIELD not in at.query_params  # a stopped run is forgotten
    finally:
        release.set()
