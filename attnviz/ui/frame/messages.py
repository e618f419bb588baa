"""Messages next to the input that caused them, user text made safe for markdown, and worked
arithmetic shown as plain monospace text."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from attnviz.core.words import plural

T = TypeVar("T")
MARKDOWN_SPECIALS = "\\[]$"  # links and images need [ ], and $ starts LaTeX
ERROR_ICON = ":material/error:"
WORKED_KEY = "worked"  # the key prefix of `worked`'s containers, which the page's style sets
# in the code font (`presenter.WORKED_STYLE`)


def plain(text: object) -> str:
    """Text that may hold user input, made safe for Streamlit's markdown (messages, captions):
    a backslash before [ ] and $ so it can never become a link, an image or LaTeX. (Streamlit
    never renders HTML in markdown, so < and > show as typed.)"""
    return "".join("\\" + c if c in MARKDOWN_SPECIALS else c for c in str(text))


def worked(text: str, key: str) -> None:
    """Worked arithmetic, lines aligned by spaces (it may hold user input: plain text, never
    markup), in the code font on a tinted box. `st.code` showed it the same way, but its syntax
    highlighter is a 1.5 MB module that each new tab loads and compiles (~0.3 s of the browser's
    main thread) to highlight text with no syntax; `st.text` keeps every space and line break."""
    with st.container(key=f"{WORKED_KEY}-{key}"):
        st.text(text, width="stretch")


def counted(n: int, thing: str) -> str:
    """`n` things in words: "1 key tile", "3 key tiles", "2 queries" (`core.words.plural`)."""
    return plural(n, thing)


def error(text: str) -> None:
    """An error message (already safe text) with the error icon."""
    st.error(text, icon=ERROR_ICON)


def shown(read: Callable[[], T], where: str = "") -> T | None:
    """Run `read` (a parser, a model call); show its ValueError right here, after `where`, and
    return None, so the rest of the page keeps working and the input stays as typed."""
    try:
        return read()
    except ValueError as err:
        error(plain(f"{where}{err}"))
        return None


def readable(check: Callable[[], object], argument: str, words: str) -> bool:
    """Run `check` (a model's check of a typed text); show its ValueError here in the page's
    words, the code's `argument` name ("`text`") said as `words` ("Your text"), and return
    False; True when the text passed."""
    try:
        check()
    except ValueError as err:
        error(plain(words + str(err).removeprefix(f"`{argument}`")))
        return False
    return True


def unlike_training(why: str | None) -> None:
    """Warn, when `why` says how a typed input is unlike every training input (a model's
    `outside...` check), that the model's answer is a guess; nothing when `why` is None."""
    if why:
        st.warning(
            plain(f"The model never saw an input like this: {why}. Whatever it answers is a "
                  "guess, however confident it looks."),
            icon=":material/warning:",
        )  # fmt: skip
