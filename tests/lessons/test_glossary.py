"""Tests for lessons/glossary.py: every word a lesson uses that a newcomer may not know has one
plain-language definition, and a word with none is caught."""

from __future__ import annotations

import re

import pytest

from attnviz.lessons import LESSONS, glossary
from attnviz.lessons.glossary import MUST_EXPLAIN, TERMS, terms_in, unexplained

# the words the lessons and captions were found to use with no word of explanation (issue #41)
NEWCOMERS_MEET = (
    "query", "key", "value", "score", "logits", "softmax", "weight", "one-hot", "mask",
    "causal", "padding", "d_k", "Dq", "Dk", "Dv", "tanh", "embedding", "positional encoding",
    "d_model", "W_Q", "W_K", "W_V", "W_O", "head", "multi-head", "epoch", "probe",
    "entropy in bits", "nats", "rollout", "RoPE", "θ", "ALiBi", "induction head",
    "previous-token head", "cross attention", "encoder", "decoder", "prefix-LM",
    "attention sink", "chunked attention", "packed documents", "KV cache",
    "in-context accuracy", "ablation", "−∞", "−1e9", "√d_k", "Transformer", "GRU",
)  # fmt: skip


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.slug for lesson in LESSONS])
def test_every_word_a_lesson_uses_that_needs_explaining_has_an_entry(lesson):
    for part in (lesson.text, lesson.try_this, lesson.why):
        assert unexplained(part) == [], (lesson.slug, part[:60])


@pytest.mark.parametrize("word", NEWCOMERS_MEET)
def test_every_word_a_newcomer_meets_has_an_entry(word):
    assert terms_in(f"a text with {word} in it"), word
    assert unexplained(f"a text with {word} in it") == [], word


def test_a_word_that_needs_explaining_and_has_no_entry_is_caught(monkeypatch):
    text = "The loss is in nats; the **frobnicator** rotates q."
    assert unexplained(text) == ["frobnicator"]  # a new idea in bold, with no term
    without_nats = tuple(term for term in TERMS if term.name != "nats")
    monkeypatch.setattr(glossary, "TERMS", without_nats)
    assert unexplained(text) == ["frobnicator", "nats"]  # a word of MUST_EXPLAIN uncovered


def test_every_must_explain_pattern_compiles_and_finds_its_own_words():
    for pattern in MUST_EXPLAIN:
        re.compile(pattern)
    assert all(unexplained(word) == [] for word in NEWCOMERS_MEET)


@pytest.mark.parametrize("term", TERMS, ids=[term.name for term in TERMS])
def test_every_entry_has_a_definition_in_plain_words(term):
    text = term.definition
    sentences = [s for s in re.split(r"(?<=[.:;])\s+", text) if s]
    assert text[0].isupper() and text.removesuffix(")").endswith("."), text
    assert 5 <= len(text.split()) <= 60, text  # one short paragraph
    assert max(len(s.split()) for s in sentences) <= 30, text  # no sentence runs on
    assert not re.search(r"<[a-z/!]", text), text  # markdown, never HTML
    assert "$" not in text  # Streamlit's markdown would read it as a formula
    assert unexplained(text) == [], text  # it uses only words the glossary explains too
    assert term in terms_in(term.name), term.name  # its own name finds it in a text


def test_the_terms_have_one_entry_each():
    names = [term.name.casefold() for term in TERMS]
    assert len(names) == len(set(names))


def test_terms_are_listed_in_the_order_a_text_uses_them():
    assert [t.name for t in terms_in("Softmax turns each score into a weight")] == [
        "softmax",
        "score",
        "weight",
    ]


def test_a_lesson_page_asking_again_for_its_words_is_answered_without_a_new_scan():
    text = "\n".join((LESSONS[9].text, LESSONS[9].try_this, LESSONS[9].why))
    terms_in.cache_clear()
    first = terms_in(text)
    assert first == terms_in.__wrapped__(text) and first  # the cache keeps the scan's answer
    assert terms_in(text) is first and terms_in.cache_info().hits == 1
