"""Public names imported on first use: what keeps `import attnviz` free of TensorFlow.

A package's `__init__` lists `{name: home module}` and takes its module-level `__getattr__` and
`__dir__` from `lazy_names` (PEP 562).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`(__getattr__, __dir__)` for `package`, importing each name from its home when used."""

    def get_name(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)  # later look-ups skip this function
        return value

    def list_names() -> list[str]:
        return sorted({*vars(sys.modules[package]), *homes})

    return get_name, list_names
