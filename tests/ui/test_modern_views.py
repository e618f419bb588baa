"""AppTests of today's attention in the explorer: the new masks and position schemes from the
sidebar and the URL, the Positions, KV cache and Tiled views, and bad values' messages."""

from __future__ import annotations

import app_support as ui
import numpy as np
import pytest

from attnviz.core import limits
from attnviz.core.attention import compute_attention
from attnviz.inputs.parsing import parse_matrix_text
from attnviz.ui.explorer import results
from attnviz.ui.pages import multihead

TEXTS = {  # 6 tokens, 4 features: self-attention, so the KV cache view applies
    "q_text": "1 0 1 0\n0 1 0 1\n1 1 0 0\n0 0 1 1\n1 0 0 1\n0 1 1 0",
    "k_text": "1 0 1 0\n0 1 0 1\n1 1 0 0\n0 0 1 1\n1 0 0 1\n0 1 1 0",
    "v_text": "1 0\n0 1\n1 1\n2 0\n0 2\n1 -1",
}
Q, K, V = (parse_matrix_text(TEXTS[k]) for k in ("q_text", "k_text", "v_text"))


def _open(**fields):
    at = ui.new_session("matrices", **TEXTS, **fields)
    ui.assert_ok(at)
    return at


def test_sinks_with_a_window_come_from_the_url_and_match_the_back_end():
    at = _open(causal="true", window_on="true", window="1", sinks_on="true", sinks="1")
    expected = compute_attention(Q, K, V, causal=True, window=1, sinks=1).weights
    np.testing.assert_allclose(ui.weights(at), expected, atol=1e-6)
    assert (ui.weights(at)[2:, 0] > 0).all()  # the sink stays visible beyond the window
    expander = [e for e in at.expander if e.label == "The mask, rule by rule"]
    assert expander and "Sinks" not in ui.titles(at)  # folded: its charts are not drawn
    at.session_state[results.RULES_OPEN.key] = True  # unfolded, as a click on it does
    at.run()
    assert {"Causal", "Window", "Sinks"} <= set(ui.titles(at))


def test_packed_documents_and_chunks_and_prefix():
    at = _open(documents="2, 4")
    np.testing.assert_array_equal(ui.weights(at)[:2, 2:], 0)  # document 1 never sees 2
    at = _open(chunk_on="true", chunk="3", causal="true")
    expected = compute_attention(Q, K, V, causal=True, chunk=3).weights
    np.testing.assert_allclose(ui.weights(at), expected, atol=1e-6)
    at = _open(prefix_on="true", prefix="3", causal="true")
    assert ui.weights(at)[0, 2] > 0 and ui.weights(at)[3, 4] == 0


def test_bad_mask_values_are_said_in_the_sidebar_and_the_page_stays_up():
    at = ui.new_session("matrices", **TEXTS, documents="2, x")
    assert any("whole numbers separated by commas" in e.value for e in at.sidebar.error)
    assert any("pointed out in the sidebar" in i.value for i in at.info)
    at.text_input(key="documents").set_value("2, 4").run()
    ui.assert_ok(at)
    at = ui.new_session("matrices", **TEXTS, sinks_on="true", sinks="9", window_on="true")
    assert any("sink" in e.value for e in [*at.error, *at.sidebar.error])


def test_rope_rotates_q_and_k_and_the_positions_view_shows_the_pattern():
    at = _open(position="RoPE (rotary)", rope_theta="100")
    assert at.radio(key="position").value == "rope"
    expected = compute_attention(Q, K, V, position="rope", rope_theta=100.0)
    np.testing.assert_allclose(ui.weights(at), expected.weights, atol=1e-6)
    assert not any(t.startswith("Rotated") for t in ui.titles(at))  # they are under Positions
    ui.open_view(at, "Positions")
    np.testing.assert_allclose(ui.values(at, "Rotated Q"), expected.rotated_query, atol=1e-5)
    np.testing.assert_allclose(ui.values(at, "Rotated K"), expected.rotated_key, atol=1e-5)
    probe = ui.values(at, "RoPE alone")
    for offset in range(-5, 6):
        assert np.ptp(np.diagonal(probe, offset)) < 1e-5  # constant along every diagonal
    assert ui.chart(at, "The score depends only on the offset")
    ui.open_view(at, "Step by step")
    assert "0. RoPE     turn feature pairs (k, k + 2)" in at.text[0].value


def test_alibi_adds_a_bias_stage_and_a_slope_per_head():
    at = _open(position="ALiBi (linear bias)", alibi_heads="4", alibi_head="1")
    expected = compute_attention(Q, K, V, position="alibi", alibi_heads=4, alibi_head=1)
    np.testing.assert_allclose(ui.values(at, "ALiBi bias"), expected.position_bias, atol=1e-6)
    assert "Slope m = 0.0625" in "\n".join(c.value for c in at.sidebar.caption)
    ui.open_view(at, "Positions")
    assert ui.chart(at, "ALiBi alone")


