"""AppTest of the Your model page (ui/pages/model.py) with the model the server was started
with (`ATTNVIZ_MODEL`, as `attnviz view MODEL` sets it): tiny GPT-2 and Llama presets and a
`.keras` file written by `user_models`, a bad path, and no model at all.

The page's numbers are checked against `attnviz.inspect` and the causal LM's own logits, run
here on the same model; the head opened step by step must give its own weights in the explorer.
"""

from __future__ import annotations

import re

import app_support as ui
import numpy as np
import pytest
from user_models import GPT2_TEXT, gpt2_preset, llama_preset, mha_keras_file

import attnviz
from attnviz.heads.model_text import text_inputs
from attnviz.heads.user_model import load_model
from attnviz.ui.frame.server_config import MODEL_ENV

pytestmark = pytest.mark.slow  # builds and inspects Keras models


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("your-models")
    return {
        "gpt2": gpt2_preset(root / "gpt2"),
        "llama": llama_preset(root / "llama"),
        "keras": mha_keras_file(root / "tiny.keras"),
    }


@pytest.fixture
def chosen(monkeypatch):
    """Start the page's server with a model (None: without one)."""

    def choose(source) -> None:
        if source is None:
            monkeypatch.delenv(MODEL_ENV, raising=False)
        else:
            monkeypatch.setenv(MODEL_ENV, str(source))

    return choose


@pytest.fixture(scope="module")
def gpt2_page(folders):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(MODEL_ENV, str(folders["gpt2"]))
        at = ui.new_session("model", model_text=GPT2_TEXT)
        ui.assert_ok(at)
        yield at


def _grid(at) -> dict:
    """The model view's grid figure (its heads in one heatmap on the shared colour axis)."""
    (grid,) = [s for s in ui.specs(at) if any(d.get("coloraxis") == "coloraxis" for d in s["data"])]
    return grid


def _grid_heads(at) -> dict[tuple[int, int], np.ndarray]:
    """The model view's heads by (layer, head), read from its grid's one heatmap (blocked cells
    read as weight 0); the head map beside it says how many layers and heads there are."""
    grid = _grid(at)
    (values,) = [d for d in grid["data"] if d.get("coloraxis") == "coloraxis"]
    (head_map,) = [s for s in ui.specs(at)
                   if s["data"][0].get("marker", {}).get("symbol") == "square"]  # fmt: skip
    layers = int(ui.decode(head_map["data"][0]["y"]).max()) + 1
    heads = int(ui.decode(head_map["data"][0]["x"]).max()) + 1
    blocks = ui.grid_blocks(np.nan_to_num(ui.decode(values["z"]), nan=0.0), layers, heads)
    return {(layer, head): blocks[layer, head] for layer in range(layers) for head in range(heads)}


def test_no_model_chosen_says_how_to_start_one_and_takes_no_file(chosen):
    chosen(None)
    at = ui.new_session("model")
    ui.assert_ok(at)
    said = " ".join(i.value for i in at.info)
    assert "attnviz view my_model.keras" in said and 'pip install "attnviz[hub]"' in said
    assert "never takes a model file from a visitor" in said
    assert not at.get("file_uploader") and not at.text_input and not at.text_area
    assert not ui.specs(at)


def test_a_bad_model_path_is_said_clearly(chosen, tmp_path):
    chosen(tmp_path / "missing.keras")
    at = ui.new_session("model")
    assert not at.exception
    (message,) = ui.errors(at)
    assert message.startswith("Your model could not be loaded. No such file or folder:")
    assert "missing.keras" in message and not ui.specs(at)


def test_the_model_view_shows_inspects_weights(gpt2_page, folders):
    user = load_model(folders["gpt2"])
    made = text_inputs(user, GPT2_TEXT)
    calls = attnviz.inspect(user.model, made.inputs).calls
    heads = _grid_heads(gpt2_page)
    assert set(heads) == {(layer, head) for layer in range(2) for head in range(2)}
    for (layer, head), shown in heads.items():
        np.testing.assert_allclose(shown, calls[layer].weights[0, head], atol=1e-6)
    enlarged = np.nan_to_num(ui.values(gpt2_page, "self · layer 1 · head 0"), nan=0.0)
    np.testing.assert_allclose(enlarged, calls[1].weights[0, 0], atol=1e-6)
    # the grid's tokens (in each cell's hover): the tokenizer's, the start token first
    hover = _grid(gpt2_page)["layout"]["xaxis"]["ticktext"]
    tokens = ("0: &lt;|endoftext|&gt;", "1: the", "2: Ġcat")  # escaped for plotly
    assert hover[:3] == [f"head 0 · token {t}" for t in tokens]
    said = ui.captions(gpt2_page)
    assert "9 tokens: <|endoftext|> · the · Ġcat" in said
    assert "The explorer reproduces this head's weights" in said
    assert "Rollout of the self-attention" in ui.titles(gpt2_page)
    # sorts that mean something here: no alignment (no cross-attention); an induction score
    # only where the text repeats a token
    from attnviz.heads.summaries import SUMMARY_LABELS, induction_targets

    options = gpt2_page.selectbox(key="mv_by").options
    assert SUMMARY_LABELS["alignment"] not in options
    repeats = (induction_targets(made.tokens) >= 0).any()
    assert (SUMMARY_LABELS["induction"] in options) == bool(repeats)


