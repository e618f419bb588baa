"""Sentences → tokens → queries, keys and values.

`encode_sentences` is the text front door of attnviz: it splits sentences into tokens, gives each
token a deterministic embedding, adds the sinusoidal positional encoding of "Attention Is All You
Need" (Vaswani et al., 2017) and projects the result with seeded weights W_Q, W_K and W_V. A batch
is padded to its longest sentence with `PAD_TOKEN` and comes with the matching padding mask.

Shape letters: B sentences in the batch, T tokens per sentence after padding, D model features
(`d_model`), Dk query/key features (`d_k`), Dv value features (`d_v`).

Tokenizer rules (`tokenize`):
- Text is NFC-normalised first, so decomposed accents become single characters.
- A word is a run of letters, digits, combining marks and connector punctuation (`_`). An
  apostrophe (' or ’) between two word characters stays inside the word ("don't"), and so does a
  `.` or `,` between two digits ("3.14", "1,000"). A zero-width (non-)joiner between two word
  characters stays too, as Indic and Persian spelling needs it.
- Each Chinese/Japanese ideograph (Han character) is a token of its own, as in BERT's tokenizer,
  because those scripts write no spaces; kana, Thai and other unspaced scripts stay in runs.
- Every other punctuation mark or symbol is a token of its own. Emoji stay whole: variation
  selectors, skin tones, keycaps, tag sequences, zero-width-joiner sequences (👨‍👩‍👧) and flag pairs
  (🇫🇷) are one token. Combining marks never leave the character before them.
- Whitespace, control characters and invisible format characters (zero-width space, BOM, bidi
  marks and embeddings) separate tokens and are dropped. Nothing is interpreted: HTML is just
  `<`, `img`, ... and a typed "<pad>" becomes `<`, `pad`, `>`, so it never equals `PAD_TOKEN`.

Padding: the pad token's embedding is zero, but the positional encoding is still added at padded
positions, as in a real Transformer. So padded rows of `inputs`, `query`, `key` and `value` are
not zero: use `padding_mask` to keep them out of attention.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attnviz.core import limits
from attnviz.core.checks import check_array_cells, check_int, check_size, describe
from attnviz.core.seeding import check_seed, seeded_rng

PAD_TOKEN = "<pad>"

_WORD, _HAN, _SYMBOL, _SEPARATOR = "word", "han", "symbol", "separator"
_APOSTROPHES = frozenset("'\u2019")
_DECIMAL_POINTS = frozenset(".,")
_JOINERS = frozenset("\u200c\u200d")  # zero-width non-joiner, zero-width joiner
_ZWJ = "\u200d"
_SKIN_TONES = range(0x1F3FB, 0x1F400)  # emoji modifiers (category Sk)
_EMOJI_TAGS = range(0xE0020, 0xE0080)  # tag characters of subdivision flags (category Cf)
_REGIONAL_INDICATORS = range(0x1F1E6, 0x1F200)  # two of them make one flag
_EMOJI_CATEGORIES = ("So", "Sk", "Co", "Cn")  # Cn: emoji newer than Python's Unicode tables


@dataclass(frozen=True, eq=False)
class EncodedSentences:
    """A padded batch of tokenized sentences with their embeddings and Q, K, V.

    All arrays are float64 (or int/bool where noted) and read-only.
    """

    sentences: tuple[str, ...]  # the sentences as given, one per batch row
    tokens: tuple[tuple[str, ...], ...]  # B rows of T tokens, padded with PAD_TOKEN
    lengths: np.ndarray  # `(B,)` int64: real (unpadded) tokens per sentence
    padding_mask: np.ndarray  # `(B, T)` bool: True for a real token, False for padding
    embeddings: np.ndarray  # `(B, T, D)` token embeddings; zero at padded positions
    positional: np.ndarray  # `(T, D)` positional encoding; zeros when switched off
    inputs: np.ndarray  # `(B, T, D)` embeddings + positional
    query: np.ndarray  # `(B, T, Dk)` inputs @ W_Q
    key: np.ndarray  # `(B, T, Dk)` inputs @ W_K
    value: np.ndarray  # `(B, T, Dv)` inputs @ W_V
    params: dict[str, np.ndarray]  # "W_Q" `(D, Dk)`, "W_K" `(D, Dk)`, "W_V" `(D, Dv)`
    d_model: int  # D, features per token embedding
    d_k: int  # Dk, features per query and key
    d_v: int  # Dv, features per value
    seed: int  # seed of the token embeddings and the projection weights
    use_positional: bool  # whether the positional encoding was added

    def __post_init__(self) -> None:
        """Make every array read-only, so the frozen result cannot change in place either."""
        for value in (*vars(self).values(), *self.params.values()):
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    def sentence_tokens(self, index: int) -> tuple[str, ...]:
        """The real tokens of sentence `index` (0-based), without padding."""
        index = check_int(index, "index", low=0, high=len(self.tokens) - 1)
        return self.tokens[index][: int(self.lengths[index])]


def tokenize(sentence: str) -> list[str]:
    """Split one sentence into word, punctuation and emoji tokens (rules in the module docstring).

    Raises:
        ValueError: if `sentence` is not a str, is longer than `limits.MAX_SENTENCE_CHARS`
            characters, or has no tokens.
    """
    return _tokenize(sentence, "the sentence")


def token_embedding(token: str, d_model: int, seed: int = 0) -> np.ndarray:
    """The deterministic `(d_model,)` embedding of `token`: standard normal, zero for PAD_TOKEN.

    The same token, `d_model` and `seed` give the same vector in every process: the random
    stream is seeded with a BLAKE2b digest of the token, not with Python's salted `hash()`.
    """
    if not isinstance(token, str):
        raise ValueError(f"`token` must be text (a str). Received: {describe(token)}.")
    d_model = check_size(d_model, "d_model", unit="features")
    seed = check_seed(seed)
    return _draw_embedding(token, d_model, seed)


def positional_encoding(length: int, d_model: int) -> np.ndarray:
    """The sinusoidal positional encoding `(T, D)` of "Attention Is All You Need".

    `PE[pos, 2i] = sin(pos / 10000^(2i / D))` and `PE[pos, 2i + 1] = cos(pos / 10000^(2i / D))`;
    for an odd D the last column is a sine.
    """
    length = check_size(length, "length")
    d_model = check_size(d_model, "d_model", unit="features")
    hint = "Use fewer positions or fewer features."
    check_array_cells((length, d_model), "the positional encoding (positions × d_model)", hint)
    positions = np.arange(length, dtype=np.float64)[:, None]  # (T, 1)
    columns = np.arange(d_model)  # (D,)
    frequencies = 10000.0 ** (-2.0 * (columns // 2) / d_model)  # (D,)
    angles = positions * frequencies  # (T, 1) * (D,) -> (T, D)
    return np.where(columns % 2 == 0, np.sin(angles), np.cos(angles))  # (T, D)


def projection_weights(d_model: int, d_k: int, d_v: int, seed: int) -> dict[str, np.ndarray]:
    """Seeded projections "W_Q" `(D, Dk)`, "W_K" `(D, Dk)` and "W_V" `(D, Dv)`.

    Entries are normal with standard deviation `1 / sqrt(d_model)`, so for inputs of unit
    variance the queries, keys and values have roughly unit variance too and scaled scores stay
    moderate. Each matrix has its own random stream keyed by its name and `seed`.
    """
    d_model = check_size(d_model, "d_model", unit="features")
    d_k = check_size(d_k, "d_k", unit="features")
    d_v = check_size(d_v, "d_v", unit="features")
    hint = "Use fewer features."
    for name, width in (("W_Q", d_k), ("W_K", d_k), ("W_V", d_v)):
        check_array_cells((d_model, width), f"the weight {name} (d_model × features)", hint)
    return draw_projections(d_model, d_k, d_v, seed)


def draw_projections(d_model: int, d_k: int, d_v: int, seed: int) -> dict[str, np.ndarray]:
    """`projection_weights` for sizes already checked (any size: multi-head attention draws
    `(D, H·Dk)` here and checks its own memory limits)."""
    seed = check_seed(seed)
    shapes = {"W_Q": (d_model, d_k), "W_K": (d_model, d_k), "W_V": (d_model, d_v)}
    scale = 1.0 / np.sqrt(d_model)
    return {
        name: scale * seeded_rng(seed, f"weights\0{name}").standard_normal(shape)
        for name, shape in shapes.items()
    }


def encode_sentences(
    sentences: str | Sequence[str],
    *,
    d_model: int = 16,
    d_k: int = 8,
    d_v: int | None = None,
    seed: int = 0,
    positional: bool = True,
    pad_to: int | None = None,
    max_tokens: int | None = None,
    max_cells: int | None = None,
) -> EncodedSentences:
    """Tokenize, embed, position-encode and project a batch of sentences.

    Args:
        sentences: a list of sentences, or one str holding one sentence per line (line breaks
            split it; blank lines are skipped).
        d_model: D, features per token embedding.
        d_k: Dk, features per query and key.
        d_v: Dv, features per value; defaults to `d_k`.
        seed: seeds the embeddings and W_Q, W_K, W_V. Encode the source and the target of a
            translation separately with the same seed (and sizes) for cross-attention: both get
            the same weights, so target queries and source keys live in one space.
        positional: add the sinusoidal positional encoding to the embeddings.
        pad_to: pad every sentence to this many tokens instead of to the longest one.
        max_tokens: the most tokens of a sentence, as a page allows (`limits.APP_MAX_TOKENS`);
            None = any number (a sentence has at most `limits.MAX_SENTENCE_CHARS` characters).
        max_cells: the most numbers of each array `(B, T, D)`, as a page allows
            (`limits.APP_INPUT_CELLS`); None = what memory holds, `limits.MAX_ARRAY_CELLS`.

    Raises:
        ValueError: for bad settings, too many or too long sentences, a sentence without tokens,
            or a batch with more than `max_cells` numbers per array.
    """
    d_v = d_k if d_v is None else d_v
    params = projection_weights(d_model, d_k, d_v, seed)
    if not isinstance(positional, (bool, np.bool_)):
        raise ValueError(f"`positional` must be True or False. Received: {describe(positional)}.")
    texts = _split_sentences(sentences)
    widest = max(d_model, d_k, d_v)
    tokens, lengths = _tokenize_batch(texts, pad_to, max_tokens, (widest, max_cells))
    length = len(tokens[0])
    embeddings = _embed_tokens(tokens, d_model, seed)  # (B, T, D)
    pe = positional_encoding(length, d_model) if positional else np.zeros((length, d_model))
    inputs = embeddings + pe  # (B, T, D) + (T, D) -> (B, T, D)
    query = inputs @ params["W_Q"]  # (B, T, D) x (D, Dk) -> (B, T, Dk)
    key = inputs @ params["W_K"]  # (B, T, D) x (D, Dk) -> (B, T, Dk)
    value = inputs @ params["W_V"]  # (B, T, D) x (D, Dv) -> (B, T, Dv)
    padding_mask = np.arange(length)[None, :] < lengths[:, None]  # (1, T) < (B, 1) -> (B, T)
    return EncodedSentences(
        sentences=texts,
        tokens=tokens,
        lengths=lengths,
        padding_mask=padding_mask,
        embeddings=embeddings,
        positional=pe,
        inputs=inputs,
        query=query,
        key=key,
        value=value,
        params=params,
        d_model=d_model,
        d_k=d_k,
        d_v=d_v,
        seed=seed,
        use_positional=bool(positional),
    )


def _split_sentences(sentences: str | Sequence[str]) -> tuple[str, ...]:
    """Turn the `sentences` argument into a checked tuple of sentence strings."""
    if isinstance(sentences, str):
        texts = tuple(line for line in sentences.splitlines() if line.strip())
    elif isinstance(sentences, Sequence) and not isinstance(sentences, (bytes, bytearray)):
        texts = tuple(sentences)
    else:
        raise ValueError(
            "`sentences` must be a str (one sentence per line) or a list of str. "
            f"Received: {describe(sentences)}."
        )
    if not texts:
        raise ValueError(
            "The text holds no sentence: it is empty or has only blank lines. "
            "Type at least one sentence."
        )
    if len(texts) > limits.MAX_SENTENCES:
        raise ValueError(
            f"Too many sentences: received {len(texts)}, at most {limits.MAX_SENTENCES} can be "
            "encoded together. Remove some sentences."
        )
    return texts


def _tokenize_batch(
    texts: tuple[str, ...],
    pad_to: int | None,
    max_tokens: int | None,
    cells: tuple[int, int | None],
) -> tuple[tuple[tuple[str, ...], ...], np.ndarray]:
    """Tokenize every sentence and pad to a common length: (B rows of T tokens, `(B,)` lengths).

    A sentence may have at most `max_tokens` tokens (None = any number), and `cells`, the
    widest array's features and its most numbers, are checked before padding."""
    token_lists = [
        _tokenize(text, f"sentence {n}", max_tokens) for n, text in enumerate(texts, start=1)
    ]
    length = _padded_length(token_lists, pad_to)
    _check_batch_cells(len(texts), length, *cells)
    tokens = tuple(tuple(row) + (PAD_TOKEN,) * (length - len(row)) for row in token_lists)
    lengths = np.array([len(row) for row in token_lists], dtype=np.int64)  # (B,)
    return tokens, lengths


