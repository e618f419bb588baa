"""Tests for learn/runs/key.py: the same settings give the same key, any change another."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest

from attnviz import __version__
from attnviz.learn.configs import (
    LM_TRAINING,
    LMConfig,
    NetworkConfig,
    TrainConfig,
    TransformerConfig,
)
from attnviz.learn.language.tasks import get_lm_task
from attnviz.learn.runs.key import canonical_json, code_version, run_key

TRAINING = TrainConfig(epochs=4, n_pairs=500, seed=7, time_limit=60.0)


def test_the_key_is_the_sha256_of_the_canonical_settings():
    text = canonical_json("dates", NetworkConfig(score="general"), TRAINING)
    record = json.loads(text)
    assert record["task"] == {"name": "dates"}
    assert record["network"] == {
        "type": "NetworkConfig",
        "fields": {"score": "general", "scale": False, "embed_dim": 32, "units": 32,
                   "attention_units": 64},
    }  # fmt: skip
    assert record["training"]["fields"]["seed"] == 7 and record["trainer"] == ""
    assert record["version"] == code_version() and code_version().startswith(__version__ + "+")
    key = run_key("dates", NetworkConfig(score="general"), TRAINING)
    assert key == hashlib.sha256(text.encode()).hexdigest() and len(key) == 64


def test_the_same_settings_give_the_same_key():
    made_twice = TrainConfig(epochs=4, n_pairs=500, seed=7, time_limit=60)  # an int limit
    assert run_key("dates", NetworkConfig(), TRAINING) == run_key("dates", NetworkConfig(),
                                                                  made_twice)  # fmt: skip
    # a language-model task by name or as its LMTask: one key
    assert run_key("induction", LMConfig(), LM_TRAINING) == run_key(
        get_lm_task("induction"), LMConfig(), LM_TRAINING
    )


@pytest.mark.parametrize(
    ("task", "network", "training"),
    [
        ("reverse", NetworkConfig(), TRAINING),
        ("dates", NetworkConfig(score="dot", scale=True), TRAINING),
        ("dates", NetworkConfig(units=16), TRAINING),
        ("dates", TransformerConfig(), TRAINING),
        ("dates", NetworkConfig(), replace(TRAINING, seed=8)),
        ("dates", NetworkConfig(), replace(TRAINING, epochs=5)),
        ("dates", NetworkConfig(), replace(TRAINING, n_pairs=501)),
        ("dates", NetworkConfig(), replace(TRAINING, time_limit=61.0)),
        ("dates", NetworkConfig(), replace(TRAINING, learning_rate=1e-3)),
    ],
    ids=["task", "scale", "units", "architecture", "seed", "epochs", "pairs", "time-limit",
         "step"],
)  # fmt: skip
def test_any_change_gives_another_key(task, network, training):
    assert run_key(task, network, training) != run_key("dates", NetworkConfig(), TRAINING)


def test_another_trainer_or_language_model_task_gives_another_key():
    base = run_key("dates", NetworkConfig(), TRAINING)
    assert run_key("dates", NetworkConfig(), TRAINING, trainer="fit:test") != base
    induction = get_lm_task("induction")
    shorter = replace(induction, context=16)
    assert run_key(shorter, LMConfig(), LM_TRAINING) != run_key(induction, LMConfig(), LM_TRAINING)
    assert run_key("text", LMConfig(), LM_TRAINING) != run_key("induction", LMConfig(), LM_TRAINING)
