"""Tests for heads/user_model.py, heads/model_text.py and heads/text_run.py: your own model
loaded from a keras-hub preset folder or a `.keras` file, text made into its inputs, its run
stacked for the model view, and a causal LM's next token.

The models are tiny, with random weights, written into a temporary folder by `user_models`
(GPT-2 and Llama presets with small tokenizers built here, a `.keras` MultiHeadAttention model).
"""

from __future__ import annotations

import dataclasses
import importlib

import keras
import numpy as np
import pytest
from inspection_support import inspected
from user_models import (
    GPT2_TEXT,
    MHA_HEADS,
    MHA_VOCABULARY,
    gpt2_preset,
    gpt2_vocabulary,
    llama_preset,
    mha_keras_file,
)

from attnviz.core import limits
from attnviz.heads import user_model
from attnviz.heads.model_text import DEFAULT_SENTENCE, default_text, next_tokens, text_inputs
from attnviz.heads.text_run import run_text
from attnviz.heads.user_model import load_model, looks_like_path

pytestmark = pytest.mark.slow  # builds Keras models from presets

GPT2_TOKENS = ("<|endoftext|>", "the", "Ġcat", "Ġsat", "Ġ", "o", "n", "Ġthe", "Ġmat")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {
        "gpt2": gpt2_preset(root / "gpt2"),
        "llama": llama_preset(root / "llama"),
        "keras": mha_keras_file(root / "tiny.keras"),
    }


@pytest.fixture(scope="module")
def gpt2(folders):
    return load_model(folders["gpt2"])


@pytest.fixture(scope="module")
def llama(folders):
    return load_model(str(folders["llama"]))


@pytest.fixture(scope="module")
def mha(folders):
    return load_model(folders["keras"])


def test_a_gpt2_preset_loads_as_its_causal_lm_with_its_tokenizer(gpt2, folders):
    assert type(gpt2.model).__name__ == "GPT2CausalLM" and gpt2.causal_lm
    assert type(gpt2.tokenizer).__name__ == "GPT2Tokenizer"
    assert gpt2.vocabulary_size == gpt2.tokenizer.vocabulary_size() == 42
    assert gpt2.max_tokens == 64  # its position embedding's length
    assert gpt2.source == str(folders["gpt2"].resolve())
    assert gpt2.description.startswith("GPT2CausalLM (") and gpt2.name == "GPT2CausalLM"
    assert "tokenized by its GPT2Tokenizer" in gpt2.description


def test_a_keras_file_loads_without_a_tokenizer(mha, folders):
    assert isinstance(mha.model, keras.Model) and mha.model.name == "tiny_mha"
    assert (mha.tokenizer, mha.causal_lm, mha.max_tokens) == (None, False, None)
    assert mha.vocabulary_size == MHA_VOCABULARY  # from its Embedding layer
    assert "no tokenizer: type token ids" in mha.description
    # its own name, not Keras's class "Functional" (which says nothing of the model)
    assert mha.name == "tiny_mha" and mha.description.startswith("tiny_mha (a Keras Functional")


def test_text_is_tokenized_with_the_start_token_first(gpt2, llama):
    made = text_inputs(gpt2, GPT2_TEXT)
    assert made.tokens == GPT2_TOKENS  # BPE by hand: t h → th, th e → the, Ġ c, a t, Ġc at, ...
    assert made.token_ids == tuple(gpt2_vocabulary()[t] for t in GPT2_TOKENS)
    assert set(made.inputs) == {"token_ids", "padding_mask"}
    assert made.inputs["token_ids"].tolist() == [list(made.token_ids)]
    assert made.inputs["padding_mask"].tolist() == [[1] * 9]
    assert made.notes == (
        "Added as keras-hub's preprocessor adds them: <|endoftext|>.",
        "Ġ marks a token that starts with a space (GPT-2's byte-level tokenizer).",
    )
    llama_made = text_inputs(llama, "the cat")
    assert llama_made.tokens[0] == "<s>" and llama_made.token_ids[0] == 1
    assert llama_made.tokens[1] == "▁the"  # SentencePiece's word mark, said once
    assert llama_made.notes[-1] == "▁ marks a token that starts a word (SentencePiece)."