def test_the_next_token_is_the_causal_lms_own(gpt2_page, folders):
    user = load_model(folders["gpt2"])
    logits = np.asarray(user.model(text_inputs(user, GPT2_TEXT).inputs), np.float64)[0, -1]
    expected = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    table = next(d.value for d in gpt2_page.dataframe if "next token" in d.value.columns)
    order = np.argsort(-expected, kind="stable")[:5]
    assert table["id"].tolist() == order.tolist()
    np.testing.assert_allclose(table["probability"], expected[order], atol=1e-6)


def test_each_call_says_how_it_compared_with_its_layer(gpt2_page, folders):
    user = load_model(folders["gpt2"])
    calls = attnviz.inspect(user.model, text_inputs(user, GPT2_TEXT).inputs).calls
    table = next(d.value for d in gpt2_page.dataframe if "check" in d.value.columns)
    unnumbered = lambda keys: [re.sub(r"_\d+", "", key) for key in keys]  # noqa: E731 (Keras numbers names)
    assert unnumbered(table["attention call"]) == unnumbered(call.key for call in calls)
    for check in table["check"]:  # GPT-2's attention ends in its output projection
        assert re.fullmatch(r"checked against the layer's output: exact( to \de-\d+)?", check)
    assert "The recorded call: checked against the layer's output: exact" in ui.captions(gpt2_page)


def test_the_enlarged_head_opens_in_the_explorer_with_its_weights(gpt2_page):
    enlarged = np.nan_to_num(ui.values(gpt2_page, "self · layer 1 · head 0"), nan=0.0)
    button = next(b for b in gpt2_page.button if b.label.startswith("Open this head step"))
    button.click().run()
    ui.assert_ok(gpt2_page)
    assert ui.current_mode(gpt2_page) == "matrices"
    np.testing.assert_allclose(ui.weights(gpt2_page), enlarged, atol=1e-5)
    assert gpt2_page.toggle(key="causal").value is True
    # Keras numbers a layer name built twice in one process (gpt2_backbone_1, ...)
    said = ui.captions(gpt2_page)
    name = (r"your model GPT2CausalLM, gpt2_backbone\w*/transformer_layer_1\w*/"
            r"self_attention\w* · head 0")  # fmt: skip
    assert re.search(name, said), said
    # where the head came from, truly: not "From Learn", not "trained", not "yours"
    box = ui.preset_box(gpt2_page)
    assert box.value == "custom" and re.match("From " + name, box.options[0]), box.options[0]
    assert "Learn" not in said and "rained" not in said and "not a preset's" not in said
    # the URL names the head, so that a reload opens it again
    origin = gpt2_page.query_params["from"]
    origin = origin[0] if isinstance(origin, list) else origin
    assert origin == f"model:GPT2CausalLM:self:1:0:{GPT2_TEXT}"


def test_a_reload_opens_your_models_head_again_or_says_why_not(chosen, folders):
    chosen(folders["gpt2"])
    origin = f"model:GPT2CausalLM:self:1:0:{GPT2_TEXT}"
    user = load_model(folders["gpt2"])
    calls = attnviz.inspect(user.model, text_inputs(user, GPT2_TEXT).inputs).calls
    at = ui.new_session("matrices", **{"from": origin})
    ui.assert_ok(at)
    np.testing.assert_allclose(ui.weights(at), calls[1].weights[0, 0], atol=1e-5)
    assert ui.preset_box(at).options[0].startswith("From your model GPT2CausalLM, ")
    chosen(folders["keras"])  # the server now runs another model: said, not guessed
    other = ui.new_session("matrices", **{"from": origin})
    (message,) = ui.errors(other)
    assert "model 'GPT2CausalLM'" in message and "runs 'tiny_mha' now" in message
    chosen(None)
    gone = ui.new_session("matrices", **{"from": origin})
    (message,) = ui.errors(gone)
    assert "runs no model of yours now" in message and "attnviz view MODEL" in message


def test_a_llama_preset_shows_its_grouped_rotary_heads(chosen, folders):
    chosen(folders["llama"])
    at = ui.new_session("model", model_text="the cat sat")
    ui.assert_ok(at)
    assert len(_grid_heads(at)) == 2 * 4
    said = ui.captions(at)
    assert "RoPE: each query and key is rotated by its position before Q·Kᵀ" in said
    assert "scores × 1/√4" in said and "The explorer reproduces this head's weights" in said
    assert "<s> ·" in said


def test_a_keras_file_takes_token_ids_and_says_what_is_wrong(chosen, folders):
    chosen(folders["keras"])
    at = ui.new_session("model", model_text="3 1 4 1 5")
    ui.assert_ok(at)
    assert at.text_area[0].label.startswith("Token ids")
    assert len(_grid_heads(at)) == 3  # 1 layer × 3 heads, and no next token:
    assert not any("next token" in d.value.columns for d in at.dataframe)
    at.text_area[0].set_value("3 one 4").run()
    assert any("Token ids must be whole numbers from 0 to 49" in e for e in ui.errors(at))
    said = ui.captions(at)  # its own name, not Keras's class
    assert "tiny_mha (a Keras Functional model, " in said and "Functional (" not in said
    at.text_area[0].set_value(" ").run()
    assert any("Token ids to run the model on are missing" in e for e in ui.errors(at))
