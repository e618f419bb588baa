"""Tests for heads/layouts: naming a product's axes, finding Q, K, A and V, laying them out.

The cases are the equations attention layers write (Keras's MultiHeadAttention, Llama's,
TensorFlow's `dot_product_attention`, Gemma's grouped heads) and batched matmuls with their
adjoint flags; each layout is checked against the same array laid out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.heads.layouts import (
    ProductAxes,
    _einsum_axes,
    _matmul_axes,
    canonical,
    fit_heads,
    output_roles,
    score_roles,
)

RNG = np.random.default_rng(61)


@pytest.mark.parametrize(
    ("equation", "ranks", "expected"),
    [
        ("aecd,abcd->acbe", (4, 4), ProductAxes(("aecd", "abcd"), "acbe")),
        ("BTNH,BSNH->BNTS", (4, 4), ProductAxes(("BTNH", "BSNH"), "BNTS")),
        ("...td,...sd->...ts", (4, 3), ProductAxes(("01td", "1sd"), "01ts")),
        ("ab,bc", (2, 2), None),  # no output: not what a layer writes
        ("abc,cd->abd", (2, 2), None),  # ranks that do not fit
    ],
    ids=["keras-mha", "dot-product-attention", "ellipsis", "implicit", "wrong-rank"],
)
def test_einsum_equations_are_named(equation, ranks, expected):
    assert _einsum_axes(equation, ranks) == expected


def test_matmul_letters_follow_the_adjoint_flags():
    assert _matmul_axes((4, 4), False, True) == ProductAxes(("01mk", "01nk"), "01mn")
    assert _matmul_axes((3, 2), False, False) == ProductAxes(("0mk", "kn"), "0mn")
    assert _matmul_axes((1, 2), False, False) is None


@pytest.mark.parametrize(
    ("axes", "rows", "cols", "roles"),
    [
        (ProductAxes(("aecd", "abcd"), "acbe"), "b", "e", (1, 0, "ac")),  # Keras: key first
        (ProductAxes(("bquh", "bkuh"), "buqk"), "q", "k", (0, 1, "bu")),  # Llama
        (ProductAxes(("01mk", "01nk"), "01mn"), "m", "n", (0, 1, "01")),  # q @ kᵀ
    ],
    ids=["keras-mha", "llama", "matmul"],
)
def test_score_roles_find_queries_and_keys(axes, rows, cols, roles):
    found = score_roles(axes, rows, cols)
    assert (found.first, found.second, found.batch) == roles
    assert score_roles(axes, rows, rows) is None


def test_output_roles_need_the_weights_summed_over_their_last_axis():
    keras_output = ProductAxes(("acbe", "aecd"), "abcd")  # weights (B, H, T, S) · V (B, S, H, D)
    roles = output_roles(keras_output, 0)
    assert (roles.first, roles.second, roles.batch, roles.rows, roles.cols) == (
        0,
        1,
        "ac",
        "b",
        "e",
    )
    assert output_roles(keras_output, 1) is None  # V is not summed over its last axis
    assert output_roles(ProductAxes(("abc", "bd"), "acd"), 0) is None  # rank 2 is not weights


def test_canonical_lays_out_queries_keys_and_values_by_head():
    q = RNG.normal(size=(2, 5, 3, 4))  # (B, T, H, D), as Llama's einsum holds it
    out = canonical(q, "bquh", "bu", "q", (2, 3))
    np.testing.assert_array_equal(out, q.transpose(0, 2, 1, 3))  # (B, H, T, D)
    shared = RNG.normal(size=(2, 6, 4))  # (B, S, D): one key head for every query head
    out = canonical(shared, "bsd", "bh", "s", (2, 3))
    np.testing.assert_array_equal(out, np.broadcast_to(shared[:, None], (2, 3, 6, 4)))
    assert canonical(shared, "bsd", "bh", "s", (3, 3)) is None  # batch sizes that do not fit


def test_fit_heads_repeats_shared_heads_and_unfolds_groups_from_rows():
    kv = RNG.normal(size=(1, 2, 5, 4))  # 2 key/value heads
    np.testing.assert_array_equal(fit_heads(kv, 4, 5), np.repeat(kv, 2, axis=1))
    folded = RNG.normal(size=(1, 2, 2 * 5, 4))  # (B, K, G·T, D): TensorFlow's einsum for Gemma
    np.testing.assert_array_equal(fit_heads(folded, 4, 5)[:, 1], folded[:, 0, 5:])
    assert fit_heads(kv, 3, 5) is None and fit_heads(None, 2, 5) is None


def test_attention_over_two_axes_flattens_them():
    # MultiHeadAttention(attention_axes=(1, 2)) on (B, H, W, C): rows b c of the keys and f g
    # of the queries, then the weights (B, N, H, W, H, W) times V (B, H, W, N, D)
    scores = ProductAxes(("abcde", "afgde"), "adfgbc")  # K, Q -> (B, N, Hq, Wq, Hk, Wk)
    roles = score_roles(scores, "fg", "bc")
    assert (roles.first, roles.second, roles.batch) == (1, 0, "ad")
    assert score_roles(scores, "fb", "gc") is None  # a query axis in the keys: not scores
    output = ProductAxes(("abcdef", "aefbg"), "acdbg")
    roles = output_roles(output, 0, spans=2)
    assert (roles.batch, roles.rows, roles.cols) == ("ab", "cd", "ef")
    assert output_roles(output, 0) is None  # over one axis, f is not summed alone
    v = RNG.normal(size=(2, 3, 4, 5, 6))  # (B, H, W, N, D)
    out = canonical(v, "aefbg", "ab", "ef", (2, 5))  # (B, N, H·W, D), pixels row-major
    np.testing.assert_array_equal(out, v.transpose(0, 3, 1, 2, 4).reshape(2, 5, 12, 6))
