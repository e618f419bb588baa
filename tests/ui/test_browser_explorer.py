"""End to end, the Matrices explorer in headless Chromium, as a user clicks and types: the first
load, typed matrices and presets, the causal toggle, Compare, the CSV download, shared and old
links, and bad input.

Fixtures, the `App` helper and the labels live in `browser_support.py`. Expected numbers are
computed here with float64 numpy (an independent softmax), or pinned from the NumPy lab preset.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from browser_support import (  # fixtures: conftest's pytest_plugins
    CAUSAL,
    K_LABEL,
    NUMPY_LAB,
    NUMPY_LAB_CAUSAL,
    Q_LABEL,
    V_LABEL,
    VIEWPORT,
    WEIGHTS,
    App,
    close,
    reference_weights,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_first_load_paints_the_heatmaps(open_app):
    app = open_app(new_tab=True).open()  # a tab that has never loaded the app
    page = app.page
    assert page.get_by_role("heading", level=1).inner_text() == "attnviz"
    assert "attnviz" in page.title()
    titles = app.chart_titles()
    assert len(titles) >= 4, titles
    assert {"Raw scores", WEIGHTS, "Output (context vectors)"} <= set(titles)
    assert page.locator(".js-plotly-plot .main-svg").count() >= 4  # drawn, not just mounted
    assert app.exceptions() == 0
    assert app.alerts() == []
    assert app.text(Q_LABEL) == "1 0 0\n0 1 0"  # the NumPy lab's matrices
    causal = app.switch(CAUSAL).is_checked()
    assert close(app.weights(), NUMPY_LAB_CAUSAL if causal else NUMPY_LAB)
    assert app.errors == []
    # the chart code the page loads early (loading.load_chart_code) is the module the charts
    # use: one download of it, not a second copy under another address
    loaded = page.evaluate("performance.getEntriesByType('resource').map((e) => e.name)")
    assert len([name for name in loaded if "/PlotlyChart." in name]) == 1, loaded


def test_a_page_below_the_root_asks_for_the_server_once_at_the_root(app: App):
    # Streamlit's front end asked the page's own path first (/sentences/_stcore/health: Not
    # Found), then, after a retry's wait, the root; told where the server is (ui/app/head.py's
    # server_root), it asks the root at once
    app.open(f"{app.url}/sentences?x=1", charts=1)
    asked = app.read(
        "() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)"
        ".filter((path) => path.includes('/_stcore/') && !path.includes('/_stcore/stream'))"
    )
    assert sorted(asked) == ["/_stcore/health", "/_stcore/host-config"], asked
    assert app.exceptions() == 0 and app.errors == []


def test_the_chart_code_loads_once_the_controls_are_drawn_with_no_chart_yet(open_app):
    # Q and K of different widths: the results say why and draw no chart, yet the page asked
    # for the results (loading.back_end), so the chart code is loading (loading.load_chart_code)
    app = open_app(new_tab=True)  # a first load: nothing of the page loaded before
    app.open(f"{app.url}/matrices?q_text=1+2&k_text=1+2+3%0A4+5+6&v_text=1%0A2", charts=0)
    assert "Dq == Dk" in app.wait_for_alerts()
    app.wait_until(
        "() => performance.getEntriesByType('resource').some((e) =>"
        " e.name.includes('/PlotlyChart.') && e.responseEnd > 0)",
        what="the chart code to be loaded",
    )
    assert app.page.locator(".js-plotly-plot").count() == 0
    assert app.errors == []


def test_first_visit_link_reopens_the_same_view(open_app):
    first = open_app().open()
    causal = first.switch(CAUSAL).is_checked()
    weights = first.weights()
    second = open_app().open(first.location())  # a reload or a shared first-visit link
    assert second.switch(CAUSAL).is_checked() == causal
    assert second.text(Q_LABEL) == first.text(Q_LABEL)
    second.wait_for_weights(weights)


def test_typed_matrices_and_a_preset_update_the_charts(app: App):
    app.open()
    app.set_switch(CAUSAL, False)  # a first visit may start with the preset's causal mask
    q, k, v = [[2, 0], [0, 2]], [[1, 0], [0, 1], [1, 1]], [[1, 2], [3, 4], [5, 6]]
    for label, matrix in ((Q_LABEL, q), (K_LABEL, k), (V_LABEL, v)):
        app.type_text(label, "\n".join(" ".join(map(str, row)) for row in matrix))
    expected = reference_weights(q, k)
    app.wait_for_weights(expected)
    assert close(app.z("Raw scores"), [[2, 0, 2], [0, 2, 2]])
    output = (np.asarray(expected) @ np.asarray(v, float)).tolist()
    assert close(app.z("Output (context vectors)"), output)
    assert app.alerts() == []

    app.select("Preset", "One-hot queries: sharp attention")
    app.wait_for_text(Q_LABEL, "4 0 0 0\n0 4 0 0\n0 0 4 0\n0 0 0 4")  # the preset's Q
    assert app.text(K_LABEL) == "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1"
    assert app.text(V_LABEL) == "1 0\n0 1\n-1 0\n0 -1"
    app.wait_for_weights(reference_weights(np.eye(4) * 4, np.eye(4)))


def test_causal_toggle_changes_the_weights(app: App):
    app.open()
    app.set_switch(CAUSAL, False)  # a first visit may start with the preset's causal mask
    app.wait_for_weights(NUMPY_LAB)
    app.wait_for_query({"causal": None})  # off: not in the URL
    app.set_switch(CAUSAL, True)
    weights = app.wait_for_weights(NUMPY_LAB_CAUSAL)
    assert weights[0] == [1.0, 0.0]  # exact: the masked key gets nothing
    app.wait_for_query({"causal": ["true"]})
    # each chart drawn once: its margins already hold its labels, titles and colour bar
    assert len(app.chart_titles()) >= 6 and app.widened_charts() == []


def test_compare_view_draws_a_b_and_their_difference(app: App):
    app.open()
    app.set_switch(CAUSAL, True)
    app.wait_for_weights(NUMPY_LAB_CAUSAL)
    app.open_tab("Compare")
    app.wait_for_titles(["A: current settings", "B: no masks", "A − B"])
    app.wait_for_weights(NUMPY_LAB_CAUSAL, "A: current settings")
    app.wait_for_weights(NUMPY_LAB, "B: no masks")
    diff = (np.asarray(NUMPY_LAB_CAUSAL) - np.asarray(NUMPY_LAB)).tolist()
    assert close(app.z("A − B"), diff)
    assert app.widened_charts() == []
    assert "view=Compare" in app.location()


def test_every_charts_toolbar_saves_svg_beside_png(app: App):
    app.open()
    page = app.page
    charts = page.locator(".js-plotly-plot")
    every_chart_has_svg = """() => {
      const charts = [...document.querySelectorAll(".js-plotly-plot")];
      return charts.length >= 4 && charts.every((d) => d.querySelector(".attnviz-svg"));
    }"""
    app.wait_until(every_chart_has_svg, what="an SVG button in every chart's toolbar")
    chart = charts.first
    app.scroll_to(chart)
    chart.hover()  # the toolbar shows on hover
    width = chart.evaluate("d => d._fullLayout.width")
    with page.expect_download() as info:
        chart.locator(".attnviz-svg").click()
    svg = info.value
    assert svg.suggested_filename.startswith("attnviz-") and svg.suggested_filename.endswith(".svg")
    text = svg.path().read_text()
    assert text.startswith("<svg") and f'width="{width}"' in text  # at the size shown
    with page.expect_download() as info:  # the camera still saves a PNG after an SVG
        chart.locator('.modebar-btn[data-title="Download plot as a PNG"]').click()
    png = info.value
    assert png.suggested_filename == svg.suggested_filename.removesuffix(".svg") + ".png"
    assert png.path().read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_weights_csv_download(app: App):
    app.open()
    app.set_switch(CAUSAL, True)
    app.wait_for_weights(NUMPY_LAB_CAUSAL)
    app.open_tab("Download")
    button = app.page.get_by_role("button", name="weights.csv", exact=True)
    with app.page.expect_download() as info:
        button.click()
    download = info.value
    assert download.suggested_filename == "attnviz-weights.csv"
    rows = list(csv.reader(io.StringIO(download.path().read_text())))
    assert rows[0] == ["", "0", "1"]
    assert [row[0] for row in rows[1:]] == ["0", "1"]
    assert close([[float(x) for x in row[1:]] for row in rows[1:]], NUMPY_LAB_CAUSAL, tol=1e-6)
    assert rows[1][1:] == ["1.0", "0.0"]


def test_shared_url_reopens_the_same_view(open_app):
    first = open_app().open()
    first.set_switch(CAUSAL, True)
    first.choose("Score function", "general")
    first.type_text(Q_LABEL, "1 1 0\n0 1 1")
    wanted = {"causal": ["true"], "score": ["general"], "q_text": ["1 1 0\n0 1 1"]}
    first.wait_for_query(wanted)
    dot_scores = [[3, 9], [5, 11]]  # Q Kᵀ: what the dot score would give
    weights = first.wait_until(
        "(page, dot) => { const raw = page.z('Raw scores'), w = page.weights('Attention weights');"
        " return raw && raw.length === 2 && !page.close(raw, dot, 1e-5) && w"
        " && w[0][0] === 1 && w[0][1] === 0 && w; }",
        dot_scores, "the general score's causal weights",
    )  # fmt: skip
    url = first.location()

    second = open_app().open(url)  # a new context: a fresh session with only the URL
    assert second.switch(CAUSAL).is_checked()
    general = second.page.get_by_role("radiogroup", name="Score function").get_by_role(
        "radio", name="general"
    )
    assert general.is_checked()
    assert second.text(Q_LABEL) == "1 1 0\n0 1 1"
    second.wait_for_weights(weights)
    assert second.alerts() == []


def test_bad_input_shows_its_message_and_the_page_keeps_working(app: App):
    app.open()
    app.type_text(Q_LABEL, "1 2\n3 x")
    alert = app.wait_for_alerts()
    assert "row 2, column 2: 'x' is not a number" in alert
    q_column = app.page.locator('[data-testid="stColumn"]').filter(
        has=app.page.get_by_label(Q_LABEL, exact=True)
    )
    assert q_column.locator('[data-testid="stAlertContentError"]').count() == 1  # next to Q
    app.wait_for_no_charts()
    assert app.exceptions() == 0
    assert app.switch(CAUSAL).is_visible()  # the sidebar still works
    assert app.text(Q_LABEL) == "1 2\n3 x"  # what the user typed stays
    app.set_switch(CAUSAL, True)

    app.type_text(Q_LABEL, "1 0 0\n0 1 0")
    app.wait_for_weights(NUMPY_LAB_CAUSAL)
    app.wait_for_alerts(present=False)


def test_old_short_values_in_a_link_open_the_view_and_the_url_shows_todays_form(app: App):
    """`?position=alibi` (the scheme's own name, as hand-written links say it) opens ALiBi, and
    the address bar then shows the control's label, so the link can be shared again."""
    app.open(f"{app.url}/matrices?position=alibi&alibi_heads=4", charts=4)
    app.page.get_by_label("Heads H", exact=True).wait_for()
    app.wait_for_query({"position": ["ALiBi (linear bias)"], "alibi_heads": ["4"]})
    assert app.exceptions() == 0


def test_a_tab_handed_back_keeps_nothing_of_its_test(tabs, app_url):
    # the tests share their tabs (`Tabs`): what one test leaves must not reach the next
    page = tabs.take()
    page.goto(f"{app_url}/_stcore/health")  # the app's origin, without loading the app
    page.evaluate("() => [localStorage, sessionStorage].forEach((s) => s.setItem('left', '1'))")
    page.context.add_cookies([{"name": "left", "value": "1", "url": app_url}])
    page.set_viewport_size({"width": 390, "height": 900})
    tabs.give_back(page)
    again = tabs.take()
    assert again is page  # the same tab, emptied
    assert again.url == "about:blank"
    assert again.viewport_size == VIEWPORT
    assert again.context.cookies() == []
    again.goto(f"{app_url}/_stcore/health")
    left = again.evaluate("() => [localStorage.getItem('left'), sessionStorage.getItem('left')]")
    assert left == [None, None]
    tabs.give_back(again)
    fresh = tabs.take(new_tab=True)  # a tab that has never loaded anything
    assert fresh is not page and fresh.url == "about:blank"
    tabs.give_back(fresh)
