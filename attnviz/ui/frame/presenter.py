"""The presenter view, for a projector: the sidebar collapsed (its controls drawn in the page
instead), larger text and charts, one chart per row. A switch at the top of every page, kept in
the URL (`?present=true`), so a teacher's link opens straight into it. Also here: what makes the
charts and formulas fit a phone (`NARROW_STYLE`, `CHART_SCRIPT`), which every page's head holds
(`HEAD_HTML`).
"""

from __future__ import annotations

import threading

import streamlit as st

from attnviz.drawing.projector import fonts_for_projector, for_projector
from attnviz.ui.frame.messages import WORKED_KEY
from attnviz.ui.frame.state import slot

PRESENT = slot("present", False, url=True, kept=True)  # the presenter view is on
SCALE = 1.5  # how much larger charts' text is when presenting
LABEL_SCALE = 1.25  # ... the model view's: its 12 px labels at 15 px, what the 22 px strip
# above each layer's cells holds beside a top head's outline (at 18 px a title ran into them)
FORMULA_ROOM = ".katex-display { padding: 0.25em 0; }"  # Streamlit's formula box hides what
# overflows its height: a fraction's bar or a superscript lost 2-6 px at its edges
WORKED_STYLE = (  # `messages.worked`: plain text in the code font, as `st.code` drew it
    f'[class*="st-key-{WORKED_KEY}-"] [data-testid="stText"] {{ padding: 1rem; '
    "border-radius: 0.5rem; background: rgba(128, 128, 128, 0.08); }"
    f'[class*="st-key-{WORKED_KEY}-"] [data-testid="stText"] > span {{ '
    'font-family: "Source Code Pro", monospace; font-size: 0.875rem; line-height: 1.6; }'
)
SETTINGS_KEY = "presenter-settings"  # the container of the sidebar's controls while presenting
SETTINGS_LABEL = "The sidebar's settings"  # ... and its expander's label
MORE_KEY = "more-controls"  # the container of the controls a lesson folds away
MORE_LABEL = "More controls"  # ... and its expander's label (closed)
WHERE = {False: "in the sidebar", True: "in the settings above the charts"}  # where the
# controls are, in words (`where_settings`), by whether the presenter view is on
STYLE = f"""<style>
html {{ font-size: 21px; }}
[data-testid="stMainBlockContainer"] {{ max-width: 100%; padding-left: 2rem; padding-right: 2rem; }}
.st-key-{SETTINGS_KEY}, .st-key-{MORE_KEY} {{
  display: block !important; column-width: 16rem; column-gap: 2rem;
}}
.st-key-{SETTINGS_KEY} > *, .st-key-{MORE_KEY} > * {{ break-inside: avoid; margin-bottom: 0.6rem; }}
.st-key-{SETTINGS_KEY} h3, .st-key-{MORE_KEY} h3 {{ font-size: 1.15rem; padding: 0.2rem 0; }}
</style>"""  # our own constant CSS: larger text, the whole width, the controls in columns (the
# rest of the page's style, `NARROW_STYLE`, is in its head whether presenting or not)
_RUN = threading.local()  # this script run's place for the sidebar's controls (`controls`)
# On a phone a heatmap of 8-12 columns gets 20-30 px a cell, too narrow for its printed values
# at the charts' 11-13 px: they ran into each other. There the values are smaller, and a heatmap
# of more than 36 cells prints none (a tap shows any cell's value, as hovering does). Plotly
# draws a heatmap's cells as one image in `g.hm`, then one `g.heatmap-label` per printed value.
# Titles are smaller there too: plotly never wraps one, and a long one ran off the chart.
NARROW_STYLE = (
    "<style>"
    + FORMULA_ROOM
    + WORKED_STYLE
    + """
@media (max-width: 640px) {
  .js-plotly-plot g.heatmap-label text { font-size: 9px !important; }
  .js-plotly-plot g.hm:has(> g.heatmap-label:nth-child(38)) > g.heatmap-label { display: none; }
  .js-plotly-plot .gtitle { font-size: 12px !important; }
  [data-testid="stElementContainer"]:has(> [data-testid="stFullScreenFrame"] > .stPlotlyChart) {
    margin-top: 28px; contain: none !important;
  }
  [data-testid="stFullScreenFrame"]:has(> .stPlotlyChart), .stPlotlyChart {
    contain: none !important; overflow: visible !important;
  }
  .js-plotly-plot .modebar-container { top: -28px !important; }
  .js-plotly-plot .modebar { width: max-content; }  /* one row: it wrapped to two, over the title */
  [data-testid="stElementContainer"]:has([data-testid="stDataFrame"]) { margin-top: 44px; }
  .katex-display > .katex { font-size: 1em; }
}
</style>"""
)  # our own constant CSS
# Also on a phone, where a chart's title begins at its top left corner, the chart's toolbar
# (always shown on a touch screen, at the top right) covered the title's end: there the toolbar
# sits in a strip of its own above the chart (a margin above the chart's box: a padding inside
# it, with the box's height left to grow, made Streamlit size the figure to the box again and
# again, every chart growing by the strip many times a second); a table's toolbar (44 px above
# its top) covered the end of what came before it: there a table leaves it room. A formula
# wider than the screen was cut at its right edge: there it is drawn at the text's size (the
# rollout's lines fit).
# Where a chart is narrower than its tick labels need (a phone, a narrow column: the figure
# is made before the browser knows its width), the labels ran into each other. This script,
# our own constant text, hides every tick label that would touch the one kept before it on
# its axis, each time plotly draws a chart: rotated labels need their line height across,
# level ones their width. Labels hidden stay in the hover (every cell's name is there). So do a
# heatmap's printed values: where two in a row would touch, smaller, or else all hidden. The
# same script puts a second image button in every chart's toolbar: SVG beside the PNG. It is in
# every page's head (`HEAD_HTML`), before the page has a body: it watches the whole document.
CHART_SCRIPT = r"""<script>
(() => {
  if (window.__attnvizTicks) return;
  window.__attnvizTicks = true;
  const GAP = 2;  // px between two labels, at least
  const angleOf = (t) => {
    const m = (t.getAttribute("transform") || "").match(/rotate\((-?[\d.]+)/);
    return m ? Math.abs(parseFloat(m[1])) % 180 : 0;
  };
  const thinAxis = (texts, vertical) => {
    texts.forEach((t) => { t.style.display = ""; });
    const boxes = texts.map((t) => t.getBoundingClientRect());  // one layout for all
    let kept = null;
    texts.forEach((t, k) => {
      const box = boxes[k];
      if (!box.width) return;
      const angle = angleOf(t), size = parseFloat(getComputedStyle(t).fontSize) || 12;
      let clash = false;
      if (kept && vertical) {
        clash = box.top < kept.bottom + GAP && box.bottom > kept.top - GAP;
      } else if (kept && angle > 1) {
        const across = 1.1 * size / Math.sin(angle * Math.PI / 180);
        clash = Math.abs((box.left + box.right) / 2 - (kept.left + kept.right) / 2) < across;
      } else if (kept) {
        clash = box.left < kept.right + GAP && box.right > kept.left - GAP;
      }
      if (clash) t.style.display = "none"; else kept = box;
    });
  };
  const thin = (div) => {  // each axis's labels: `g.xtick`, `g.y2tick`... in one group
    const axes = new Map();
    for (const t of div.querySelectorAll("g[class$='tick'] > text")) {
      const kind = t.parentNode.getAttribute("class") || "";
      if (!/^[xy]\d*tick$/.test(kind)) continue;
      const axis = t.parentNode.parentNode;
      if (!axes.has(axis)) axes.set(axis, { vertical: kind[0] === "y", texts: [] });
      axes.get(axis).texts.push(t);
    }
    for (const { vertical, texts } of axes.values()) thinAxis(texts, vertical);
  };
  // The toolbar's camera saves a PNG (the chart's `toImageButtonOptions`); beside it a button
  // saves the same chart as SVG at the size shown: plotly's own SVG, by the camera's click with
  // the format switched for that one click (plotly reads the options as it is clicked).
  const SVG_TITLE = "Download plot as an SVG";
  const svgIcon = () => {  // an arrow onto a line, drawn as plotly draws its icons
    const ns = "http://www.w3.org/2000/svg";
    const icon = document.createElementNS(ns, "svg"), path = document.createElementNS(ns, "path");
    icon.setAttribute("viewBox", "0 0 24 24");
    icon.setAttribute("class", "icon");
    icon.setAttribute("height", "1em");
    icon.setAttribute("width", "1em");
    path.setAttribute("d", "M19 9h-4V3H9v6H5l7 7 7-7zM5 18v2h14v-2H5z");
    icon.appendChild(path);
    return icon;
  };
  const saveSvg = (div, camera) => {
    const before = div._context.toImageButtonOptions || {};
    div._context.toImageButtonOptions = { ...before, format: "svg", scale: 1 };
    try { camera.click(); } finally { div._context.toImageButtonOptions = before; }
  };
  const addSvgButton = (div) => {
    const camera = div.querySelector('.modebar-btn:not(.attnviz-svg)[data-title^="Download plot"]');
    if (!camera || !div._context || div.querySelector(".attnviz-svg")) return;
    const group = document.createElement("div"), button = document.createElement("a");
    group.className = "modebar-group";
    button.className = "modebar-btn attnviz-svg";
    button.setAttribute("rel", "tooltip");
    button.setAttribute("data-title", SVG_TITLE);
    button.appendChild(svgIcon());
    button.addEventListener("click", () => saveSvg(div, camera));
    group.appendChild(button);
    camera.parentNode.after(group);  // a group of its own: inside the camera's it wrapped
  };
  // A heatmap's printed values where two in a row would touch (a narrow column, long tokens
  // beside the cells): a smaller font, and if they still touch none of them (the hover gives
  // every cell's value).
  const touching = (texts) => {
    const boxes = texts.map((t) => t.getBoundingClientRect());  // one layout for all
    for (let k = 1; k < boxes.length; k++) {
      const a = boxes[k - 1], b = boxes[k];
      const row = Math.abs(a.top - b.top) < 1 && Math.abs(a.bottom - b.bottom) < 1;
      if (row && a.width > 0 && a.right + GAP > b.left && b.right + GAP > a.left) return true;
    }
    return false;
  };
  const values = (div) => {
    for (const map of div.querySelectorAll("g.hm")) {
      const texts = Array.from(map.querySelectorAll("g.heatmap-label > text"));
      texts.forEach((t) => {  // as plotly drew it: its size (unless it is ours), shown
        const ours = t.dataset.attnvizSmaller;
        if (!ours || t.style.fontSize !== ours) t.dataset.attnvizSize = t.style.fontSize;
        t.style.fontSize = t.dataset.attnvizSize;
        t.style.display = "";
        delete t.dataset.attnvizSmaller;
      });
      if (!touching(texts)) continue;
      const size = parseFloat(getComputedStyle(texts[0]).fontSize) || 12;
      const smaller = `${Math.max(8, Math.round(0.8 * size))}px`;
      texts.forEach((t) => { t.style.fontSize = smaller; t.dataset.attnvizSmaller = smaller; });
      if (touching(texts)) texts.forEach((t) => { t.style.display = "none"; });
    }
  };
  const drawn = (div) => { thin(div); values(div); addSvgButton(div); };
  const watch = () => {
    for (const div of document.querySelectorAll(".js-plotly-plot")) {
      if (div.__attnvizTicks || typeof div.on !== "function") continue;
      div.__attnvizTicks = true;
      div.on("plotly_afterplot", () => drawn(div));
      if (div._fullLayout) drawn(div);
    }
  };
  let queued = false;
  new MutationObserver(() => {
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; watch(); }); }
  }).observe(document.documentElement, { childList: true, subtree: true });
  watch();
})();
</script>"""
HEAD_HTML = NARROW_STYLE + CHART_SCRIPT  # our own constant text, in every page's `<head>`
# (`attnviz.ui.app.head`): once per page load instead of an element on every run


