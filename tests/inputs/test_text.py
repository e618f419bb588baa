"""Tests for text: tokenizer, embeddings, positional encoding, projections, batches."""

import math
import os
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_support import examples

from attnviz.core import limits
from attnviz.inputs.text import (
    PAD_TOKEN,
    encode_sentences,
    positional_encoding,
    projection_weights,
    token_embedding,
    tokenize,
)

REPO = Path(__file__).parents[2]

TOKEN_CASES = [
    pytest.param(
        "Hello, world! How are you?",
        ["Hello", ",", "world", "!", "How", "are", "you", "?"],
        id="english",
    ),
    pytest.param(
        "I don't know, it’s fine.",
        ["I", "don't", "know", ",", "it’s", "fine", "."],
        id="contractions",
    ),
    pytest.param(
        "Pi is 3.14, not 1,000.5 or 42.",
        ["Pi", "is", "3.14", ",", "not", "1,000.5", "or", "42", "."],
        id="numbers",
    ),
    pytest.param("Wait...!?", ["Wait", ".", ".", ".", "!", "?"], id="ellipsis"),
    pytest.param(
        "snake_case state-of-art",
        ["snake_case", "state", "-", "of", "-", "art"],
        id="underscore_hyphen",
    ),
    pytest.param("नमस्ते दुनिया।", ["नमस्ते", "दुनिया", "।"], id="hindi"),
    pytest.param(
        unicodedata.normalize("NFD", "Tiếng Việt!"),
        ["Ti\u1ebfng", "Vi\u1ec7t", "!"],
        id="vietnamese_nfd",
    ),
    pytest.param(
        "\u200fمرحبا، بالعالم\u200f!", ["مرحبا", "،", "بالعالم", "!"], id="arabic_rtl_marks"
    ),
    pytest.param("שָׁלוֹם עוֹלָם", ["שָׁלוֹם", "עוֹלָם"], id="hebrew_niqqud"),
    pytest.param("می\u200cخواهم بروم", ["می\u200cخواهم", "بروم"], id="persian_zwnj"),
    pytest.param("我爱北京。", ["我", "爱", "北", "京", "。"], id="chinese"),
    pytest.param("東京タワーです！", ["東", "京", "タワーです", "！"], id="japanese"),
    pytest.param("👨‍👩‍👧 family", ["👨\u200d👩\u200d👧", "family"], id="emoji_zwj_family"),
    pytest.param("🧑🏽‍💻 codes", ["🧑🏽\u200d💻", "codes"], id="emoji_zwj_skin"),
    pytest.param("👍🏽 ❤️ 1️⃣", ["👍🏽", "❤\ufe0f", "1\ufe0f\u20e3"], id="emoji_modifiers"),
    pytest.param("hi👋🏽!", ["hi", "👋🏽", "!"], id="emoji_after_word"),
    pytest.param("🇫🇷🇩🇪 vs 🇯🇵", ["🇫🇷", "🇩🇪", "vs", "🇯🇵"], id="flags"),
    pytest.param("🏴󠁧󠁢󠁥󠁮󠁧󠁿 England", ["🏴󠁧󠁢󠁥󠁮󠁧󠁿", "England"], id="tag_flag"),
    pytest.param(
        "\ufeffzero\u200bwidth\tspace\x00\u202ex\u2066y",
        ["zero", "width", "space", "x", "y"],
        id="invisible",
    ),
    pytest.param(
        "<img src=x onerror=alert(1)>",
        ["<", "img", "src", "=", "x", "onerror", "=", "alert", "(", "1", ")", ">"],
        id="html",
    ),
    pytest.param(
        "<script>alert('hi')</script>",
        ["<", "script", ">", "alert", "(", "'", "hi", "'", ")", "<", "/", "script", ">"],
        id="script",
    ),
    pytest.param("a <pad> b", ["a", "<", "pad", ">", "b"], id="literal_pad"),
]


@pytest.mark.parametrize(("sentence", "expected"), TOKEN_CASES)
def test_tokenize_table(sentence, expected):
    assert tokenize(sentence) == expected


