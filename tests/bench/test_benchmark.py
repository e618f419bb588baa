"""Tests for bench/benchmark.py: every section has a runner, the command line picks sections by
name and lists them, and only a full run records its figures."""

import re

import pytest

from bench import benchmark
from bench.report import Figure
from bench.sections import SECTIONS, TITLES


def test_every_section_has_a_runner_and_nothing_else_does():
    assert list(benchmark.RUNNERS) == list(SECTIONS)


def test_only_runs_the_named_sections_in_the_benchmark_order():
    args = benchmark._parse(["--only", "your_model, inspect"])
    assert args.only == ["your_model", "inspect"]
    assert [s for s in SECTIONS if s in args.only] == ["inspect", "your_model"]
    assert benchmark._parse([]).only == list(SECTIONS)


def test_an_unknown_section_is_refused_with_the_names_to_choose_from(capsys):
    with pytest.raises(SystemExit):
        benchmark._parse(["--only", "inspect,first-open"])
    error = capsys.readouterr().err
    assert "unknown section(s) first-open" in error and "first_open" in error


def test_help_lists_every_section_with_its_title(capsys):
    with pytest.raises(SystemExit) as exit_:
        benchmark._parse(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for section in SECTIONS:
        assert re.search(rf"^  {section} +{re.escape(TITLES[section])}$", out, re.M)


@pytest.fixture
def quiet_run(monkeypatch, tmp_path):
    """main() with stand-in sections: no server, no browser, the report saved under tmp_path;
    returns the list of (section, title, figures) it records in the results file."""
    recorded = []
    monkeypatch.setattr(benchmark, "BENCH", tmp_path / "bench")
    monkeypatch.setattr(benchmark, "machine_lines", lambda chromium: ["date: today"])
    monkeypatch.setattr(benchmark.servers, "log_dir", lambda: tmp_path / "logs")
    monkeypatch.setattr(benchmark.results, "record", lambda *args: recorded.append(args))
    return recorded


def _section(figure: Figure):
    return lambda args: lambda quick: [figure]


def _broken(args):
    def run(quick):
        raise RuntimeError("no browser")

    return run


def test_a_full_run_records_each_section_under_its_title(monkeypatch, quiet_run, capsys):
    figure = Figure("inspect (checked)", 2.0, "plain call", 1.8, "ms", "≤ 1.30× plain call", True)
    monkeypatch.setitem(benchmark.RUNNERS, "inspect", _section(figure))
    monkeypatch.setitem(benchmark.RUNNERS, "your_model", _broken)
    assert benchmark.main(["--only", "your_model,inspect"]) == 1  # one section failed
    assert quiet_run == [("inspect", TITLES["inspect"], ["date: today"], [figure])]
    out = capsys.readouterr().out
    assert out.index(TITLES["inspect"]) < out.index(f"{TITLES['your_model']}\nFAILED:")
    saved = benchmark.BENCH / "results" / "latest.txt"
    assert "RuntimeError: no browser" in saved.read_text(encoding="utf-8")


def test_a_quick_run_records_nothing(monkeypatch, quiet_run):
    figure = Figure("x", 1.0, "", None, "s", "", None)
    monkeypatch.setitem(benchmark.RUNNERS, "inspect", _section(figure))
    assert benchmark.main(["--only", "inspect", "--quick"]) == 0
    assert quiet_run == []
    assert (benchmark.BENCH / "results" / "quick.txt").is_file()
