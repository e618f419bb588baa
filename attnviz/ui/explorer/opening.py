"""What opens in the explorer (`Opened`: a trained attention's Q, K, V and score weights), and
what opens it again from a link's `from` field (`reopened`): the page or module that made an
origin's kind registers the function that computes it again (`reopens`), so the explorer
imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from attnviz.core.settings import AttentionSettings
from attnviz.inputs.problem import LearnedWeights

SESSION = "session"  # an origin's kind: a model of a session, which no link can bring back
# An origin's kind -> the function that opens it again ("step" and "head": the shipped
# translators', "lm": the language model page's, "model": Your model page's), registered with
# `reopens` when its module is imported (the app imports every page before it draws one).
REOPENERS: dict[str, Callable[[str], Opened]] = {}


@dataclass(frozen=True)
class Opened:
    """A trained attention as the explorer opens it."""

    query: np.ndarray  # (T, Dq)
    keys: np.ndarray  # (S, Dk)
    values: np.ndarray  # (S, Dv)
    learned: LearnedWeights  # its score weights, labels and where it came from
    settings: AttentionSettings  # its score, scaling and causal mask


def reopens(kind: str) -> Callable[[Callable[[str], Opened]], Callable[[str], Opened]]:
    """Register the decorated function as what opens again a link's `from` field of `kind`
    (it gets the field without its `kind:`)."""

    def register(function: Callable[[str], Opened]) -> Callable[[str], Opened]:
        REOPENERS[kind] = function
        return function

    return register


@contextmanager
def reading_link() -> Iterator[None]:
    """Read a link's `from` field inside: a field that names no model, head or readable text
    (a KeyError, IndexError, TypeError or ValueError while reading it) raises the ValueError
    that says so."""
    try:
        yield
    except (KeyError, IndexError, TypeError, ValueError) as err:
        raise ValueError(
            f"This link's `from` field names nothing that can be opened: {err}"
        ) from None


def session(source: str) -> str:
    """The origin of something a session trained (`source` says what): a link keeps it, so
    that a reload can say what it was and why it cannot be opened again."""
    return f"{SESSION}:{source}"


def reopened(origin: str) -> Opened:
    """What `origin` (a `LearnedWeights.origin`, from a link) named, computed again from the
    shipped model (`step:`, `head:`), the shipped language model (`lm:`) or the server's model
    of yours (`model:`).

    Raises:
        ValueError: for an origin that names nothing that can be opened, and for a model
            trained in a session (`session:`), saying what it was and why not.
    """
    kind, _, rest = origin.partition(":")
    if kind == SESSION:
        raise ValueError(
            f"This link opened {rest[:120]}: a model trained in a browser session, which has "
            "ended, so no link can open it again. Train it again on its page and open the head "
            "from there; the explorer shows the NumPy lab's example meanwhile."
        )
    if kind in REOPENERS:
        return REOPENERS[kind](rest)
    raise ValueError(
        "This link's `from` field names nothing to open: it must start with "
        f"'step:', 'head:', 'lm:' or 'model:'. Received: {origin[:60]!r}."
    )
