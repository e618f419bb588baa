"""Tests for lessons/path.py: what the lessons say agrees with what their pages draw, and their
answers agree with the computation."""

import re

import numpy as np
import pytest

from attnviz.lessons import LESSONS
from attnviz.lessons.path import SETTINGS, in_view


def _lesson(title_start: str):
    return next(lesson for lesson in LESSONS if lesson.title.startswith(title_start))


def test_untrained_attention_is_not_called_grey():
    # grey means "masked" on every chart of attnviz; untrained weights are evenly spread, dark
    text = _lesson("Attention that was learned").text
    assert "grey blur" not in text and "evenly" in text


def test_the_induction_lesson_does_not_promise_what_its_chart_may_not_show():
    # how sure the model is depends on the model: the chart says it, not the lesson
    text = _lesson("A language model copies").text
    assert "sure of every" not in text


def test_the_induction_lesson_says_how_often_the_trained_runs_come_back():
    # the shipped model trained on runs written 2-4 times, not only twice: the lesson says so
    from attnviz.learn.language.tasks import COPY_SHAPES

    words = {2: "two", 3: "three", 4: "four", 5: "five"}
    fewest = min(shape.copies[0] for shape in COPY_SHAPES.values())
    most = max(shape.copies[1] for shape in COPY_SHAPES.values())
    text = " ".join(_lesson("A language model copies").text.split())
    assert f"{words[fewest]} to {words[most]} times" in text
    assert "written twice" not in text


# Every "why?" answered: each lesson's answers, and every number they quote, computed here.
INDEX = re.compile(
    r"\b(?:query|queries|key|keys|head|layer|seed|epoch)s? \d+(?:(?:, | and )\d+)*", re.IGNORECASE
)  # "key 1", "queries 1, 2 and 3": which row, not a number the answer computed
NUMBER = re.compile(r"−?\d+(?:\.\d+)?(?:e\d+)?")


def _numbers(text: str) -> set[str]:
    """The numbers a text quotes ("0.150", "−2.80", "1e9"), leaving out rows' and heads' names."""
    return set(NUMBER.findall(INDEX.sub("", text)))


def _preset(name: str) -> tuple[np.ndarray, ...]:
    from attnviz.inputs.parsing import parse_matrix_text
    from attnviz.inputs.presets import shipped_presets

    preset = shipped_presets()[name]
    return tuple(parse_matrix_text(t) for t in (preset.query, preset.key, preset.value))


def _softmax(scores: np.ndarray) -> np.ndarray:
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _lesson_1() -> set[str]:
    # "its score for key 1 is key 1's first number, 4 before and 0 after ... 5 before, 9 after"
    q, k, _ = _preset("13_numpy_lab_no_mask")
    before, typed = q @ k.T, k.copy()
    typed[1] = [0, 9, 0]
    after = q @ typed.T  # (2, 2) raw dot products
    why = LESSONS[0].why
    assert f"{before[0, 1]:g} before and {after[0, 1]:g} after" in why
    assert f"{before[1, 1]:g} before, {after[1, 1]:g} after" in why
    assert "`1 0 0`" in why and "`0 1 0`" in why and q.tolist() == [[1, 0, 0], [0, 1, 0]]
    return {f"{x:g}" for x in (*q.ravel(), *before.ravel(), *after.ravel())}


def _lesson_2() -> set[str]:
    # Q times 10: the gap between the keys' scaled scores and the weights, in float64
    q, k, _ = _preset("13_numpy_lab_no_mask")
    d = np.sqrt(k.shape[1])
    gap = (q @ k.T)[0, 1] - (q @ k.T)[0, 0]
    before, after = _softmax(q @ k.T / d)[0], _softmax(10 * q @ k.T / d)[0]
    shown = {f"{gap:g}", f"{k.shape[1]}", f"{gap / d:.2f}", f"{10 * gap / d:.2f}", "10", "1"}
    shown |= {f"{w:.3f}" for w in before} | {f"{w:.8f}" for w in after}
    why = LESSONS[1].why
    assert f"{after[0]:.8f} and {after[1]:.8f}" in why and f"{10 * gap / d:.2f}" in why
    np.testing.assert_allclose(_softmax(10 * q @ k.T / d).sum(axis=1), 1)  # "still a sum of 1"
    return shown


