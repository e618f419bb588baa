"""A row of tabs that picks one view: only the open tab's view is drawn, below the row.

The view is drawn under the tabs rather than inside the open tab's panel because of what the
browser does with a panel's content: Streamlit's tabs (react-aria's) watch their open panel
for any change and then walk every element in it to see whether one can take the keyboard's
focus, and their tab list is rebuilt whenever the panel's content renders again. A view inside
the panel paid that walk for each batch of changes of each chart it drew: profiled in
Chromium, it was most of what checking an exercise's answer cost the browser beyond the
benchmark's floor page (section 13). The panel stays empty.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st


def open_tab(labels: Sequence[str], key: str, **kwargs) -> str:
    """Draw a row of tabs named `labels` (`st.tabs`' `default`, `bind` go in `kwargs`) and
    return the open one's label; draw its view next, after this call (not `with` a tab).

    Opening another tab reruns the script (or the fragment this is drawn in)."""
    tabs = st.tabs(list(labels), key=key, on_change="rerun", **kwargs)
    return next((label for tab, label in zip(tabs, labels, strict=True) if tab.open), labels[0])
