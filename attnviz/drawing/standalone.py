"""A view taken away: one standalone HTML page of plotly charts, or one chart as SVG.

The page holds the same interactive charts as the app (hover, zoom, a toolbar saving PNG and
SVG at the size shown), the inputs and settings that made them (as escaped text: nothing a user
typed becomes HTML) and the attnviz version. It works offline: plotly's script is embedded once,
gzipped (4.8 MB as plain text, most of a page; a 12 × 12 model view's page is ~3 MB this way),
and unpacked by the browser itself (`DecompressionStream`: Chrome and Edge 80, Firefox 113,
Safari 16.4 and later); no CDN, no request leaves the file.

SVG in Python: plotly draws its SVG in a browser (the toolbar's SVG is plotly.js's own). attnviz
does not fake it: `figure_svg` runs the same plotly.js in a headless Chromium (or Chrome, Edge)
found on this machine and returns exactly the SVG the toolbar saves (a heatmap's cells are an
embedded image there, the axes, labels and colour bar vectors). Without such a browser it says
so, and how to get the SVG from the page's toolbar instead. No kaleido (it downloads a Chrome).

Pure Python (plotly, the standard library); the UI only offers the bytes `standalone_html`
returns.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

BROWSER_ENV = "ATTNVIZ_BROWSER"  # a Chromium-family browser for `figure_svg`, if not on PATH
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome",
            "msedge", "microsoft-edge")  # fmt: skip
SVG_SECONDS = 60  # most time the browser may take to draw one SVG (a failure bound)
# JSON that cannot end the <script> it is in: these characters as \u escapes
_SAFE_JSON = {char: f"\\u{ord(char):04x}" for char in "<>&\u2028\u2029"}


@dataclass(frozen=True)
class Chart:
    """One chart of a page: the figure and the name its toolbar's images are saved under."""

    figure: go.Figure
    name: str  # e.g. "weights": saved as attnviz-weights.png / .svg


@dataclass(frozen=True)
class Taken:
    """What a page shows besides its charts."""

    title: str  # the page's heading and the browser tab's title
    settings: tuple[tuple[str, str], ...] = ()  # (name, value) rows of the settings table
    inputs: tuple[tuple[str, str], ...] = ()  # (name, text) blocks, shown as written
    notes: tuple[str, ...] = ()  # sentences under the heading


def standalone_html(
    charts: Sequence[Chart | go.Figure],
    title: str,
    *,
    settings: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
    inputs: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
    notes: Sequence[str] = (),
) -> str:
    """One HTML page of `charts` (interactive, offline), with the inputs and settings.

    Args:
        charts: the figures in page order (a bare figure is named "chart-<n>").
        title: the page's heading (plain text).
        settings: name → value, shown as a table (values as `str`).
        inputs: name → text (a matrix, the sentences, ...), each shown preformatted.
        notes: plain sentences shown under the heading.

    Returns:
        The page as text (UTF-8 when written).

    Raises:
        ValueError: if `charts` holds something that is not a plotly figure.
    """
    named = [_chart(item, n) for n, item in enumerate(charts)]
    taken = Taken(str(title), _rows(settings), _rows(inputs), tuple(str(n) for n in notes))
    specs = "\n".join(_chart_html(chart, n) for n, chart in enumerate(named))
    return _PAGE.format(
        title=html.escape(taken.title),
        about=_about(taken),
        charts=specs,
        plotly=_packed_plotly(),
        script=_SCRIPT,
        version=html.escape(_version()),
        plotly_version=html.escape(_plotly_version()),
    )


class Figure(go.Figure):
    """A plotly figure that also saves itself as a standalone page (`to_html(path)`) or as the
    SVG its toolbar saves (`to_svg(path)`). Every figure attnviz draws is one."""

    def to_html(self, *args: Any, **kwargs: Any) -> Any:
        """With a path, `fig.to_html("view.html", title=..., settings=..., inputs=...)`: write
        the figure as a standalone page (see `standalone_html`) and return the path. Otherwise
        plotly's own `to_html` (the figure as HTML text)."""
        path = args[0] if args else kwargs.get("path")
        if not isinstance(path, str | os.PathLike):
            return super().to_html(*args, **kwargs)
        if len(args) > 1:
            raise TypeError(
                "to_html(path, ...) takes the path alone positionally; give title=, settings=, "
                f"inputs= or notes= by name. Received {len(args)} positional arguments."
            )
        kwargs.pop("path", None)
        title = kwargs.pop("title", None) or figure_title(self)
        return write_html([Chart(self, Path(path).stem)], path, title, **kwargs)

    def to_svg(self, path: str | os.PathLike, **options: Any) -> Path:
        """Write the SVG plotly.js draws of this figure (as its toolbar's SVG button) to
        `path`; returns the path. Needs a Chromium-family browser: see `figure_svg`."""
        return write_svg(self, path, **options)


def figure_title(figure: go.Figure, default: str = "attnviz chart") -> str:
    """The figure's title as plain text (its markup and escapes undone), or `default`."""
    text = figure.to_dict().get("layout", {}).get("title", {})
    text = text.get("text", "") if isinstance(text, dict) else str(text or "")
    plain = html.unescape(re.sub(r"<[^>]*>", " ", text or ""))
    return " ".join(plain.split()) or default


