"""Tests for transformer/encoder_layers.py: the learned token embedding and the encoder layer."""

import keras
import numpy as np

from attnviz.inputs.text import positional_encoding
from attnviz.transformer.encoder_layers import EncoderLayer, TokenAndPositionEmbedding
from attnviz.transformer.multihead import compute_multihead


def test_tokens_are_scaled_by_sqrt_d_and_positions_added():
    keras.utils.set_random_seed(1)
    layer = TokenAndPositionEmbedding(sequence_length=6, vocab_size=5, output_dim=4)
    tokens = np.array([[3, 1, 1, 0]])
    out = np.asarray(layer(tokens))  # (1, 4, 4)
    table = np.asarray(layer.token_embedding.embeddings)  # (5, 4), learned
    expected = table[tokens[0]] * 2.0 + positional_encoding(6, 4)[:4]
    np.testing.assert_allclose(out[0], expected, atol=1e-6)
    assert len(layer.trainable_weights) == 1  # the position table is fixed


def test_the_same_token_at_two_positions_differs_and_two_tokens_never_swap():
    # with both tables sinusoidal (the seed's PositionEmbeddingFixedWeights) token i at position
    # p equals token p at position i; the learned table breaks that symmetry
    keras.utils.set_random_seed(2)
    layer = TokenAndPositionEmbedding(sequence_length=4, vocab_size=4, output_dim=8)
    a = np.asarray(layer(np.array([[1, 2]])))[0]  # token 1 at 0, token 2 at 1
    b = np.asarray(layer(np.array([[2, 1]])))[0]  # token 2 at 0, token 1 at 1
    assert not np.allclose(a[0], b[1]) and not np.allclose(a, b)


def test_encoder_layer_heads_equal_compute_multihead_on_its_kernels():
    keras.utils.set_random_seed(3)
    layer = EncoderLayer(h=2, d_k=4, d_v=4, d_model=8, d_ff=16, rate=0.0)
    x = np.random.default_rng(0).normal(size=(1, 5, 8)).astype(np.float32)
    real = np.array([[True, True, True, False, False]])  # two padding keys
    mask = np.broadcast_to(real[:, None, :], (1, 5, 5))
    out, weights = layer(x, mask)
    assert out.shape == (1, 5, 8) and weights.shape == (1, 2, 5, 5)
    attention = layer.multihead_attention
    params = {
        name: np.transpose(np.asarray(dense.kernel), (1, 0, 2))
        for name, dense in (("W_Q", attention.query_dense), ("W_K", attention.key_dense),
                            ("W_V", attention.value_dense))
    }  # fmt: skip
    params["W_O"] = np.asarray(attention.output_dense.kernel).reshape(8, 8)
    ours = compute_multihead(x, x, x, num_heads=2, key_padding_mask=real, params=params)
    np.testing.assert_allclose(np.asarray(weights), ours.weights, atol=1e-6)
    assert (np.asarray(weights)[..., 3:] == 0).all()


def test_layers_round_trip_through_their_config():
    layer = EncoderLayer(h=2, d_k=4, d_v=4, d_model=8, d_ff=16, rate=0.1, name="enc")
    copy = EncoderLayer.from_config(layer.get_config())
    assert copy.sizes == layer.sizes and copy.rate == 0.1 and copy.name == "enc"
    emb = TokenAndPositionEmbedding(6, 5, 4)
    assert TokenAndPositionEmbedding.from_config(emb.get_config()).vocab_size == 5