def _tokenize(sentence: str, label: str, max_tokens: int | None = None) -> list[str]:
    """`tokenize` with `label` ("sentence 2") naming the sentence in error messages, refusing
    more than `max_tokens` tokens (a page's limit; None = any number)."""
    name = label[0].upper() + label[1:]
    if not isinstance(sentence, str):
        raise ValueError(f"{name} must be text (a str). Received: {describe(sentence)}.")
    if len(sentence) > limits.MAX_SENTENCE_CHARS:
        raise ValueError(
            f"{name} has {len(sentence)} characters; at most {limits.MAX_SENTENCE_CHARS} are "
            "allowed. Split it into shorter sentences."
        )
    tokens = _split_tokens(unicodedata.normalize("NFC", sentence))
    if not tokens:
        raise ValueError(
            f"{name} has no words or punctuation: it holds only spaces or invisible characters. "
            f"Received: {describe(sentence)}. Type at least one word or remove it."
        )
    if max_tokens is not None and len(tokens) > max_tokens:
        raise ValueError(
            f"{name} has {len(tokens)} tokens; at most {max_tokens} are allowed. "
            "Split it into shorter sentences."
        )
    return tokens


def _split_tokens(text: str) -> list[str]:
    """Cut NFC text into tokens, dropping separators."""
    tokens: list[str] = []
    start = 0
    while start < len(text):
        kind = _char_kind(text[start])
        if kind == _SEPARATOR:
            start += 1
            continue
        if kind == _WORD:
            end = _word_end(text, start)
        elif kind == _HAN:
            end = _attached_end(text, start + 1, emoji=False)
        else:
            end = _symbol_end(text, start)
        tokens.append(text[start:end])
        start = end
    return tokens