def presenting() -> bool:
    """True while the presenter view is on; before the switch is first drawn (a session's first
    run: the page's set-up comes first), what the URL says."""
    return bool(PRESENT.get_or_linked())


def presenter_switch() -> None:
    """The switch (drawn at the top of every page) and, when on, the larger style."""
    st.toggle(
        "Presenter view",
        help="For a projector: the sidebar's settings in the page, larger text and charts, one "
        "chart per row. Every chart's toolbar also shows it full screen.",
        **PRESENT.widget(),
    )
    if presenting():  # the phone's style and the charts' script are in every page's head
        st.html(STYLE)  # (`HEAD_HTML`): sent once per page load, not on every run
    _RUN.slot = _RUN.area = _RUN.more = _RUN.groups = None  # a new run: its controls' place
    # is made when first needed; every group in view (not a lesson)


def controls_here(groups: tuple[str, ...] | None = None) -> None:
    """A lesson's controls: `groups` are the groups of controls it talks about, drawn in view,
    the others folded into "More controls" (None: every one in view). While presenting, have
    the sidebar's controls drawn here, when a page first draws one (a lesson: under its text,
    above the page it prepares)."""
    _RUN.groups = groups
    if presenting():
        _RUN.slot = st.empty()


def controls(group: str | None = None):
    """Where the sidebar's controls of `group` go ("score", "masks"...: see `controls_here`;
    None: always in view): the sidebar; while presenting, where the projector shows them (the
    sidebar is folded away there), an open expander in the page, made where `controls_here`
    said or where the page first draws a control, its controls side by side. A group the
    lesson does not talk about goes into the closed "More controls" below them."""
    if getattr(_RUN, "area", None) is None:
        _RUN.area, _RUN.more_place = _places()
        _RUN.more = None
    shown = getattr(_RUN, "groups", None)
    if group is None or shown is None or group in shown:
        return _RUN.area
    if _RUN.more is None:  # made when first needed: a lesson may fold nothing away
        with _RUN.more_place.container():
            _RUN.more = st.expander(MORE_LABEL).container(key=MORE_KEY)
    return _RUN.more


