"""Tests for learn/configs.py: the models' sizes and their training, checked on construction."""

import pytest

from attnviz.learn.configs import (
    TRANSFORMER_TRAINING,
    NetworkConfig,
    TrainConfig,
    TransformerConfig,
)
from attnviz.learn.recipes import RECIPES, TRANSFORMER_RECIPES, network_config, training_config


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