def _char_kind(char: str) -> str:
    """Classify one character as word, Han, symbol or separator."""
    category = unicodedata.category(char)
    if category[0] in "LN" or category == "Pc":
        is_han = category == "Lo" and unicodedata.name(char, "").startswith("CJK ")
        return _HAN if is_han else _WORD
    if category[0] == "M":  # a mark with no base character before it starts a word
        return _WORD
    if category[0] == "Z" or category in ("Cc", "Cf", "Cs"):
        return _SEPARATOR
    return _SYMBOL  # punctuation, symbols, private use, unassigned


def _word_end(text: str, start: int) -> int:
    """End of the word starting at `start`, through inner apostrophes, decimals and joiners."""
    end = start + 1
    while end < len(text):
        if _char_kind(text[end]) == _WORD:
            end += 1
        elif _links_word(text, end):
            end += 2
        else:
            break
    return end


def _links_word(text: str, index: int) -> bool:
    """Whether `text[index]` joins the word before it to a word character after it."""
    if index + 1 >= len(text) or _char_kind(text[index + 1]) != _WORD:
        return False
    char = text[index]
    if char in _DECIMAL_POINTS:
        digits = unicodedata.category(text[index - 1]), unicodedata.category(text[index + 1])
        return digits == ("Nd", "Nd")
    return char in _APOSTROPHES or char in _JOINERS


