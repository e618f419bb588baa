"""Tests for bench/sections.py: the sections, their numbers, and the documents that describe them
(bench/README.md, docs/performance.md) agree."""

import re
from pathlib import Path

from bench.sections import SECTIONS, TITLES

ROOT = Path(__file__).resolve().parents[2]


def _numbered() -> list[tuple[str, str]]:
    """(number, section) in the benchmark's order: 1 for the first section of SECTIONS, …"""
    return [(str(i), section) for i, section in enumerate(SECTIONS, start=1)]


def test_every_section_has_a_title_numbered_by_its_place():
    assert list(TITLES) == list(SECTIONS)
    numbers = [re.match(r"(\d+)\. \S", TITLES[s]) for s in SECTIONS]
    assert [m and m.group(1) for m in numbers] == [n for n, _ in _numbered()]


def test_the_readme_describes_each_section_under_its_number_in_the_benchmark_order():
    readme = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^### (\d+)\. .+ \(`--only (\w+)`\)$", readme, re.M)
    assert headings == _numbered()
    assert len(re.findall(r"^### ", readme, re.M)) == len(headings)  # no section unnumbered


def test_the_performance_page_lists_each_section_under_its_number():
    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert re.findall(r"^\| (\d+) \| `(\w+)` \|", page, re.M) == _numbered()
    readings = re.findall(r"^- \*\*(\d+)\. ", page.split("## Reading the figures")[1], re.M)
    assert readings == sorted(set(readings), key=int)  # in order, each at most once
    assert set(readings) <= {n for n, _ in _numbered()}


def test_the_readme_quotes_no_dated_figures():
    # figures live in bench/results.json, written by the benchmark (issue 40)
    readme = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b|^Latest|\bLatest,", readme, re.M)
    assert not re.search(r"\d(\.\d+)? ?(ms|s)\b against", readme)
