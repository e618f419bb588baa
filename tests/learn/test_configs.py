"""Tests for learn/configs.py: the models' sizes and their training, checked on construction."""

import pytest

from attnviz.learn.configs import (
    LM_TRAINING,
    TRANSFORMER_TRAINING,
    LMConfig,
    NetworkConfig,
    TrainConfig,
    TransformerConfig,
)
from attnviz.learn.recipes import (
    LM_RECIPES,
    RECIPES,
    TRANSFORMER_RECIPES,
    network_config,
    training_config,
)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(score="bilinear"), '`score` must be one of "dot", "general", "concat"'),
        (dict(scale="yes"), "`scale` must be True or False"),
        (dict(units=0), "`units` must be from 1 to 256. Received: 0"),
        (dict(embed_dim=1000), "`embed_dim` must be from 1 to 256"),
    ],
    ids=["score", "scale", "units", "embed"],
)
def test_network_config_checks(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NetworkConfig(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(heads=3), "divisible by `heads`"),
        (dict(layers=0), "`layers`"),
        (dict(d_model=1024), "`d_model`"),
        (dict(rate=1.0), "`rate`"),
    ],
)
def test_transformer_config_checks(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TransformerConfig(**kwargs)


def test_a_transformer_s_heads_split_d_model():
    assert TransformerConfig(heads=4, d_model=64).d_k == 16


def test_the_transformer_training_differs_from_the_gru_training_only_in_its_steps():
    gru, transformer = TrainConfig(), TRANSFORMER_TRAINING
    assert (transformer.batch_size, transformer.learning_rate, transformer.epochs) == (64, 1e-3, 20)
    assert (transformer.n_pairs, transformer.val_pairs) == (gru.n_pairs, gru.val_pairs)


def test_the_recipes_build_the_shipped_models_from_configs():
    assert network_config("dates", "general") == NetworkConfig("general", False)
    assert network_config("dates", "transformer") == TransformerConfig()
    assert training_config("reverse", "dot").epochs == 12 == RECIPES["reverse"].training.epochs
    assert training_config("reverse", "transformer").n_pairs == 20_000
    assert set(TRANSFORMER_RECIPES) == {"dates", "reverse"}
    with pytest.raises(ValueError, match="No Transformer is shipped for 'german_numbers'"):
        network_config("german_numbers", "transformer")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(heads=3), "divisible by `heads`"),
        (dict(kv_heads=3), "`kv_heads` must divide `heads`.*heads=4, kv_heads=3"),
        (dict(kv_heads=8), "`kv_heads` must be from 1 to 4"),
        (dict(d_model=12, heads=4), 'position="rope" rotates.*d_k=3'),
        (dict(position="sinusoidal"), '`position` must be one of "rope", "alibi", "none"'),
        (dict(rope_theta=0), "`rope_theta`"),
        (dict(norm="sandwich"), '`norm` must be one of "pre", "post"'),
        (dict(d_ff=-1), "`d_ff` must be from 0 to 1024"),
        (dict(layers=7), "`layers` must be from 1 to 6"),
    ],
    ids=["heads", "kv-divides", "kv-range", "rope-odd", "position", "theta", "norm", "d_ff",
         "layers"],
)  # fmt: skip
def test_lm_config_checks(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LMConfig(**kwargs)


def test_a_language_model_s_heads():
    config = LMConfig(d_model=48, heads=6, kv_heads=2, position="alibi")
    assert (config.d_k, config.num_kv_heads) == (8, 2)
    assert LMConfig(d_model=12, heads=4, position="none").d_k == 3  # odd is fine without RoPE
    assert LMConfig().num_kv_heads == 4 and LMConfig.score == "dot" and LMConfig.scale


def test_the_language_model_recipes():
    assert LM_RECIPES["induction"].network == LMConfig()
    induction = LM_RECIPES["induction"].training
    assert (induction.epochs, induction.n_pairs, induction.learning_rate) == (100, 4096, 5e-3)
    assert (LM_TRAINING.epochs, LM_TRAINING.batch_size) == (30, 64)
    assert LM_RECIPES["text"].network == LMConfig() and LM_RECIPES["text"].training.n_pairs == 512
