"""The lesson path: what attention is, taught in order, each lesson on one prepared page.

A lesson names a page of the app (`mode`, a `Mode.name`) and how to prepare it (`setup`, the
keyword arguments of that page's `prepare`): the lesson shows the page itself, in that state, not
a copy of it. Plain data, no Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Lesson:
    """One step of the lesson path."""

    title: str  # what it teaches, in a few words
    text: str  # the lesson itself: a short paragraph (markdown, no HTML)
    try_this: str  # one thing to do on the prepared page, and what to look for
    mode: str  # the page it prepares (`Mode.name`)
    setup: dict[str, Any] = field(default_factory=dict)  # that page's `prepare` arguments

    @property
    def number(self) -> int:
        """Its place on the path, from 1."""
        return LESSONS.index(self) + 1

    @property
    def slug(self) -> str:
        """Its URL path: `lesson-4`."""
        return f"lesson-{self.number}"


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "A query scores each key",
        "Attention starts with a question and some candidates. Each **query** row is compared "
        "with every **key** row, and the simplest comparison is the dot product q · k: multiply "
        "the features pairwise and add them up. A large score means the key matches the query. "
        "The step-by-step view below works one cell out in full.",
        "Pick query 1 and key 1 in Step by step and follow the arithmetic. Then type `0 9 0` "
        "as the second key (key 1): query 1's score for it grows from 5 to 9, and query 0's "
        "falls from 4 to 0. Why?",
        "matrices",
        {"preset": "13_numpy_lab_no_mask", "view": "Step by step"},
    ),
    Lesson(
        "Softmax turns scores into weights",
        "Scores can be any numbers; attention needs **weights** that are positive and add up to 1 "
        "in every row, so that the output is a weighted average of the values. Softmax does it: "
        "exponentiate every score of a row, then divide by their sum. The biggest score gets the "
        "biggest weight, but every key keeps a little.",
        "Multiply every number of Q by 10 (type `10 0 0` and `0 10 0`). The weights get much "
        "sharper: one key takes almost all. Do the rows still sum to 1?",
        "matrices",
        {"preset": "13_numpy_lab_no_mask", "view": "Heatmaps"},
    ),
    Lesson(
        "Why divide by √d_k",
        "With many features, dot products grow: for random vectors their spread grows like √d_k. "
        "Large scores push softmax to put nearly all the weight on one key, and a model cannot "
        "learn through a saturated softmax. Dividing every score by √d_k keeps the spread near "
        "1 whatever the size. These are the Keras tutorial's 64-feature inputs.",
        "Compare shows the weights scaled (A) and unscaled (B) side by side. Which rows become "
        "almost one-hot without scaling? Look at the largest change under the charts.",
        "matrices",
        {"preset": "02_keras_tutorial", "view": "Compare", "compare": "scale"},
    ),
    Lesson(
        "Masks: causal, padding, −∞ or −1e9",
        "A mask decides which keys a query may see. The **causal** mask hides later tokens, so a "
        "decoder cannot peek at the answer; the **padding** mask hides filler tokens. Masked "
        "scores become −∞ before softmax, so their weight is exactly 0. Here query 0 may see "
        "nothing at all (key 0 is padding, and the mask is causal), and with −1e9 instead of "
        "−∞, as the Keras tutorials mask, its weight spreads evenly over keys it should never "
        "see.",
        "Switch the causal mask off and on: which cells go grey, and why do the rows still sum "
        "to 1? Then choose −∞ under Masked logits: what happens to query 0's row?",
        "matrices",
        {"preset": "06_masking_pitfall", "view": "Heatmaps"},
    ),
    Lesson(
        "Three ways to score",
        "The dot product is one score of three. **General** (Luong) puts a learned matrix W "
        "between query and key, q W kᵀ, so query and key may even have different sizes. "
        "**Concat** (Bahdanau) feeds both through a small learned layer, v · tanh(q W_q + k W_k). "
        "Learned weights change what counts as a match.",
        "Pick another score function in Compare: which keys win now? Step by step shows the "
        "learned W (or W_q, W_k and v) that make the difference.",
        "matrices",
        {"preset": "03_one_hot", "view": "Compare", "compare": "score"},
    ),
    Lesson(
        "Q, K and V are made from the tokens",
        "In a Transformer nobody types Q, K and V. Each token becomes an **embedding** vector, a "
        "**positional encoding** is added so the model knows the order, and three learned "
        "matrices W_Q, W_K and W_V project the result into queries, keys and values. The view "
        "below shows every stage, from the words to Q, K and V.",
        "Type a sentence with the same word twice, such as `the cat saw the dog`. Switch the "
        "positional encoding off: the two `the` rows of Q become identical. Why?",
        "sentences",
        {"text": "the cat saw the dog", "view": "Q, K, V"},
    ),
    Lesson(
        "Many heads look in different places",
        "One attention computes one kind of match. **Multi-head** attention runs h smaller "
        "attentions side by side, each with its own W_Q, W_K and W_V, and concatenates their "
        "outputs through W_O. Different heads can look in different places.",
        "Change the number of heads from 4 to 1 and to 8. Does the average of the heads look "
        "like any single head?",
        "multihead",
        {"weights": "Random weights", "way": "bidirectional", "heads": 4},
    ),
    Lesson(
        "The three ways of a Transformer",
        "A Transformer uses attention three ways. The encoder's **bi-directional** "
        "self-attention lets every source token see every other; the decoder's **causal** "
        "self-attention lets a token see only itself and earlier ones; **cross** attention lets "
        "the decoder's tokens (queries) look at the encoder's (keys and values).",
        "Switch between the three ways: which sentence gives the queries, which the keys, and "
        "which cells are grey in each?",
        "multihead",
        {"weights": "Random weights", "way": "causal", "heads": 2},
    ),
    Lesson(
        "Attention that was learned",
        "Everything so far used numbers nobody learned. Here a small translator learns to turn "
        "dates into ISO form. At first its attention is spread almost evenly, every cell the "
        "same dark colour (grey is kept for masked cells); as it trains, each output "
        "character learns to look at the input characters it comes from: the year digits at "
        "the year, the month at the month name.",
        "Press Train and watch the probe heatmap after each epoch. Then move the slider back "
        "to epoch 0: when did the alignment appear?",
        "learn",
        {"task": "dates", "architecture": "GRU + attention", "source": "Train"},
    ),
    Lesson(
        "What trained heads do",
        "A trained Transformer has many heads in many layers. The **model view** shows all of "
        "them at once for one input, with numbers that say what each head does: how focused it "
        "is, how far it looks, whether it aligns output with input.",
        "Sort the heads by alignment score: which encoder–decoder head reads the date? Click "
        "its square in the head map, then open it step by step in the explorer.",
        "learn",
        {"task": "dates", "architecture": "Transformer", "source": "Shipped", "view": "Model view"},
    ),
    Lesson(
        "Positions by rotation: RoPE",
        "Attention alone does not know the order of its tokens. Today's language models (Llama, "
        "Mistral, Qwen, Gemma) tell it by **rotating** each query and key by its position "
        "(RoPE) before the dot product, so a score depends on how far apart two tokens are, "
        "not where they sit. Here every token is the same vector: whatever pattern the "
        "weights show comes from the positions alone.",
        "Open the Positions tab: how does the score change with the distance i − j? Then turn "
        "RoPE's θ down in the sidebar: what happens to the pattern?",
        "matrices",
        {"preset": "11_rope_probe", "view": "Positions"},
    ),
    Lesson(
        "A language model copies: induction heads",
        "A language model reads left to right, one causal self-attention per layer. Trained on "
        "texts in which runs of letters come back (two to four times, side by side or apart, "
        "early or late), this small one learns to copy: a **previous-"
        "token head** in layer 0 marks each token with the one before it, and an **induction "
        "head** in layer 1 looks for the token after the previous occurrence of the current "
        "one. Where the text repeats, a model that copies can predict each next token: the "
        "chart of how sure it was shows whether this one does.",
        "Find layer 1 · head 0 in the model view: where does each row of the second run look? "
        "Then open Switch heads off: what does switching that head off do to in-context "
        "accuracy, and which other heads matter?",
        "language-model",
        {"task": "induction", "source": "Shipped", "view": "Every head"},
    ),
)


def get_lesson(number: int) -> Lesson:
    """Lesson `number` (from 1), with a clear error outside the path."""
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(LESSONS):
        raise ValueError(
            f"There are {len(LESSONS)} lessons, numbered 1 to {len(LESSONS)}. Received: {number!r}."
        )
    return LESSONS[number - 1]
