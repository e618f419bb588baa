"""The glossary: one plain-language definition for every word a lesson or a caption uses that a
newcomer may not know, and the one list of such words (`MUST_EXPLAIN`). Plain data, no Streamlit.

A `Term` is found in a text by its `spellings` (regular expressions, case-insensitive unless one
says `(?-i:...)`). `unexplained(text)` is what a lesson may not leave: a word of `MUST_EXPLAIN`,
or a word a lesson sets in bold (a new idea), that no term's spelling covers;
`tests/lessons/test_glossary.py` runs it over every lesson.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache


@dataclass(frozen=True)
class Term:
    """One word of the glossary."""

    name: str  # the word as the glossary lists it
    definition: str  # what it means, in plain words (markdown, no HTML)
    spellings: tuple[str, ...]  # regular expressions that find it in a text

    @cached_property
    def patterns(self) -> tuple[re.Pattern[str], ...]:
        """Its spellings, compiled (case-insensitive unless a spelling says otherwise)."""
        return tuple(re.compile(spelling, re.IGNORECASE) for spelling in self.spellings)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where `text` uses it, as `(start, end)` character spans."""
        return [match.span() for pattern in self.patterns for match in pattern.finditer(text)]


def _term(name: str, definition: str, *spellings: str) -> Term:
    return Term(name, " ".join(definition.split()), spellings or (rf"\b{re.escape(name)}\b",))


