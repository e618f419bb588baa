"""Tests for learn/translation/dates.py: every format is drawn, weekdays are true, alignments hold
the parts."""

import calendar
import datetime
import re

import pytest

from attnviz.learn.translation import dates
from attnviz.learn.translation.dates import FORMATS, date_alignment, read_date, write_date
from attnviz.learn.translation.tasks import make_pairs

NOV_22_2026 = datetime.date(2026, 11, 22)  # a Sunday (ISO weekday 7)

# Hand-written: each format for 22 November 2026, and a regular expression that only it fits.
WRITTEN = [
    ("22 nov 2026", r"\d{1,2} [a-z]{3} \d{4}"),
    ("november 22, 2026", r"[a-z]{3,9} \d{1,2}, \d{4}"),
    ("sunday, 22 november 2026", r"[a-z]{6,9}, \d{1,2} [a-z]{3,9} \d{4}"),
    ("22/11/2026", r"\d\d/\d\d/\d{4}"),
    ("nov 22 26", r"[a-z]{3} \d{1,2} \d\d"),
    ("2026.11.22", r"\d{4}\.\d\d\.\d\d"),
    ("22.11.26", r"\d\d\.\d\d\.\d\d"),
    ("sun, nov 22, 2026", r"[a-z]{3}, [a-z]{3} \d{1,2}, \d{4}"),
    ("22-nov-2026", r"\d\d-[a-z]{3}-\d{4}"),
    ("the 22nd of november 2026", r"the \d{1,2}(st|nd|rd|th) of [a-z]{3,9} \d{4}"),
    ("22 november '26", r"\d{1,2} [a-z]{3,9} '\d\d"),
    ("2026-11-22", r"\d{4}-\d{1,2}-\d{1,2}"),
]


def test_formats_write_22_november_2026_as_written_by_hand():
    assert [write_date(NOV_22_2026, t, "lower") for t in FORMATS] == [w for w, _ in WRITTEN]
    assert len(FORMATS) >= 8


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("lower", "the 22nd of november 2026"),
        ("title", "The 22nd Of November 2026"),
        ("upper", "THE 22ND OF NOVEMBER 2026"),
    ],
    ids=["lower", "title", "upper"],
)
def test_cases(case, expected):
    assert write_date(NOV_22_2026, "the {dth} of {month} {yyyy}", case) == expected


@pytest.mark.parametrize(
    ("day", "ordinal"),
    [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"), (13, "13th"),
     (21, "21st"), (22, "22nd"), (23, "23rd"), (31, "31st")],
)  # fmt: skip
def test_ordinals(day, ordinal):
    assert write_date(datetime.date(2026, 1, day), "{dth}", "lower") == ordinal


def test_every_format_and_case_is_drawn():
    sources = [s for s, _ in make_pairs("dates", 2000, 0)]
    for written, pattern in WRITTEN:
        assert any(re.fullmatch(pattern, s, re.IGNORECASE) for s in sources), written
    assert any(s.isupper() for s in sources) and any(s.islower() for s in sources)
    assert any(s[0].isupper() and not s.isupper() for s in sources)  # Title case


def test_shown_weekdays_are_the_true_weekdays():
    names = [calendar.day_name[i].lower() for i in range(7)]  # the standard library's names
    seen = 0
    for source, target in make_pairs("dates", 2000, 1):
        first = source.split(",")[0].lower()
        if first in names or first in [n[:3] for n in names]:
            seen += 1
            weekday = names[datetime.date.fromisoformat(target).weekday()]
            assert first in (weekday, weekday[:3]), (source, target)
    assert seen > 100


def test_two_digit_years_map_into_1950_2049():
    assert read_date("nov 22 49")[0] == datetime.date(2049, 11, 22)
    assert read_date("nov 22 50")[0] == datetime.date(1950, 11, 22)
    assert read_date("01.01.00")[0] == datetime.date(2000, 1, 1)
    years = [int(t[:4]) for _, t in make_pairs("dates", 3000, 2)]
    assert min(years) >= 1950 and max(years) <= 2049 and max(years) - min(years) > 90


def test_alignment_spans_hold_the_year_month_and_day():
    months = [calendar.month_name[m].lower() for m in range(1, 13)]  # independent month names
    for source, target in make_pairs("dates", 1000, 3):
        spans = date_alignment(source, target)
        assert spans[4] is None and spans[7] is None  # the two "-"
        year, month, day = (source[a:b].lower() for a, b in (spans[0], spans[5], spans[8]))
        assert year == target[:4] or year == target[2:4], (source, year)
        assert spans[0] == spans[1] == spans[2] == spans[3]
        month_number = (
            int(month) if month.isdigit() else 1 + [m[:3] for m in months].index(month[:3])
        )
        assert month.isdigit() or month in (months[month_number - 1], months[month_number - 1][:3])
        assert month_number == int(target[5:7]), (source, month)
        assert int(re.match(r"\d+", day).group()) == int(target[8:]), (source, day)


def test_alignment_pinned_example():
    # "Sunday, 22 November 2026": day 8-10, month 11-19, year 20-24
    spans = date_alignment("Sunday, 22 November 2026", "2026-11-22")
    assert spans == ((20, 24),) * 4 + (None,) + ((11, 19),) * 2 + (None,) + ((8, 10),) * 2


@pytest.mark.parametrize(
    ("source", "target", "match"),
    [
        ("monday, 22 november 2026", "2026-11-22", "matches none"),  # wrong weekday
        ("31/02/2026", "2026-02-28", "matches none"),  # no such day
        ("22 nov 2050", "2050-11-22", "matches none"),  # out of the year range
        ("22nd nov", "2026-11-22", "matches none"),
        ("the 22st of november 2026", "2026-11-22", "matches none"),  # wrong suffix
        ("22 nov 2026", "2026-11-23", "not the ISO date"),
    ],
    ids=["weekday", "feb-31", "year", "no-year", "suffix", "target"],
)
def test_bad_pairs_raise(source, target, match):
    with pytest.raises(ValueError, match=match):
        date_alignment(source, target)


def test_characters_cover_both_cases_and_no_stray_letters():
    chars = dates.date_characters()
    assert "N" in chars and "n" in chars and "'" in chars and "/" in chars
    assert "q" not in chars and "z" not in chars  # no month or weekday has them
