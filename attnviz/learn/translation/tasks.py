"""The toy translation tasks the seq2seq models learn, their pairs and their known alignments.

A task turns a source string into a target string, one character at a time, and knows for each
target character which span of source characters it comes from (its alignment), so a trained
model's attention can be checked against the truth:

- "dates": "Sunday, 22 November 2026", "22/11/26", ... -> "2026-11-22" (see `dates`);
- "reverse": "attn42" -> "24ntta", target character i comes from source character n - 1 - i,
  the anti-diagonal;
- "german_numbers": "vierundzwanzig" -> "24", units before tens: a crossing, not monotone
  alignment (see `numbers`).

Pairs are drawn from `random.Random(seed)` (one stream per task), so the same task, n and seed
always give the same pairs. Each task also lists its characters: inputs with any other
character are rejected, not guessed at.
"""

from __future__ import annotations

import datetime
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from attnviz.core.checks import check_choice, check_int, describe
from attnviz.core.limits import MAX_PAIRS
from attnviz.core.seeding import check_seed
from attnviz.learn.translation.dates import (
    FIRST_YEAR,
    FORMATS,
    LAST_YEAR,
    date_alignment,
    date_characters,
    date_outside_training,
    draw_date_pair,
    find_date_parts,
    write_date,
)
from attnviz.learn.translation.numbers import (
    draw_number_pair,
    number_alignment,
    number_characters,
    read_number,
)

Span = tuple[int, int]  # (start, end) of source characters, end excluded
Alignment = tuple[Span | None, ...]  # one span per target character, None = comes from nowhere

REVERSE_CHARS = string.ascii_lowercase + string.digits  # what "reverse" strings are made of
REVERSE_LENGTHS = (3, 12)  # shortest and longest "reverse" string


@dataclass(frozen=True)
class Task:
    """One translation task: what it does, its characters and sizes, how to draw and align."""

    name: str  # "dates", "reverse" or "german_numbers"
    title: str  # a short heading, e.g. "Dates → ISO 8601"
    description: str  # one or two sentences for a reader
    source_chars: str  # every character a source may hold, sorted
    target_chars: str  # every character a target may hold, sorted
    max_source_len: int  # most characters of a source
    max_target_len: int  # most characters of a target
    example: tuple[str, str]  # one (source, target) pair to show
    draw: Callable[[random.Random], tuple[str, str]]  # one random (source, target) pair
    align: Callable[[str, str], Alignment]  # the known alignment of a pair
    trained_on: tuple[str, ...]  # the kinds of input the models learned from, for a reader
    outside: Callable[[str], str | None]  # why an input is unlike them (None: it is like them)
    align_any: Callable[[str, str], Alignment] | None = None  # `align` for inputs outside
    # `trained_on` that still show where each output character comes from (None: `align`)


def _draw_reverse(rng: random.Random) -> tuple[str, str]:
    length = rng.randint(*REVERSE_LENGTHS)
    source = "".join(rng.choice(REVERSE_CHARS) for _ in range(length))
    return source, source[::-1]


def _reverse_outside(source: str) -> str | None:
    low, high = REVERSE_LENGTHS
    if not low <= len(source) <= high:
        return f"it has {len(source)} characters; the model only saw {low} to {high}"
    return None


def _number_outside(source: str) -> str | None:
    try:
        read_number(source)
    except ValueError:
        return "it is not a German number word from 1 to 999 as the model saw them"
    return None


def _reverse_alignment(source: str, target: str) -> Alignment:
    if target != source[::-1]:
        raise ValueError(f"{target!r} is not {source!r} reversed ({source[::-1]!r}).")
    n = len(source)
    return tuple((n - 1 - i, n - i) for i in range(n))