def _symbol_end(text: str, start: int) -> int:
    """End of the symbol or emoji sequence starting at `start`."""
    end = _attached_end(text, start + 1, emoji=True)
    flag = ord(text[start]) in _REGIONAL_INDICATORS
    if flag and end < len(text) and ord(text[end]) in _REGIONAL_INDICATORS:
        end = _attached_end(text, end + 1, emoji=True)
    while end + 1 < len(text) and text[end] == _ZWJ and _is_emoji(text[end + 1]):
        end = _attached_end(text, end + 2, emoji=True)
    return end


def _attached_end(text: str, index: int, *, emoji: bool) -> int:
    """Skip combining marks (and, after an emoji, skin tones and tags) from `index` on."""
    while index < len(text):
        char = text[index]
        extends_emoji = emoji and (ord(char) in _SKIN_TONES or ord(char) in _EMOJI_TAGS)
        if not (unicodedata.category(char)[0] == "M" or extends_emoji):
            break
        index += 1
    return index


def _is_emoji(char: str) -> bool:
    """Whether `char` can follow a zero-width joiner inside an emoji sequence."""
    return unicodedata.category(char) in _EMOJI_CATEGORIES


def _padded_length(token_lists: list[list[str]], pad_to: int | None) -> int:
    """T: the longest sentence's token count, or `pad_to` if given and long enough."""
    longest = max(len(tokens) for tokens in token_lists)
    if pad_to is None:
        return longest
    pad_to = check_size(pad_to, "pad_to")
    if pad_to < longest:
        raise ValueError(
            f"`pad_to` must be at least the longest sentence's token count ({longest}). "
            f"Received: {pad_to}. Leave it as None to pad to the longest sentence."
        )
    return pad_to


