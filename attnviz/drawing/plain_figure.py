"""Figures built without plotly's checks, kept plain until used: the only code that uses
plotly's private API (`_validate`, `_plotly_utils`).

attnviz builds its traces and layouts itself, as plain dicts, and the tests check them.
Validating a figure's every property costs plotly ~15 ms per heatmap, and building a
`go.Figure` from plain traces ~7 ms more; the page draws six heatmaps on every click. So a
heatmap is a `PlainFigure` (plotly's figure only once something uses it as one), a figure drawn
again and again unchanged is `frozen` (its plain form built once), and a figure used as one at
once is an `unchecked_figure`.
"""

from __future__ import annotations

import base64
import copy
import functools
import threading
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from _plotly_utils.utils import is_homogeneous_array, is_skipped_key, to_typed_array_spec

from attnviz.drawing.standalone import Figure  # saves itself as a page or SVG


class PlainFigure(Figure):
    """A figure held as the plain traces and layout attnviz built, until something uses it as
    a figure.

    Streamlit needs only a figure's plain form (`to_dict`). From plain traces plotly builds a
    `go.Figure` property by property, then copies it all back for `to_dict`: ~7 ms a heatmap
    (measured), most of a page's run, against ~0.5 ms to write the JSON Streamlit sends. So
    `PlainFigure.of(traces, layout)` keeps them as they are and `to_dict` returns them with the
    default template, as `go.Figure(data=traces, layout=layout, _validate=False).to_dict()`
    would: a copy of them (change it freely) holding the one default template that every plain
    form shares, read-only. Anything else (`.data`, `.layout`, `update_layout`, a copy) first
    builds that `go.Figure`. Do not change the traces or layout passed in afterwards.
    """

    @classmethod
    def of(cls, traces: list[dict[str, Any]], layout: dict[str, Any]) -> PlainFigure:
        figure = cls.__new__(cls)  # go.Figure.__init__ runs on first use as a figure
        figure.__dict__["_plain_parts"] = (traces, layout)
        return figure

    def __getattr__(self, name: str) -> Any:  # what the instance does not hold (yet)
        with _BUILDING:  # one thread builds the figure; another waits, then finds it built
            parts = self.__dict__.pop("_plain_parts", None)
            if parts is not None:
                go.Figure.__init__(self, data=parts[0], layout=parts[1], _validate=False)
        return object.__getattribute__(self, name)

    def to_dict(self) -> dict[str, Any]:
        parts = self.__dict__.get("_plain_parts")
        if parts is None:
            return super().to_dict()
        traces, layout = parts
        plain = {"data": _plain(traces), "layout": _plain(layout)}
        template = None if "template" in layout else _default_template()  # a layout's own
        if template is not None:  # template stays, as in plotly's figure (shared, read-only)
            plain["layout"]["template"] = template
        return plain


_BUILDING = threading.RLock()  # held while a PlainFigure becomes a go.Figure (re-entered then)


