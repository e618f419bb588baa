"""Tests for heads/positions: ALiBi's slopes pinned, and which layers each reader recognises.

The keras-hub families (RoPE, ALiBi, T5 buckets, Swin's table, DeBERTa, XLNet...) are read in
test_inspection_hub.py; here small Keras layers exercise each reader's rule.
"""

from __future__ import annotations

import keras
import pytest

from attnviz.core.positions import alibi_slopes
from attnviz.heads.positions import NONE, position_scheme


@pytest.mark.parametrize(
    ("heads", "max_bias", "slopes"),
    [
        (1, 8, (2**-8,)),
        (2, 8, (2**-4, 2**-8)),
        (4, 8, (2**-2, 2**-4, 2**-6, 2**-8)),
        (3, 8, (2**-4, 2**-8, 2**-2)),  # 2 heads' slopes, then every other one of 4 heads'
        (4, 16, (2**-4, 2**-8, 2**-12, 2**-16)),  # keras_hub's alibi_bias_max=16
        (3, 16, (2**-8, 2**-16, 2**-4)),
    ],
    ids=["1", "2", "4", "3", "4-max16", "3-max16"],
)
def test_alibi_slopes_follow_the_paper_for_any_largest_bias(heads, max_bias, slopes):
    # the paper's get_slopes: 2^(-max_bias/n) to the powers 1 … n for n a power of two
    assert tuple(alibi_slopes(heads, max_bias=max_bias)) == pytest.approx(slopes, rel=1e-15)


class Rotary(keras.layers.Layer):
    """Stands for a rotary-embedding sublayer (found by its class name)."""

    def __init__(self, max_wavelength=500.0, **kwargs):
        super().__init__(**kwargs)
        self.max_wavelength = max_wavelength


class WithRope(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.rotary_embedding_layer = Rotary()
        self.partial_rotary_factor = 0.5


class WithoutRope(WithRope):
    use_rope = False  # SmolLM3's "NoPE" layers


class GivenAlibi(keras.layers.Layer):
    num_heads = 4

    def call(self, x, alibi):
        return x


class AlibiBias(keras.layers.Layer):
    """Stands for keras_hub's ALiBi sublayer (found by its class name), with its largest bias."""

    alibi_bias_max = 16


class WithAlibiSublayer(keras.layers.Layer):
    num_heads = 4

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.alibi = AlibiBias()


class T5Like(keras.layers.Layer):
    relative_attention_buckets, relative_attention_max_distance, is_decoder = 32, 128, True


def test_readers_recognise_their_families():
    rope = position_scheme(WithRope())
    assert (rope.name, rope.applied) == ("rope", "qk")
    assert rope.details == {"max_wavelength": 500.0, "rotary_fraction": 0.5}
    assert "max wavelength 500" in rope.text and "50%" in rope.text
    assert position_scheme(WithoutRope()) is NONE
    alibi = position_scheme(GivenAlibi())
    assert alibi.name == "alibi" and alibi.details["slopes"] == pytest.approx(alibi_slopes(4))
    assert isinstance(alibi.details["slopes"], tuple)  # plain floats, not an array
    sublayer = position_scheme(WithAlibiSublayer())  # the layer's own largest bias is used
    assert sublayer.details["slopes"] == pytest.approx((2**-4, 2**-8, 2**-12, 2**-16))
    assert sublayer.details["alibi_bias_max"] == 16
    t5 = position_scheme(T5Like())
    assert (t5.name, t5.applied, t5.details["bidirectional"]) == ("t5-buckets", "scores", False)
    assert position_scheme(keras.layers.MultiHeadAttention(2, 4)) is NONE
