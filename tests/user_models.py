"""Tiny models of your own, written into a temporary folder for `attnviz view` (a test support
module: tests/ is on pytest's pythonpath). Nothing is downloaded.

- `gpt2_preset`: a keras-hub GPT-2 (2 layers × 2 heads, 8 features) with a GPT-2 tokenizer of
  a 40-token byte-level vocabulary and a few merges, saved with `save_to_preset`.
- `llama_preset`: a keras-hub Llama (2 layers, 4 query heads sharing 2 key/value heads, RoPE)
  with a Llama tokenizer from a SentencePiece model trained here on a few sentences.
- `mha_keras_file`: a Keras model (token embedding, one `MultiHeadAttention`, a dense layer)
  saved as a `.keras` file, with no tokenizer (it takes token ids).

Random weights from fixed seeds, so the weights are small and nearly even; the tests compare
them with independent computations, not with pinned pictures.
"""

from __future__ import annotations

import io
from pathlib import Path

GPT2_TEXT = "the cat sat on the mat"
GPT2_MERGES = ["t h", "th e", "Ġ c", "a t", "Ġc at", "Ġ s", "Ġs at", "Ġ m", "Ġm at", "Ġ the"]
LLAMA_SENTENCES = [
    "the cat sat on the mat",
    "a dog ran to the park",
    "attention is all you need",
    "the quick brown fox jumps over the lazy dog",
]
MHA_VOCABULARY, MHA_HEADS, MHA_KEY_DIM = 50, 3, 4


def gpt2_vocabulary() -> dict[str, int]:
    """`<|endoftext|>`, the letters, a few signs, "Ġ" (a space) and every merge's result."""
    vocabulary = {"<|endoftext|>": 0}
    for piece in [*"abcdefghijklmnopqrstuvwxyz.,!?", "Ġ"]:
        vocabulary.setdefault(piece, len(vocabulary))
    for merge in GPT2_MERGES:
        vocabulary.setdefault(merge.replace(" ", ""), len(vocabulary))
    return vocabulary


def gpt2_preset(folder: Path) -> Path:
    """A tiny GPT-2 preset (backbone and tokenizer) in `folder`; returns the folder."""
    import keras
    import keras_hub

    keras.utils.set_random_seed(1)
    tokenizer = keras_hub.models.GPT2Tokenizer(vocabulary=gpt2_vocabulary(), merges=GPT2_MERGES)
    backbone = keras_hub.models.GPT2Backbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=2, num_heads=2, hidden_dim=8,
        intermediate_dim=16, max_sequence_length=64,
    )  # fmt: skip
    backbone.save_to_preset(str(folder))
    tokenizer.save_to_preset(str(folder))
    return folder


def sentencepiece_model() -> bytes:
    """A 40-piece SentencePiece model trained on `LLAMA_SENTENCES` (unk 0, <s> 1, </s> 2)."""
    import sentencepiece

    written = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(LLAMA_SENTENCES), model_writer=written, vocab_size=40,
        model_type="bpe", character_coverage=1.0, unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
        hard_vocab_limit=False, minloglevel=2,
    )  # fmt: skip
    return written.getvalue()


def llama_preset(folder: Path) -> Path:
    """A tiny Llama preset (backbone and tokenizer) in `folder`; returns the folder."""
    import keras
    import keras_hub

    keras.utils.set_random_seed(2)
    tokenizer = keras_hub.models.LlamaTokenizer(proto=sentencepiece_model())
    backbone = keras_hub.models.LlamaBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=2, num_query_heads=4,
        num_key_value_heads=2, hidden_dim=16, intermediate_dim=32,
    )  # fmt: skip
    backbone.save_to_preset(str(folder))
    tokenizer.save_to_preset(str(folder))
    return folder


def mha_model():
    """Token ids → embedding → one self-attention `MultiHeadAttention` → dense."""
    import keras

    keras.utils.set_random_seed(3)
    ids = keras.Input((None,), dtype="int32", name="ids")
    x = keras.layers.Embedding(MHA_VOCABULARY, 12, name="embedding")(ids)
    x = x + keras.layers.MultiHeadAttention(MHA_HEADS, MHA_KEY_DIM, name="attention")(x, x)
    return keras.Model(ids, keras.layers.Dense(6, name="head")(x), name="tiny_mha")


def mha_keras_file(path: Path) -> Path:
    """`mha_model` saved as the `.keras` file `path`; returns the path."""
    mha_model().save(path)
    return path
