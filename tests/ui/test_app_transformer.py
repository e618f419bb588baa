"""AppTest of the Multi-head and Decoder modes: every head, the three ways, the decoder stack."""

from __future__ import annotations

import html

import app_support as ui
import numpy as np
import pytest
from app_support import APP, FIRST_RUN_TIMEOUT
from streamlit.testing.v1 import AppTest

from attnviz import encode_sentences
from attnviz.core import limits
from attnviz.transformer.way_attention import compute_way
from attnviz.ui.pages import multihead
from attnviz.ui.pages.multihead import HEADS_TITLE

pytestmark = pytest.mark.slow  # loads and runs the shipped Transformers


def _open(mode: str, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"mode": mode, **params})
    at.run(timeout=FIRST_RUN_TIMEOUT)
    ui.assert_ok(at)
    return at


def _heads(at: AppTest, prefix: str = HEADS_TITLE) -> list[np.ndarray]:
    """The weights of every head in the head grid titled `prefix`… (one chart, a block of cells
    per head; cells drawn as blocked hold weight 0)."""
    spec = ui.chart(at, prefix)
    (values,) = [d for d in spec["data"] if d.get("name") == "weights"]
    names = [note["text"] for note in spec["layout"]["annotations"] if note["text"]]
    blocks = ui.grid_blocks(ui.decode(values["z"]), 1, len(names))[0]  # (H, T, S)
    return list(np.nan_to_num(blocks, nan=0.0))


def test_every_head_its_average_and_w_o():
    at = _open("Multi-head")
    heads = _heads(at)
    assert len(heads) == 4  # the default: d_model 16, 4 heads
    average = ui.values(at, "Average of the heads")
    np.testing.assert_allclose(average, np.mean(heads, axis=0), atol=1e-6)
    for head in heads:
        np.testing.assert_allclose(head.sum(axis=1), 1, atol=1e-5)
    assert ui.values(at, "Concatenated head outputs").shape[1] == 4 * 4  # H · Dv
    assert ui.values(at, "Output = Concat").shape[1] == 16  # d_model
    enlarged = np.nan_to_num(ui.values(at, "Head 0 (enlarged)"), nan=0.0)
    np.testing.assert_allclose(enlarged, heads[0], atol=1e-7)


def test_the_enlarged_head_and_the_average_can_be_coloured_to_their_largest_weight():
    at = _open("Multi-head", mh_weights="Trained on dates")  # 24 tokens: weights near 1/24
    titles = ("Head 0 (enlarged)", "Average of the heads")
    assert all(ui.chart(at, t)["data"][0]["zmax"] == 1.0 for t in titles)
    at.toggle(key=multihead.FIT.key).set_value(True).run()
    ui.assert_ok(at)
    for title in titles:
        trace = ui.chart(at, title)["data"][0]
        assert trace["zmin"] == 0.0
        assert trace["zmax"] == pytest.approx(np.nanmax(ui.decode(trace["z"])), rel=1e-6)
        assert trace["zmax"] < 1.0


def test_heads_match_the_package_for_the_same_seed():
    at = _open("Multi-head", mh_h="2", seed="3")
    enc = encode_sentences(at.text_area(key="src_text").value, d_model=16, d_k=16, seed=3)
    expected = compute_way(
        "bidirectional", enc.inputs, None, num_heads=2, source_padding_mask=enc.padding_mask, seed=3
    )
    for h, head in enumerate(_heads(at)):
        np.testing.assert_allclose(head, expected.weights[0, h], atol=1e-5)


def test_causal_way_blocks_the_future_in_every_head():
    at = _open("Multi-head", way="causal")
    for head in _heads(at):
        np.testing.assert_array_equal(np.triu(head, k=1), 0)
    # the average and the enlarged head draw the future grey, as every chart draws masked cells
    for title in ("Average of the heads", "Head 0 (enlarged)"):
        drawn = ui.values(at, title)  # NaN = drawn blocked
        t = drawn.shape[0]
        np.testing.assert_array_equal(np.isnan(drawn), ~np.tri(t, dtype=bool), err_msg=title)


def test_cross_way_has_target_queries_and_source_keys():
    at = _open("Multi-head", way="cross")
    src = at.text_area(key="src_text").value.splitlines()[0].split()
    tgt = at.text_area(key="target").value.splitlines()[0].split()
    heads = _heads(at)
    assert heads[0].shape[0] >= len(tgt) and heads[0].shape[1] >= len(src)
    spec = ui.chart(at, "Head 0 (enlarged)")
    assert ui.ticks(spec, "y")[: len(tgt)] == tgt and ui.ticks(spec, "x")[: len(src)] == src


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"mh_dmodel": "10", "mh_h": "4"}, "divisible"),
        ({"mh_h": "16", "mh_dmodel": "8"}, "divisible"),
    ],
    ids=["10-by-4", "8-by-16"],
)
def test_heads_that_do_not_divide_d_model_are_explained(params, words):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"mode": "Multi-head", **params})
    at.run(timeout=FIRST_RUN_TIMEOUT)
    assert not at.exception
    assert any(words in e.value for e in at.error), ui.errors(at)
    assert at.text_area(key="src_text").value  # the input is still there