def write_html(charts: Sequence[Chart | go.Figure], path: str | os.PathLike, title: str,
               **about: Any) -> Path:  # fmt: skip
    """`standalone_html(charts, title, **about)` written to `path` (UTF-8); returns the path."""
    target = Path(path)
    target.write_text(standalone_html(charts, title, **about), encoding="utf-8")
    return target


def _chart(item: Chart | go.Figure, n: int) -> Chart:
    if isinstance(item, Chart):
        return item
    if isinstance(item, go.Figure):
        return Chart(item, f"chart-{n}")
    raise ValueError(
        f"A page's charts must be plotly figures (or `Chart`s). Received {type(item).__name__} "
        f"at position {n}. Pass the figures attnviz's drawing functions return."
    )


def _rows(pairs: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> tuple[tuple[str, str], ...]:
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    return tuple((str(name), str(value)) for name, value in items)


def _about(taken: Taken) -> str:
    """The escaped notes, settings table and inputs of a page."""
    parts = [f"<p>{html.escape(note)}</p>" for note in taken.notes]
    if taken.settings:
        rows = "".join(
            f"<tr><th>{html.escape(name)}</th><td>{html.escape(value)}</td></tr>"
            for name, value in taken.settings
        )
        parts.append(f'<h2>Settings</h2><table class="settings">{rows}</table>')
    if taken.inputs:
        parts.append("<h2>Inputs</h2>")
        parts += [
            f"<h3>{html.escape(name)}</h3><pre>{html.escape(text)}</pre>"
            for name, text in taken.inputs
        ]
    return "\n".join(parts)


def _chart_html(chart: Chart, n: int) -> str:
    """A chart's div and its figure as JSON data (never run as code, never HTML)."""
    spec = _safe_json(pio.to_json(chart.figure, validate=False))
    name = html.escape(re.sub(r"[^A-Za-z0-9_.-]+", "-", chart.name), quote=True)
    return (
        f'<div class="chart" id="chart-{n}" data-name="attnviz-{name}"></div>\n'
        f'<script type="application/json" id="spec-{n}">{spec}</script>'
    )


def _safe_json(text: str) -> str:
    return re.sub("[<>&\u2028\u2029]", lambda m: _SAFE_JSON[m.group()], text)


@functools.cache
def _packed_plotly() -> str:
    """plotly.js, gzipped and in base64 (once per process). Level 3: 1.62 MB, half the time of
    level 6's 1.47 MB (measured 2026-11-28), most of a page's writing time."""
    packed = gzip.compress(get_plotlyjs().encode(), compresslevel=3, mtime=0)
    return base64.b64encode(packed).decode()


def _version() -> str:
    from attnviz import __version__  # here, not at the top: attnviz imports drawing lazily

    return __version__


def _plotly_version() -> str:
    import plotly

    return plotly.__version__


# the page unpacks plotly.js, then draws every chart from its JSON; the toolbar saves PNG (the
# camera, twice the pixels) and SVG, both at the size shown, named after the chart
_SCRIPT = """
(async () => {
  const say = (text) => { document.getElementById('status').textContent = text; };
  if (typeof DecompressionStream === 'undefined') {
    say('This page needs a browser from 2023 or later (DecompressionStream) to draw its charts.');
    return;
  }
  const packed = document.getElementById('plotly-gz').textContent.trim();
  const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  const code = document.createElement('script');
  code.textContent = await new Response(stream).text();
  document.head.appendChild(code);
  for (const div of document.querySelectorAll('div.chart')) {
    const spec = JSON.parse(document.getElementById(div.id.replace('chart', 'spec')).textContent);
    const name = div.dataset.name;
    const svg = {
      name: 'svg', title: 'Download plot as an SVG', icon: Plotly.Icons['camera-retro'],
      click: (gd) => Plotly.downloadImage(gd, {format: 'svg', filename: name}),
    };
    await Plotly.newPlot(div, spec.data || [], spec.layout || {}, {
      displaylogo: false, responsive: true, modeBarButtonsToAdd: [svg],
      toImageButtonOptions: {format: 'png', scale: 2, filename: name},
    });
  }
  say('');
})().catch((err) => {
  document.getElementById('status').textContent = 'The charts could not be drawn: ' + err;
});
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="attnviz {version}">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5rem; color: #222; }}
table.settings {{ border-collapse: collapse; margin-bottom: 1rem; }}
table.settings th, table.settings td {{ border: 1px solid #ccc; padding: 0.2rem 0.6rem;
  text-align: left; vertical-align: top; }}
pre {{ background: #f6f6f6; padding: 0.5rem; overflow-x: auto; max-height: 24rem; }}
div.chart {{ margin: 1rem 0; max-width: 100%; overflow-x: auto; }}
footer {{ color: #666; font-size: 0.85rem; margin-top: 2rem; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p id="status">Drawing the charts…</p>
{charts}
{about}
<footer>Made with attnviz {version} (plotly.js from plotly {plotly_version}, embedded: this
page needs no network). Hover a cell for its numbers; the toolbar above each chart saves it as
PNG or SVG.</footer>
<script type="application/gzip;base64" id="plotly-gz">
{plotly}
</script>
<script>{script}</script>
</body>
</html>
"""


def figure_svg(figure: go.Figure, *, browser: str | None = None) -> str:
    """The SVG plotly.js draws of `figure` (what the toolbar's SVG button saves), at the
    figure's size (plotly's 700 × 500 where the figure sets none).

    Args:
        figure: a plotly figure.
        browser: a Chromium-family browser (default: `ATTNVIZ_BROWSER`, else the first of
            `BROWSERS` on PATH).

    Returns:
        The SVG document as text.

    Raises:
        RuntimeError: if no browser is found, or it fails to draw the figure.
    """
    executable = browser or _find_browser()
    with tempfile.TemporaryDirectory(prefix="attnviz-svg-") as folder:
        page = Path(folder) / "draw.html"
        (Path(folder) / "plotly.min.js").write_text(get_plotlyjs(), encoding="utf-8")
        page.write_text(_svg_page(figure), encoding="utf-8")
        out = _run_browser(executable, page, Path(folder) / "profile")
    found = re.search(r'<pre id="svg">([A-Za-z0-9+/=\s]*)</pre>', out)
    failed = re.search(r'<pre id="error">([^<]*)</pre>', out)
    if found is None or not found.group(1).strip():
        why = html.unescape(failed.group(1)) if failed else "it printed no SVG"
        raise RuntimeError(f"The browser {executable} could not draw the figure as SVG: {why}.")
    return base64.b64decode(found.group(1)).decode("utf-8")


def write_svg(figure: go.Figure, path: str | os.PathLike, **options: Any) -> Path:
    """`figure_svg(figure, **options)` written to `path` (UTF-8); returns the path."""
    target = Path(path)
    target.write_text(figure_svg(figure, **options), encoding="utf-8")
    return target


def _find_browser() -> str:
    chosen = os.environ.get(BROWSER_ENV)
    found = [chosen] if chosen else [shutil.which(name) for name in BROWSERS]
    for path in found:
        if path and os.path.exists(path):
            return path
    raise RuntimeError(
        "Saving SVG from Python needs a Chromium-family browser (plotly draws SVG in a "
        f"browser), and none was found: {BROWSER_ENV} is {chosen!r}, and none of "
        f"{', '.join(BROWSERS)} is on PATH. Install one (e.g. `apt-get install chromium`) or "
        f"set {BROWSER_ENV}; or save the view with `.to_html(path)`, open it and use the SVG "
        "button of the chart's toolbar."
    )


def _svg_page(figure: go.Figure) -> str:
    """A page that draws `figure` with plotly.js (`plotly.min.js` beside it) and writes its
    SVG, in base64, into <pre id="svg">."""
    script = (
        f"const spec = {_safe_json(pio.to_json(figure, validate=False))};\n"
        "Plotly.toImage({data: spec.data || [], layout: spec.layout || {}},"
        " {format: 'svg', width: (spec.layout || {}).width || 700,"
        " height: (spec.layout || {}).height || 500})"
        ".then((url) => { const svg = decodeURIComponent(url.slice(url.indexOf(',') + 1));"
        " document.getElementById('svg').textContent = toBase64(svg); })"
        ".catch((err) => { document.getElementById('error').textContent = String(err); });"
    )
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        '<script src="plotly.min.js"></script></head><body>'
        '<pre id="svg"></pre><pre id="error"></pre>'
        f"<script>{_TO_BASE64}\n{script}</script></body></html>"
    )


