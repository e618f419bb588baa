"""The lesson path: what attention is, taught in order, each lesson on one prepared page.

A lesson names a page of the app (`mode`, a `Mode.name`) and how to prepare it (`setup`, the
keyword arguments of that page's `prepare`): the lesson shows the page itself, in that state, not
a copy of it. It answers the questions it asks (`why`), and names the groups of the sidebar's
controls it talks about (`controls`; the page folds the others away). Where its words say where
the controls are, they write `SETTINGS` ("{settings}"), which the page fills for the view
(`in_view`): the sidebar, or the settings in the page while presenting. Plain data, no
Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SETTINGS = "{settings}"  # where a lesson's words say the controls are: filled by `in_view`


@dataclass(frozen=True)
class Lesson:
    """One step of the lesson path."""

    title: str  # what it teaches, in a few words
    text: str  # the lesson itself: a short paragraph (markdown, no HTML)
    try_this: str  # one thing to do on the prepared page, and what to look for
    mode: str  # the page it prepares (`Mode.name`)
    setup: dict[str, Any] = field(default_factory=dict)  # that page's `prepare` arguments
    why: str = ""  # the answers to the questions `try_this` asks: two or three sentences each,
    # pointing at the chart (markdown, no HTML)
    controls: tuple[str, ...] = ()  # the groups of the sidebar's controls it talks about
    # (`attnviz.ui.controls.sidebar.GROUPS`: "score", "masks"...); the others are folded away

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
        why=(
            "Query 0 is `1 0 0`: its dot product with any key keeps only that key's first "
            "feature, so its score for key 1 is key 1's first number, 4 before and 0 after. "
            "Query 1 is `0 1 0` and keeps only the second feature: 5 before, 9 after. In Step "
            "by step, the products of the feature pairs show it: only one of them is not 0."
        ),
        controls=("score",),
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
        why=(
            "Yes: softmax divides e to the power of each score by the sum of these over the row, "
            "so every row adds up to 1 whatever the scores. Times 10, key 1 beats key 0 by 17.32 "
            "instead of 1.73 (3/√3), so the weights 0.150 and 0.850 become 0.00000003 and "
            "0.99999997: still a sum of 1. Softmax only sees the gaps between a row's scores; a "
            "bigger gap, a sharper row."
        ),
        controls=("score", "scale"),
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
        why=(
            "Query 2's row comes closest: unscaled it puts 0.864 on key 3, scaled only 0.274; "
            "queries 3 and 4 follow, with 0.673 and 0.569 on key 3. The largest change under "
            "the charts, 0.590, is that cell (query 2, key 3). Query 2's unscaled scores run "
            "from 16.21 to 20.01; divided by √64 = 8 they differ by less than 0.5, and softmax "
            "stays soft."
        ),
        controls=("scale",),
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
        why=(
            "Causal on, every cell above the diagonal goes grey (a key after its query), on top "
            "of key 0's column (padding) in every row; off, only key 0's column stays grey. A "
            "row still sums to 1 because softmax shares the 1 among the keys it may see: a "
            "masked score becomes −∞ (or −1e9), which softmax turns into a weight of 0, and the "
            "keys left share the 1: query 2 gives key 1 0.330 and key 2 0.670. With −∞, query "
            "0, which may see no key at all, gets zeros: its row sums to 0 and its output is "
            "0 0, not the 0.667 0.667 that −1e9 averages from values it should never see."
        ),
        controls=("masks", "masked logits"),
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
        why=(
            "With the dot product each one-hot query wins its own key: 0.711 on the diagonal. "
            "General puts a learned W (random here, drawn from the seed) between query and key "
            "and mixes their features: with seed 0, key 2 wins queries 1, 2 and 3, and only "
            "query 0 keeps its own key. Concat's small random layer matches almost nothing: its "
            "weights stay between 0.21 and 0.30, on the same inputs."
        ),
        controls=("score",),
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
        why=(
            "Q is the input times W_Q, and the input is the embedding plus the positional "
            "encoding. The word `the` has one embedding wherever it stands, and W_Q is the same "
            "matrix for every token, so without the positional encoding both `the` rows start "
            "from the same numbers and come out the same. The positional encoding adds "
            "different numbers at each position: it is all that tells the two apart."
        ),
        controls=(),
    ),
    Lesson(
        "Many heads look in different places",
        "One attention computes one kind of match. **Multi-head** attention runs h smaller "
        "attentions side by side, each with its own W_Q, W_K and W_V, and concatenates their "
        "outputs through W_O. Different heads can look in different places. These weights "
        "are **made by hand**, not learned, to show it plainly: each of the four heads looks "
        "at one place, the previous token, itself, the first token or the next one (a trained "
        "model's heads learn places like these; random weights look almost evenly).",
        "Which head's grid has its bright cells just left of the diagonal? Change the number "
        "of heads from 4 to 1 and to 8: does the average of the heads look like any single "
        "head? Then pick Random weights and compare.",
        "multihead",
        {"weights": "Made to differ", "way": "bidirectional", "heads": 4},
        why=(
            "Head 0's: it looks at the previous token, so each row's bright cell sits one "
            "column left of the diagonal. The average looks like no single head: it spreads "
            "each row over all the places the heads look at, a blur in which no head's pattern "
            "survives (with 1 head the average is that head). That is why multi-head attention "
            "does not average the heads' weights: it keeps every head's output side by side "
            "(the concatenation) and W_O mixes them. Random heads spread almost evenly, so "
            "there the heads and their average all look alike."
        ),
        controls=(),
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
        why=(
            "Bi-directional: the source sentence gives the queries, keys and values, and no cell "
            "is grey: every source token sees every other. Causal: the target sentence gives all "
            "three, and every cell above the diagonal is grey: a target token may not see the "
            "ones after it. Cross: the target gives the queries (rows), the source the keys and "
            "values (columns), and nothing is grey: the whole source is known before the decoder "
            "starts (only a shorter sentence's padding would be)."
        ),
        controls=(),
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
        why=(
            "At epoch 0 the model is untrained and every output character spreads its weight "
            "almost evenly, one dark colour. The alignment forms over the first epochs, not in "
            "one step, and about when the accuracy in the loss and accuracy chart starts to "
            "climb: to write the right digit the decoder must read the right input characters, "
            "so learning where to look and learning the answer happen together."
        ),
        controls=(),
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
        why=(
            "Two encoder–decoder heads come first with an alignment score of 1: layer 0 · head 3 "
            "and layer 1 · head 0. Every output digit puts its largest weight on the input "
            "characters it comes from (the year digits on the year, the month on its name); "
            "the other heads score 0.75 or 0.875. Enlarged, such a head shows each output row "
            "lit on its own part of the input."
        ),
        controls=(),
    ),
    Lesson(
        "Positions by rotation: RoPE",
        "Attention alone does not know the order of its tokens. Today's language models (Llama, "
        "Mistral, Qwen, Gemma) tell it by **rotating** each query and key by its position "
        "(RoPE) before the dot product, so a score depends on how far apart two tokens are, "
        "not where they sit. Here every token is the same vector: whatever pattern the "
        "weights show comes from the positions alone.",
        "Open the Positions tab: how does the score change with the distance i − j? Then turn "
        f"RoPE's θ down {SETTINGS}: what happens to the pattern?",
        "matrices",
        {"preset": "11_rope_probe", "view": "Positions"},
        why=(
            "The score depends only on i − j, one value per diagonal: 2.83 (8/√8) where i = j, "
            "2.50 at a distance of 1, 1.39 at 3, and back up to 2.68 at 6, because the fastest "
            "pair of features turns 1 radian a token and comes round after about 6 (2π). A "
            "smaller θ makes the slower pairs turn faster too: at θ = 1 every pair turns 1 "
            "radian a token, and the score swings from 2.83 down to −2.80 at 3 and back to "
            "2.72 at 6, stripes that repeat along the diagonals."
        ),
        controls=("positions",),
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
        why=(
            "Each row of the second run looks one place to the right of where its own letter "
            "stood in the first run: at the letter that came next there, which is the letter to "
            "write now (a stripe parallel to the diagonal, to its left). Switching that head off "
            "makes in-context accuracy collapse: nothing copies any more. Of the others, heads of "
            "layer 0 matter as much, the previous-token head among them (the induction head "
            "finds the letter after by what that head wrote); the other heads of layer 1 change "
            "little."
        ),
        controls=(),
    ),
)


def in_view(text: str, settings_are: str) -> str:
    """A lesson's `text` with `SETTINGS` filled by where the view draws the controls
    (`settings_are`: "in the sidebar", "in the settings above the charts")."""
    return text.replace(SETTINGS, settings_are)


def get_lesson(number: int) -> Lesson:
    """Lesson `number` (from 1), with a clear error outside the path."""
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(LESSONS):
        raise ValueError(
            f"There are {len(LESSONS)} lessons, numbered 1 to {len(LESSONS)}. Received: {number!r}."
        )
    return LESSONS[number - 1]
