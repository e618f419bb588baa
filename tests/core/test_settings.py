"""Tests for core/settings.py: `AttentionSettings`, the one checked description of how attention
is computed (everything but the inputs and the weights). Plain Python: no TensorFlow."""

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.core.limits import MAX_SEED, MAX_TOKENS
from attnviz.core.masks import MASK_VALUES
from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.core.settings import AttentionSettings

ROOT = Path(__file__).parents[2]


def test_the_defaults_are_scaled_dot_product_attention_without_masks():
    settings = AttentionSettings()
    assert dataclasses.asdict(settings) == {
        "score": "dot",
        "scale": True,
        "causal": False,
        "window": None,
        "mask_value": "-inf",
        "seed": 0,
        "sinks": None,
        "documents": None,
        "prefix": None,
        "chunk": None,
        "position": "none",
        "rope_theta": 10000.0,
        "alibi_heads": 8,
        "alibi_head": 0,
    }


def test_positional_order_is_the_one_callers_use():
    # attention.py, multihead.py and the sidebar build settings positionally in this order
    settings = AttentionSettings("general", False, True, 2, "-1e9", 7)
    assert (settings.score, settings.scale, settings.causal) == ("general", False, True)
    assert (settings.window, settings.mask_value, settings.seed) == (2, "-1e9", 7)


@pytest.mark.parametrize("score", SCORE_KINDS)
@pytest.mark.parametrize("mask_value", MASK_VALUES)
def test_every_score_and_mask_value_is_accepted(score, mask_value):
    assert AttentionSettings(score=score, mask_value=mask_value).score == score


@pytest.mark.parametrize(
    ("window", "seed"), [(0, 0), (1, 1), (MAX_TOKENS, MAX_SEED), (np.int64(3), np.uint32(5))]
)
def test_the_edges_of_window_and_seed_are_accepted(window, seed):
    settings = AttentionSettings(window=window, seed=seed)
    assert settings.window == window and settings.seed == seed


def test_numpy_booleans_are_accepted():
    settings = AttentionSettings(scale=np.bool_(False), causal=np.bool_(True))
    assert not settings.scale and settings.causal


BAD = [
    ({"score": "cosine"},
     '`score` must be one of "dot", "general", "concat". Received: \'cosine\'.'),
    ({"score": None}, "`score` must be one of"),
    ({"scale": 1}, "`scale` must be True or False. Received: 1."),
    ({"scale": None}, "`scale` must be True or False. Received: None."),
    ({"causal": "yes"}, "`causal` must be True or False. Received: 'yes'."),
    ({"window": -1}, "`window` must be from 0 to 4096. Received: -1."),
    ({"window": 4097}, "`window` must be from 0 to 4096. Received: 4097."),
    ({"window": 1.5}, "`window` must be a whole number. Received: 1.5."),
    ({"window": True}, "`window` must be a whole number. Received: True."),
    ({"mask_value": "-1e30"}, '`mask_value` must be one of "-inf", "-1e9". Received: \'-1e30\'.'),
    ({"mask_value": float("-inf")}, "`mask_value` must be one of"),
    ({"seed": -1}, "`seed` must be from 0 to 4294967295. Received: -1."),
    ({"seed": 2**32}, "`seed` must be from 0 to 4294967295. Received: 4294967296."),
    ({"seed": "7"}, "`seed` must be a whole number. Received: '7'."),
]  # fmt: skip


@pytest.mark.parametrize(("kwargs", "message"), BAD, ids=[str(k) for k, _ in BAD])
def test_bad_settings_say_what_is_allowed_and_what_was_received(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        AttentionSettings(**kwargs)


def test_settings_are_frozen_hashable_values():
    settings = AttentionSettings(causal=True, window=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.causal = False  # type: ignore[misc]
    assert settings == AttentionSettings(causal=True, window=3)
    assert settings != AttentionSettings(causal=True, window=4)
    assert len({settings, AttentionSettings(causal=True, window=3)}) == 1  # usable as a cache key


def test_replace_checks_the_new_values_too():
    settings = AttentionSettings()
    assert dataclasses.replace(settings, score="concat").score == "concat"
    with pytest.raises(ValueError, match="`window` must be from 0 to 4096"):
        dataclasses.replace(settings, window=-2)


def test_settings_need_no_tensorflow():
    # The sidebar builds settings before TensorFlow has loaded.
    probe = (
        "import sys\n"
        "from attnviz.core.settings import AttentionSettings\n"
        "AttentionSettings(score='concat', causal=True, window=2)\n"
        "print(any(m in sys.modules for m in ('tensorflow', 'keras')))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
