"""Presets: ready-made inputs that reproduce the source documents' worked examples (the NumPy lab,
the Keras tutorial) or teach one idea at a glance.

A preset is a JSON file with a title, one sentence on what it teaches, Q/K/V as matrix text (or
a seeded random spec), optional padding keys per sequence, and the settings it switches on. The
shipped ones are package data in `attnviz/inputs/preset_files/` (`shipped_presets`, read with
`importlib.resources`). Pure Python: the UI decides how to show them.
"""

from __future__ import annotations

import json
from dataclasses import InitVar, dataclass, field
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np

from attnviz.core.checks import check_array_cells, check_int, check_size
from attnviz.core.limits import MAX_BATCH, MAX_SCORE_CELLS
from attnviz.core.seeding import check_seed

SHIPPED: Traversable = files("attnviz.inputs") / "preset_files"  # the shipped preset files


@dataclass(frozen=True)
class RandomSpec:
    """Seeded random Q/K/V, uniform in [0, 1) like numpy's `random.random` in the tutorials.

    Any sizes within memory. `max_cells` (not a field) is the most B·T·S attention cells the
    draw may make: `MAX_SCORE_CELLS` by default, a page's own limit (`limits.APP_SCORE_CELLS`)
    on a page.
    """

    batch: int = 1  # B (1 = no batch axis)
    queries: int = 4  # T
    keys: int = 4  # S
    d_k: int = 8  # Dq = Dk
    d_v: int = 8  # Dv
    seed: int = 0  # numpy seed
    max_cells: InitVar[int] = MAX_SCORE_CELLS  # the most B·T·S cells allowed (checked, not kept)

    def __post_init__(self, max_cells: int) -> None:
        check_int(self.batch, "batch", low=1, high=MAX_BATCH)
        check_size(self.queries, "queries")
        check_size(self.keys, "keys")
        check_size(self.d_k, "d_k", unit="features")
        check_size(self.d_v, "d_v", unit="features")
        check_seed(self.seed)
        cells = self.batch * self.queries * self.keys
        if cells > max_cells:
            whose = " (the memory limit)" if max_cells == MAX_SCORE_CELLS else ""
            raise ValueError(
                f"The random batch is too large: {self.batch} × {self.queries} × {self.keys} "
                f"attention cells; the limit is {max_cells:,}{whose}. Draw fewer or shorter "
                "sequences."
            )
        hint = "Draw fewer or shorter sequences, or fewer features."
        shapes = {"Q": (self.queries, self.d_k), "K": (self.keys, self.d_k)}
        shapes["V"] = (self.keys, self.d_v)
        for name, (rows, width) in shapes.items():
            what = f"`{name}` (sequences × rows × columns)"
            check_array_cells((self.batch, rows, width), what, hint)


def random_qkv(spec: RandomSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw Q `(…, T, Dk)`, K `(…, S, Dk)`, V `(…, S, Dv)`; no batch axis when `spec.batch == 1`."""
    rng = np.random.default_rng(spec.seed)
    lead = (spec.batch,) if spec.batch > 1 else ()
    query = rng.random((*lead, spec.queries, spec.d_k))
    key = rng.random((*lead, spec.keys, spec.d_k))
    value = rng.random((*lead, spec.keys, spec.d_v))
    return query, key, value


@dataclass(frozen=True)
class Preset:
    """One preset, as read from its JSON file."""

    name: str  # file stem, used in URLs
    title: str  # what the menu shows
    teaches: str  # one sentence on what it shows
    query: str | None = None  # matrix text (rows on lines, or JSON nested lists)
    key: str | None = None
    value: str | None = None
    random: RandomSpec | None = None  # used instead of the texts when given
    padding: tuple[tuple[int, ...], ...] = ()  # padding key indices, per sequence
    settings: dict[str, Any] = field(default_factory=dict)  # control values to switch to
    sequence: int = 0  # the batch item the views open on (the one the preset is about)


def load_preset(path: Path | Traversable) -> Preset:
    """Read one preset file (a path, or a file of the package's resources)."""
    path = Path(path) if isinstance(path, str) else path
    data = json.loads(path.read_text(encoding="utf-8"))
    spec = data.pop("random", None)
    padding = tuple(tuple(int(k) for k in keys) for keys in data.pop("padding", []))
    return Preset(
        name=Path(path.name).stem,
        random=RandomSpec(**spec) if spec else None,
        padding=padding,
        **data,
    )


def load_presets(folder: Path | Traversable) -> dict[str, Preset]:
    """Every preset (`*.json` file) in `folder`, by name, in file-name order."""
    folder = Path(folder) if isinstance(folder, str) else folder
    found = sorted((f for f in folder.iterdir() if f.name.endswith(".json")), key=lambda f: f.name)
    return {preset.name: preset for preset in map(load_preset, found)}


def shipped_presets() -> dict[str, Preset]:
    """The presets attnviz ships (`SHIPPED`), by name, in file-name order: what the app offers."""
    return load_presets(SHIPPED)
