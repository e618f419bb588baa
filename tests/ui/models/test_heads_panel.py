"""Tests for ui/models/heads_panel: the model view panel reads one type, any run's calls."""

import numpy as np

from attnviz.transformer.decoder import run_decoder
from attnviz.ui.models.heads_panel import HeadsView, Section

SMALL = {"h": 2, "d_k": 4, "d_v": 4, "d_model": 8, "d_ff": 16, "n": 3, "vocab_size": 10}


def test_a_decoder_run_is_drawn_by_way_for_the_chosen_sequence():
    tokens = np.array([[1, 2, 3], [4, 5, 6]])
    result = run_decoder(tokens, np.ones((2, 2, 8)), source_padding_mask=[[1, 0], [1, 1]], **SMALL)
    view = HeadsView(result.attention, item=1)
    assert list(view.stacks) == ["causal", "cross"]  # the calls' ways, in call order
    np.testing.assert_array_equal(
        view.stacks["causal"], np.stack([w[1] for w in result.self_attention])
    )
    np.testing.assert_array_equal(
        view.stacks["cross"], np.stack([w[1] for w in result.cross_attention])
    )
    rows = ["t0=4", "t1=5", "t2=6"]
    assert view.labels == {"causal": (rows, rows), "cross": (rows, ["s0", "s1"])}
    upper = np.triu(np.ones((3, 3), dtype=bool), k=1)  # the look-ahead mask, grey
    np.testing.assert_array_equal(view.blocked("causal"), np.broadcast_to(upper, (3, 2, 3, 3)))
    assert not view.blocked("cross").any()  # sequence 1 pads no source token
    assert HeadsView(result.attention).blocked("cross")[..., 1].all()  # sequence 0 pads s1
    assert view.section("causal") == Section("decoder masked self-attention", "decoder self", True)
    assert view.section("cross").rollout is False


def test_chosen_groups_draw_some_calls_under_their_own_names():
    result = run_decoder(np.array([[1, 2, 3]]), np.ones((1, 2, 8)), **SMALL)
    keys = result.attention.groups()["cross"][1:]  # the last two layers' cross-attention
    view = HeadsView(result.attention, {"mine": keys}, sections={"mine": Section("x", "x", False)})
    assert list(view.stacks) == ["mine"] and view.stacks["mine"].shape == (2, 2, 3, 2)
    assert view.blocked("mine") is None or not view.blocked("mine").any()
    assert view.labels["mine"] == (["t0=1", "t1=2", "t2=3"], ["s0", "s1"])