def _places():
    """`(controls in view, the place of "More controls")` for this run (see `controls`); the
    second is None outside a lesson."""
    lesson = getattr(_RUN, "groups", None) is not None
    if not presenting():
        return (st.sidebar.container(), st.sidebar.empty()) if lesson else (st.sidebar, None)
    place = getattr(_RUN, "slot", None)
    with place.container() if place is not None else st.container():
        area = st.expander(SETTINGS_LABEL, expanded=True).container(key=SETTINGS_KEY)
        return area, st.empty()  # "More controls" beside the open expander, not inside it


def where_settings() -> str:
    """Where the sidebar's controls are, in words: "in the sidebar", or while presenting "in
    the settings above the charts" (a lesson's text fills its `SETTINGS` with it)."""
    return WHERE[presenting()]


def chart_columns(spec: int | list[float]) -> list:
    """Columns for charts side by side (`st.columns(spec)`); while presenting, one full-width
    container per column instead, stacked: one chart a row on the projector."""
    if presenting():
        return [st.container() for _ in range(spec if isinstance(spec, int) else len(spec))]
    return st.columns(spec)


def readable(fig):
    """`fig` with larger text while presenting, its size kept (`projector.fonts_for_projector`:
    the model view's cells are sized to fit their column, its layer and head labels were
    12 px on the projector: 15 px); else `fig`."""
    return fonts_for_projector(fig, LABEL_SCALE) if presenting() else fig


def enlarged(fig):
    """`fig` made larger for the projector while presenting (`projector.for_projector`: every
    font, the margins, the height; a figure of its own width grows whole); else `fig`."""
    return for_projector(fig, SCALE) if presenting() else fig
