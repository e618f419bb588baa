"""MkDocs hooks (mkdocs.yml `hooks:`): the Performance page's figures come from the results file,
and the repository's top-level `assets/` (the screenshots the README shows too) is part of the
site, at the same address (`assets/screenshots/start.png`), without a copy under docs/.

The marker `<!-- bench/results.json -->` in a page becomes the benchmark's latest figures, read
from `bench/results.json` (written by `python -m bench.benchmark`), so no figure is typed in
prose. `bench` is a folder of the repository, not an installed package: run MkDocs as
`python -m mkdocs` from the repository root, which puts that folder on the import path.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File

ASSETS = "assets"  # the repository's folder of images, served at /assets/
MARKER = "<!-- bench/results.json -->"


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs' API
    """Put the benchmark's latest figures where the page has the marker."""
    if MARKER not in markdown:
        return markdown
    try:
        from bench import results
        from bench.sections import TITLES
    except ImportError as error:
        raise ImportError(
            f"The Performance page reads bench/results.json with the `bench` folder ({error}). "
            "Run MkDocs from the repository root as `python -m mkdocs build` (or `serve`)."
        ) from error
    return markdown.replace(MARKER, results.markdown(results.load(), TITLES))


def on_files(files, config):
    """Add every file of the repository's `assets/` to the site's files (links to them are then
    checked like links to pages)."""
    root = Path(config["config_file_path"]).parent
    for path in sorted((root / ASSETS).rglob("*")):
        if path.is_file():
            name = path.relative_to(root).as_posix()
            files.append(File(name, str(root), config["site_dir"], config["use_directory_urls"]))
    return files
