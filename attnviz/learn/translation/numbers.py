"""The "german_numbers" task: a German number word from 1 to 999 -> its digits.

    dreihundertvierundzwanzig -> 324        siebzehn -> 17        einhunderteins -> 101

German says the units before the tens ("vier-und-zwanzig", four-and-twenty), so the alignment
is not monotone: in "vierundzwanzig" -> "24" the "2" comes from "zwanzig", at the end of the
word, and the "4" from "vier", at its start; in the teens "siebzehn" -> "17" the "1" comes from
"zehn" and the "7" from "sieb". Numbers are written as one word, lower case, with the German
letters ä ö ü ß where they belong ("zwölf", "fünf", "dreißig"); 100-199 are "einhundert...".

Alignment (`number_alignment`): each digit comes from the word part that names it (hundreds
digit <- the unit word before "hundert", tens digit <- the tens word or "zehn", units digit <-
the unit word; "elf" and "zwölf" give both their digits). A 0 digit is named by no word, so it
has no span ("dreihundert" -> "300": the two zeros) and alignment scores leave it out.
"""

from __future__ import annotations

import random

FIRST, LAST = 1, 999  # the numbers drawn (inclusive)
UNITS = ("", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun")
TEENS = {10: "zehn", 11: "elf", 12: "zwölf", 16: "sechzehn", 17: "siebzehn"}  # irregular 10-19
TENS = (
    "", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig",
)  # fmt: skip
TEEN_STEMS = {6: "sech", 7: "sieb"}  # sech-zehn, sieb-zehn
# Word parts the reader knows, by value: ("unit", 1..9), ("tens", 2..9), ("teen", 10..12), ...
_PARTS = {
    **{word: ("unit", n) for n, word in enumerate(UNITS) if word},
    "ein": ("unit", 1),
    **{stem: ("unit", n) for n, stem in TEEN_STEMS.items()},
    **{word: ("tens", n) for n, word in enumerate(TENS) if word},
    "zehn": ("teen", 10),
    "elf": ("teen", 11),
    "zwölf": ("teen", 12),
    "hundert": ("hundert", 100),
    "und": ("und", 0),
}


def _unit_word(n: int) -> str:
    """A unit inside a compound: "ein" for 1 ("einundzwanzig", "einhundert")."""
    return "ein" if n == 1 else UNITS[n]


def _below_hundred(r: int) -> str:
    if r < 10:
        return UNITS[r]
    if r < 20:
        return TEENS.get(r) or UNITS[r - 10] + "zehn"
    tens, units = divmod(r, 10)
    return (_unit_word(units) + "und" if units else "") + TENS[tens]


def german_number(n: int) -> str:
    """The German word for `n`, from 1 to 999 ("einhundertsiebzehn" for 117)."""
    hundreds, rest = divmod(n, 100)
    head = _unit_word(hundreds) + "hundert" if hundreds else ""
    return head + (_below_hundred(rest) if rest else "")


_NUMBERS = {german_number(n): n for n in range(FIRST, LAST + 1)}  # every word -> its number


def draw_number_pair(rng: random.Random) -> tuple[str, str]:
    """One `(source, target)` pair for a random number from 1 to 999."""
    n = rng.randint(FIRST, LAST)
    return german_number(n), str(n)


def _split_parts(source: str) -> list[tuple[str, int, int]]:
    """`source` as known word parts `(part, start, end)`, longest match first.

    Raises:
        ValueError: if some stretch of `source` is no German number word part.
    """
    parts, i = [], 0
    by_length = sorted(_PARTS, key=len, reverse=True)
    while i < len(source):
        part = next((p for p in by_length if source.startswith(p, i)), None)
        if part is None:
            raise ValueError(
                f"{source!r} is not a German number word: {source[i:]!r} (from character {i}) "
                f"starts with no known part. Known parts: {', '.join(sorted(_PARTS))}."
            )
        parts.append((part, i, i + len(part)))
        i += len(part)
    return parts


def read_number(source: str) -> tuple[int, dict[str, tuple[int, int] | None]]:
    """Parse a German number word as `german_number` writes it.

    Returns:
        The number and, for "hundreds", "tens" and "units", the `(start, end)` span of the
        word part that names that digit (None for a 0 digit or an absent one).

    Raises:
        ValueError: if `source` is not a German number word from 1 to 999.
    """
    number = _NUMBERS.get(source)
    if number is None:
        _split_parts(source)  # names the first unknown stretch, if there is one
        raise ValueError(
            f"{source!r} is not a German number word from {FIRST} to {LAST} as this task "
            'writes them: one word, lower case, e.g. "dreihundertvierundzwanzig" (324), '
            '"einhunderteins" (101), "siebzehn" (17).'
        )
    parts = [(start, end) for _, start, end in _split_parts(source)]
    kinds = [_PARTS[source[a:b]][0] for a, b in parts]
    spans: dict[str, tuple[int, int] | None] = {"hundreds": None, "tens": None, "units": None}
    if number >= 100:  # <unit> hundert ...
        spans["hundreds"], parts, kinds = parts[0], parts[2:], kinds[2:]
    if kinds == ["unit"]:  # eins ... neun
        spans["units"] = parts[0]
    elif kinds == ["tens"]:  # zwanzig ... neunzig
        spans["tens"] = parts[0]
    elif kinds == ["unit", "und", "tens"]:  # vier-und-zwanzig
        spans["units"], spans["tens"] = parts[0], parts[2]
    elif kinds == ["teen"] and number % 100 != 10:  # elf, zwölf: both digits
        spans["tens"] = spans["units"] = parts[0]
    elif kinds:  # zehn (its 0 has no span), drei-zehn, sech-zehn
        spans["tens"] = parts[-1]
        spans["units"] = parts[0] if len(parts) == 2 else None
    return number, spans


def number_alignment(source: str, target: str) -> tuple[tuple[int, int] | None, ...]:
    """For each digit of `target`, the span of the word part of `source` that names it.

    Raises:
        ValueError: if `source` is not a German number word or `target` not its digits.
    """
    number, spans = read_number(source)
    if target != str(number):
        raise ValueError(f"{target!r} is not the number {source!r} stands for ({number}).")
    names = ("hundreds", "tens", "units")[-len(target) :]
    return tuple(spans[name] for name in names)


def number_characters() -> str:
    """Every character a german_numbers source can hold, sorted."""
    return "".join(sorted(set("".join(_NUMBERS))))