@pytest.mark.parametrize(
    ("mode", "params", "said"),
    [
        ("Multi-head", {"mh_h": "32"}, ["heads; the link asks for 32, so it shows 4. In Python, "
                                        "`compute_multihead` takes any number of heads"]),
        ("Decoder", {"dec_h": "128", "dec_batch": "65"},
         ["sequences; the link asks for 65, so it shows 64. In Python, `run_decoder` takes up to "
          "1,024 sequences.", "heads; the link asks for 128, so it shows 8. In Python, "
          "`run_decoder` takes any number of heads"]),
    ],
    ids=["multi-head", "decoder"],
)  # fmt: skip
def test_a_link_past_the_pages_own_limits_says_them(mode, params, said):
    at = _open(mode, **params)  # the maths takes these sizes; the page draws fewer
    shown = [i.value for i in at.main.info]
    assert len(shown) == len(said)
    for message, words in zip(shown, said, strict=True):
        assert message.startswith("This page takes at most ") and words in message, message
    assert any(f"at most {limits.APP_HEADS} heads" in m for m in shown)
    (heads,) = [n for n in at.number_input if n.key in params and n.key.endswith("_h")]
    assert heads.max == limits.APP_HEADS and heads.value < limits.APP_HEADS


def test_mismatched_source_and_target_lines_in_cross():
    at = _open("Multi-head", way="cross")
    at.text_area(key="target").input("only one line").run()
    assert not at.exception
    assert any("paired by line" in e for e in ui.errors(at))


def test_line_view_carries_the_enlarged_head():
    at = _open("Multi-head")
    frames = at.get("iframe")
    assert frames, "the line view is drawn in an iframe"
    assert "Tap or hover a token" in str(frames[0].proto)


def test_decoder_runs_the_tutorial_sizes():
    at = _open("Decoder")
    assert any("(64, 5, 512)" in s.value for s in at.success)
    heads = _heads(at, "Layer 0, every head")
    assert len(heads) == 8
    for head in heads:
        assert head.shape == (5, 5)
        np.testing.assert_array_equal(np.triu(head, k=1), 0)  # look-ahead mask
        np.testing.assert_allclose(head.sum(axis=1), 1, atol=1e-5)


def test_decoder_cross_attention_and_other_layers():
    at = _open(
        "Decoder",
        dec_batch="2",
        dec_t="3",
        dec_s="4",
        dec_dmodel="16",
        dec_h="2",
        dec_dff="32",
        dec_n="3",
    )
    assert any("(2, 3, 16)" in s.value for s in at.success)
    at.radio(key="dec_which").set_value("cross").run()
    at.number_input(key="dec_layer").set_value(2).run()
    ui.assert_ok(at)
    heads = _heads(at, "Layer 2, every head")
    assert [h.shape for h in heads] == [(3, 4), (3, 4)]
    for head in heads:
        np.testing.assert_allclose(head.sum(axis=1), 1, atol=1e-5)


def test_decoder_explains_heads_that_do_not_divide_d_model():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"mode": "Decoder", "dec_dmodel": "30", "dec_h": "4"})
    at.run(timeout=FIRST_RUN_TIMEOUT)
    assert not at.exception
    assert any("divisible" in e for e in ui.errors(at))


@pytest.mark.parametrize(
    ("scale", "expected"),
    [
        ("true", "4 heads · Dk = Dv = 4 per head · d_model = 16 · scores × 1/√4"),
        ("false", "4 heads · Dk = Dv = 4 per head · d_model = 16 · no scaling"),
    ],
    ids=["scaled", "unscaled"],
)
def test_heads_caption_names_the_sizes_with_and_without_scaling(scale, expected):
    at = _open("Multi-head", scale=scale)
    assert expected in ui.captions(at).splitlines()


@pytest.mark.parametrize("heads", [4, 8, 16])
def test_every_head_is_one_chart_whose_hover_names_each_token(heads):
    at = _open("Multi-head", mh_h=str(heads), mh_kv=str(heads), mh_dmodel="32")
    spec = ui.chart(at, HEADS_TITLE)
    assert len(_heads(at)) == heads
    tokens = ["Le", "chat", "est", "assis", "sur", "le", "tapis", "."]
    x_names = spec["layout"]["xaxis"]["ticktext"]  # the hover's: head and key of every cell
    assert x_names == [f"head {h} · key {i}: {t}" for h in range(heads)
                       for i, t in enumerate(tokens)]  # fmt: skip
    y_names = spec["layout"]["yaxis"]["ticktext"]
    assert y_names == [f" · query {i}: {t}" for i, t in enumerate(tokens)]
    heads_named = [note["text"] for note in spec["layout"]["annotations"] if note["text"]]
    assert heads_named == [f"head {h}" for h in range(heads)]
    assert not any("text" in trace for trace in spec["data"])  # no values crowding the cells
    assert len([s for s in ui.specs(at) if s["layout"].get("coloraxis")]) == 1  # one chart