def _check_batch_cells(batch: int, length: int, features: int, max_cells: int | None) -> None:
    """Reject batches whose largest array would exceed `max_cells` numbers (None = what memory
    holds, `limits.MAX_ARRAY_CELLS`)."""
    cells = batch * length * features
    most = limits.MAX_ARRAY_CELLS if max_cells is None else max_cells
    if cells > most:
        raise ValueError(
            f"The batch is too large to encode: {batch} sentences × {length} tokens × "
            f"{features} features = {cells} numbers per array; at most {most} "
            "are allowed. Use fewer or shorter sentences, or fewer features."
        )


def _embed_tokens(tokens: tuple[tuple[str, ...], ...], d_model: int, seed: int) -> np.ndarray:
    """Look up the `(B, T, D)` embeddings, drawing each distinct token once."""
    distinct = {token for row in tokens for token in row}
    table = {token: _draw_embedding(token, d_model, seed) for token in distinct}
    return np.array([[table[token] for token in row] for row in tokens])  # (B, T, D)


def _draw_embedding(token: str, d_model: int, seed: int) -> np.ndarray:
    """The `(D,)` embedding of `token` (unchecked arguments)."""
    if token == PAD_TOKEN:
        return np.zeros(d_model)
    return seeded_rng(seed, f"token\0{token}").standard_normal(d_model)
