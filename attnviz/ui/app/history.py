"""One history entry for each thing the user does: a script in the page's `<head>`, put there
by a middleware of the server (`attnviz.ui.app.head.PageHead`), so that it is in place before
Streamlit's own code runs.

Streamlit 1.67's front end pushes a browser-history entry for every change of the URL's fields
that a run sends, one per change: a page's first open wrote its typed inputs one by one (four
entries for the Matrices page, each Back stopping on the same page), and a page opened by a link
got one entry for the switch and one more for the fields it writes as it opens (Back stopped on
the new page once before leaving it). The script lets the first push after the user acts (a
click, a key, which may open a page or change a control) add its entry, and turns the pushes
that follow, until the user acts again, into replacements of that entry. Back and Forward (the
browser's own `popstate`) count as acting once done: Streamlit replaces while it restores.
"""

from __future__ import annotations

HISTORY_SCRIPT = b"""<script>
(() => {
  const history = window.history;
  const push = history.pushState.bind(history), replace = history.replaceState.bind(history);
  let pushed = true;  // the entry the page loaded in stands for everything until the user acts
  const acted = () => { pushed = false; };
  for (const kind of ["pointerdown", "keydown"]) window.addEventListener(kind, acted, true);
  window.addEventListener("popstate", () => { pushed = true; }, true);
  history.pushState = (state, title, url) => {
    if (pushed) return replace(state, title, url);
    pushed = true;
    return push(state, title, url);
  };
})();
</script>"""
