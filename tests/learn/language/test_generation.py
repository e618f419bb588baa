"""Tests for learn/language/generation.py: generation with a KV cache equals one full forward pass,
each step's view of the cache (rows, bytes, the keys it attends), the same rows from
`core.kv_cache.decode_with_cache`, copying a run, sampling, and bad arguments."""

import numpy as np
import pytest

from attnviz.core.kv_cache import decode_with_cache
from attnviz.learn.configs import LMConfig
from attnviz.learn.language.generation import generate
from attnviz.learn.language.model import Ablation, LanguageModel
from attnviz.learn.pretrained import load_lm

pytestmark = pytest.mark.slow  # builds and runs language models


@pytest.fixture(scope="module")
def shipped():
    return load_lm("induction")


@pytest.mark.parametrize(
    "config",
    [LMConfig(), LMConfig(position="alibi", norm="post", kv_heads=1)],
    ids=["rope", "alibi-mqa"],
)
def test_generation_with_the_cache_equals_a_full_forward_pass(config):
    model = LanguageModel("induction", config, seed=5)
    ablation = Ablation(((1, 3),), "mean")
    g = generate(model, "qwerty", 12, temperature=1.0, seed=2, ablation=ablation)
    assert len(g.tokens) == 19 and len(g.generated) == 12 and g.text == "qwerty" + g.generated
    full = model.forward(g.text, ablation)
    np.testing.assert_allclose(g.weights, full.weights, atol=1e-5)
    np.testing.assert_allclose(g.probabilities, full.probabilities, atol=1e-5)


def test_each_step_shows_what_its_token_attended_in_the_cache(shipped):
    g = generate(shipped, "abcdefghij", 5)
    assert [s.prefill for s in g.steps] == [True] * 11 + [False] * 5  # <s>, prompt, generated
    step = g.steps[13]
    assert step.t == 13 and step.token == g.tokens[13] and step.weights.shape == (2, 4, 14)
    np.testing.assert_allclose(step.weights.sum(axis=-1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(step.weights, g.weights[:, :, 13, :14])
    assert step.next_token == g.tokens[14] and g.steps[-1].next_token == ""
    per_token = 2 * 4 * 2 * 8 * 4  # layers × K/V heads × (key + value) × Dk × 4 bytes
    assert step.cache_rows == 14 and step.cache_bytes == 14 * per_token == g.cache_bytes[13]
    assert g.keys.shape == g.values.shape == (2, 4, 16, 8)  # (L, G, T, Dk)


def test_the_cache_view_equals_decode_with_cache_on_the_traced_heads(shipped):
    g = generate(shipped, "mnopqrsmnop", 4)
    trace = shipped.trace(g.text)
    for layer in range(2):
        heads = trace.results[("causal", layer)]
        cache = decode_with_cache(
            heads.query_heads[0], heads.shared_key_heads[0], heads.shared_value_heads[0],
            position="rope", rope_theta=shipped.config.rope_theta,
        )  # fmt: skip
        np.testing.assert_allclose(cache.weights, g.weights[layer], atol=1e-5)
        np.testing.assert_allclose(cache.keys, g.keys[layer], atol=1e-5)  # rotated, once


def test_the_shipped_model_copies_a_run_it_has_seen(shipped):
    example = shipped.task.example  # 3 letters, a run of 9, 2 letters, the run again
    g = generate(shipped, example[:16], 15)  # the copy's first 2 letters given
    # the rest of the copy, then what followed the run the first time: 2 letters, the run
    assert g.generated == example[16:] + example[12:20]


def test_sampling_is_seeded_and_greedy_is_the_most_likely(shipped):
    a = generate(shipped, "hello", 8, temperature=1.5, seed=7)
    b = generate(shipped, "hello", 8, temperature=1.5, seed=7)
    assert a.generated == b.generated and a.temperature == 1.5
    greedy = generate(shipped, "hello", 8)
    assert all(s.next_token == s.predicted for s in greedy.steps[5:-1])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(prompt="abc", steps=509), "`steps` must be from 0 to 508"),
        (dict(prompt="abc", temperature=-1), "`temperature` must be from 0"),
        (dict(prompt="abc", temperature="hot"), "`temperature` must be a number"),
        (dict(prompt="ab!"), "does not know: '!'"),
        (dict(prompt="abc", seed=-1), "`seed` must be from 0"),
    ],
    ids=["too-many-steps", "negative-temperature", "temperature-text", "character", "seed"],
)
def test_bad_arguments_say_what_is_wrong(shipped, kwargs, match):
    with pytest.raises(ValueError, match=match):
        generate(shipped, **kwargs)
