"""`inspect`'s result taken away: every model view of one run on a standalone page, or as SVG.

`attnviz.inspect` is `attnviz.heads.inspect` whose result also writes its views
(`ViewedInspection.to_html`, `.to_svg`): the capture stays in `heads` (which draws nothing),
the pages are drawn here, above it. Loading this module loads Keras (as `heads.inspection`
does); the other drawing modules do not.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from attnviz.drawing.model_view import inspection_view
from attnviz.drawing.standalone import Chart, call_text, standalone_html
from attnviz.heads.inspection import Inspection
from attnviz.heads.inspection import inspect as inspect_calls


@dataclass(frozen=True)
class ViewedInspection(Inspection):
    """An `Inspection` (every attention of one run) that writes its model views."""

    def to_html(self, path: str | os.PathLike, **view: Any) -> Path:
        """Write every model view of this run (self-, cross-attention, ...) as one standalone
        page, with each call's class, shape, mask and position scheme, to `path`; returns the
        path. `view`: `title`, `item`, `row_labels`, `col_labels`, `highlight` (see
        `inspection_html`)."""
        target = Path(path)
        target.write_text(inspection_html(self, **view), encoding="utf-8")
        return target

    def to_svg(self, path: str | os.PathLike, **view: Any) -> Path:
        """Write one model view of this run as SVG to `path` (`view` as for
        `attnviz.drawing.model_view.inspection_view`: the self-attention calls by default);
        returns the path. Needs a Chromium-family browser (see `standalone.figure_svg`)."""
        return inspection_view(self, **view).to_svg(path)


@functools.wraps(inspect_calls)
def inspect(model: Any, inputs: Any, **call_kwargs: Any) -> ViewedInspection:
    result = inspect_calls(model, inputs, **call_kwargs)
    return ViewedInspection(**{f.name: getattr(result, f.name) for f in fields(result)})


def inspection_charts(
    result: Inspection,
    *,
    item: int = 0,
    row_labels: Sequence[Any] | None = None,
    col_labels: Sequence[Any] | None = None,
    highlight: Iterable[tuple[int, int]] = (),
) -> list[Chart]:
    """The model views of an `inspect(...)` result: one per kind of call and shape (self-,
    then cross-attention, ...), each call a row, in call order.

    `row_labels` / `col_labels` label the views whose queries / keys they fit in number; the
    others are labelled by position.
    """
    groups: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    for call in result.calls:
        groups.setdefault((call.kind, call.weights.shape), []).append(call.key)
    charts = []
    for n, ((kind, (_, _, t, s)), keys) in enumerate(groups.items()):
        title = f"{kind} attention" if len(groups) == 1 else f"{kind} attention, {t} × {s}"
        figure = inspection_view(
            result, keys=keys, item=item, title=title, highlight=highlight,
            row_labels=_fitting(row_labels, t), col_labels=_fitting(col_labels, s),
        )  # fmt: skip
        charts.append(Chart(figure, f"model-view-{n}-{kind}"))
    return charts


def inspection_html(result: Inspection, title: str = "attnviz: every attention of one run",
                    **view: Any) -> str:  # fmt: skip
    """A standalone page of an `inspect(...)` result: its model views (`inspection_charts`,
    `**view` passed on), one row per call in the settings (class, kind, shape, mask, position
    scheme, remarks), the tokens when given, and the run's warnings."""
    calls = [(f"call {call.key}", call_text(call)) for call in result.calls]
    tokens = [(name, " ".join(str(x) for x in view[name]))
              for name in ("row_labels", "col_labels") if view.get(name) is not None]  # fmt: skip
    return standalone_html(
        inspection_charts(result, **view), title,
        settings=[("sequence of the batch", view.get("item", 0)), *calls],
        inputs=tokens, notes=tuple(f"Warning: {w}" for w in result.warnings),
    )  # fmt: skip


def _fitting(labels: Sequence[Any] | None, n: int) -> Sequence[Any] | None:
    return labels if labels is not None and len(labels) == n else None
