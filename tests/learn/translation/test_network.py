"""Tests for learn/translation/network.py: sizes counted by hand, attnviz's attention inside, the
mask, and the explicit builds (no trace of `call`, the same seeded weights as Keras's traced
build)."""

import keras
import numpy as np
import pytest
from build_support import assert_same_weights, keras_default_builds, refusing

from attnviz.core.attention import ScoredAttention
from attnviz.core.scoring import ConcatScore, DotScore, GeneralScore
from attnviz.learn.configs import NetworkConfig
from attnviz.learn.translation.network import Decoder, Encoder, build_networks
from attnviz.learn.translation.tasks import get_task
from attnviz.learn.translation.vocab import Vocabulary

pytestmark = pytest.mark.slow  # builds the GRU networks

VOCAB = Vocabulary.of(get_task("reverse"))  # 37 source ids, 39 target ids, S = 12, T = 13

# E = 4, U = 3 (D = 6), A = 5. Keras GRUs (reset_after) hold kernel (in, 3u), recurrent (u, 3u)
# and bias (2, 3u):
#   source embedding 37*4 = 148; encoder 2 * (4*9 + 3*9 + 2*9) = 162
#   target embedding 39*4 = 156; decoder 4*18 + 6*18 + 2*18 = 216
#   combine 12*5 + 5 = 65; logits 5*39 + 39 = 234                        -> 981 for dot
# general adds W (6, 6) = 36; concat adds W_q (6, 5), W_k (6, 5), v (5,) = 65.
COUNTS = {"dot": (981, DotScore), "general": (1017, GeneralScore), "concat": (1046, ConcatScore)}


@pytest.mark.parametrize("score", COUNTS)
def test_parameter_counts_and_attnviz_score_layers(score):
    keras.utils.set_random_seed(0)
    nets = build_networks(NetworkConfig(score, False, 4, 3, 5), VOCAB)
    assert nets.trainer.count_params() == COUNTS[score][0]
    assert isinstance(nets.decoder.attention, ScoredAttention)
    assert isinstance(nets.decoder.attention.scorer, COUNTS[score][1])


def test_padding_is_masked_and_zeroed():
    keras.utils.set_random_seed(0)
    nets = build_networks(NetworkConfig("dot", False, 4, 3, 5), VOCAB)
    source = VOCAB.encode_sources(["abc", "abcdefgh"])  # (2, 12)
    dec_in, _, _ = VOCAB.encode_targets(["cba", "hgfedcba"])  # (2, 13)
    enc, state = nets.encoder(source)
    logits, weights, dec = (np.asarray(x) for x in nets.decoder(dec_in, enc, state, source))
    assert logits.shape == (2, 13, 39) and weights.shape == (2, 13, 12) and dec.shape == (2, 13, 6)
    assert (np.asarray(enc)[0, 3:] == 0).all() and (weights[0, :, 3:] == 0).all()
    assert (weights[1, :, 8:] == 0).all() and (weights[1, :, :8] > 0).all()
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-6)


def test_padding_does_not_change_the_encoding():
    # The same text alone or beside a longer one: the masked GRUs give the same outputs.
    keras.utils.set_random_seed(0)
    nets = build_networks(NetworkConfig("dot", False, 4, 3, 5), VOCAB)
    alone = np.asarray(nets.encoder(VOCAB.encode_sources(["abc"]))[0])
    beside = np.asarray(nets.encoder(VOCAB.encode_sources(["abc", "abcdefghijkl"]))[0])
    np.testing.assert_allclose(alone[0], beside[0], atol=1e-6)


@pytest.mark.parametrize("score", COUNTS)
def test_explicit_builds_draw_the_seeded_weights_of_a_traced_build(score, monkeypatch):
    # The shipped checkpoints were trained from weights Keras drew while tracing `call`: the
    # explicit builds must create the same weights in the same order, so a seed still gives
    # them (and `python -m attnviz.learn.train_all` its records).
    config = NetworkConfig(score, False, 4, 3, 5)
    keras.utils.set_random_seed(7)
    built = build_networks(config, VOCAB).trainer.get_weights()
    keras_default_builds(monkeypatch, Encoder, Decoder, ScoredAttention)
    keras.utils.set_random_seed(7)
    traced = build_networks(config, VOCAB).trainer.get_weights()
    assert_same_weights(built, traced)


def test_networks_are_built_without_running_their_call(monkeypatch):
    monkeypatch.setattr(Encoder, "call", refusing(Encoder.call))
    monkeypatch.setattr(Decoder, "call", refusing(Decoder.call))
    nets = build_networks(NetworkConfig("concat", False, 4, 3, 5), VOCAB)  # no trace of call
    monkeypatch.undo()
    source = VOCAB.encode_sources(["abc", "abcdefgh"])  # (2, 12)
    dec_in, _, _ = VOCAB.encode_targets(["cba", "hgfedcba"])  # (2, 13)
    enc, state = nets.encoder(source)
    outputs = nets.decoder(dec_in, enc, state, source)
    # the symbolic shapes Keras took from compute_output_shape are the call's
    shapes = [tuple(x.shape) for x in (enc, state, *outputs)]
    assert shapes == [(2, 12, 6), (2, 6), (2, 13, 39), (2, 13, 12), (2, 13, 6)]
    assert nets.encoder.compute_output_shape((2, 12)) == ((2, 12, 6), (2, 6))
    assert nets.decoder.compute_output_shape((2, 13), (2, 12, 6), (2, 6), (2, 12)) == tuple(
        shapes[2:]
    )
    assert tuple(nets.trainer.outputs[0].shape) == (None, 13, 39)