def _lesson_3() -> set[str]:
    from attnviz.inputs.presets import random_qkv, shipped_presets

    q, k, _ = random_qkv(shipped_presets()["02_keras_tutorial"].random)
    q, k = q[0], k[0]  # (5, 64) the page's first sequence
    raw = q @ k.T
    scaled, unscaled = _softmax(raw / 8), _softmax(raw)
    change = np.abs(scaled - unscaled)
    assert np.unravel_index(change.argmax(), change.shape) == (2, 3)  # "(query 2, key 3)"
    assert unscaled.max(axis=1).argmax() == 2 and set(unscaled.argmax(axis=1)[2:]) == {3}
    assert (raw[2].max() - raw[2].min()) / 8 < 0.5  # "they differ by less than 0.5"
    shown = {f"{unscaled[row].max():.3f}" for row in (2, 3, 4)} | {f"{scaled[2].max():.3f}"}
    return shown | {f"{change.max():.3f}", f"{raw[2].min():.2f}", f"{raw[2].max():.2f}"} | {
        "64", "8", "0.5"
    }  # fmt: skip


def _lesson_4() -> set[str]:
    # the masking pitfall by hand: key 0 padding, causal; query 2 sees keys 1 and 2
    q, k, v = _preset("06_masking_pitfall")
    scores = q @ k.T / np.sqrt(2)
    w2 = _softmax(scores[2, 1:])
    assert np.allclose(w2.sum(), 1)
    uniform = v.mean(axis=0)  # −1e9 in float32: query 0 averages every value
    why = LESSONS[3].why
    assert (
        f"key 1 {w2[0]:.3f} and key 2 {w2[1]:.3f}" in why
        and f"{uniform[0]:.3f} {uniform[1]:.3f}" in why
    )
    return {f"{w2[0]:.3f}", f"{w2[1]:.3f}", f"{uniform[0]:.3f}", "0", "1"}


def _lesson_5() -> set[str]:
    from attnviz.core.attention import compute_attention

    q, k, v = _preset("03_one_hot")
    dot = _softmax(q @ k.T / 2)  # by hand: √4 = 2
    general = compute_attention(q, k, v, score="general", seed=0).weights
    concat = compute_attention(q, k, v, score="concat", seed=0).weights
    assert general.argmax(axis=1).tolist() == [0, 2, 2, 2]  # "key 2 wins queries 1, 2 and 3"
    return {f"{dot[0, 0]:.3f}", f"{concat.min():.2f}", f"{concat.max():.2f}"}


def _lesson_11() -> set[str]:
    # identical all-ones tokens, D = 8: each pair (1, 1) turned by d·ω_p scores 2·cos(d·ω_p),
    # ω_p = θ^(−2p/8), scaled by 1/√8; independent of attnviz's RoPE
    def score(d: int, theta: float) -> float:
        return sum(2 * np.cos(d * theta ** (-2 * p / 8)) for p in range(4)) / np.sqrt(8)

    def said(x: float) -> str:
        return f"{x:.2f}".replace("-", "−")

    shown = {said(score(d, 10000)) for d in (0, 1, 3, 6)} | {said(score(d, 1)) for d in (3, 6)}
    assert round(2 * np.pi) == 6 and np.isclose(score(0, 10000), 8 / np.sqrt(8))
    return shown | {"8", "1", "3", "6", "2"}  # D, the distances named, 2π


