"""Session state, declared once: every key the app keeps has one `Slot` with its type and default.

A module that owns a piece of state declares its slots at the top (`CAUSAL = slot("causal",
False, url=True)`) and reads and writes them only through the slot (`CAUSAL.get()`,
`CAUSAL.set(True)`, `**CAUSAL.widget()` for the widget that shows it). Another module never
writes those keys: it calls a function of the owner (the explorer's `open_in_explorer`, the
sidebar's `apply_settings`). Declaring a key twice raises at import, so two modules cannot share
one by accident.

URL: controls are widgets bound to the URL (`bind="query-params"`) and kept across reruns and
pages (`persist_state="session"`); their slot's key is the URL field, so old links keep working.
Typed inputs (matrix text, sentences) go into the URL by hand while they are small
(`store_texts_in_url`).

Lessons: the pages share their keys, so a lesson opening puts every slot back to its default
(`reset_for_lesson`) before preparing its page, but the `kept` ones (a session's caches and
training runs, uploaded files, the presenter switch, the site's bookkeeping). A new slot is reset
unless it says otherwise: what a page shows cannot leak into the next lesson by being forgotten.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import streamlit as st

T = TypeVar("T")
URL_TEXT_LIMIT = 1500  # most characters of typed input the URL carries
_SLOTS: dict[str, Slot] = {}  # key -> its slot, every slot of the app
_FAMILIES: dict[str, SlotFamily] = {}  # prefix -> a family of numbered or named slots
_OWNERS: dict[str, str] = {}  # key or prefix -> the module that declared it


@dataclass(frozen=True)
class Slot(Generic[T]):
    """One session-state entry."""

    key: str  # the session-state key (and the URL field of a bound widget)
    default: T  # the value before anything sets it
    url: bool = False  # the widget showing it is bound to the URL
    kind: type | tuple[type, ...] | None = None  # what `get` accepts; None: the default's type
    url_aliases: tuple[tuple[str, str], ...] = ()  # (old URL value, today's): older links
    kept: bool = False  # kept when a lesson opens (`reset_for_lesson`): a cache, a training run,
    # a file, the site's own bookkeeping; not a setting or an input a page shows

    def get(self) -> T:
        """The value, or the default when unset or of the wrong type (a hand-edited link)."""
        value = st.session_state.get(self.key, self.default)
        kind = self.kind or (type(self.default) if self.default is not None else object)
        if value is not None and kind is not object and not isinstance(value, kind):
            return self.default
        return value

    def set(self, value: T) -> None:
        """Store `value` (a widget showing this slot shows it on its next draw)."""
        st.session_state[self.key] = value

    def setdefault(self, value: T | None = None) -> T:
        """Store `value` (or the default) unless something is stored already; return the value."""
        if self.key not in st.session_state:
            self.set(self.default if value is None else value)
        return st.session_state[self.key]

    def clear(self) -> None:
        """Forget the value (back to the default)."""
        st.session_state.pop(self.key, None)

    def is_set(self) -> bool:
        """True once something stored a value."""
        return self.key in st.session_state

    def get_or_linked(self) -> T:
        """`get()`; but before a URL-bound widget's first draw (nothing stored yet), the value
        the link names, which that widget will show: for a page that computes from a choice
        before drawing it (the open tab, the comparison, the presenter view). A text or
        true/false slot; the caller checks a text is one it knows (a widget with a
        `format_func` puts its label in the URL)."""
        linked = st.query_params.get(self.key) if self.url and not self.is_set() else None
        if linked is None:
            return self.get()
        if isinstance(self.default, bool):
            return {"true": True, "false": False}.get(linked.lower(), self.default)
        return linked if isinstance(self.default, str) or self.kind is str else self.get()

    def widget(self, default_arg: str | None = None) -> dict[str, Any]:
        """Keyword arguments for the widget that shows this slot: its key, kept across reruns and
        pages, bound to the URL if `url`. With `default_arg` ("value", "default"), the slot's
        default is passed as that argument, for widgets whose own default differs from it (a
        toggle that starts on): a bound field missing from the URL means the widget's default,
        on every page that draws it."""
        kwargs: dict[str, Any] = {"key": self.key, "persist_state": "session"}
        if self.url:
            kwargs["bind"] = "query-params"
        if default_arg is not None:
            kwargs[default_arg] = self.default
        return kwargs

    def index_widget(self, n: int) -> dict[str, Any]:
        """`widget()` of an index into `n` things (a row, a column): a stored index that no
        longer fits (the matrix shrank) goes back to 0 first."""
        value = st.session_state.get(self.key, 0)  # as stored: a link may hold any text
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
            self.set(0)
        return self.widget()


@dataclass(frozen=True)
class SlotFamily(Generic[T]):
    """Slots made on demand from one prefix: `PAD_KEYS.of(2)` is the slot "pad_keys_2"."""

    prefix: str  # the keys are f"{prefix}_{name}"
    default: T  # each member's default
    url: bool = False  # the members' widgets are bound to the URL
    kept: bool = False  # kept when a lesson opens (see `Slot.kept`)

    def of(self, name: object) -> Slot[T]:
        """The member `name` (a sequence number, a task)."""
        return Slot(f"{self.prefix}_{name}", self.default, self.url, kept=self.kept)

    def members(self, keys: Iterable[Any] | None = None) -> list[Slot[T]]:
        """Every member stored so far (among `keys`, the session state's keys read once by a
        caller asking several families: each read copies the whole state)."""
        start = f"{self.prefix}_"
        keys = iter(st.session_state) if keys is None else keys  # (`list()` of it read it twice)
        return [self.of(k[len(start) :]) for k in keys if str(k).startswith(start)]


def slot(
    key: str,
    default: T,
    *,
    url: bool = False,
    kind: Any = None,
    url_aliases: dict[str, str] | None = None,
    kept: bool = False,
) -> Slot[T]:
    """Declare a slot (once per key in the whole app); `url_aliases` maps values older links
    carry to what the widget writes today; `kept`: not reset when a lesson opens."""
    _claim(key, _caller())
    declared = Slot(key, default, url, kind, tuple((url_aliases or {}).items()), kept)
    _SLOTS[key] = declared
    return declared


def slot_family(prefix: str, default: T, *, url: bool = False, kept: bool = False) -> SlotFamily[T]:
    """Declare a family of slots `prefix_<name>` (once per prefix)."""
    _claim(prefix, _caller())
    family = SlotFamily(prefix, default, url, kept)
    _FAMILIES[prefix] = family
    return family


def _caller() -> str:
    """The module that called `slot` or `slot_family`."""
    return sys._getframe(2).f_globals.get("__name__", "?")


def _claim(key: str, owner: str) -> None:
    """Make `owner` the one module declaring `key` (a module imported again may redeclare its
    own keys; another module may not)."""
    taken = {k for k in (*_SLOTS, *_FAMILIES) if k == key}
    taken |= {p for p in _FAMILIES if key.startswith(f"{p}_") or p.startswith(f"{key}_")}
    others = sorted(k for k in taken if _OWNERS.get(k) != owner)
    if others:
        raise ValueError(
            f"The session-state key {key!r} is declared twice: {owner} declares it and "
            f"{_OWNERS[others[0]]} declares {others[0]!r}. Declare each key once, in the module "
            "that owns it, and import that slot."
        )
    _OWNERS[key] = owner


def declared_keys() -> dict[str, Slot | SlotFamily]:
    """Every declared key and family prefix (for tests and the URL check)."""
    return {**_SLOTS, **_FAMILIES}


def reset_for_lesson() -> None:
    """Every declared slot and family member back to its default, but the `kept` ones: a lesson
    opened by any route starts from its prepared state, never from what another page or
    lesson left behind. A widget showing a slot shows its default on its next draw."""
    stored = set(st.session_state)  # read once: each read copies the whole state
    for declared in _SLOTS.values():
        if not declared.kept and declared.key in stored:
            declared.clear()
    for family in _FAMILIES.values():
        if not family.kept:
            for member in family.members(stored):
                member.clear()


def upgrade_old_links() -> bool:
    """Rewrite URL values that older links carry (a slot's `url_aliases`) to today's, before
    any widget is bound to them (a session's first run); True if any was rewritten. Widgets
    read the link as the run began, so the caller then reruns (`st.rerun`)."""
    upgraded = False
    for declared in _SLOTS.values():
        value = st.query_params.get(declared.key)
        new = dict(declared.url_aliases).get(value) if value is not None else None
        if new is not None:
            st.query_params[declared.key] = new
            upgraded = True
    return upgraded


def restore_texts_from_url(slots: Iterable[Slot[str]], restored: Slot[bool]) -> None:
    """On a session's first run, fill the typed inputs `slots` from the URL (a shared link)."""
    if restored.get():
        return
    restored.set(True)
    texts_from_url(slots)


def texts_from_url(slots: Iterable[Slot[str]]) -> tuple[Slot[str], ...]:
    """Fill the typed inputs `slots` that the URL carries from it (a link, or Back and Forward
    to a page whose inputs were small enough to be in its URL); returns those it filled."""
    filled = tuple(text for text in slots if text.key in st.query_params)
    for text in filled:
        text.set(st.query_params[text.key][: URL_TEXT_LIMIT * 4])
    return filled


def store_texts_in_url(active: Iterable[Slot[str]], every: Iterable[Slot[str]]) -> None:
    """Put the `active` typed inputs in the URL while they are small; drop the others."""
    active = tuple(active)
    total = sum(len(text.get() or "") for text in active)
    for text in every:
        value = text.get() or ""
        wanted = text in active and total <= URL_TEXT_LIMIT and value
        if wanted and st.query_params.get(text.key) != value:
            st.query_params[text.key] = value
        elif not wanted and text.key in st.query_params:
            del st.query_params[text.key]
