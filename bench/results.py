"""The benchmark's latest figures, kept in one file: `bench/results.json`.

Each full (not `--quick`) run of a section replaces that section's entry: its title, when and on
what machine it ran, and its figures. Sections not run keep their last entry, so the file holds
the latest figures of every section, each with its own date. The documentation's Performance
page renders it (`markdown`, called by `docs/hooks.py`): no figure is written in prose, and a
commit changes a figure only when a run of the benchmark did.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.report import HEADERS, Figure, cells

RESULTS = Path(__file__).resolve().parent / "results.json"


def record(
    section: str, title: str, machine: list[str], figures: list[Figure], path: Path = RESULTS
) -> None:
    """Replace `section`'s entry of the results file at `path` (created if missing)."""
    results = load(path)
    results[section] = {
        "title": title,
        "machine": machine,
        "figures": [{**dataclasses.asdict(f), "ratio": f.ratio} for f in figures],
    }
    text = json.dumps(results, indent=1, ensure_ascii=False, sort_keys=True)
    path.write_text(text + "\n", encoding="utf-8")


def load(path: Path = RESULTS) -> dict[str, Any]:
    """The results file's sections by name ({} when there is no file yet)."""
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def markdown(results: dict[str, Any], titles: Mapping[str, str]) -> str:
    """The results as markdown: per section (in the order of `titles`, then any others), its
    title, the command that measures it, the machine it ran on and one table row per figure; a
    section never run says so. A section's heading is its title in `titles` (the benchmark's
    current numbering), else the one saved with its figures."""
    parts = []
    for section in [*titles, *sorted(set(results) - set(titles))]:
        entry = results.get(section)
        title = titles.get(section) or (entry or {}).get("title") or f"`{section}`"
        if entry is None:
            parts.append(f"#### {title}\n\nNot measured yet: `{_command(section)}`.")
            continue
        parts.append(_section(section, title, entry))
    return "\n\n".join(parts) + "\n"


def _section(section: str, title: str, entry: dict[str, Any]) -> str:
    figures = [Figure(**{k: v for k, v in f.items() if k != "ratio"}) for f in entry["figures"]]
    lines = [
        f"#### {title}",
        "",
        f"`{_command(section)}`; " + "; ".join(entry["machine"]),
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "---|" * len(HEADERS),
    ]
    lines += ["| " + " | ".join(_cell(cell) for cell in cells(f)) + " |" for f in figures]
    notes = [f"- **{_cell(f.name)}**: {_cell(f.note)}" for f in figures if f.note]
    return "\n".join(lines + ([""] + notes if notes else []))


def _command(section: str) -> str:
    """The command that measures `section` (`load-nginx2`: the load through 2 replicas)."""
    name, _, nginx = section.partition("-nginx")
    through = f" --through-nginx {nginx}" if nginx else ""
    return f"python -m bench.benchmark --only {name}{through}"


def _cell(text: str) -> str:
    """`text` safe inside a markdown table cell: no pipes, no line breaks, no HTML."""
    return text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")
