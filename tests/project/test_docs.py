"""The documentation site (mkdocs.yml, docs/): it builds strictly, its API reference lists every
public name and only names that import, and its pages say what the code does."""

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
PACKAGES = ("attnviz", "attnviz.learn", "attnviz.heads", "attnviz.lessons")  # with an __all__


def _reference_paths() -> list[str]:
    """Every `::: dotted.path` directive of the API reference's pages, in order."""
    pages = sorted((DOCS / "reference").glob("*.md"))
    return [p for page in pages for p in re.findall(r"^::: (\S+)$", page.read_text(), re.M)]


def _resolve(path: str) -> object:
    """The object `path` names: the longest importable module, then its attributes."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            value = getattr(value, name)
        return value
    raise ModuleNotFoundError(path)


@pytest.mark.slow  # MkDocs renders every page and mkdocstrings reads the package's source
def test_the_docs_build_strictly(tmp_path):
    # --strict: a broken link or anchor, a missing page or a reference to a name that does not
    # exist is an error, not a warning
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    reference = (tmp_path / "reference" / "attnviz" / "index.html").read_text(encoding="utf-8")
    assert 'id="attnviz.core.attention.compute_attention"' in reference  # rendered, with its id
    performance = (tmp_path / "performance" / "index.html").read_text(encoding="utf-8")
    assert "bench/results.json -->" not in performance  # the hook put the figures there


def test_every_name_the_api_reference_lists_imports():
    paths = _reference_paths()
    assert len(paths) > 100 and len(set(paths)) == len(paths), "listed twice"
    missing = []
    for path in paths:
        try:
            _resolve(path)
        except (ImportError, AttributeError) as error:
            missing.append(f"{path}: {error}")
    assert missing == []


def test_the_api_reference_lists_every_public_name():
    listed = {path: _resolve(path) for path in _reference_paths()}
    unlisted = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            value = getattr(module, name)
            if not any(p.rsplit(".", 1)[-1] == name and v is value for p, v in listed.items()):
                unlisted.append(f"{package}.{name}")
    assert unlisted == []


def test_the_nav_names_every_page_and_every_page_is_in_the_nav():
    nav = re.findall(r"^\s+- (?:[^:\n]+: )?(\S+\.md)$", (ROOT / "mkdocs.yml").read_text(), re.M)
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages


def test_the_teachers_guide_lists_every_lesson_at_its_address():
    from attnviz.lessons import LESSONS

    guide = (DOCS / "teachers.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `/(lesson-\d+)` \| (.+?) \|", guide, re.M)
    assert rows == [(lesson.slug, lesson.title) for lesson in LESSONS]


def test_the_performance_page_shows_the_results_file():
    # the figures come from the file the benchmark writes, not from prose (docs/hooks.py)
    page = (DOCS / "performance.md").read_text(encoding="utf-8")
    head, latest = page.split("\n## Latest figures\n")
    assert "<!-- bench/results.json -->" not in head
    assert latest.strip().splitlines()[-1] == "<!-- bench/results.json -->"
    assert not re.search(r"\d", latest)  # no figure typed beside the file's


def test_the_docs_quote_no_test_timings():
    for page in DOCS.rglob("*.md"):
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert not re.search(r"CPU-s|CPU-seconds|tests? (took|takes) \d", text), page.name


def test_the_contributing_page_gives_the_ci_test_command():
    page = (DOCS / "contributing.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [c for c in re.findall(r"```sh\n(.+?)\n```", page) if "pytest -n 3" in c]
    assert len(commands) == 1 and commands[0] in ci


def test_the_readme_links_the_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in ("teachers", "app", "python", "inspect", "learn", "deployment", "performance"):
        assert f"docs/{page}.md" in readme, page


@pytest.mark.slow  # a fresh Python that imports TensorFlow
def test_the_readme_example_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"```python\n(.+?)\n```", readme, re.DOTALL)
    checks = (
        "\nimport plotly.graph_objects as go\n"
        "assert np.allclose(result.weights, [[1, 0], [0.150325, 0.849675]], atol=1e-6)\n"
        "assert np.allclose(result.masked_scores[1], [1.1547, 2.88675], atol=1e-5)\n"
        "assert result.masked_scores[0, 1] == -np.inf and heads.weights.shape == (4, 8, 8)\n"
        "assert heads.kv_head_of.tolist() == [0, 0, 1, 1] and isinstance(figure, go.Figure)\n"
    )
    command = [sys.executable, "-c", code + checks]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_the_readme_is_read_in_two_minutes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert not re.search(r"\d ?(s|ms|min|minutes|seconds)\b|CPU-s", readme)  # no timings