_TASKS = (
    Task(
        name="dates",
        title="Dates → ISO 8601",
        description=(
            f"A date written in one of {len(FORMATS)} formats, in lower, Title or UPPER case, "
            f"between {FIRST_YEAR} and {LAST_YEAR} (two-digit years: 50-99 are 19xx, 00-49 "
            "are 20xx; numbers are day first), becomes YYYY-MM-DD."
        ),
        source_chars=date_characters(),
        target_chars="-0123456789",
        max_source_len=30,  # "wednesday, 22 september 2026" has 28
        max_target_len=10,
        example=("Sunday, 22 November 2026", "2026-11-22"),
        draw=draw_date_pair,
        align=date_alignment,
        trained_on=tuple(f"{write_date(datetime.date(2026, 11, 22), f, 'title')}" for f in FORMATS),
        outside=date_outside_training,
        align_any=find_date_parts,
    ),
    Task(
        name="reverse",
        title="Reverse a string",
        description=(
            f"{REVERSE_LENGTHS[0]} to {REVERSE_LENGTHS[1]} lowercase letters and digits, "
            "written backwards: the attention should trace the anti-diagonal."
        ),
        source_chars=REVERSE_CHARS,
        target_chars=REVERSE_CHARS,
        max_source_len=REVERSE_LENGTHS[1],
        max_target_len=REVERSE_LENGTHS[1],
        example=("attn42", "24ntta"),
        draw=_draw_reverse,
        align=_reverse_alignment,
        trained_on=(
            f"{REVERSE_LENGTHS[0]} to {REVERSE_LENGTHS[1]} lowercase letters and digits, "
            "e.g. attn42, q7x, 0a1b2c3d4e5f",
        ),
        outside=_reverse_outside,
    ),
    Task(
        name="german_numbers",
        title="German number words → digits",
        description=(
            "A German number word from 1 to 999 becomes its digits. German says the units "
            'before the tens ("vierundzwanzig", four-and-twenty, is 24), so the attention '
            "crosses over instead of running down a diagonal."
        ),
        source_chars=number_characters(),
        target_chars="0123456789",
        max_source_len=29,  # "siebenhundertsiebenundsiebzig"
        max_target_len=3,
        example=("vierhundertvierundzwanzig", "424"),
        draw=draw_number_pair,
        align=number_alignment,
        trained_on=(
            "one German number word from 1 to 999 in lower case, e.g. siebzehn (17), "
            "vierundzwanzig (24), einhunderteins (101), neunhundertneunundneunzig (999)",
        ),
        outside=_number_outside,
    ),
)
TASKS = tuple(task.name for task in _TASKS)  # the task names, in display order
_BY_NAME = {task.name: task for task in _TASKS}


def get_task(name: str) -> Task:
    """The `Task` called `name` (one of `TASKS`)."""
    check_choice(name, "task", TASKS)
    return _BY_NAME[name]


def make_pairs(task: str, n: int, seed: int) -> list[tuple[str, str]]:
    """`n` random `(source, target)` pairs of `task`; the same arguments give the same pairs.

    Args:
        task: one of `TASKS`.
        n: how many pairs, from 1 to 1,000,000.
        seed: from 0 to 2**32 - 1.

    Raises:
        ValueError: for an unknown task or an out-of-range `n` or `seed`.
    """
    get_task(task)
    check_int(n, "n", low=1, high=MAX_PAIRS)
    check_seed(seed)
    return draw_pairs(task, n, str(seed))


def draw_pairs(task: str, n: int, stream: str) -> list[tuple[str, str]]:
    """`n` pairs of `task` from the random stream named `stream` (unchecked arguments).

    `make_pairs(task, n, seed)` is the stream `str(seed)`; training draws its validation
    pairs from `f"{seed}:validation"`, a stream no `make_pairs` seed gives.
    """
    rng = random.Random(f"{task}:{stream}")  # one stream per task and name
    return [_BY_NAME[task].draw(rng) for _ in range(n)]


def outside_training(task: str, source: str) -> str | None:
    """Why the models of `task` never saw an input like `source` (None when they did): their
    answer to it is a guess, however confident."""
    return get_task(task).outside(source)


def known_alignment(task: str, source: str, target: str, *, any_form: bool = False) -> Alignment:
    """For each character of `target`, the `(start, end)` span of `source` it comes from.

    None marks a target character that comes from no source character (the "-" of an ISO
    date, a 0 digit that no German word names); alignment scores leave those out.

    Raises:
        ValueError: if `(source, target)` is not a correct pair of `task`.
    """
    spec = get_task(task)
    for name, text in (("source", source), ("target", target)):
        if not isinstance(text, str):
            raise ValueError(f"`{name}` must be a string. Received: {describe(text)}.")
    if any_form and spec.align_any is not None:
        return spec.align_any(source, target)
    return spec.align(source, target)
