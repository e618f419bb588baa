"""The "dates" task: a human-readable date in one of many formats -> the ISO date `YYYY-MM-DD`.

Formats are templates of fields (`FORMATS`); one template list both writes the dates and reads
them back, so the known alignment of every pair comes from parsing its source, not from
bookkeeping at generation time:

- years run from 1950 to 2049, so a two-digit year is never ambiguous: 50-99 -> 1950-1999,
  00-49 -> 2000-2049;
- numeric dates are day first (22/11/2026, 22.11.26) or year first (2026.11.22), never the
  US month-first order, which would clash with day first;
- a weekday, when shown, is the true weekday of the date;
- the case is lower, Title or UPPER ("22 nov 2026", "22 Nov 2026", "22 NOV 2026").

Alignment (`date_alignment`): each ISO digit comes from one field of the source, the year digits
from the year ("2026" or "26"), the month digits from the month ("nov", "November" or "11"), the
day digits from the day ("22", "22nd"); the two "-" come from nowhere (no span).
"""

from __future__ import annotations

import datetime
import random
import re

FIRST_YEAR, LAST_YEAR = 1950, 2049  # the years dates are drawn from (inclusive)
MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
ORDINALS = ("st", "nd", "rd", "th")  # day suffixes: 1st, 2nd, 3rd, 4th

# One template per format: {field} is filled in, everything else is written as is.
FORMATS = (
    "{d} {mon} {yyyy}",  # 22 nov 2026
    "{month} {d}, {yyyy}",  # november 22, 2026
    "{wd}, {d} {month} {yyyy}",  # sunday, 22 november 2026
    "{dd}/{mm}/{yyyy}",  # 22/11/2026
    "{mon} {d} {yy}",  # nov 22 26
    "{yyyy}.{mm}.{dd}",  # 2026.11.22
    "{dd}.{mm}.{yy}",  # 22.11.26
    "{wdabbr}, {mon} {d}, {yyyy}",  # sun, nov 22, 2026
    "{dd}-{mon}-{yyyy}",  # 22-nov-2026
    "the {dth} of {month} {yyyy}",  # the 22nd of november 2026
    "{d} {month} '{yy}",  # 22 november '26
    "{yyyy}-{m}-{d}",  # 2026-11-22 (no leading zeros)
)
CASES = ("lower", "title", "upper")  # the case a date is written in

_FIELDS = {  # field -> (the date part it shows, the regular expression that reads it)
    "d": ("day", r"\d{1,2}"),
    "dd": ("day", r"\d{2}"),
    "dth": ("day", r"\d{1,2}(?:st|nd|rd|th)"),
    "m": ("month", r"\d{1,2}"),
    "mm": ("month", r"\d{2}"),
    "mon": ("month", r"[a-z]{3}"),
    "month": ("month", r"[a-z]{3,9}"),
    "yy": ("year", r"\d{2}"),
    "yyyy": ("year", r"\d{4}"),
    "wd": ("weekday", r"[a-z]{6,9}"),
    "wdabbr": ("weekday", r"[a-z]{3}"),
}
_FIELD = re.compile(r"\{(\w+)\}")


def _ordinal(day: int) -> str:
    """ "1st", "2nd", "3rd", "4th", ..., "11th", "12th", "13th", ..., "21st", ..."""
    suffix = "th" if day in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _field_text(field: str, date: datetime.date) -> str:
    """How `field` of a template writes `date` (lower case)."""
    texts = {
        "d": str(date.day),
        "dd": f"{date.day:02d}",
        "dth": _ordinal(date.day),
        "m": str(date.month),
        "mm": f"{date.month:02d}",
        "mon": MONTHS[date.month - 1][:3],
        "month": MONTHS[date.month - 1],
        "yy": f"{date.year % 100:02d}",
        "yyyy": str(date.year),
        "wd": WEEKDAYS[date.weekday()],
        "wdabbr": WEEKDAYS[date.weekday()][:3],
    }
    return texts[field]