_TO_BASE64 = """function toBase64(text) {
  const bytes = new TextEncoder().encode(text);
  let out = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    out += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(out);
}"""


def _run_browser(executable: str, page: Path, profile: Path) -> str:
    """The DOM of `page` after headless `executable` drew it (its printout)."""
    command = [
        executable, "--headless", "--disable-gpu", "--no-first-run", "--disable-extensions",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", "--allow-file-access-from-files",
        "--virtual-time-budget=3000", "--dump-dom", page.as_uri(),
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=SVG_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise RuntimeError(f"The browser {executable} could not be run to draw SVG: {err}") from err
    return done.stdout


def call_text(call: Any) -> str:
    """One call in words, for the settings table."""
    from attnviz.core import words  # pure; here as the module's other attnviz imports

    batch, heads, t, s = call.weights.shape
    parts = [
        call.class_name, f"{call.kind} attention",
        f"{words.plural(heads, 'head')}, {words.plural(t, 'query')} × {words.plural(s, 'key')}",
        "masked" if call.mask is not None else "no mask", call.position.text, *call.notes,
    ]  # fmt: skip
    verified = getattr(call, "verified", None)  # the capture's self-check, where recorded
    if verified is not None:
        parts.append(verified.describe() if hasattr(verified, "describe") else str(verified))
    return "; ".join(str(part) for part in parts if part)
