"""Tests for heads/tracing (and the thread safety of inspect): the trace sees this thread's ops
only, finds each tensor's producer exactly even when ids are reused, and leaves nothing behind.
"""

from __future__ import annotations

import threading

import keras
import numpy as np
import pytest
import tensorflow as tf
from inspection_support import inspected
from tensorflow.python.framework import op_callbacks

from attnviz.heads.tracing import tracing

RNG = np.random.default_rng(71)


def test_only_this_threads_ops_are_traced():
    seen_here, seen_there = [], []
    ready, done = threading.Event(), threading.Event()

    def other_thread():
        ready.wait()
        tf.ones((2, 2)) * 3.0  # an op in another thread while the trace is on
        done.set()

    worker = threading.Thread(target=other_thread)
    worker.start()
    with tracing(lambda node, inputs, outputs: seen_here.append(node.op_type)) as trace:
        ready.set()
        done.wait(timeout=30)
        tf.ones((2, 2)) + 1.0
    worker.join()
    assert "AddV2" in seen_here and "Mul" not in seen_here and not seen_there
    assert trace.seq == len(seen_here)
    assert not op_callbacks.should_invoke_op_callbacks()  # the callback is gone


def test_the_callback_is_removed_after_an_error():
    with pytest.raises(RuntimeError, match="boom"), tracing(lambda *args: None):
        raise RuntimeError("boom")
    assert not op_callbacks.should_invoke_op_callbacks()


def test_producers_are_exact_when_ids_are_reused():
    with tracing(lambda *args: None) as trace:
        made = tf.ones((3,)) * 2.0  # made by a Mul op
        freed = id(made)
        del made  # its id is free: CPython gives it to the next object of that size
        for _ in range(100):
            constant = tf.constant([1.0, 2.0, 3.0])  # made by no traced op
            if id(constant) == freed:
                break
        else:
            pytest.fail("CPython did not reuse a freed tensor's id in 100 tries")
        total = constant + 1.0  # an AddV2 op consuming the constant
    (mul, _), *_ = trace.producers[freed]
    assert mul.op_type == "Mul"  # the trap: the constant's id once belonged to the Mul's output
    add = trace.producers[id(total)][-1][0]
    assert add.op_type == "AddV2" and trace.producer(add, 0) is None
    assert trace.producer(add, 1) is None  # 1.0 was converted, not made by an op


def test_inspect_while_another_thread_uses_the_model():
    keras.utils.set_random_seed(9)
    x_in = keras.Input((5, 8))
    attended = keras.layers.MultiHeadAttention(2, 4, name="mha")(x_in, x_in)
    model = keras.Model(x_in, keras.layers.Dense(3)(attended))
    x = RNG.normal(size=(2, 5, 8)).astype("float32")
    plain = np.asarray(model(x))
    outputs, errors, stop = [], [], threading.Event()

    def keep_calling():
        try:
            while not stop.is_set():
                outputs.append(np.asarray(model(x)))
        except Exception as error:  # reported below
            errors.append(error)

    worker = threading.Thread(target=keep_calling)
    worker.start()
    try:
        results = [inspected(model, x) for _ in range(5)]
    finally:
        stop.set()
        worker.join()
    assert not errors and outputs
    for output in outputs:  # the other thread's calls were never touched
        np.testing.assert_array_equal(output, plain)
    for result in results:
        np.testing.assert_array_equal(result.outputs, plain)
        assert result.keys() == ("mha",)
        np.testing.assert_array_equal(result["mha"].weights, results[0]["mha"].weights)
