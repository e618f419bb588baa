"""Tests for bench/results.py: the one file of the benchmark's latest figures, and its page."""

import json

from bench import results
from bench.report import Figure

BACKEND = [
    Figure("N=256 vs Keras MHA", 2.0, "Keras", 4.0, "ms", "≤ 1×", True, "60 calls"),
    Figure("agree on weights", 3.0, "", None, "", "", None, compare=False),
]


def test_a_run_replaces_its_section_and_keeps_the_others(tmp_path):
    path = tmp_path / "results.json"
    results.record("backend", "1. Back end", ["date: 2026-11-27 10:00 UTC"], BACKEND, path)
    results.record("lm", "7. Language model", ["date: 2026-11-27 11:00 UTC"], BACKEND[:1], path)
    newer = [Figure("N=256 vs Keras MHA", 3.0, "Keras", 4.0, "ms", "≤ 1×", True)]
    results.record("backend", "1. Back end", ["date: 2026-11-28 09:00 UTC"], newer, path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert sorted(saved) == ["backend", "lm"]
    assert saved["backend"]["machine"] == ["date: 2026-11-28 09:00 UTC"]
    assert [f["value"] for f in saved["backend"]["figures"]] == [3.0]
    assert saved["backend"]["figures"][0]["ratio"] == 0.75  # 3 ms / 4 ms, kept for readers
    assert saved["lm"]["machine"] == ["date: 2026-11-27 11:00 UTC"]  # untouched


TITLES = {"backend": "1. Back end", "app": "2. App"}


def test_the_page_shows_each_figure_beside_its_baseline_and_the_sections_not_measured(tmp_path):
    path = tmp_path / "results.json"
    results.record("backend", "1. Back end", ["date: 2026-11-27", "cpu: 2"], BACKEND, path)
    page = results.markdown(results.load(path), TITLES)
    lines = page.splitlines()
    assert lines[0] == "#### 1. Back end"
    assert "`python -m bench.benchmark --only backend`; date: 2026-11-27; cpu: 2" in lines
    assert "| N=256 vs Keras MHA | 2 ms | Keras 4 ms | 0.50× | ≤ 1× | yes |" in lines
    assert "| agree on weights | 3 |  |  |  |  |" in lines  # a count: no ratio
    assert "- **N=256 vs Keras MHA**: 60 calls" in lines
    assert page.index("#### 1. Back end") < page.index("#### 2. App")
    assert "#### 2. App\n\nNot measured yet: `python -m bench.benchmark --only app`." in page


def test_a_section_is_headed_by_its_current_title_not_the_one_saved_with_its_figures(tmp_path):
    # the sections were renumbered after this run: the page follows the benchmark's numbers
    path = tmp_path / "results.json"
    results.record("app", "2b. App", ["date: 2026-11-27"], BACKEND[:1], path)
    results.record("gone", "9. A section since removed", ["date: 2026-11-20"], BACKEND[:1], path)
    page = results.markdown(results.load(path), {"backend": "1. Back end", "app": "4. App"})
    headings = [line for line in page.splitlines() if line.startswith("#### ")]
    assert headings == ["#### 1. Back end", "#### 4. App", "#### 9. A section since removed"]


def test_no_file_is_no_figures_and_the_load_through_nginx_names_its_command(tmp_path):
    assert results.load(tmp_path / "missing.json") == {}
    page = results.markdown({}, {"load-nginx2": "10. Load through nginx"})
    assert "`python -m bench.benchmark --only load --through-nginx 2`" in page


def test_a_note_cannot_break_the_table_or_become_html():
    figure = Figure("a | b", 1.0, "", None, "s", "", None, note="<script>x</script>\nnext")
    page = results.markdown({"x": _entry([figure])}, {})
    assert "| a \\| b | 1 s |" in page
    assert "<script>" not in page and "&lt;script&gt;x&lt;/script&gt; next" in page


def _entry(figures: list[Figure]) -> dict:
    return {"title": "X", "machine": [], "figures": [vars(f) | {"ratio": None} for f in figures]}