TERMS: tuple[Term, ...] = (
    # the parts of attention
    _term("token", """One piece of a text that a model reads: a word, a part of a word or a
          letter, each turned into a row of numbers.""", r"\btokens?\b"),
    _term("feature", """One number of a row: a query, key or value row is a list of features,
          and their count is its size.""", r"\bfeatures?\b"),
    _term("vector", """A list of numbers, such as one row of a matrix.""", r"\bvectors?\b"),
    _term("matrix", """A table of numbers in rows and columns. Q, K and V are matrices with one
          row per token.""", r"\bmatri(?:x|ces)\b"),
    _term("query", """The row of numbers a token asks with: what it is looking for. Q is the
          matrix of all queries, one row per token.""", r"\bquer(?:y|ies)\b", r"(?-i:\bQ\b)"),
    _term("key", """The row of numbers each token is matched by: what it offers to be found
          with. K is the matrix of all keys. A query is compared with every key.""",
          r"\bkeys?\b", r"(?-i:\bK\b)"),
    _term("value", """The row of numbers a token hands over when it is attended to. V is the
          matrix of all values; the output is an average of the values.""",
          r"\bvalues?\b", r"(?-i:\bV\b)"),
    _term("dot product", """Multiply two rows feature by feature and add the products up:
          q · k. It is large when the two rows point the same way.""",
          r"\bdot[- ]products?\b", r"q · k", r"\bdot\b"),
    _term("score", """How well a query matches a key: one number per query and key, before
          softmax. Any number, positive or negative.""", r"\bscor(?:e|es|ed|ing)\b"),
    _term("logits", """The scores as they go into softmax (after scaling, positions and
          masks). Another name for scores about to become weights.""", r"\blogits?\b"),
    _term("softmax", """Turns a row of scores into weights: take e to the power of each score
          (exponentiate), then divide by their sum. The weights are positive and add up to
          1, and the biggest score gets the biggest weight.""",
          r"\bsoftmax\b", r"\bexponentiat\w*"),
    _term("weight", """How much of a key's value a query takes: softmax of the scores. Every
          row of weights adds up to 1. (A model's learned numbers are called weights too: see
          *learned weights*.)""", r"\bweights?\b", r"\bweigh(?:s|ed)?\b"),
    _term("output", """What attention hands back for each query: its weights times the
          values, a weighted average of the value rows.""", r"\boutputs?\b"),
    _term("one-hot", """A row that is 0 everywhere except for a single 1 (or a single large
          number). A one-hot row of weights puts everything on one key.""", r"\bone-hot\b"),
    _term("d_k (Dq, Dk, Dv)", """How many features a query (Dq), a key (Dk) or a value (Dv)
          has. d_k is the key size; √d_k is its square root, which scaled attention divides
          every score by.""", r"\bd_[kv]\b", r"(?-i:\bD[qkv]\b)", r"√d_k", r"√Dk", r"√D\b"),
    _term("√ (square root)", """The number that, times itself, gives the number under the
          sign: √9 = 3, √64 = 8.""", r"√"),
    _term("scaling", """Dividing every score by √d_k before softmax, so that scores do not
          grow with the number of features and softmax does not saturate.""",
          r"\bscal(?:e|ed|ing)\b", r"\bunscaled\b", r"\bdivid(?:e|es|ing) by √"),
    _term("saturated softmax", """A softmax whose scores are so far apart that one weight is
          almost 1 and the others almost 0. A small change of a score then changes nothing,
          so a model cannot learn from it.""", r"\bsaturat\w*"),
    _term("transpose", """A matrix turned on its side: rows become columns. Kᵀ is K
          transposed, so that Q Kᵀ holds every query's dot product with every key.""",
          r"\btranspos\w*", r"ᵀ"),
    _term("tanh", """A function that squashes any number into the range −1 to 1 (the
          hyperbolic tangent). The concat score uses it.""", r"\btanh\b"),
    _term("general (Luong) score", """A score with a learned matrix W between query and key:
          q W kᵀ. W decides which features of the query should match which of the key.""",
          r"(?-i:\bGeneral\b)", r"\bLuong\b", r"\bq W k", r"(?-i:\bW\b)"),
    _term("concat (Bahdanau) score", """A score computed by a small learned layer: v ·
          tanh(q W_q + k W_k). W_q and W_k turn query and key into one size, tanh squashes
          their sum, v weighs the result into one number.""",
          r"(?-i:\bConcat\b)", r"\bconcat score", r"\bBahdanau\b", r"(?-i:\bW_[qk]\b)"),
    _term("learned weights", """The numbers inside a model (such as W, W_Q or W_O) that
          training adjusts. Random weights are drawn at random, as before any training;
          trained weights came out of training; weights made by hand were chosen by a person
          to show one thing plainly.""",
          r"\b(?:learned|trained|random) (?:weights|matri(?:x|ces)|layer)\b",
          r"\bmade by hand\b"),
    # masks
    _term("mask", """A rule for which keys a query may look at. A masked key's score becomes
          −∞ (or −1e9) before softmax, so its weight is 0; a masked cell is drawn grey.""",
          r"\bmask(?:s|ed|ing)?\b"),
    _term("causal", """A mask that lets each token see only itself and earlier tokens, never
          later ones. A decoder uses it so that it cannot peek at what it must predict.""",
          r"\bcausal\b", r"\blook-ahead\b"),
    _term("padding", """Filler tokens added so that short sequences are as long as the longest
          one in a batch. The padding mask hides them, so no query attends them.""",
          r"\bpadding\b", r"<pad>"),
    _term("−∞ (minus infinity) and −1e9", """What a masked score becomes. −∞ gives a
          weight of exactly 0. −1e9 (minus one billion) is what the Keras tutorials add
          instead: almost the same, but a row with every key masked then spreads its weight
          evenly instead of being all zeros.""", r"−∞", r"-inf\b", r"−1e9", r"-1e9"),
    _term("fully masked row", """A query whose mask hides every key: it has nothing to look
          at. attnviz gives it zero weights (with −∞) and an output of 0.""",
          r"\bfully masked\b", r"\bsee nothing\b"),
    _term("prefix-LM", """A mask in which the first P tokens (the prompt) see each other both
          ways and the rest is causal.""", r"\bprefix-LM\b", r"\bprefix\b"),
    _term("local window", """A mask that lets a query see only keys at most w positions
          away.""", r"\blocal window\b", r"\bsliding window\b"),
    _term("attention sink", """The first few tokens kept visible to every query, whatever a
          window or chunks hide. Models put spare weight on them; StreamingLLM keeps them in
          the KV cache.""", r"\battention sinks?\b", r"\bsinks?\b"),
    _term("chunked attention", """A mask that cuts the sequence into chunks of C tokens: a
          query sees only keys in its own chunk (as in Llama 4).""",
          r"\bchunk(?:s|ed)?\b"),
    _term("packed documents", """Several short texts put one after another in one row to
          save space; each token sees only its own document's tokens.""",
          r"\bpacked\b", r"\bdocuments?\b"),
    # where Q, K and V come from
    _term("embedding", """The row of numbers a token is turned into before the model reads
          it: the same word always gets the same embedding.""", r"\bembed(?:ding|dings|s)?\b"),
    _term("d_model", """The size of a token's embedding: how many features each token has
          inside a Transformer.""", r"\bd_model\b"),
    _term("positional encoding", """Numbers added to each embedding that say where the token
          sits (sines and cosines of its position), so that attention can tell the first
          word from the fourth.""", r"\bpositional encodings?\b", r"\bsinusoidal\b"),
    _term("position scheme", """How attention learns where tokens are: sinusoidal positional
          encoding added to the inputs, or RoPE or ALiBi inside attention itself.""",
          r"\bposition schemes?\b", r"\bpositions\b"),
    _term("W_Q, W_K, W_V", """Three learned matrices that turn each token's embedding into its
          query, its key and its value: Q = X W_Q, K = X W_K, V = X W_V.""",
          r"(?-i:\bW_[QKV]\b)", r"\bprojections?\b", r"\bproject(?:s|ed)?\b"),
    _term("W_O", """The learned matrix that mixes the heads' concatenated outputs back into
          one row of d_model features per token.""", r"(?-i:\bW_O\b)"),
    # heads and models
    _term("head", """One attention with its own W_Q, W_K and W_V. A layer of a Transformer
          runs several heads side by side.""", r"\bheads?\b"),
    _term("multi-head attention", """Several heads run side by side on the same tokens, each
          smaller; their outputs are put side by side (concatenated) and mixed by W_O.""",
          r"\bmulti-head\b", r"\bconcatenat\w*"),
    _term("layer", """One step of a model. A Transformer stacks layers, each with its own
          attention heads; each reads what the layer before wrote.""", r"\blayers?\b"),
    _term("Transformer", """A model built from layers of attention (and small feed-forward
          networks), with no recurrence; nearly every language model today is one.""",
          r"\bTransformers?\b"),
    _term("GRU", """A recurrent network: it reads a sequence one token at a time and keeps a
          running summary. Here one is paired with attention to translate.""", r"\bGRU\b"),
    _term("encoder", """The part of a Transformer that reads the source (the input sentence);
          its self-attention is bidirectional.""", r"\bencoders?\b"),
    _term("decoder", """The part of a Transformer that writes the output one token at a time;
          its self-attention is causal, and its cross attention reads the encoder.""",
          r"\bdecoders?\b"),
    _term("self-attention", """Attention whose queries, keys and values all come from the
          same sequence.""", r"\bself-attention\b"),
    _term("bidirectional", """Self-attention with no causal mask: every token sees every other,
          before and after it.""", r"\bbi-?directional\b"),
    _term("cross attention", """Attention whose queries come from one sequence (the
          decoder's) and whose keys and values come from another (the encoder's).""",
          r"\bcross\b"),
    _term("language model", """A model that reads a text left to right and predicts the next
          token at every position.""", r"\blanguage models?\b"),
    # training and what heads do
    _term("training", """Showing a model many examples and nudging its learned weights after
          each batch so that its answers get better.""", r"\btrain(?:s|ed|ing)?\b",
          r"\blearn(?:s|ed|ing)?\b"),
    _term("epoch", """One pass of training over all the training examples.""",
          r"\bepochs?\b"),
    _term("probe", """A fixed input that is shown to the model after every epoch, so that its
          attention can be compared from one epoch to the next.""", r"\bprobe\b"),
    _term("alignment", """Which input characters each output character looks at. The
          alignment score is the share of output characters whose largest weight falls on
          the input they come from (1 = all).""", r"\balign(?:s|ed|ment)?\b"),
    _term("model view", """Every head of every layer drawn at once for one input, each a small
          heatmap, with numbers that say what each head does.""", r"\bmodel view\b"),
    _term("entropy (bits)", """How spread out a row of weights is: 0 bits when one key takes
          everything, log2 of the number of keys when the weight is spread evenly.""",
          r"\bentropy\b", r"\bbits?\b"),
    _term("nats", """The unit of a loss computed with the natural logarithm (bits use log2):
          one nat is about 1.44 bits. A lower loss means the model was less surprised.""",
          r"\bnats?\b"),
    _term("loss", """How wrong a model's predictions are, averaged over tokens: what
          training makes smaller.""", r"\bloss\b"),
    _term("rollout", """A way to follow attention through every layer: average each layer's
          heads, add the token itself back (the residual connection), and multiply the layers
          together. It says how much of each input token reaches each position.""",
          r"\brollout\b"),
    _term("mean distance", """How far a head looks on average: the weights times |i − j|,
          added up over a row, then averaged over rows.""", r"\bmean distance\b"),
    _term("previous-token head", """A head whose every token looks at the token just before
          it, so that each position also holds what came before it.""",
          r"\bprevious-token (?:head|score)s?\b"),
    _term("induction head", """A head that looks for an earlier copy of the current token and
          attends to the token that followed it, so the model can continue a repeat by
          copying.""", r"\binduction(?: heads?| scores?)?\b"),
    _term("in-context accuracy", """How often the model predicts the next token right where
          copying from earlier in the text would give it: a measure of copying.""",
          r"\bin-context\b"),
    _term("ablation", """Switching a head off (its output replaced by zeros or its usual
          mean) to see what the model loses without it.""", r"\bablat\w*",
          r"\bswitch(?:ing)? (?:that |a |the )?heads? off\b", r"\bswitched off\b"),
    _term("KV cache", """A decoder writing token by token keeps every earlier token's keys
          and values, so that each new token computes only its own.""",
          r"\bKV cache\b", r"\bcache\b"),
    _term("K/V heads (grouped-query attention)", """Fewer key and value heads than query
          heads: several query heads share one K/V head, so a decoder keeps a smaller KV cache.
          One K/V head for all is multi-query attention.""",
          r"\bK/V heads?\b", r"\bgrouped-query\b", r"\bmulti-query\b"),
    _term("tiled attention", """Attention computed a block (a tile) of keys at a time, as fused
          kernels such as FlashAttention do. A running maximum and sum stand in for the whole
          table of scores, which is never stored; the result is the same.""",
          r"\btiles?\b", r"\btiled\b"),
    _term("heatmap", """A table drawn as coloured squares: one square per query (row) and key
          (column), its colour the number in it. Dark is small, yellow is large.""",
          r"\bheatmaps?\b"),
    _term("residual connection", """A layer's input added back to its output, so each layer
          only adds to what the token already holds.""", r"\bresidual\b"),
    _term("MLP", """A small feed-forward network (layers of multiply-and-add with a squashing
          function between) that a Transformer block applies to each token after its
          attention.""", r"\bMLPs?\b", r"\bfeed-forward\b"),
    _term("batch", """Several sequences computed together, one after another in one array;
          also the examples a model trains on at once.""", r"\bbatch(?:es)?\b"),
    _term("validation", """Examples kept out of training and used only to check the model, so
          that its score shows what it learned rather than what it memorised.""",
          r"\bvalidation\b"),
    # positions inside attention
    _term("RoPE", """Rotary position embedding: each pair of query and key features is turned
          by an angle that grows with the token's position, so a score depends only on how
          far apart two tokens are.""", r"\bRoPE\b", r"\brotat\w*"),
    _term("θ (theta)", """RoPE's base: pair p turns by position × θ^(−2p/D) radians. A smaller
          θ makes every pair turn faster.""", r"θ", r"\btheta\b"),
    _term("ALiBi", """Attention with linear biases: each head subtracts m × |i − j| from the
          scores, so far keys score lower; each head has its own slope m.""", r"\bALiBi\b"),
)  # fmt: skip
TERMS_BY_NAME = {term.name: term for term in TERMS}

