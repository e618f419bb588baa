"""Tests for learn/translation/numbers.py: German number words, their digits and crossing
alignments."""

import pytest

from attnviz.learn.translation.numbers import german_number, number_alignment, read_number
from attnviz.learn.translation.tasks import make_pairs

# Hand-written German (Duden spelling).
WORDS = {
    1: "eins", 7: "sieben", 10: "zehn", 11: "elf", 12: "zwölf", 13: "dreizehn",
    16: "sechzehn", 17: "siebzehn", 20: "zwanzig", 21: "einundzwanzig", 30: "dreißig",
    56: "sechsundfünfzig", 60: "sechzig", 70: "siebzig", 99: "neunundneunzig",
    100: "einhundert", 101: "einhunderteins", 110: "einhundertzehn", 111: "einhundertelf",
    365: "dreihundertfünfundsechzig", 600: "sechshundert", 777: "siebenhundertsiebenundsiebzig",
    999: "neunhundertneunundneunzig",
}  # fmt: skip

# The part of the word that names each digit, for every nonzero digit (zeros have no word).
NAMES = {
    "hundreds": {1: ["ein"], 2: ["zwei"], 3: ["drei"], 4: ["vier"], 5: ["fünf"], 6: ["sechs"],
                 7: ["sieben"], 8: ["acht"], 9: ["neun"]},
    "tens": {1: ["zehn", "elf", "zwölf"], 2: ["zwanzig"], 3: ["dreißig"], 4: ["vierzig"],
             5: ["fünfzig"], 6: ["sechzig"], 7: ["siebzig"], 8: ["achtzig"], 9: ["neunzig"]},
    "units": {1: ["eins", "ein", "elf"], 2: ["zwei", "zwölf"], 3: ["drei"], 4: ["vier"],
              5: ["fünf"], 6: ["sechs", "sech"], 7: ["sieben", "sieb"], 8: ["acht"],
              9: ["neun"]},
}  # fmt: skip


@pytest.mark.parametrize(("n", "word"), WORDS.items(), ids=[str(n) for n in WORDS])
def test_words(n, word):
    assert german_number(n) == word
    assert read_number(word)[0] == n


@pytest.mark.parametrize(
    ("source", "spans"),
    [
        ("vierundzwanzig", ((7, 14), (0, 4))),  # 2 <- zwanzig (end), 4 <- vier (start)
        ("siebzehn", ((4, 8), (0, 4))),  # 1 <- zehn, 7 <- sieb
        ("elf", ((0, 3), (0, 3))),
        ("zehn", ((0, 4), None)),
        ("dreihundert", ((0, 4), None, None)),
        ("einhunderteins", ((0, 3), None, (10, 14))),
        ("neunhundertneunundneunzig", ((0, 4), (18, 25), (11, 15))),
    ],
    ids=["24", "17", "11", "10", "300", "101", "999"],
)
def test_alignment_pinned(source, spans):
    assert number_alignment(source, str(read_number(source)[0])) == spans


def test_every_span_holds_the_word_that_names_its_digit():
    for n in range(1, 1000):
        word, digits = german_number(n), str(n)
        places = ("hundreds", "tens", "units")[-len(digits) :]
        for place, digit, span in zip(places, digits, number_alignment(word, digits), strict=True):
            if digit == "0":
                assert span is None, (word, place)
            else:
                assert word[span[0] : span[1]] in NAMES[place][int(digit)], (word, place)


def test_alignment_crosses_over():
    crossing = 0
    for source, target in make_pairs("german_numbers", 300, 0):
        starts = [span[0] for span in number_alignment(source, target) if span is not None]
        crossing += any(b < a for a, b in zip(starts, starts[1:], strict=False))
    assert crossing > 150  # most numbers with tens and units say the units first


@pytest.mark.parametrize(
    ("source", "match"),
    [("vierzwanzig", "not a German number word"), ("zweiundzwanzigx", "'x'"),
     ("Zwanzig", "'Zwanzig'"), ("", "not a German number word")],
    ids=["grammar", "stray", "capital", "empty"],
)  # fmt: skip
def test_bad_words_raise(source, match):
    with pytest.raises(ValueError, match=match):
        read_number(source)


def test_wrong_digits_raise():
    with pytest.raises(ValueError, match="not the number"):
        number_alignment("elf", "12")