def write_date(date: datetime.date, template: str, case: str) -> str:
    """`date` written with one of `FORMATS` in one of `CASES`."""
    text = _FIELD.sub(lambda m: _field_text(m.group(1), date), template)
    if case == "upper":
        return text.upper()
    if case == "title":  # capitalise whole words only: "22nd" stays "22nd"
        return re.sub(r"\b[a-z]+\b", lambda m: m.group().capitalize(), text)
    return text


def draw_date_pair(rng: random.Random) -> tuple[str, str]:
    """One `(source, target)` pair: a random date, format and case."""
    first = datetime.date(FIRST_YEAR, 1, 1).toordinal()
    last = datetime.date(LAST_YEAR, 12, 31).toordinal()
    date = datetime.date.fromordinal(rng.randint(first, last))
    source = write_date(date, rng.choice(FORMATS), rng.choice(CASES))
    return source, date.isoformat()


def _pattern(template: str) -> re.Pattern[str]:
    """The regular expression that reads `template` back, one named group per field."""
    parts, end = [], 0
    for match in _FIELD.finditer(template):
        parts.append(re.escape(template[end : match.start()]))
        field = match.group(1)
        parts.append(f"(?P<{field}>{_FIELDS[field][1]})")
        end = match.end()
    parts.append(re.escape(template[end:]))
    return re.compile("".join(parts), re.IGNORECASE)


_PATTERNS = tuple(_pattern(t) for t in FORMATS)


def read_date(source: str) -> tuple[datetime.date, dict[str, tuple[int, int]]]:
    """Parse a date written in one of `FORMATS`.

    Returns:
        The date and, for "year", "month", "day" (and "weekday" when shown), the
        `(start, end)` character span of that part in `source`.

    Raises:
        ValueError: if no format reads `source` as a real date (with its true weekday).
    """
    readings = {_read_with(p, source) for p in _PATTERNS if p.fullmatch(source)} - {None}
    if len(readings) != 1:
        problem = "matches none of" if not readings else "is ambiguous between"
        examples = ", ".join(repr(write_date(_EXAMPLE, t, "lower")) for t in FORMATS)
        raise ValueError(
            f"{source!r} {problem} the date formats of the dates task (years {FIRST_YEAR}-"
            f"{LAST_YEAR}, true weekdays). Allowed formats, shown for 22 November 2026: "
            f"{examples}."
        )
    date, spans = readings.pop()
    return date, dict(spans)


_EXAMPLE = datetime.date(2026, 11, 22)


def _read_with(pattern: re.Pattern[str], source: str):
    """`(date, spans)` if `pattern` reads `source` as a real date, else None."""
    match = pattern.fullmatch(source)
    values, spans = {}, {}
    for field, text in match.groupdict().items():
        part = _FIELDS[field][0]
        spans[part] = match.span(field)
        values[part] = _field_value(field, text.lower())
    if None in values.values():
        return None
    year = values["year"]
    if "yy" in match.groupdict():  # two digits: 50-99 -> 1950-1999, 00-49 -> 2000-2049
        year += 1900 if year >= FIRST_YEAR % 100 else 2000
    try:
        date = datetime.date(year, values["month"], values["day"])
    except (TypeError, ValueError):
        return None
    if not FIRST_YEAR <= date.year <= LAST_YEAR:
        return None
    if "weekday" in values and values["weekday"] != date.weekday():
        return None
    return date, tuple(sorted(spans.items()))


def _field_value(field: str, text: str) -> int | None:
    """The number a field's text stands for (month and weekday names by index), or None."""
    if field in ("mon", "month"):
        names = [m[:3] for m in MONTHS] if field == "mon" else list(MONTHS)
        return names.index(text) + 1 if text in names else None
    if field in ("wd", "wdabbr"):
        names = [w[:3] for w in WEEKDAYS] if field == "wdabbr" else list(WEEKDAYS)
        return names.index(text) if text in names else None
    day_or_number = int(re.match(r"\d+", text).group())
    if field == "dth" and text != _ordinal(day_or_number):
        return None  # a wrong suffix ("22st")
    return day_or_number


