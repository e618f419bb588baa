"""Counted nouns for captions, titles and messages: "1 key", "3 keys", "1 query", "2 queries".

Every caption that states a number of things builds its words here, from the number the chart
was drawn with, so that the text agrees with the chart in number too.
"""

from __future__ import annotations

IRREGULAR = {"matrix": "matrices", "index": "indices", "child": "children", "epoch": "epochs"}


def plural_of(noun: str) -> str:
    """The plural of an English `noun`: "key" -> "keys", "query" -> "queries", "box" ->
    "boxes"; the last word of a phrase ("padding key" -> "padding keys")."""
    head, _, last = noun.rpartition(" ")
    if last in IRREGULAR:
        many = IRREGULAR[last]
    elif last.endswith("y") and last[-2:-1] not in tuple("aeiou"):
        many = last[:-1] + "ies"
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        many = last + "es"
    else:
        many = last + "s"
    return f"{head} {many}" if head else many


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`n` and `noun`, in the plural unless `n` is 1 ("1 position", "0 positions",
    "1,024 tokens"); `many` is the plural where `plural_of` would get it wrong.

    Raises:
        ValueError: for an `n` that is not a whole number.
    """
    try:
        whole = not isinstance(n, (bool, str)) and int(n) == n
    except (TypeError, ValueError):
        whole = False
    if not whole:
        raise ValueError(f"`n` must be a whole number of things. Received: {n!r}.")
    n = int(n)
    return f"{n:,} {noun if n == 1 else (many or plural_of(noun))}"
