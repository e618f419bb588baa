"""Hypothesis fuzzing of the public entry points: only results or ValueError, never a crash."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_support import examples

from attnviz import AttentionResult, compute_attention, encode_sentences

NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.integers(-(10**20), 10**20),
    st.just(1e300),
    st.booleans(),
)
JUNK = st.one_of(st.text(max_size=5), st.none(), st.just([]), st.just({}), st.just(object()))
CELLS = st.one_of(NUMBERS, NUMBERS, NUMBERS, JUNK)


def matrices():
    """Mostly well-formed small matrices, sometimes ragged, junk-filled, empty or 1-D/4-D."""
    rows = st.integers(0, 4)
    cols = st.integers(0, 4)
    regular = st.builds(
        lambda r, c, data: [[data.draw(CELLS) for _ in range(c)] for _ in range(r)],
        rows,
        cols,
        st.data(),
    )
    ragged = st.lists(st.lists(CELLS, max_size=4), max_size=4)
    batched = st.lists(
        st.lists(st.lists(NUMBERS, min_size=2, max_size=2), min_size=2, max_size=3),
        min_size=1,
        max_size=2,
    )
    return st.one_of(regular, regular, ragged, batched, JUNK, st.lists(NUMBERS, max_size=3))


SETTINGS = st.fixed_dictionaries(
    {
        "score": st.sampled_from(["dot", "general", "concat", "DOT", "", None]),
        "scale": st.sampled_from([True, False, "yes", 1]),
        "causal": st.sampled_from([True, False, None]),
        "window": st.one_of(st.none(), st.integers(-3, 5), st.just(1.5), st.just("2")),
        "mask_value": st.sampled_from(["-inf", "-1e9", "0", -1e9]),
        "key_padding_mask": st.one_of(
            st.none(), st.lists(st.booleans(), max_size=5), st.lists(st.integers(-1, 2), max_size=4)
        ),
        "seed": st.one_of(st.integers(-2, 2**33), st.just("0")),
    }
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(q=matrices(), k=matrices(), v=matrices(), options=SETTINGS)
def test_compute_attention_gives_a_result_or_a_value_error(q, k, v, options):
    try:
        result = compute_attention(q, k, v, **options)
    except ValueError as err:
        assert str(err)
        return
    assert isinstance(result, AttentionResult)
    assert np.isfinite(result.weights).all() and np.isfinite(result.output).all()


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(
    text=st.one_of(st.text(max_size=60), st.lists(st.text(max_size=20), max_size=4)),
    d_model=st.integers(-1, 20),
    d_k=st.integers(-1, 12),
    seed=st.integers(-1, 2**33),
)
def test_encode_then_attend_gives_a_result_or_a_value_error(text, d_model, d_k, seed):
    try:
        enc = encode_sentences(text, d_model=d_model, d_k=d_k, seed=seed)
        result = compute_attention(enc.query, enc.key, enc.value, key_padding_mask=enc.padding_mask)
    except ValueError as err:
        assert str(err)
        return
    b, t = enc.padding_mask.shape
    assert result.weights.shape == (b, t, t)
    assert np.isfinite(result.weights).all()