def _copied(value: Any) -> Any:
    """`value` with its dicts and lists copied (not the arrays and strings in them), so the
    plain form can be changed without changing the figure."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_copied(item) for item in value]
    return value


def _plain(value: Any) -> Any:
    """`_copied(value)` with the numpy arrays held by its dicts as typed arrays, as plotly's
    `to_dict` writes them (`convert_to_base64`, whose every array passes through narwhals:
    ~0.1 ms an array, most of a heatmap's `to_dict`)."""
    if isinstance(value, dict):
        return {key: _plain_item(key, item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _plain_item(key: str, value: Any) -> Any:
    """One entry of a dict in `_plain`: the rules of plotly's `convert_to_base64`."""
    if type(value) in _LEAVES:
        return value  # most entries: a number, a name, a flag (no array, nothing to copy)
    if _skipped(key):
        return _copied(value)  # plotly converts nothing under these keys
    if isinstance(value, np.ndarray):
        short = _TYPED_ARRAYS.get(value.dtype.str)  # numbers plotly.js reads as they are
        if short is None or value.size == 0:
            return to_typed_array_spec(value)  # anything else: plotly's own conversion
        typed = {"dtype": short, "bdata": base64.b64encode(np.ascontiguousarray(value)).decode()}
        if value.ndim > 1:
            typed["shape"] = str(value.shape)[1:-1]
        return typed
    if not isinstance(value, dict | list | tuple | str) and is_homogeneous_array(value):
        return to_typed_array_spec(value)
    return _plain(value)


_LEAVES = frozenset((str, int, float, bool, type(None)))  # the exact types: not numpy's scalars
_skipped = functools.cache(is_skipped_key)  # per key name (a few dozen): ~1 us a call otherwise

# little-endian numpy dtypes plotly.js reads as typed arrays (`plotlyjsShortTypes`); 64-bit
# integers, which plotly narrows first, and other byte orders go through plotly
_TYPED_ARRAYS = {
    "|i1": "i1", "|u1": "u1", "<i2": "i2", "<u2": "u2", "<i4": "i4", "<u4": "u4",
    "<f4": "f4", "<f8": "f8",
}  # fmt: skip


def _default_template() -> dict[str, Any] | None:
    """The plain form of plotly's default template, as a `go.Figure` puts it in its layout,
    read-only (`_read_only`); None if there is none. Kept per template name (a template
    object is read each time)."""
    default = pio.templates.default
    if default is None or isinstance(default, str):
        return _template_named(default)
    return _read_only(go.Figure().to_dict()["layout"].get("template"))


@functools.lru_cache(maxsize=4)
def _template_named(name: str | None) -> dict[str, Any] | None:
    """`_default_template()` while the default template is `name`."""
    return _read_only(go.Figure().to_dict()["layout"].get("template"))


class _ReadOnly:
    """A dict or list that refuses every change: the default template, one for all plain forms
    (each used to get a copy of its ~150 dicts and lists: a third of a heatmap's plain form).
    A copy of it (`copy.copy`, `copy.deepcopy`) is an ordinary, changeable one."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "The default template of a plain figure's `to_dict` is shared by every figure and "
            "cannot be changed. Copy it first (`copy.deepcopy`) or set the layout's own template."
        )

    def __copy__(self) -> Any:
        return self._plain_type(self)  # plotly copies what it takes apart

    def __deepcopy__(self, memo: dict) -> Any:
        return copy.deepcopy(self._plain_type(self), memo)

    def __reduce__(self) -> tuple:
        return type(self), (self._plain_type(self),)  # unpickled whole, not item by item


class _ReadOnlyDict(_ReadOnly, dict):
    _plain_type = dict
    __setitem__ = __delitem__ = __ior__ = _ReadOnly._refuse
    clear = pop = popitem = setdefault = update = _ReadOnly._refuse


class _ReadOnlyList(_ReadOnly, list):
    _plain_type = list
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _ReadOnly._refuse
    append = clear = extend = insert = pop = remove = reverse = sort = _ReadOnly._refuse


def _read_only(value: Any) -> Any:
    """`value` with its dicts and lists made read-only, at every depth."""
    if isinstance(value, dict):
        return _ReadOnlyDict((key, _read_only(item)) for key, item in value.items())
    if isinstance(value, list | tuple):
        return _ReadOnlyList(_read_only(item) for item in value)
    return value


class FrozenFigure(PlainFigure):
    """A figure drawn again and again unchanged: its plain form (`to_dict`) is built once.

    Streamlit turns a figure into its plain form on every script run, a deep copy of every
    trace: ~22 ms for a model view of 72 heads, redrawn on every click elsewhere on the page.
    Build one with `frozen(figure)` and do not change it afterwards.
    """

    def to_dict(self) -> dict[str, Any]:
        plain = self.__dict__.get("_plain")
        if plain is None:
            plain = super().to_dict()
            self.__dict__["_plain"] = plain
        return plain


def frozen(figure: go.Figure) -> FrozenFigure:
    """`figure` itself, made a `FrozenFigure`: its plain form is built now, once. No second
    figure is built (that would make every trace an object again: ~0.2 s for a model view's
    grid of 576 heatmaps); do not change `figure` afterwards."""
    plain = figure.to_dict()
    figure.__class__ = FrozenFigure  # a go.Figure subclass with no state of its own
    figure.__dict__["_plain"] = plain
    return figure


def with_shapes(figure: go.Figure, *shapes: dict[str, Any]) -> go.Figure:
    """A new figure: `figure` with `shapes` added to its layout's; `figure` is left as it was.

    A `PlainFigure` not yet used as a figure gives one as plain (copying it as a `go.Figure`
    validated every property again: ~25 ms a heatmap, six on each run of the explorer's Step by
    step view, profiled)."""
    parts = figure.__dict__.get("_plain_parts") if isinstance(figure, PlainFigure) else None
    if parts is not None:
        traces, layout = parts
        return PlainFigure.of(traces, {**layout, "shapes": [*layout.get("shapes", ()), *shapes]})
    marked = go.Figure(figure)
    for shape in shapes:
        marked.add_shape(**shape)
    return marked


def unchecked_figure(traces: list[dict[str, Any]], layout: dict[str, Any]) -> Figure:
    """A `Figure` of `traces` and `layout` built without plotly's validation, for a figure
    that is used as one at once (`model_view` reads its layout back)."""
    return Figure(data=traces, layout=layout, _validate=False)