def test_text_the_tokenizer_cannot_hold_is_said(gpt2):
    made = text_inputs(gpt2, "The CAT")  # no capitals in the vocabulary: dropped
    assert made.tokens == ("<|endoftext|>", "h", "e", "Ġ")
    assert "These tokens give back “he ”" in made.notes[-1]
    with pytest.raises(ValueError, match="The tokenizer made no tokens of this text"):
        text_inputs(gpt2, "XYZ")


@pytest.mark.parametrize(
    ("typed", "ids"),
    [("3 5 7", (3, 5, 7)), ("3, 5,7", (3, 5, 7)), (" 0\n49 ", (0, 49))],
    ids=["spaces", "commas", "lines"],
)
def test_a_model_without_tokenizer_takes_typed_ids(mha, typed, ids):
    made = text_inputs(mha, typed)
    assert made.token_ids == ids and made.tokens == tuple(map(str, ids))
    assert made.inputs.dtype == np.int32 and made.inputs.tolist() == [list(ids)]


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("", "Token ids to run the model on are missing"),
        ("3 x 5", r"whole numbers from 0 to 49, separated by spaces or commas. Received: 'x'"),
        ("3 -1", r"Received: '-1'"),
        ("3 50", r"below the vocabulary size 50: from 0 to 49. Received: 50"),
        (" ".join(["1"] * (limits.MAX_VIEW_TOKENS + 1)), "makes 257 tokens; at most 256 are"),
        ("1" * (limits.MAX_SENTENCE_CHARS + 1), "characters; at most 20,000"),
    ],
    ids=["empty", "word", "negative", "too-big", "too-many", "too-long"],
)
def test_bad_ids_are_refused_with_what_is_allowed(mha, typed, message):
    with pytest.raises(ValueError, match=message):
        text_inputs(mha, typed)


def test_a_text_longer_than_the_models_positions_is_refused(gpt2):
    with pytest.raises(ValueError, match="makes 65 tokens; at most 64 the model has positions"):
        text_inputs(gpt2, "a" * 64)


def test_next_token_is_the_softmax_of_the_causal_lms_own_last_logits(gpt2):
    made = text_inputs(gpt2, GPT2_TEXT)
    logits = np.asarray(gpt2.model(made.inputs), dtype=np.float64)[0, -1]  # (V,) a plain call
    expected = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    predicted = next_tokens(gpt2, inspected(gpt2.model, made.inputs).outputs)
    assert len(predicted) == 5
    order = np.argsort(-expected, kind="stable")[:5]
    assert [p.token_id for p in predicted] == order.tolist()
    assert np.allclose([p.probability for p in predicted], expected[order], atol=1e-6)
    tokens = {i: token for token, i in gpt2_vocabulary().items()}
    assert [p.token for p in predicted] == [tokens[i] for i in order]
    with pytest.raises(ValueError, match="needs a causal LM's logits"):
        next_tokens(gpt2, logits)


def test_a_run_stacks_the_self_attention_and_keeps_no_outputs(gpt2, mha):
    run = run_text(gpt2, GPT2_TEXT)
    assert list(run.stacks) == ["self"] and run.skipped == ()
    stack = run.stacks["self"]
    assert stack.weights.shape == (2, 2, 9, 9)
    backbone = gpt2.model.backbone.name  # "gpt2_backbone", or "_1"... after another in this process
    assert backbone.startswith("gpt2_backbone")
    assert stack.keys == tuple(f"{backbone}/transformer_layer_{i}/self_attention"
                               for i in range(2))  # fmt: skip
    future = ~np.tri(9, dtype=bool)  # causal: the keys after each query are masked
    assert (stack.blocked == future).all()
    assert np.allclose(stack.weights.sum(-1), 1, atol=1e-6)
    assert run.inspection.outputs is None and len(run.next) == 5
    plain = run_text(mha, "1 2 3 4")
    assert plain.stacks["self"].weights.shape == (1, MHA_HEADS, 4, 4)
    assert plain.stacks["self"].blocked is None and plain.next == ()  # nothing masked
    assert set(run.positions) == set(plain.positions) == {"self"}


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("/no/such/model.keras", r"No such file or folder: '/no/such/model.keras'"),
        ("./missing", r"No such file or folder"),
        ("", r"`source` must be a .keras file"),
    ],
    ids=["file", "folder", "empty"],
)
def test_missing_sources_are_refused(source, message):
    with pytest.raises(ValueError, match=message):
        load_model(source)


