"""Tests for inputs/problem.py: a `Problem` keeps the shapes the user gave, picks one batch
item's arrays, and is made from encoded sentences with the queries on one side and the keys and
values on the other."""

import numpy as np

from attnviz.inputs.problem import Problem
from attnviz.inputs.text import encode_sentences


def test_plain_matrices_are_one_sequence():
    q, k, v = np.ones((2, 3)), np.zeros((4, 3)), np.arange(8.0).reshape(4, 2)
    problem = Problem(q, k, v, (("a", "b"),), (tuple("wxyz"),), None)
    assert not problem.batched and problem.batch == 1
    for got, want in zip(problem.sequence(0), (q, k, v, None), strict=True):
        assert got is want


def test_self_attention_of_sentences_uses_one_encoding_for_all_three():
    enc = encode_sentences("the cat sat\na dog", d_model=8, d_k=4, seed=1)
    problem = Problem.of_sentences(enc, enc, item=1)
    assert problem.batch == 2 and problem.item == 1
    np.testing.assert_array_equal(problem.query, enc.query)
    np.testing.assert_array_equal(problem.key, enc.key)
    np.testing.assert_array_equal(problem.value, enc.value)
    assert problem.query_labels == enc.tokens == problem.key_labels
    query, key, value, padding = problem.sequence(1)
    np.testing.assert_array_equal(key, enc.key[1])
    np.testing.assert_array_equal(padding, enc.padding_mask[1])
    assert problem.query_encoding is enc is problem.key_encoding


def test_cross_attention_takes_queries_from_the_target_and_keys_from_the_source():
    source = encode_sentences("le chat", d_model=8, d_k=4, seed=1)
    target = encode_sentences("the black cat", d_model=8, d_k=4, seed=1)
    problem = Problem.of_sentences(target, source)
    assert problem.query.shape[1] == 3 and problem.key.shape[1] == 2
    assert problem.query_labels == target.tokens and problem.key_labels == source.tokens
    np.testing.assert_array_equal(problem.padding, source.padding_mask)
    assert problem.query_encoding is target and problem.key_encoding is source