def _lesson_10() -> set[str]:
    # the shipped Transformer's cross heads on the text the page opens on: alignment scores
    from attnviz.heads.summaries import head_summaries
    from attnviz.learn import pretrained
    from attnviz.learn.translation.tasks import get_task, known_alignment

    model = pretrained.load_transformer("dates")
    trace = model.trace(get_task("dates").example[0])
    t = trace.translation
    spans = [*known_alignment("dates", t.source, t.output, any_form=True), None]
    layers = model.config.layers
    cross = np.stack([trace.attention.at("cross", n).weights[0] for n in range(layers)])
    scores = {(s.layer, s.head): s.alignment for s in head_summaries(cross, spans=spans)}
    best = sorted(head for head, score in scores.items() if score == 1)
    assert best == [(0, 3), (1, 0)]
    assert "layer 0 · head 3 and layer 1 · head 0" in LESSONS[9].why
    return {"1"} | {f"{score:g}" for head, score in scores.items() if head not in best}


QUOTED = {
    1: _lesson_1, 2: _lesson_2, 3: _lesson_3, 4: _lesson_4, 5: _lesson_5, 10: _lesson_10,
    11: _lesson_11,
}  # fmt: skip
LOADS_MODELS = {10}  # the lessons whose numbers come from a shipped model (slow)


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.slug for lesson in LESSONS])
def test_every_lesson_answers_its_questions_in_a_few_sentences(lesson):
    why = in_view(lesson.why, "in the sidebar")
    sentences = [s for s in re.split(r"(?<=[.?!])\s+", why) if s]
    assert lesson.try_this.count("?") >= 1  # it asks...
    assert 2 <= len(sentences) <= 3 * lesson.try_this.count("?"), why  # ...and is answered
    assert "<" not in why and "{" not in why


@pytest.mark.parametrize(
    "lesson",
    [pytest.param(lesson, marks=[pytest.mark.slow] if lesson.number in LOADS_MODELS else [])
     for lesson in LESSONS],
    ids=[lesson.slug for lesson in LESSONS],
)  # fmt: skip
def test_every_number_an_answer_quotes_is_computed(lesson):
    # a number the answer quotes is one computed here, or one its lesson's own words give
    computed = QUOTED[lesson.number]() if lesson.number in QUOTED else set()
    given = _numbers(lesson.text + lesson.try_this)
    assert _numbers(lesson.why) <= computed | given, _numbers(lesson.why) - computed - given


def test_no_lesson_says_where_the_controls_are_in_words_of_one_view():
    # the presenter view folds the sidebar away: a lesson writes SETTINGS, the page fills it
    for lesson in LESSONS:
        for part in (lesson.text, lesson.try_this, lesson.why):
            assert "sidebar" not in part.lower(), lesson.slug
    rope = _lesson("Positions by rotation").try_this
    assert SETTINGS in rope
    assert "θ down in the sidebar:" in in_view(rope, "in the sidebar")
    assert SETTINGS not in in_view(rope, "in the settings above the charts")


def test_every_lesson_names_only_groups_of_controls_the_sidebar_has():
    from attnviz.ui.controls.sidebar import GROUPS

    for lesson in LESSONS:
        assert set(lesson.controls) <= set(GROUPS), lesson.slug
    assert LESSONS[0].controls == ("score",) and "masks" in LESSONS[3].controls


@pytest.mark.slow  # runs the shipped language model
def test_lesson_12s_answer_says_which_heads_copying_needs():
    # switched off alone on the page's fresh sequences: the induction head (layer 1 · head 0)
    # and the previous-token head of layer 0 each break copying; layer 1's others do not
    from attnviz.learn.language.metrics import ablation_table
    from attnviz.learn.language.tasks import make_sequences
    from attnviz.learn.pretrained import load_lm
    from attnviz.ui.language_model.views import FRESH_SEED

    table = ablation_table(load_lm("induction"), make_sequences("induction", 128, FRESH_SEED))
    base, off = table.baseline.in_context_accuracy, table.in_context_accuracy  # (L, H) off
    previous = int(np.argmax(table.baseline.previous_token[0]))
    assert "layer 1 · head 0" in LESSONS[11].try_this and "collapse" in LESSONS[11].why
    assert off[1, 0] < base / 3 and off[0, previous] < base / 3
    assert all(off[1, h] > 0.85 * base for h in range(1, off.shape[1]))  # "change little"