def test_files_and_folders_that_are_no_model_are_refused(tmp_path):
    (tmp_path / "weights.h5").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="is not a .keras file. attnviz opens"):
        load_model(tmp_path / "weights.h5")
    with pytest.raises(ValueError, match="is not a keras-hub preset: it has no config.json"):
        load_model(tmp_path)
    (tmp_path / "broken.keras").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="Keras could not load .*safe_mode=True"):
        load_model(tmp_path / "broken.keras")


def test_a_keras_file_holding_python_code_is_refused(tmp_path):
    ids = keras.Input((4,))
    model = keras.Model(ids, keras.layers.Lambda(lambda x: x * 2)(ids))
    model.save(tmp_path / "code.keras")
    with pytest.raises(ValueError, match="Lambda layers holding Python code are refused"):
        load_model(tmp_path / "code.keras")


def test_presets_without_keras_hub_say_how_to_install_it(monkeypatch, folders):
    real = importlib.import_module

    def without_hub(name, *args):
        if name.startswith("keras_hub"):
            raise ImportError("No module named 'keras_hub'")
        return real(name, *args)

    monkeypatch.setattr(user_model.importlib, "import_module", without_hub)
    with pytest.raises(ValueError, match=r'pip install "attnviz\[hub\]"'):
        load_model(folders["gpt2"])


@pytest.mark.parametrize(
    ("text", "path"),
    [("gpt2_base_en", False), ("hf://user/model", False), ("kaggle://a/b/c", False),
     ("model.keras", True), ("./preset", True), ("~/preset", True), ("dir/preset", True)],
)  # fmt: skip
def test_preset_names_and_paths_are_told_apart(text, path):
    assert looks_like_path(text) is path


@pytest.mark.parametrize(("name", "scaled"), [("gpt2", False), ("llama", True)])
def test_every_head_opens_in_the_explorer_with_its_own_weights(request, name, scaled):
    # GPT-2's layer scales Q before Q·Kᵀ; Llama's divides the scores (after RoPE) by √Dk.
    from attnviz.core.attention import compute_attention
    from attnviz.heads.head_inputs import head_inputs

    run = run_text(request.getfixturevalue(name), GPT2_TEXT)
    for key in run.stacks["self"].keys:
        call = run.inspection[key]
        for head in range(call.weights.shape[1]):
            opened = head_inputs(call, head)
            assert (opened.scale, opened.causal, opened.reproduced) == (scaled, True, True)
            explorer = compute_attention(opened.query, opened.key, opened.value,
                                         scale=opened.scale, causal=opened.causal)  # fmt: skip
            assert np.allclose(explorer.weights, call.weights[0, head], atol=1e-5)


def test_the_opening_text_fits_the_models_positions(gpt2, mha):
    # a model with few positions opens on the words it has positions for, not on an error
    assert default_text(gpt2) == DEFAULT_SENTENCE  # 64 positions: the whole sentence
    small = dataclasses.replace(gpt2, max_tokens=8)
    text = default_text(small)
    words = text.split()
    assert DEFAULT_SENTENCE.startswith(text) and 1 <= len(words) < len(DEFAULT_SENTENCE.split())
    assert len(text_inputs(small, text).token_ids) <= 8
    one_more = " ".join(DEFAULT_SENTENCE.split()[: len(words) + 1])
    with pytest.raises(ValueError, match="at most 8 the model has positions for"):
        text_inputs(small, one_more)
    assert default_text(mha) == "1 2 3 4 5 6 7"  # no tokenizer: token ids
    assert default_text(dataclasses.replace(mha, max_tokens=3)) == "1 2 3"