def test_a_link_past_the_pages_alibi_heads_says_the_pages_limit():
    at = _open(position="ALiBi (linear bias)", alibi_heads="40")  # the maths takes 40 heads
    said = [i.value for i in at.sidebar.info]
    assert said == [
        f"This page takes at most {limits.APP_HEADS} ALiBi heads; the link asks for 40, so it "
        "shows 8. In Python, `alibi_slopes` and `compute_attention` take any number of heads."
    ]
    (heads,) = [n for n in at.number_input if n.key == "alibi_heads"]
    assert heads.value == 8 and heads.max == limits.APP_HEADS
    assert heads.help.startswith(f"This page takes at most {limits.APP_HEADS} ALiBi heads.")


def test_the_kv_cache_steps_assemble_the_causal_attention():
    at = _open(causal="true", view="KV cache", cache_t="3")
    assert "Step 3: the new token's query scores the 4 cached keys" in ui.captions(at)
    assert "The cache holds 4 rows, 96 bytes" in ui.captions(at)  # 4 × (4 + 2) × 4 bytes
    expected = compute_attention(Q, K, V, causal=True).weights
    bars = ui.decode(ui.chart(at, "Step 3's weights")["data"][0]["y"])  # the visible keys
    np.testing.assert_allclose(bars, expected[3, :4], atol=1e-6)
    decoded = ui.values(at, "Rows of steps 0 … 3")  # only the rows decoded so far
    assert decoded.shape == (4, 6)  # over every key, those after each row's step grey
    np.testing.assert_array_equal(np.isnan(decoded), ~np.tri(4, 6, dtype=bool))
    at.slider(key="cache_t").set_value(5).run()
    stacked = np.nan_to_num(ui.values(at, "Rows of steps 0 … 5"), nan=0.0)
    np.testing.assert_allclose(stacked, expected, atol=1e-6)
    assert "the largest difference is" in ui.captions(at)


def test_the_tiled_view_steps_through_the_online_softmax_to_the_same_numbers():
    at = _open(causal="true", view="Tiled", tile_k="2")
    assert "1 query tile × 3 key tiles = 3 steps" in ui.captions(at)
    assert "the whole 6 × 6 score matrix, 144 bytes" in ui.captions(at)
    at.slider(key="tile_step").set_value(2).run()
    ui.assert_ok(at)
    expected = compute_attention(Q, K, V, causal=True)
    np.testing.assert_allclose(ui.values(at, "Output so far"), expected.output, atol=1e-5)
    assert "After the last tile, the weights and output equal" in ui.captions(at)


@pytest.mark.parametrize(
    ("fields", "words"),
    [({"view": "KV cache", "score": "general"}, "dot-product score"),
     ({"view": "Tiled", "score": "concat"}, "dot-product score")],
)  # fmt: skip
def test_views_that_need_the_dot_product_say_so(fields, words):
    at = _open(**fields)
    assert any(words in i.value for i in at.info)


def test_multi_head_decoding_reads_a_smaller_cache_with_shared_key_value_heads():
    at = ui.new_session("multihead", way="causal", mh_h="4", mh_kv="1", cache_t="2")
    at.session_state[multihead.CACHE_OPEN.key] = True  # the KV cache's expander unfolded
    at.run()
    ui.assert_ok(at)
    text = ui.captions(at)
    assert "each of the 4 query heads scores the 3 cached rows of its K/V head" in text
    assert "for 1 K/V head; one K/V head per query head would hold" in text
    weights = np.nan_to_num(ui.values(at, "Every head's weights at step 2"), nan=0.0)
    np.testing.assert_allclose(weights.sum(axis=1), 1, atol=1e-6)  # every head's row


def test_the_positions_tab_says_where_a_sentences_positions_are_without_a_scheme():
    # sentences carry the sinusoidal encoding in their inputs: "no position" would contradict
    # the switch above the tabs; typed matrices have none
    said = {}
    for name, page, fields in (
        ("sentences", "sentences", {}),
        ("sentences, encoding off", "sentences", {"pos": "false"}),
        ("matrices", "matrices", {}),
    ):
        at = ui.new_session(page, view="Positions", **fields)
        ui.assert_ok(at)
        said[name] = " ".join(i.value for i in at.info)
    assert "sinusoidal encoding added to the embeddings" in said["sentences"]
    assert "No position scheme is on" not in said["sentences"]
    for name in ("sentences, encoding off", "matrices"):
        assert said[name].startswith("No position scheme is on."), name