# --- trained weights -------------------------------------------------------------------------

DATE = "Sunday, 22 November 2026"


@pytest.fixture(scope="module")
def dates_trace():
    from attnviz.learn.pretrained import load_transformer

    return load_transformer("dates").trace(DATE)


@pytest.mark.parametrize("way", ["bidirectional", "causal", "cross"])
def test_trained_weights_show_the_three_ways_of_one_forward_pass(dates_trace, way):
    at = _open("Multi-head", mh_weights="Trained on dates", way=way, mh_layer="1")
    assert at.text_input(key="learn_text_dates").value == DATE
    assert "translates it to: 2026-11-22" in ui.captions(at)
    assert "scores × 1/√16" in ui.captions(at)
    result = dates_trace.results[(way, 1)]
    heads = _heads(at)
    assert len(heads) == 4
    for head, expected in zip(heads, result.weights[0], strict=True):
        np.testing.assert_allclose(head, expected, atol=1e-5)
    output = ui.values(at, "Output = Concat")
    np.testing.assert_allclose(output, result.output[0], atol=1e-4)
    rows, cols = dates_trace.attention.at(way, 1).labels()
    spec = ui.chart(at, "Head 0 (enlarged)")
    shown = ["␣" if c == " " else html.escape(c) for c in cols]  # "<s>" is drawn, not parsed
    assert ui.ticks(spec, "x") == shown


def test_trained_weights_keep_a_bad_input_and_say_why():
    at = _open("Multi-head", mh_weights="Trained on reverse")
    at.text_input(key="learn_text_reverse").set_value("ABC!").run()
    assert not at.exception
    assert any("does not know" in e for e in ui.errors(at)), ui.errors(at)
    assert at.text_input(key="learn_text_reverse").value == "ABC!"


def test_the_shipped_transformer_opens_in_learn_in_its_model_view():
    # the Multi-head page opens the Learn page prepared as its `prepare` says (through the
    # shell: no page imports another), on the same task and text
    at = _open("Multi-head", mh_weights="Trained on reverse")
    next(b for b in at.button if b.label.startswith("Open this Transformer in Learn")).click()
    at.run()
    ui.assert_ok(at)
    assert ui.current_mode(at) == "learn"
    assert at.button_group(key="task").value == "reverse"
    assert at.button_group(key="learn_arch").value == "Transformer"
    assert at.button_group(key="learn_model").value == "Shipped"
    assert at.session_state["learn_tview"] == "Model view"
    assert at.text_input(key="learn_text_reverse").value  # the task's text, shared by the pages


def test_the_trained_decoder_shows_its_layers_heads(dates_trace):
    at = _open("Decoder", dec_weights="Trained on dates", dec_which="cross", dec_tlayer="1")
    heads = _heads(at, "Layer 1, every head")
    assert len(heads) == 4
    for head, expected in zip(heads, dates_trace.translation.cross[1], strict=True):
        np.testing.assert_allclose(head, expected, atol=1e-6)


def test_the_decoder_model_view_draws_every_layer_and_head():
    at = _open(
        "Decoder", dec_view="Model view", dec_h="12", dec_dmodel="96", dec_n="6", dec_batch="1"
    )
    grids = [s for s in ui.specs(at) if s["layout"].get("coloraxis")]
    values = [next(t for t in s["data"] if t.get("coloraxis") == "coloraxis") for s in grids]
    blocks = [ui.grid_blocks(ui.decode(v["z"]), 6, 12) for v in values]
    assert [b.shape for b in blocks] == [(6, 12, 5, 5)] * 2  # every layer and head
    assert at.selectbox(key="mv_head").value == "cross/5/0"  # no alignment: last layer
    assert ui.chart(at, "cross · layer 5 · head 0")
    assert ui.chart(at, "Rollout of the decoder self-attention")


def test_heads_sort_only_by_what_means_something_here():
    # random decoder weights: cross heads, but no known alignment, so no alignment sort; a link
    # asking for one sorts by the first offered summary instead of drawing every head as "–"
    from attnviz.heads.summaries import SUMMARY_LABELS

    at = _open(
        "Decoder", dec_view="Model view", dec_h="2", dec_n="2", dec_batch="1",
        mv_by=SUMMARY_LABELS["alignment"],
    )  # fmt: skip
    box = at.selectbox(key="mv_by")
    assert SUMMARY_LABELS["alignment"] not in box.options
    assert SUMMARY_LABELS["induction"] not in box.options  # no text that repeats: no such sort
    assert box.value == "entropy_bits"
    assert not any("alignment" in d.value.columns for d in at.dataframe)