def date_alignment(source: str, target: str) -> tuple[tuple[int, int] | None, ...]:
    """For each character of the ISO `target`, the span of `source` it comes from.

    Raises:
        ValueError: if `source` is not a date in a known format or `target` is not its ISO date.
    """
    date, spans = read_date(source)
    if target != date.isoformat():
        raise ValueError(f"{target!r} is not the ISO date of {source!r} ({date.isoformat()}).")
    parts = ["year"] * 4 + [None] + ["month"] * 2 + [None] + ["day"] * 2
    return tuple(None if part is None else spans[part] for part in parts)


def find_date_parts(source: str, target: str) -> tuple[tuple[int, int] | None, ...]:
    """`date_alignment` for a source in any format that shows the ISO `target`'s day, month
    name (or number) and year: each part is looked for in `source` itself. What a model that
    decodes "3 March 2021" right (not a format it was trained on) looked at is then scored.

    Raises:
        ValueError: if `target` is no ISO date or `source` does not show its three parts.
    """
    try:
        date = datetime.date.fromisoformat(target)
    except (TypeError, ValueError):
        raise ValueError(f"{target!r} is not an ISO date (YYYY-MM-DD).") from None
    try:
        return date_alignment(source, target)
    except ValueError:
        pass  # not one of the formats: look for the parts
    lower, taken, spans = source.lower(), [], {}
    month = MONTHS[date.month - 1]
    searches = {  # part -> what may show it, most specific first
        "year": [rf"(?<!\d){date.year}(?!\d)", rf"(?<!\d){date.year % 100:02d}(?!\d)"],
        "month": [rf"\b{month}\b", rf"\b{month[:3]}\b", rf"(?<!\d)0?{date.month}(?!\d)"],
        "day": [rf"(?<!\d)0?{date.day}(?:st|nd|rd|th)?(?!\d)"],
    }
    for part, patterns in searches.items():
        spans[part] = _first_free(lower, patterns, taken)
        if spans[part] is None:
            raise ValueError(f"{source!r} does not show the {part} of {target}.")
        taken.append(spans[part])
    parts = ["year"] * 4 + [None] + ["month"] * 2 + [None] + ["day"] * 2
    return tuple(None if part is None else spans[part] for part in parts)


def _first_free(text: str, patterns: list[str], taken: list[tuple[int, int]]):
    """The span of the first match of `patterns` that overlaps no span in `taken`, or None."""
    for pattern in patterns:
        for match in re.finditer(pattern, text):
            a, b = match.span()
            if all(b <= x or a >= y for x, y in taken):
                return a, b
    return None


def date_outside_training(source: str) -> str | None:
    """Why the dates model never saw an input like `source` (None when it did): a format it was
    not trained on, a date that does not exist, or a year outside 1950–2049."""
    written = [p for p in _PATTERNS if p.fullmatch(source)]
    if not written:
        return f"it is not written in one of the {len(FORMATS)} formats the model was trained on"
    if all(_read_with(p, source) is None for p in written):
        return (
            f"it is not a real date between {FIRST_YEAR} and {LAST_YEAR} (or its weekday is "
            "wrong): the model only ever saw real dates of those years"
        )
    return None


def date_characters() -> str:
    """Every character a dates source can hold, sorted."""
    words = [*MONTHS, *WEEKDAYS, *ORDINALS, "the", "of"]
    letters = set("".join(words))
    punctuation = set("".join(_FIELD.sub("", t) for t in FORMATS))
    return "".join(sorted(letters | {c.upper() for c in letters} | set("0123456789") | punctuation))