def test_tokenize_composes_decomposed_accents():
    decomposed = unicodedata.normalize("NFD", "Việt")
    assert len(decomposed) == 6
    [token] = tokenize(decomposed)
    assert token == "Vi\u1ec7t" and len(token) == 4


def test_typed_pad_never_becomes_the_pad_token():
    assert PAD_TOKEN not in tokenize("<pad><pad>")
    encoded = encode_sentences(["<pad>", "a b c d"])
    assert encoded.sentence_tokens(0) == ("<", "pad", ">")
    assert encoded.padding_mask[0].tolist() == [True, True, True, False]


def test_positional_encoding_pinned_values():
    pe = positional_encoding(3, 4)
    assert pe.dtype == np.float64 and pe.shape == (3, 4)
    np.testing.assert_array_equal(pe[0], [0.0, 1.0, 0.0, 1.0])
    np.testing.assert_allclose(pe[1, :2], [math.sin(1.0), math.cos(1.0)], rtol=0, atol=1e-15)
    # 10000^(2*1/4) = 100, so column pair i = 1 uses pos / 100.
    np.testing.assert_allclose(pe[2, 2:], [math.sin(0.02), math.cos(0.02)], rtol=0, atol=1e-15)


@pytest.mark.parametrize("d_model", [1, 5, 6], ids=["d1", "odd_d5", "even_d6"])
def test_positional_encoding_matches_formula(d_model):
    length = 7
    expected = np.empty((length, d_model))
    for pos in range(length):
        for col in range(d_model):
            angle = pos / 10000.0 ** (2 * (col // 2) / d_model)
            expected[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    np.testing.assert_allclose(positional_encoding(length, d_model), expected, rtol=0, atol=1e-12)


def test_token_embedding_pinned_and_repeatable():
    cat = token_embedding("cat", 4, seed=0)
    assert cat.shape == (4,) and cat.dtype == np.float64
    np.testing.assert_allclose(
        cat, [0.6247015066711447, 0.23726677080087147, 0.4780756967939614, 0.02470368738989985]
    )
    np.testing.assert_array_equal(cat, token_embedding("cat", 4, seed=0))
    assert not np.array_equal(cat, token_embedding("cat", 4, seed=1))
    assert not np.array_equal(cat, token_embedding("Cat", 4, seed=0))
    np.testing.assert_array_equal(token_embedding(PAD_TOKEN, 4, seed=3), np.zeros(4))


def test_embeddings_match_across_sentences_and_calls():
    encoded = encode_sentences(["the cat sat", "a cat"], d_model=6)
    np.testing.assert_array_equal(encoded.embeddings[0, 1], encoded.embeddings[1, 1])
    np.testing.assert_array_equal(encoded.embeddings[1, 1], token_embedding("cat", 6))
    again = encode_sentences(["the cat sat", "a cat"], d_model=6)
    np.testing.assert_array_equal(encoded.value, again.value)


def test_determinism_across_processes_without_tensorflow():
    # Imports the text module in a fresh process (the package __init__ is lazy) to check that it
    # needs only numpy and the standard library, and hashes the same whatever PYTHONHASHSEED is.
    token, text = "नमस्ते", "Bonjour 🇫🇷!\nnot yet"
    code = textwrap.dedent(f"""
        import sys
        from attnviz.inputs.text import encode_sentences, token_embedding
        print(token_embedding({ascii(token)}, 3, seed=7).tobytes().hex())
        print(encode_sentences({ascii(text)}, d_model=5).query.tobytes().hex())
        heavy = ("tensorflow", "keras", "streamlit")
        print(sorted(name for name in sys.modules if name.split(".")[0] in heavy))
    """)
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    embedding_hex, query_hex, heavy = run.stdout.splitlines()
    assert embedding_hex == token_embedding(token, 3, seed=7).tobytes().hex()
    assert query_hex == encode_sentences(text, d_model=5).query.tobytes().hex()
    assert heavy == "[]"


def test_batch_padding_shapes_and_mask():
    encoded = encode_sentences(["One.", "Two words here", "Three tokens !"], d_model=6, d_k=4)
    assert encoded.tokens == (
        ("One", ".", PAD_TOKEN),
        ("Two", "words", "here"),
        ("Three", "tokens", "!"),
    )
    assert encoded.lengths.tolist() == [2, 3, 3] and encoded.lengths.dtype == np.int64
    assert encoded.padding_mask.tolist() == [[True, True, False], [True] * 3, [True] * 3]
    assert encoded.embeddings.shape == encoded.inputs.shape == (3, 3, 6)
    assert encoded.positional.shape == (3, 6)
    assert encoded.query.shape == encoded.key.shape == encoded.value.shape == (3, 3, 4)
    np.testing.assert_array_equal(encoded.embeddings[0, 2], np.zeros(6))
    # Padded positions still carry the positional encoding, as in a real Transformer.
    np.testing.assert_array_equal(encoded.inputs[0, 2], positional_encoding(3, 6)[2])
    assert encoded.sentence_tokens(0) == ("One", ".")


def test_unequal_batch_of_three_and_pad_to():
    encoded = encode_sentences(["a", "b c", "d e f g"], pad_to=6)
    assert encoded.lengths.tolist() == [1, 2, 4]
    assert encoded.padding_mask.sum(axis=1).tolist() == [1, 2, 4]
    assert all(len(row) == 6 for row in encoded.tokens)
    assert encoded.tokens[1][2:] == (PAD_TOKEN,) * 4
    assert encoded.query.shape == (3, 6, 8)


def test_string_input_is_split_on_lines_and_blank_lines_skipped():
    encoded = encode_sentences("First line.\r\n\n   \nSecond line")
    assert encoded.sentences == ("First line.", "Second line")
    assert encoded.tokens[1] == ("Second", "line", PAD_TOKEN)


def test_qkv_are_float64_projections_of_inputs():
    encoded = encode_sentences(["The cat sat.", "Dogs run"], d_model=8, d_k=3, d_v=5, seed=4)
    params = projection_weights(8, 3, 5, 4)
    for name in ("W_Q", "W_K", "W_V"):
        np.testing.assert_array_equal(encoded.params[name], params[name])
    np.testing.assert_allclose(encoded.inputs, encoded.embeddings + encoded.positional)
    np.testing.assert_allclose(encoded.query, encoded.inputs @ params["W_Q"], rtol=1e-12)
    np.testing.assert_allclose(encoded.key, encoded.inputs @ params["W_K"], rtol=1e-12)
    np.testing.assert_allclose(encoded.value, encoded.inputs @ params["W_V"], rtol=1e-12)
    assert encoded.query.dtype == encoded.value.dtype == np.float64
    assert encoded.value.shape == (2, 4, 5)
    assert (encoded.d_model, encoded.d_k, encoded.d_v, encoded.seed) == (8, 3, 5, 4)


def test_projection_weights_are_seeded_and_scaled():
    params = projection_weights(2, 1, 1, 0)
    np.testing.assert_allclose(params["W_Q"], [[0.5347440931797937], [0.18072580453678566]])
    big = projection_weights(400, 50, 60, 1)
    assert {name: w.shape for name, w in big.items()} == {
        "W_Q": (400, 50),
        "W_K": (400, 50),
        "W_V": (400, 60),
    }
    assert abs(big["W_Q"].std() * math.sqrt(400) - 1) < 0.05
    # Each matrix has its own stream: changing d_v leaves W_Q unchanged.
    np.testing.assert_array_equal(big["W_Q"], projection_weights(400, 50, 7, 1)["W_Q"])
    assert not np.array_equal(big["W_Q"], projection_weights(400, 50, 60, 2)["W_Q"])


def test_d_v_defaults_to_d_k():
    encoded = encode_sentences("hi there", d_model=4, d_k=3)
    assert encoded.d_v == 3 and encoded.value.shape == (1, 2, 3)


def test_positional_switch():
    on = encode_sentences("a a a", d_model=4)
    off = encode_sentences("a a a", d_model=4, positional=False)
    assert on.use_positional and not off.use_positional
    np.testing.assert_array_equal(off.positional, np.zeros((3, 4)))
    np.testing.assert_array_equal(off.inputs, off.embeddings)
    # Without positions, repeated tokens are indistinguishable; with them they differ.
    np.testing.assert_array_equal(off.query[0, 0], off.query[0, 2])
    assert not np.array_equal(on.query[0, 0], on.query[0, 2])


def test_cross_attention_source_and_target_share_weights():
    source = encode_sentences("The black cat sleeps.", d_model=8, d_k=4, seed=11)
    target = encode_sentences("Le chat noir dort .\nIl rêve", d_model=8, d_k=4, seed=11)
    for name in ("W_Q", "W_K", "W_V"):
        np.testing.assert_array_equal(source.params[name], target.params[name])
    np.testing.assert_allclose(target.query, target.inputs @ source.params["W_Q"], rtol=1e-12)
    scores = target.query @ source.key[0].T  # (2, 5, 4) x (4, 5) -> (2, 5, 5)
    assert scores.shape == (2, 5, 5) and np.all(np.isfinite(scores))
    other = encode_sentences("The black cat sleeps.", d_model=8, d_k=4, seed=12)
    assert not np.array_equal(source.params["W_K"], other.params["W_K"])


def test_result_arrays_are_read_only():
    encoded = encode_sentences("read only")
    with pytest.raises(ValueError, match="read-only"):
        encoded.query[0, 0, 0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        encoded.params["W_Q"][0, 0] = 1.0


TOO_MANY_CELLS = (["a"] * 2, {"d_model": 1024, "pad_to": 4096, "max_cells": 2**22})  # a page's

ERROR_CASES = [
    pytest.param(lambda: tokenize(5), "The sentence must be text", id="not_text"),
    pytest.param(
        lambda: tokenize("x" * 20_001), "20001 characters; at most 20000 are allowed", id="too_long"
    ),
    pytest.param(
        lambda: tokenize(" \u200b\u200f\n"),
        "The sentence has no words or punctuation",
        id="only_invisible",
    ),
    pytest.param(
        lambda: encode_sentences(["a", "a " * 4097], max_tokens=4096),  # as a page passes it
        "Sentence 2 has 4097 tokens; at most 4096 are allowed",
        id="too_many_tokens",
    ),
    pytest.param(
        lambda: encode_sentences(["ok", "\u200b"]),
        "Sentence 2 has no words or punctuation",
        id="empty_in_batch",
    ),
    pytest.param(
        lambda: encode_sentences(["ok", None]), "Sentence 2 must be text", id="item_not_text"
    ),
    pytest.param(
        lambda: encode_sentences(["a"] * 65), "received 65, at most 64", id="too_many_sentences"
    ),
    pytest.param(
        lambda: encode_sentences(" \n\n "), "The text holds no sentence", id="empty_string"
    ),
    pytest.param(lambda: encode_sentences([]), "The text holds no sentence", id="empty_list"),
    pytest.param(
        lambda: encode_sentences(42),
        "`sentences` must be a str .* or a list of str",
        id="not_sentences",
    ),
    pytest.param(lambda: encode_sentences(b"hi"), "`sentences` must be a str", id="bytes"),
    pytest.param(
        lambda: encode_sentences("a", d_model=0),
        "`d_model` must be 1 or more. Received: 0",
        id="d_model_zero",
    ),
    pytest.param(
        lambda: encode_sentences("a", d_k=2**28 + 1),
        "`d_k` is too large to hold in memory",
        id="d_k_big",
    ),
    pytest.param(
        lambda: encode_sentences("a", d_v=2.5), "`d_v` must be a whole number", id="d_v_float"
    ),
    pytest.param(
        lambda: encode_sentences("a", seed=-1),
        "`seed` must be from 0 to 4294967295",
        id="seed_negative",
    ),
    pytest.param(
        lambda: encode_sentences("a", positional="yes"),
        "`positional` must be True or False",
        id="positional_str",
    ),
    pytest.param(
        lambda: encode_sentences("a b c", pad_to=2),
        r"at least the longest sentence's token count \(3\)",
        id="pad_to_short",
    ),
    pytest.param(
        lambda: encode_sentences("a", pad_to=2**28 + 1),
        "`pad_to` is too large to hold in memory",
        id="pad_to_big",
    ),
    pytest.param(
        lambda: encode_sentences(TOO_MANY_CELLS[0], **TOO_MANY_CELLS[1]),
        "2 sentences × 4096 tokens × 1024 features",
        id="too_many_cells",
    ),
    pytest.param(
        lambda: encode_sentences("a", d_model=2**15, d_k=1, pad_to=2**14),  # checked before padding
        "1 sentences × 16384 tokens × 32768 features = 536870912 numbers per array; at most "
        "268435456 are allowed",
        id="past_memory",
    ),
    pytest.param(lambda: token_embedding(3, 4), "`token` must be text", id="token_not_text"),
    pytest.param(
        lambda: token_embedding("a", 0), "`d_model` must be 1 or more", id="embedding_d_model"
    ),
    pytest.param(lambda: positional_encoding(0, 4), "`length` must be 1 or more", id="pe_length"),
    pytest.param(
        lambda: projection_weights(4, 2, 2, True),
        "`seed` must be a whole number",
        id="weights_seed",
    ),
    pytest.param(
        lambda: encode_sentences("a\nb").sentence_tokens(2),
        "`index` must be from 0 to 1",
        id="sentence_index",
    ),
]


@pytest.mark.parametrize(("call", "message"), ERROR_CASES)
def test_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_limits_are_the_shared_ones():
    assert limits.MAX_SENTENCE_CHARS == 20_000 and limits.APP_MAX_TOKENS == 4096
    assert limits.MAX_SENTENCES == 64 and limits.APP_MAX_FEATURES == 1024


def test_without_a_pages_limits_sentences_take_any_number_of_tokens_and_features():
    assert len(tokenize("a " * 5000)) == 5000  # more than a page's 4096
    encoded = encode_sentences(["a " * 5000, "b"], d_model=2, d_k=2)
    assert encoded.query.shape == (2, 5000, 2) and encoded.lengths.tolist() == [5000, 1]
    wide = encode_sentences("a b", d_model=4, d_k=2048)  # 2048 > a page's 1024
    assert wide.query.shape == (1, 2, 2048) and wide.params["W_Q"].shape == (4, 2048)
    assert positional_encoding(5000, 2).shape == (5000, 2)


any_text = st.text(st.characters(exclude_categories=()), max_size=30)  # surrogates included


@settings(max_examples=examples(150), deadline=None)
@given(st.one_of(any_text, st.lists(any_text, min_size=1, max_size=4)))
def test_any_text_encodes_or_raises_value_error(sentences):
    try:
        encoded = encode_sentences(sentences, d_model=5, d_k=3, d_v=2)
    except ValueError:
        return
    batch, length = encoded.padding_mask.shape
    assert len(encoded.tokens) == len(encoded.sentences) == batch
    assert all(len(row) == length for row in encoded.tokens)
    assert encoded.padding_mask.sum(axis=1).tolist() == encoded.lengths.tolist()
    for row, mask in zip(encoded.tokens, encoded.padding_mask, strict=True):
        assert [token == PAD_TOKEN for token in row] == [not real for real in mask]
        assert all(token for token in row)
    assert encoded.inputs.shape == encoded.embeddings.shape == (batch, length, 5)
    assert encoded.query.shape == encoded.key.shape == (batch, length, 3)
    assert encoded.value.shape == (batch, length, 2)
    for array in (encoded.inputs, encoded.query, encoded.key, encoded.value):
        assert np.all(np.isfinite(array))