# Words a newcomer trips on: a lesson using one must have a term that covers it. (A word set in
# bold in a lesson is a new idea too: it needs a term as well.)
MUST_EXPLAIN: tuple[str, ...] = (
    r"(?-i:\bD[qkv]\b)", r"\bd_\w+", r"√", r"(?-i:\bW(?:_\w+)?\b)", r"\blogits?\b", r"\bsoftmax\b",
    r"\bone-hot\b", r"\btanh\b", r"\bembeddings?\b", r"\bpositional encoding\b", r"\bepochs?\b",
    r"\bprobe\b", r"\bentropy\b", r"\bbits\b", r"\bnats\b", r"\brollout\b", r"θ", r"\bRoPE\b",
    r"\bALiBi\b", r"\bmask(?:s|ed)?\b", r"\bcausal\b", r"\bpadding\b", r"\bheads?\b",
    r"\bencoder\b", r"\bdecoder\b", r"\bcross\b", r"\bprefix-LM\b", r"\bsinks?\b",
    r"\bchunk", r"\bpacked\b", r"\bKV cache\b", r"\bin-context\b", r"\bablat", r"\binduction\b",
    r"\bprevious-token\b", r"−∞", r"−1e9", r"\bTransformer\b", r"\bGRU\b", r"\bsaturat",
    r"\bself-attention\b", r"\bbi-?directional\b", r"\bLuong\b", r"\bBahdanau\b",
    r"\bdot product\b", r"\balignment\b", r"ᵀ", r"\bmodel view\b", r"\bconcatenat",
    r"\blearned\b", r"\bquer(?:y|ies)\b", r"\bkeys?\b", r"\bvalues?\b", r"\bweights?\b",
    r"\bscores?\b", r"\bfeatures?\b", r"\btokens?\b", r"\blayers?\b",
)  # fmt: skip
_MUST = tuple(re.compile(pattern, re.IGNORECASE) for pattern in MUST_EXPLAIN)
_BOLD = re.compile(r"\*\*(.+?)\*\*")


@lru_cache(maxsize=64)  # a lesson's page asks on every run, for its same text: a scan runs every
# term's patterns over it (~6 ms of lesson 10's ~160 ms run, profiled)
def terms_in(text: str) -> tuple[Term, ...]:
    """The terms `text` uses, in the order it first uses them."""
    first = {term: min(spans)[0] for term in TERMS if (spans := term.spans(text))}
    return tuple(sorted(first, key=first.get))


def unexplained(text: str) -> list[str]:
    """The words of `text` that need a term and have none: a match of `MUST_EXPLAIN`, or a
    word set in bold, that no term's spelling covers."""
    covered = [span for term in TERMS for span in term.spans(text)]
    needed = [m.span() for pattern in _MUST for m in pattern.finditer(text)]
    needed += [m.span(1) for m in _BOLD.finditer(text)]
    missing = [
        (start, end) for start, end in needed if not any(a < end and start < b for a, b in covered)
    ]
    return sorted({text[start:end] for start, end in missing})
